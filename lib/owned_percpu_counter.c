// SPDX-License-Identifier: GPL-2.0
/*
 * Owned percpu counters: exact sums and the upgrade from lazy to per-CPU
 * mode. See include/linux/owned_percpu_counter.h for the layout
 * and Documentation/core-api/owned_percpu_counter.rst for the rules.
 *
 * While lazy, a counter's value is the owner's word plus half the shared
 * word. Bit 0 of the shared word is the mode flag: the upgrade sets it and
 * takes the final lazy value in the same atomic read-modify-write, so that
 * a shared add is either in that value or sees the flag in the old value
 * its own atomic returned.
 */

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/bug.h>
#include <linux/export.h>
#include <linux/irqflags.h>
#include <linux/owned_percpu_counter.h>
#include <linux/sched/mm.h>
#include <linux/spinlock.h>

/**
 * owned_percpu_counters_set_owner() - change the owner of a lazy set
 * @oc: the set
 * @owner: the new owner, or %NULL
 *
 * The owner stops being one with %NULL: its later adds are shared, and its
 * word keeps what it added. A set without an owner gets @owner, which must
 * be the only task that takes the owner's path from then on: the caller
 * knows that no one else will. Nothing changes in an upgraded set. Task
 * context: the owner itself, or anyone while there is none.
 *
 * The handover is ordered: the release of the old owner's %NULL and the
 * acquire of the new owner's call make the old owner's adds to its words
 * visible to a new owner that takes the set itself. A new owner set by
 * another task must be started after the call (wake_up_new_task() does).
 */
void owned_percpu_counters_set_owner(struct owned_percpu_counters *oc,
				     struct task_struct *owner)
{
	/* Pairs with the release below of a previous owner's %NULL. */
	struct task_struct *old = smp_load_acquire(&oc->owner);

	/* Only the owner upgrades, so it cannot race with an upgrade. */
	if (old == __OWNED_PERCPU_SHARED)
		return;
	WARN_ON_ONCE(old && old != current);
	/* Orders our adds to the owner's words before the handover. */
	smp_store_release(&oc->owner, owner);
}

/**
 * owned_percpu_counter_sum() - exact value of a counter
 * @oc: the set
 * @i: index of the counter in the set
 *
 * Any context but NMI; once upgraded this is percpu_counter_sum(), which
 * walks the online CPUs with the counter's lock held and interrupts off.
 *
 * Return: the value, exact if no add runs concurrently, in both modes.
 * May be negative.
 */
s64 owned_percpu_counter_sum(struct owned_percpu_counters *oc, unsigned int i)
{
	long val;

	if (__owned_percpu_lazy_value(oc, i, &val))
		return val;
	return percpu_counter_sum(&oc->percpu[i]);
}
EXPORT_SYMBOL(owned_percpu_counter_sum);

/**
 * __owned_percpu_counters_sum_many() - owned_percpu_counters_sum_many(), out of line
 * @oc: the set
 * @nr: number of counters to sum, from the first; for an upgraded set,
 *	at most as many as it was upgraded with
 * @sums: one value per counter is stored here
 *
 * The slow path of the inline owned_percpu_counters_sum_many(), and its
 * checks: for an upgraded set, or one that is being upgraded. Exported,
 * as percpu_counter's sums are.
 */
void __owned_percpu_counters_sum_many(struct owned_percpu_counters *oc,
				      unsigned int nr, s64 *sums)
{
	unsigned int i;

	if (WARN_ON_ONCE(!nr || nr > OWNED_PERCPU_COUNTERS_MAX))
		return;

	/*
	 * The flags are set in order: the last one means all of them, and
	 * that @nr is at most the number of counters the set was upgraded
	 * with. Otherwise, the set is lazy or being upgraded: one at a time.
	 */
	if (atomic_long_read_acquire(&oc->shared_adds[nr - 1]) & __OWNED_PERCPU_UPGRADED) {
		percpu_counter_sum_many(oc->percpu, nr, sums);
		return;
	}
	for (i = 0; i < nr; i++)
		sums[i] = owned_percpu_counter_sum(oc, i);
}
EXPORT_SYMBOL(__owned_percpu_counters_sum_many);

#if IS_ENABLED(CONFIG_KUNIT)
void (*owned_percpu_counter_fold_hook)(struct percpu_counter *fbc, bool locked);

static inline void owned_fold_hook(struct percpu_counter *fbc, bool locked)
{
	void (*hook)(struct percpu_counter *fbc, bool locked);

	hook = READ_ONCE(owned_percpu_counter_fold_hook);
	if (hook)
		hook(fbc, locked);
}
#else
static inline void owned_fold_hook(struct percpu_counter *fbc, bool locked)
{
}
#endif

