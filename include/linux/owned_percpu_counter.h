/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_OWNED_PERCPU_COUNTER_H
#define _LINUX_OWNED_PERCPU_COUNTER_H

/*
 * Owned percpu counters: a set of counters that one task, its owner, updates
 * without atomics and without per-CPU memory, until the set is upgraded to
 * ordinary percpu_counters without losing an update.
 * See Documentation/core-api/owned_percpu_counter.rst.
 */

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/gfp_types.h>
#include <linux/percpu_counter.h>
#include <linux/preempt.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/barrier.h>
#include <asm/current.h>

struct task_struct;

/* Counters per set: the owner's pointer and words fit a 64-byte line. */
#define OWNED_PERCPU_COUNTERS_MAX	4

/* Private to the helpers: bit 0 of a shared word, the counter is upgraded; */
#define __OWNED_PERCPU_UPGRADED		1L
/* and the owner of an upgraded set, which is no task. */
#define __OWNED_PERCPU_SHARED		((struct task_struct *)1)

/**
 * struct owned_percpu_counters - a set of owned percpu counters
 * @owner: the task that may add without atomics while the set is lazy, or
 *	%NULL if none may; %__OWNED_PERCPU_SHARED once the set is upgraded.
 * @nr_percpu: the number of percpu_counters the upgrade set up.
 * @storage: their per-CPU deltas are the caller's, given to
 *	owned_percpu_counters_upgrade_storage(); not freed at the end.
 * @owner_adds: the owner's adds while lazy; written by the owner only.
 * @shared_adds: everyone else's adds while lazy, atomically, as twice the
 *	value; bit 0 is set when the counter is upgraded.
 * @percpu: the percpu_counters of an upgraded set.
 *
 * The fields are private to lib/owned_percpu_counter.c and the inline
 * helpers below. What the owner writes comes first; the shared words start
 * a new cache line, so that the owner never writes a line that other CPUs
 * update atomically. The percpu_counters follow them: they are not touched
 * while the set is lazy. Once it is upgraded the shared words are dead:
 * only the adds that raced with the upgrade, and direct calls of
 * owned_percpu_counter_add_shared(), still write them.
 *
 * An all-zero set is a valid lazy set with value 0 and no owner, so a
 * statically allocated set needs no initialiser: all its adds are shared.
 */
struct owned_percpu_counters {
	struct task_struct *owner;
	unsigned int nr_percpu;
	bool storage;
	long owner_adds[OWNED_PERCPU_COUNTERS_MAX];
	atomic_long_t shared_adds[OWNED_PERCPU_COUNTERS_MAX] ____cacheline_aligned_in_smp;
	struct percpu_counter percpu[OWNED_PERCPU_COUNTERS_MAX];
};

/**
 * owned_percpu_counters_init() - initialise a set of owned percpu counters
 * @oc: the set
 * @owner: the task that will update it most, or %NULL
 *
 * All counters of the set are lazy, with value 0. Nothing is allocated and
 * nothing can fail. The set must not be in use.
 */
static inline void owned_percpu_counters_init(struct owned_percpu_counters *oc,
					      struct task_struct *owner)
{
	memset(oc, 0, sizeof(*oc));
	oc->owner = owner;
}

/**
 * owned_percpu_counters_as_owner() - may this context add without atomics?
 * @oc: the set
 *
 * Return: true in the owner's task context while the set is lazy. An
 * interrupt that cuts into the owner is not the owner, nor is any other
 * task: they are shared, however they reach the object.
 */
static __always_inline bool owned_percpu_counters_as_owner(const struct owned_percpu_counters *oc)
{
	return READ_ONCE(oc->owner) == current && in_task();
}

void owned_percpu_counters_set_owner(struct owned_percpu_counters *oc,
				     struct task_struct *owner);

/**
 * owned_percpu_counter_add_shared() - add to a lazy counter, as anyone
 * @oc: the set
 * @i: index of the counter in the set
 * @amount: value to add
 *
 * Safe in any context but NMI (per-CPU mode takes the counter's raw
 * spinlock with interrupts disabled when a CPU's delta overflows),
 * concurrently with the owner, with other shared adds and with the
 * upgrade. One atomic read-modify-write on a word the owner does not
 * write, then, if that word says the counter is upgraded,
 * percpu_counter_add(). On an upgraded set that RMW writes a dead word
 * for nothing: callers that do not know the set to be lazy use
 * owned_percpu_counter_add(), which finds the path from the owner's line.
 */
static __always_inline void owned_percpu_counter_add_shared(struct owned_percpu_counters *oc,
							    unsigned int i, long amount)
{
	/*
	 * Acquire pairs with the release of the upgrade: whoever sees the
	 * flag also sees the percpu_counter set up. If the flag is still
	 * clear in the value the RMW returns, the add is in the word before
	 * the upgrade took its final value, and is folded. Otherwise the
	 * word is dead (an even add leaves the flag set) and the add goes
	 * to the percpu_counter.
	 */
	if (atomic_long_fetch_add_acquire(2 * amount, &oc->shared_adds[i]) &
	    __OWNED_PERCPU_UPGRADED)
		percpu_counter_add(&oc->percpu[i], amount);
}

/**
 * owned_percpu_counter_add() - add to a counter
 * @oc: the set
 * @i: index of the counter in the set
 * @amount: value to add
 *
 * Any context but NMI. The owner, in task context, adds to a word of its
 * own with a plain load, add and store; in an upgraded set, the add is a
 * percpu_counter_add(); everyone else takes
 * owned_percpu_counter_add_shared().
 */
