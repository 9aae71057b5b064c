// SPDX-License-Identifier: GPL-2.0
/*
 * Lazy percpu counters: the upgrade from lazy to per-CPU mode.
 * See include/linux/lazy_percpu_counter.h for the representation and
 * Documentation/core-api/lazy_percpu_counter.rst for the rules.
 */

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/irqflags.h>
#include <linux/lazy_percpu_counter.h>
#include <linux/sched/mm.h>
#include <linux/spinlock.h>

/*
 * The per-CPU side of all @nr_counters counters, in one allocation, set up
 * but not yet published: lock, count 0, per-CPU deltas 0, debug object
 * active and, with CONFIG_HOTPLUG_CPU, on the hotplug list. It is a KUnit
 * stub point, so that the tests can make the allocation fail.
 */
VISIBLE_IF_KUNIT int lazy_percpu_counter_alloc_many(struct lazy_percpu_counter *c,
						    u32 nr_counters, gfp_t gfp,
						    struct lock_class_key *key)
{
	KUNIT_STATIC_STUB_REDIRECT(lazy_percpu_counter_alloc_many, c,
				   nr_counters, gfp, key);
	return __percpu_counter_init_strided(&c->pcpu, sizeof(*c), 0, gfp,
					     nr_counters, key);
}
EXPORT_SYMBOL_IF_KUNIT(lazy_percpu_counter_alloc_many);

/*
 * Against whom the fold must be atomic: on SMP, percpu_counter_sum() and a
 * dying CPU's fold, which take the counter's lock; on UP, interrupts.
 */
static inline void lazy_fold_lock(struct lazy_percpu_counter *c,
				  unsigned long *flags)
{
#ifdef CONFIG_SMP
	raw_spin_lock_irqsave(&c->pcpu.lock, *flags);
#else
	local_irq_save(*flags);
#endif
}

static inline void lazy_fold_unlock(struct lazy_percpu_counter *c,
				    unsigned long flags)
{
#ifdef CONFIG_SMP
	raw_spin_unlock_irqrestore(&c->pcpu.lock, flags);
#else
	local_irq_restore(flags);
#endif
}

/**
 * __lazy_percpu_counter_upgrade_many() - see lazy_percpu_counter_upgrade_many()
 * @c: array of counters
 * @nr_counters: number of counters in @c
 * @gfp: allocation flags
 * @key: lockdep class of the counters' locks
 *
 * Return: 0 or -ENOMEM.
 */
int __lazy_percpu_counter_upgrade_many(struct lazy_percpu_counter *c,
				       u32 nr_counters, gfp_t gfp,
				       struct lock_class_key *key)
{
	unsigned long flags;
	u32 i;
	int err;

	might_alloc(gfp);
	/* Only the owner upgrades, one upgrade at a time: no race here. */
	if (lazy_percpu_counter_is_percpu(c))
		return 0;

	/*
	 * Everything a per-CPU add needs is in place before any counter is
	 * published below, including the hotplug list: no CPU can hold a
	 * delta for a counter that a dying CPU's fold would miss. On failure
	 * nothing was allocated and the counters are untouched.
	 */
	err = lazy_percpu_counter_alloc_many(c, nr_counters, gfp, key);
	if (err)
		return err;

	for (i = 0; i < nr_counters; i++) {
		struct lazy_percpu_counter *lc = &c[i];
		s64 snap, word;

		/*
		 * The owner is us, so @local is stable. First give the
		 * unpublished count the current lazy value, so that a
		 * lockless percpu_counter_read() right after the flag can at
		 * most miss the remote adds racing with us.
		 *
		 * Then publish per-CPU mode and take the final lazy value in
		 * one atomic RMW. A remote add is ordered before it, and then
		 * is in @word, or after it, and then sees the flag and goes
		 * to the per-CPU counter. The release orders the set-up above
		 * before the flag, for the acquire of the readers.
		 *
		 * The lock keeps percpu_counter_sum() and the hotplug fold
		 * out until the count holds the final lazy value, so that a
		 * reader that sees the flag and sums is exact.
		 */
		lazy_fold_lock(lc, &flags);
		snap = atomic64_read(&lc->remote);
		WRITE_ONCE(lc->pcpu.count,
			   lc->pcpu.count + __lazy_percpu_counter_value(lc, snap));
		word = atomic64_fetch_or_release(LAZY_PERCPU_COUNTER_PERCPU,
						 &lc->remote);
		WRITE_ONCE(lc->pcpu.count,
			   lc->pcpu.count + ((word - snap) >> 1));
		lazy_fold_unlock(lc, flags);
	}
	return 0;
}
EXPORT_SYMBOL(__lazy_percpu_counter_upgrade_many);

/**
 * lazy_percpu_counter_destroy_many() - free the per-CPU side of counters
 * @c: array of counters
 * @nr_counters: number of counters in @c
 *
 * Frees the per-CPU memory and takes upgraded counters off the hotplug
 * list; lazy counters hold nothing to free. Process context; the counters
 * must no longer be in use, and need lazy_percpu_counter_init_many()
 * before any new use.
 */
void lazy_percpu_counter_destroy_many(struct lazy_percpu_counter *c,
				      u32 nr_counters)
{
	if (lazy_percpu_counter_is_percpu(c))
		percpu_counter_destroy_strided(&c->pcpu, sizeof(*c),
					       nr_counters);
}
EXPORT_SYMBOL(lazy_percpu_counter_destroy_many);