/*
 * The percpu_counters of the set, set up but not yet published: lock,
 * count 0, deltas 0 and, with CONFIG_HOTPLUG_CPU, on the hotplug list. One
 * per-CPU allocation, and nothing else: a failure leaves nothing to undo.
 * A KUnit stub point, so that tests can make it fail.
 */
VISIBLE_IF_KUNIT int owned_percpu_counters_init_percpu(struct owned_percpu_counters *oc,
						       unsigned int nr, gfp_t gfp)
{
	KUNIT_STATIC_STUB_REDIRECT(owned_percpu_counters_init_percpu, oc, nr, gfp);
	return percpu_counter_init_many(oc->percpu, 0, gfp, nr);
}

/*
 * What the fold must exclude: on SMP, percpu_counter_sum(), the slow path
 * of percpu_counter_add() and a dying CPU's fold, which all take the
 * counter's lock; on UP, interrupts.
 */
static inline void owned_fold_lock(struct percpu_counter *fbc, unsigned long *flags)
{
#ifdef CONFIG_SMP
	raw_spin_lock_irqsave(&fbc->lock, *flags);
#else
	local_irq_save(*flags);
#endif
}

static inline void owned_fold_unlock(struct percpu_counter *fbc, unsigned long flags)
{
#ifdef CONFIG_SMP
	raw_spin_unlock_irqrestore(&fbc->lock, flags);
#else
	local_irq_restore(flags);
#endif
}

/*
 * Is @oc ready for an upgrade by the caller? 0 if so, 1 if it is upgraded
 * already, or -EINVAL.
 */
static int owned_percpu_counters_may_upgrade(struct owned_percpu_counters *oc,
					     unsigned int nr)
{
	if (owned_percpu_counters_is_percpu(oc))
		return 1;
	if (WARN_ON_ONCE(!nr || nr > OWNED_PERCPU_COUNTERS_MAX))
		return -EINVAL;
	if (!owned_percpu_counters_as_owner(oc))
		return -EINVAL;
	return 0;
}

/*
 * Switch the first @nr counters of @oc, whose percpu_counters are set up
 * but not yet published, to per-CPU mode. The caller is the owner.
 */
static void owned_percpu_counters_publish(struct owned_percpu_counters *oc,
					  unsigned int nr)
{
	unsigned long flags;
	unsigned int i;

	oc->nr_percpu = nr;
	for (i = 0; i < nr; i++) {
		struct percpu_counter *fbc = &oc->percpu[i];
		long snap, shared;

		/*
		 * The owner is us, so oc->owner_adds[i] is stable. First give
		 * the unpublished count the current lazy value, so that a
		 * lockless percpu_counter_read() right after the flag can at
		 * most miss the shared adds that race with us.
		 *
		 * Then publish per-CPU mode and take the final lazy value in
		 * one atomic RMW. A shared add is ordered before it, and is
		 * in @shared, or after it, and then sees the flag and goes to
		 * the percpu_counter. The release orders the set-up above
		 * before the flag, for the acquire of the shared adds and of
		 * the readers.
		 *
		 * The lock keeps percpu_counter_sum() and the hotplug fold
		 * out until the count holds the final lazy value, so that a
		 * reader that sees the flag and sums is exact.
		 */
		owned_fold_lock(fbc, &flags);
		snap = atomic_long_read(&oc->shared_adds[i]);
		WRITE_ONCE(fbc->count, __owned_percpu_value(oc->owner_adds[i], snap));
		shared = atomic_long_fetch_or_release(__OWNED_PERCPU_UPGRADED,
						      &oc->shared_adds[i]);
		owned_fold_hook(fbc, true);
		WRITE_ONCE(fbc->count, __owned_percpu_value(oc->owner_adds[i], shared));
		owned_fold_unlock(fbc, flags);
		owned_fold_hook(fbc, false);
	}
	/*
	 * All counters are percpu_counters: say so in the owner's line too,
	 * so that an add needs one load to find its path. Release: whoever
	 * sees it sees the folds above (owned_percpu_counter_add()). The
	 * owner's adds are ordinary percpu_counter adds from now on.
	 */
	smp_store_release(&oc->owner, __OWNED_PERCPU_SHARED);
}

/**
 * owned_percpu_counters_upgrade() - switch a set to per-CPU mode
 * @oc: the set
 * @nr: number of counters in use in the set, at most
 *	%OWNED_PERCPU_COUNTERS_MAX; the others must not be used once the set
 *	is upgraded
 * @gfp: allocation flags, for the per-CPU deltas
 *
 * Only the owner may upgrade, in task context: anyone else could fold the
 * owner's word while the owner is in the middle of an add, and is refused.
 * Shared adds and readers may run concurrently: no update is lost.
 * Upgrading an upgraded set does nothing. May sleep if @gfp allows it.
 *
 * Return: 0; the error of the allocation, and the counters are then still
 * lazy, exact and own nothing; or -EINVAL if the caller is not the owner.
 */
