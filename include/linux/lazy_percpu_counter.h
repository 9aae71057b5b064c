/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_LAZY_PERCPU_COUNTER_H
#define _LINUX_LAZY_PERCPU_COUNTER_H

/*
 * Lazy percpu counters: a set of counters that costs no per-CPU memory
 * while one task, its owner, updates it, and that becomes a set of
 * ordinary percpu_counters when it is upgraded, without losing an update.
 * See Documentation/core-api/lazy_percpu_counter.rst.
 */

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/gfp_types.h>
#include <linux/percpu_counter.h>
#include <linux/string.h>
#include <linux/types.h>

/* Counters per set: the owner's words share a cache line with two more. */
#define LAZY_PERCPU_COUNTERS_MAX	(SMP_CACHE_BYTES / sizeof(long) - 2)

/**
 * struct lazy_percpu_counters - a set of lazy percpu counters
 * @percpu: set by the upgrade; read and written by the owner only.
 * @pcpu: the percpu_counters of the set, once upgraded.
 * @owner: the owner's adds while lazy; written by the owner only.
 * @shared: everyone else's adds while lazy, atomically, as twice the value;
 *	bit 0 is set when the counter is upgraded.
 *
 * The fields are private to lib/lazy_percpu_counter.c and the inline
 * helpers below. The owner's fields fill one cache line and the shared
 * words the next, so that the owner never writes a line that others write
 * atomically. The counters of a set are upgraded together.
 *
 * An all-zero set is a valid set of lazy counters with value 0, so a
 * statically allocated set needs no initialiser.
 */
struct lazy_percpu_counters {
	bool percpu;
	struct percpu_counter *pcpu;
	long owner[LAZY_PERCPU_COUNTERS_MAX];
	atomic_long_t shared[LAZY_PERCPU_COUNTERS_MAX] ____cacheline_aligned_in_smp;
} ____cacheline_aligned_in_smp;

/**
 * lazy_percpu_counters_init() - initialise a set of lazy percpu counters
 * @lc: the set
 *
 * All counters of the set are lazy, with value 0. Nothing is allocated and
 * nothing can fail. The set must not be in use.
 */
static inline void lazy_percpu_counters_init(struct lazy_percpu_counters *lc)
{
	memset(lc, 0, sizeof(*lc));
}

/**
 * lazy_percpu_counter_add_owner() - add to a counter, as its owner
 * @lc: the set
 * @i: index of the counter in the set
 * @amount: value to add
 *
 * Only the owner may call this: the one task that may upgrade the set, and
 * the only one that may update a lazy counter without an atomic
 * instruction. Its calls must not nest: task context only. After the
 * upgrade, any task that uses the object the counters belong to may call
 * it too, since only the owner could have set the mode it reads.
 * Everyone else uses lazy_percpu_counter_add_shared().
 */
static __always_inline void lazy_percpu_counter_add_owner(struct lazy_percpu_counters *lc,
							  unsigned int i, long amount)
{
	/*
	 * Only the owner sets @lc->percpu, in the upgrade, and only the
	 * owner reads it here: a plain load sees the owner's own store.
	 * Others read the owner's word racily, with READ_ONCE().
	 */
	if (likely(!lc->percpu))
		WRITE_ONCE(lc->owner[i], lc->owner[i] + amount);
	else
		percpu_counter_add(&lc->pcpu[i], amount);
}

void lazy_percpu_counter_add_shared(struct lazy_percpu_counters *lc,
				    unsigned int i, long amount);
s64 lazy_percpu_counter_read(struct lazy_percpu_counters *lc, unsigned int i);
s64 lazy_percpu_counter_sum(struct lazy_percpu_counters *lc, unsigned int i);
void lazy_percpu_counters_sum(struct lazy_percpu_counters *lc, unsigned int nr,
			      s64 *sums);
bool lazy_percpu_counters_is_percpu(const struct lazy_percpu_counters *lc);
int lazy_percpu_counters_upgrade(struct lazy_percpu_counters *lc,
				 unsigned int nr, gfp_t gfp);
void lazy_percpu_counters_destroy(struct lazy_percpu_counters *lc,
				  unsigned int nr);

#if IS_ENABLED(CONFIG_KUNIT)
int lazy_percpu_counters_alloc(struct lazy_percpu_counters *lc,
			       unsigned int nr, gfp_t gfp);
void lazy_percpu_counter_fold_point(struct percpu_counter *pcpu);
#endif

#endif /* _LINUX_LAZY_PERCPU_COUNTER_H */
