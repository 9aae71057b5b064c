// SPDX-License-Identifier: GPL-2.0
/*
 * Lazy percpu counters: reads, shared adds and the upgrade from lazy to
 * per-CPU mode. See include/linux/lazy_percpu_counter.h for the layout and
 * Documentation/core-api/lazy_percpu_counter.rst for the rules.
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
#include <linux/irqflags.h>
#include <linux/lazy_percpu_counter.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#define LAZY_PERCPU	1L

/*
 * The value of a lazy counter. The shared word holds its total modulo
 * 2^(BITS_PER_LONG - 1), so the value is known modulo that too: it is
 * computed without overflow in unsigned arithmetic and sign-extended from
 * bit BITS_PER_LONG - 2. Either word may wrap around, as long as the value
 * fits. On 32-bit kernels that is +-2^30 (for the mm: 4 TiB of pages).
 */
static long lazy_value(long owner, long word)
{
	unsigned long v = (unsigned long)owner + ((unsigned long)word >> 1);

	return (long)(v << 1) >> 1;
}

/**
 * lazy_percpu_counter_add_shared() - add to a counter, as anyone
 * @lc: the set
 * @i: index of the counter in the set
 * @amount: value to add
 *
 * Safe in any context but NMI (per-CPU mode takes the counter's raw
 * spinlock with interrupts disabled when a CPU's delta overflows),
 * concurrently with the owner, with other shared adds and with the
 * upgrade. While lazy, this is one atomic read-modify-write on a word the
 * owner does not write.
 */
void lazy_percpu_counter_add_shared(struct lazy_percpu_counters *lc,
				    unsigned int i, long amount)
{
	atomic_long_t *shared = &lc->shared[i];

	/*
	 * Acquire, here and on the RMW, pairs with the release of the
	 * upgrade: whoever sees the flag also sees @lc->pcpu set up. If the
	 * flag is still clear in the value the RMW returns, the add is in
	 * the word before the upgrade took its final value, and is folded.
	 * Otherwise the word is dead (an even add leaves the flag set) and
	 * the add goes to the percpu_counter.
	 */
	if (!(atomic_long_read_acquire(shared) & LAZY_PERCPU) &&
	    !(atomic_long_fetch_add_acquire(2 * amount, shared) & LAZY_PERCPU))
		return;
	percpu_counter_add(&lc->pcpu[i], amount);
}

/**
 * lazy_percpu_counter_read() - cheap, approximate value of a counter
 * @lc: the set
 * @i: index of the counter in the set
 *
 * Any context but NMI.
 *
 * Return: while lazy, the value, exact if no add runs concurrently; once
 * upgraded, percpu_counter_read(), which is off by less than the batch
 * times the number of online CPUs. May be negative.
 */
s64 lazy_percpu_counter_read(struct lazy_percpu_counters *lc, unsigned int i)
{
	long word = atomic_long_read_acquire(&lc->shared[i]);

	/* percpu_counter_read(), marked: the upgrade may store the count. */
	if (word & LAZY_PERCPU)
		return READ_ONCE(lc->pcpu[i].count);
	return lazy_value(READ_ONCE(lc->owner[i]), word);
}

/**
 * lazy_percpu_counter_sum() - exact value of a counter
 * @lc: the set
 * @i: index of the counter in the set
 *
 * Any context but NMI; once upgraded this is percpu_counter_sum(), which
 * walks the online CPUs with the counter's lock held and interrupts off.
 *
 * Return: the value, exact if no add runs concurrently, in both modes.
 * May be negative.
 */
s64 lazy_percpu_counter_sum(struct lazy_percpu_counters *lc, unsigned int i)
{
	long word = atomic_long_read_acquire(&lc->shared[i]);

	if (word & LAZY_PERCPU)
		return percpu_counter_sum(&lc->pcpu[i]);
	return lazy_value(READ_ONCE(lc->owner[i]), word);
}

/**
 * lazy_percpu_counters_sum() - exact values of the first counters of a set
 * @lc: the set
 * @nr: number of counters to sum, from the first
 * @sums: one value per counter is stored here
 *
 * Like lazy_percpu_counter_sum() on each counter, but once the set is
 * upgraded, in a single walk over the online CPUs
 * (percpu_counter_sum_many()).
 */
void lazy_percpu_counters_sum(struct lazy_percpu_counters *lc, unsigned int nr,
			      s64 *sums)
{
	unsigned int i;

	/* The flags are set in order: the last one means all of them. */
	if (atomic_long_read_acquire(&lc->shared[nr - 1]) & LAZY_PERCPU) {
		percpu_counter_sum_many(lc->pcpu, nr, sums);
		return;
	}
	for (i = 0; i < nr; i++)
		sums[i] = lazy_percpu_counter_sum(lc, i);
}

/**
 * lazy_percpu_counters_is_percpu() - has the set been upgraded?
 * @lc: the set
 *
 * Any context. Whoever sees true also sees the percpu_counters set up.
 *
 * Return: true once lazy_percpu_counters_upgrade() switched the set to
 * per-CPU mode.
 */
bool lazy_percpu_counters_is_percpu(const struct lazy_percpu_counters *lc)
{
	return atomic_long_read_acquire(&lc->shared[0]) & LAZY_PERCPU;
}

/*
 * The percpu_counters of the set, one allocation for their structures and
 * one per-CPU allocation for their deltas, set up but not yet published:
 * lock, count 0, deltas 0 and, with CONFIG_HOTPLUG_CPU, on the hotplug
 * list. A KUnit stub point, so that tests can make it fail.
 */