static __always_inline void owned_percpu_counter_add(struct owned_percpu_counters *oc,
						     unsigned int i, long amount)
{
	struct task_struct *owner = READ_ONCE(oc->owner);

	/*
	 * One load of the owner's line says which path: the owner's word
	 * (a hint on each test, so that it is the path without a taken
	 * branch), the percpu_counter, or the shared word. Others read the
	 * owner's word racily, with READ_ONCE().
	 */
	if (likely(owner == current) && likely(in_task())) {
		WRITE_ONCE(oc->owner_adds[i], oc->owner_adds[i] + amount);
		return;
	}
	if (owner == __OWNED_PERCPU_SHARED) {
		/* Pairs with the release that published it: set-up seen. */
		smp_acquire__after_ctrl_dep();
		percpu_counter_add(&oc->percpu[i], amount);
		return;
	}
	owned_percpu_counter_add_shared(oc, i, amount);
}

/*
 * The value of a lazy counter. The shared word holds its total modulo
 * 2^(BITS_PER_LONG - 1), so the value is known modulo that too: it is
 * computed without overflow in unsigned arithmetic and sign-extended from
 * bit BITS_PER_LONG - 2. Either word may wrap around, as long as the value
 * fits. On 32-bit kernels that is +-2^30 (for the mm: 4 TiB of pages).
 */
static inline long __owned_percpu_value(long owner, long shared)
{
	unsigned long v = (unsigned long)owner + ((unsigned long)shared >> 1);

	return (long)(v << 1) >> 1;
}

/*
 * Return: true, with the value in *@val, if counter @i is lazy; false if it
 * is a percpu_counter. Acquire: whoever sees the flag sees the count the
 * upgrade set, and the percpu_counter it set up.
 */
static __always_inline bool __owned_percpu_lazy_value(const struct owned_percpu_counters *oc,
						      unsigned int i, long *val)
{
	long shared = atomic_long_read_acquire(&oc->shared_adds[i]);

	if (shared & __OWNED_PERCPU_UPGRADED)
		return false;
	*val = __owned_percpu_value(READ_ONCE(oc->owner_adds[i]), shared);
	return true;
}

/**
 * owned_percpu_counter_read() - cheap, approximate value of a counter
 * @oc: the set
 * @i: index of the counter in the set
 *
 * Any context but NMI. Inline: a load, and a second one while lazy.
 *
 * Return: while lazy, the value, exact if no add runs concurrently; once
 * upgraded, percpu_counter_read(), which is off by less than the batch
 * times the number of online CPUs. May be negative.
 */
static inline s64 owned_percpu_counter_read(struct owned_percpu_counters *oc,
					    unsigned int i)
{
	long val;

	if (__owned_percpu_lazy_value(oc, i, &val))
		return val;
	return READ_ONCE(oc->percpu[i].count);
}

/**
 * owned_percpu_counters_is_percpu() - has the upgrade of a set begun?
 * @oc: the set
 *
 * Any context. For the owner, and for a set no one else uses, true means
 * that all counters are percpu_counters.
 *
 * Return: true once owned_percpu_counters_upgrade() or
 * owned_percpu_counters_upgrade_storage() has switched the first counter of
 * the set to per-CPU mode.
 */
static inline bool owned_percpu_counters_is_percpu(const struct owned_percpu_counters *oc)
{
	return atomic_long_read_acquire(&oc->shared_adds[0]) & __OWNED_PERCPU_UPGRADED;
}

s64 owned_percpu_counter_sum(struct owned_percpu_counters *oc, unsigned int i);
void __owned_percpu_counters_sum_many(struct owned_percpu_counters *oc,
				      unsigned int nr, s64 *sums);

/**
 * owned_percpu_counters_sum_many() - exact values of the first counters of a set
 * @oc: the set
 * @nr: number of counters to sum, from the first; for an upgraded set,
 *	at most as many as it was upgraded with
 * @sums: one value per counter is stored here
 *
 * Like owned_percpu_counter_sum() on each counter, but once the set is
 * upgraded, in a single walk over the online CPUs
 * (percpu_counter_sum_many()). Any context but NMI. Inline while the set
 * is lazy: two loads per counter.
 */
static __always_inline void owned_percpu_counters_sum_many(struct owned_percpu_counters *oc,
							   unsigned int nr, s64 *sums)
{
	unsigned int i;
	long val;

	if (nr && nr <= OWNED_PERCPU_COUNTERS_MAX) {
		for (i = 0; i < nr && __owned_percpu_lazy_value(oc, i, &val); i++)
			sums[i] = val;
		if (i == nr)
			return;
	}
	/* Upgraded, being upgraded, or a bad @nr: out of line. */
	__owned_percpu_counters_sum_many(oc, nr, sums);
}

int owned_percpu_counters_upgrade(struct owned_percpu_counters *oc,
				  unsigned int nr, gfp_t gfp);
int owned_percpu_counters_upgrade_storage(struct owned_percpu_counters *oc,
					  unsigned int nr, s32 __percpu *deltas);
void owned_percpu_counters_release(struct owned_percpu_counters *oc,
				   unsigned int nr, s64 *sums);
void owned_percpu_counters_destroy(struct owned_percpu_counters *oc);

#if IS_ENABLED(CONFIG_KUNIT)
int owned_percpu_counters_init_percpu(struct owned_percpu_counters *oc,
				      unsigned int nr, gfp_t gfp);
/*
 * For KUnit only: called in each counter's fold, with @locked true in its
 * middle (the flag set, the count not yet final, the lock held) and false
 * right after it. It must not take locks: it may run under a raw spinlock.
 */
extern void (*owned_percpu_counter_fold_hook)(struct percpu_counter *fbc,
					      bool locked);
#endif

#endif /* _LINUX_OWNED_PERCPU_COUNTER_H */