int owned_percpu_counters_upgrade(struct owned_percpu_counters *oc,
				  unsigned int nr, gfp_t gfp)
{
	int err;

	might_alloc(gfp);
	err = owned_percpu_counters_may_upgrade(oc, nr);
	if (err)
		return err < 0 ? err : 0;

	/*
	 * Everything a per-CPU add needs is in place before any counter is
	 * published, the hotplug list included: no CPU can hold a delta
	 * for a counter that a dying CPU's fold would miss.
	 */
	err = owned_percpu_counters_init_percpu(oc, nr, gfp);
	if (err)
		return err;
	oc->storage = false;
	owned_percpu_counters_publish(oc, nr);
	return 0;
}

/**
 * owned_percpu_counters_upgrade_storage() - switch a set to per-CPU mode on given deltas
 * @oc: the set
 * @nr: number of counters in use in the set, as for
 *	owned_percpu_counters_upgrade()
 * @deltas: per-CPU deltas for the @nr counters, the one of counter i at
 *	@deltas + i, zero on every possible CPU; not %NULL, even on !SMP,
 *	where they are not used
 *
 * owned_percpu_counters_upgrade() without the allocation: the counters use
 * the caller's @deltas (see __percpu_counter_init_many_storage()) until
 * owned_percpu_counters_release() gives them back, zero again. The same
 * rules, but it cannot fail for the owner, and it allocates nothing; it
 * takes a spinlock_t (the percpu_counters' hotplug list).
 *
 * Return: 0; -EEXIST if the set is upgraded already, and @deltas is not
 * used; or -EINVAL if the caller is not the owner, or @deltas is %NULL.
 */
int owned_percpu_counters_upgrade_storage(struct owned_percpu_counters *oc,
					  unsigned int nr, s32 __percpu *deltas)
{
	int err = owned_percpu_counters_may_upgrade(oc, nr);

	if (err)
		return err < 0 ? err : -EEXIST;
	if (WARN_ON_ONCE(!deltas))
		return -EINVAL;
	/* As in owned_percpu_counters_upgrade(): all set up, then published. */
	percpu_counter_init_many_storage(oc->percpu, 0, deltas, nr);
	oc->storage = true;
	owned_percpu_counters_publish(oc, nr);
	return 0;
}

/**
 * owned_percpu_counters_release() - exact values of a set, and its end
 * @oc: the set
 * @nr: number of counters to sum, from the first, as for
 *	owned_percpu_counters_sum_many()
 * @sums: one value per counter is stored here
 *
 * owned_percpu_counters_sum_many() and owned_percpu_counters_destroy() in
 * one, for a set that no one adds to any more. The deltas given to
 * owned_percpu_counters_upgrade_storage() are left zero on every possible
 * CPU, ready for another set, in the one walk that sums them, over the
 * CPUs that may hold deltas (percpu_counter_release_many()); deltas the
 * upgrade allocated are freed. The set needs owned_percpu_counters_init()
 * before any new use; until then, releasing it again gives the same
 * values. Called where percpu_counter_destroy() may be.
 */
void owned_percpu_counters_release(struct owned_percpu_counters *oc,
				   unsigned int nr, s64 *sums)
{
	s64 all[OWNED_PERCPU_COUNTERS_MAX];
	unsigned int i;

	if (!owned_percpu_counters_is_percpu(oc) || !oc->storage) {
		owned_percpu_counters_sum_many(oc, nr, sums);
		owned_percpu_counters_destroy(oc);
		return;
	}
	/* Released whatever @nr is: a set on no list owns nothing. */
	percpu_counter_release_many(oc->percpu, oc->nr_percpu, all);
	WARN_ON_ONCE(!nr || nr > oc->nr_percpu);
	for (i = 0; i < nr && i < OWNED_PERCPU_COUNTERS_MAX; i++)
		sums[i] = i < oc->nr_percpu ? all[i] : 0;
}

/**
 * owned_percpu_counters_destroy() - free the per-CPU side of a set
 * @oc: the set
 *
 * Takes upgraded counters off the CPU hotplug list and frees their deltas,
 * or leaves them zero if they were given to
 * owned_percpu_counters_upgrade_storage(); lazy counters own nothing.
 * Process context; the set must no longer be in use, and needs
 * owned_percpu_counters_init() before any new use.
 */
void owned_percpu_counters_destroy(struct owned_percpu_counters *oc)
{
	s64 sums[OWNED_PERCPU_COUNTERS_MAX];

	if (!owned_percpu_counters_is_percpu(oc))
		return;
	if (oc->storage)
		percpu_counter_release_many(oc->percpu, oc->nr_percpu, sums);
	else
		percpu_counter_destroy_many(oc->percpu, oc->nr_percpu);
}