VISIBLE_IF_KUNIT int lazy_percpu_counters_alloc(struct lazy_percpu_counters *lc,
						unsigned int nr, gfp_t gfp)
{
	struct percpu_counter *pcpu;

	KUNIT_STATIC_STUB_REDIRECT(lazy_percpu_counters_alloc, lc, nr, gfp);
	pcpu = kmalloc_array(nr, sizeof(*pcpu), gfp);
	if (!pcpu)
		return -ENOMEM;
	if (percpu_counter_init_many(pcpu, 0, gfp, nr)) {
		kfree(pcpu);
		return -ENOMEM;
	}
	lc->pcpu = pcpu;
	return 0;
}

/*
 * A KUnit stub point in the middle of the fold: the flag is set, the count
 * not yet final, the lock held. Tests look at what everyone else can see
 * there. Does nothing otherwise.
 */
VISIBLE_IF_KUNIT void lazy_percpu_counter_fold_point(struct percpu_counter *pcpu)
{
	KUNIT_STATIC_STUB_REDIRECT(lazy_percpu_counter_fold_point, pcpu);
}

/*
 * What the fold must exclude: on SMP, percpu_counter_sum(), the slow path
 * of percpu_counter_add() and a dying CPU's fold, which all take the
 * counter's lock; on UP, interrupts.
 */
static inline void lazy_fold_lock(struct percpu_counter *pcpu, unsigned long *flags)
{
#ifdef CONFIG_SMP
	raw_spin_lock_irqsave(&pcpu->lock, *flags);
#else
	local_irq_save(*flags);
#endif
}

static inline void lazy_fold_unlock(struct percpu_counter *pcpu, unsigned long flags)
{
#ifdef CONFIG_SMP
	raw_spin_unlock_irqrestore(&pcpu->lock, flags);
#else
	local_irq_restore(flags);
#endif
}

/**
 * lazy_percpu_counters_upgrade() - switch a set to per-CPU mode
 * @lc: the set
 * @nr: number of counters in use in the set, at most
 *	%LAZY_PERCPU_COUNTERS_MAX
 * @gfp: allocation flags, for the percpu_counters and their deltas
 *
 * Only the owner may upgrade. Shared adds and readers may run concurrently:
 * no update is lost. Upgrading an upgraded set does nothing. May sleep if
 * @gfp allows it.
 *
 * Return: 0, or the error of the allocation; the counters are then still
 * lazy and exact, and nothing is left allocated.
 */
int lazy_percpu_counters_upgrade(struct lazy_percpu_counters *lc,
				 unsigned int nr, gfp_t gfp)
{
	unsigned long flags;
	unsigned int i;
	int err;

	might_alloc(gfp);
	/* Only the owner upgrades, and only the owner writes lc->percpu. */
	if (lc->percpu)
		return 0;
	if (WARN_ON_ONCE(!nr || nr > LAZY_PERCPU_COUNTERS_MAX))
		return -EINVAL;

	/*
	 * Everything a per-CPU add needs is in place before any counter is
	 * published, the hotplug list included: no CPU can hold a delta
	 * for a counter that a dying CPU's fold would miss. On failure the
	 * counters are untouched and nothing is left allocated.
	 */
	err = lazy_percpu_counters_alloc(lc, nr, gfp);
	if (err)
		return err;

	for (i = 0; i < nr; i++) {
		struct percpu_counter *pcpu = &lc->pcpu[i];
		long snap, word;

		/*
		 * The owner is us, so lc->owner[i] is stable. First give the
		 * unpublished count the current lazy value, so that a
		 * lockless percpu_counter_read() right after the flag can at
		 * most miss the shared adds that race with us.
		 *
		 * Then publish per-CPU mode and take the final lazy value in
		 * one atomic RMW. A shared add is ordered before it, and is
		 * in @word, or after it, and then sees the flag and goes to
		 * the percpu_counter. The release orders the set-up above
		 * (lc->pcpu included) before the flag, for the acquire of the
		 * shared adds and of the readers.
		 *
		 * The lock keeps percpu_counter_sum() and the hotplug fold
		 * out until the count holds the final lazy value, so that a
		 * reader that sees the flag and sums is exact.
		 */
		lazy_fold_lock(pcpu, &flags);
		snap = atomic_long_read(&lc->shared[i]);
		WRITE_ONCE(pcpu->count, lazy_value(lc->owner[i], snap));
		word = atomic_long_fetch_or_release(LAZY_PERCPU, &lc->shared[i]);
		lazy_percpu_counter_fold_point(pcpu);
		WRITE_ONCE(pcpu->count, lazy_value(lc->owner[i], word));
		lazy_fold_unlock(pcpu, flags);
	}
	lc->percpu = true;
	return 0;
}

/**
 * lazy_percpu_counters_destroy() - free the per-CPU side of a set
 * @lc: the set
 * @nr: number of counters in use in the set
 *
 * Takes upgraded counters off the CPU hotplug list and frees them; lazy
 * counters own nothing. Process context; the set must no longer be in
 * use, and needs lazy_percpu_counters_init() before any new use.
 */
void lazy_percpu_counters_destroy(struct lazy_percpu_counters *lc,
				  unsigned int nr)
{
	if (!lazy_percpu_counters_is_percpu(lc))
		return;
	percpu_counter_destroy_many(lc->pcpu, nr);
	kfree(lc->pcpu);
	lc->pcpu = NULL;
}
