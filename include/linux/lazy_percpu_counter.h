/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_LAZY_PERCPU_COUNTER_H
#define _LINUX_LAZY_PERCPU_COUNTER_H

/*
 * A lazy percpu counter costs no per-CPU memory while a single owner
 * updates it, and becomes an ordinary struct percpu_counter when it is
 * upgraded, without losing an update. See
 * Documentation/core-api/lazy_percpu_counter.rst.
 *
 * Lazy mode:
 *   @local   holds the owner's adds. Only the owner writes it, with plain
 *            (WRITE_ONCE) stores; on 32-bit kernels, where a 64-bit store
 *            can tear, the owner uses @remote as well and @local stays 0.
 *   @remote  holds every other add, atomically, as twice the value: bit 0
 *            is the mode flag and stays clear in lazy mode.
 *   The value is @local + @remote / 2.
 *
 * Per-CPU mode (bit 0 of @remote set): @pcpu is an initialised
 * percpu_counter that holds the whole value. @local and @remote are no
 * longer read.
 *
 * An all-zero counter is a valid lazy counter with value 0, so statically
 * allocated counters need no initialiser (LAZY_PERCPU_COUNTER_INIT spells
 * it out).
 */

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/gfp_types.h>
#include <linux/percpu_counter.h>
#include <linux/types.h>

struct lazy_percpu_counter {
	struct percpu_counter pcpu;
	s64 local;
	atomic64_t remote;
};

#define LAZY_PERCPU_COUNTER_PERCPU	1LL

#define LAZY_PERCPU_COUNTER_INIT	{ .local = 0, .remote = ATOMIC64_INIT(0) }

/**
 * lazy_percpu_counter_init_many() - initialise lazy counters
 * @c: array of counters
 * @amount: initial value of each counter
 * @nr_counters: number of counters in @c
 *
 * The counters start in lazy mode. Nothing is allocated and nothing can
 * fail. Any context; the counters must not be in use yet.
 */
static inline void lazy_percpu_counter_init_many(struct lazy_percpu_counter *c,
						 s64 amount, u32 nr_counters)
{
	u32 i;

	for (i = 0; i < nr_counters; i++) {
		c[i] = (struct lazy_percpu_counter)LAZY_PERCPU_COUNTER_INIT;
		atomic64_set(&c[i].remote, amount * 2);
	}
}

/**
 * lazy_percpu_counter_is_percpu() - has the counter been upgraded?
 * @c: the counter
 *
 * Return: true once lazy_percpu_counter_upgrade_many() has switched @c to
 * per-CPU mode, false while @c is lazy. Any context.
 *
 * The acquire pairs with the release in the upgrade: whoever sees per-CPU
 * mode also sees the initialised @c->pcpu.
 */
static inline bool lazy_percpu_counter_is_percpu(const struct lazy_percpu_counter *c)
{
	return atomic64_read_acquire(&c->remote) & LAZY_PERCPU_COUNTER_PERCPU;
}

/**
 * lazy_percpu_counter_add_remote() - add to a counter from any context
 * @c: the counter
 * @amount: value to add
 *
 * Safe in any context and concurrently with the owner, other remote adds
 * and an upgrade. In lazy mode this is one atomic RMW on @c->remote; in
 * per-CPU mode it is percpu_counter_add().
 */
static inline void lazy_percpu_counter_add_remote(struct lazy_percpu_counter *c,
						  s64 amount)
{
	if (!lazy_percpu_counter_is_percpu(c)) {
		/*
		 * Fully ordered. If the flag was still clear, the add is in
		 * the word before the upgrade took its final value, so the
		 * upgrade folds it. If the flag was set, the word is no
		 * longer read (the even add leaves the flag set) and the
		 * initialised per-CPU counter takes the add instead.
		 */
		s64 old = atomic64_fetch_add(amount * 2, &c->remote);

		if (likely(!(old & LAZY_PERCPU_COUNTER_PERCPU)))
			return;
	}
	percpu_counter_add(&c->pcpu, amount);
}

/**
 * lazy_percpu_counter_add_local() - add to a counter from its owner
 * @c: the counter
 * @amount: value to add
 *
 * Only the owner may call this: the one task that updates the counter with
 * plain stores, and that alone may upgrade it. Calls from the owner must
 * not nest (no use from interrupts). Everyone else must use
 * lazy_percpu_counter_add_remote().
 */
static inline void lazy_percpu_counter_add_local(struct lazy_percpu_counter *c,
						 s64 amount)
{
	/* Only the owner upgrades, so the mode cannot change under us. */
	if (lazy_percpu_counter_is_percpu(c))
		percpu_counter_add(&c->pcpu, amount);
	else if (IS_ENABLED(CONFIG_64BIT))
		/* Racy readers use READ_ONCE(); a 64-bit store cannot tear. */
		WRITE_ONCE(c->local, c->local + amount);
	else
		lazy_percpu_counter_add_remote(c, amount);
}

static inline s64 __lazy_percpu_counter_value(const struct lazy_percpu_counter *c,
					      s64 word)
{
	s64 local = IS_ENABLED(CONFIG_64BIT) ? READ_ONCE(c->local) : 0;

	return local + (word >> 1);
}

/**
 * lazy_percpu_counter_read() - cheap, approximate value
 * @c: the counter
 *
 * Any context.
 *
 * Return: in lazy mode, the sum of the two words, exact for a quiescent
 * counter; in per-CPU mode, percpu_counter_read(), off by less than
 * batch * num_online_cpus(). May be negative.
 */
static inline s64 lazy_percpu_counter_read(struct lazy_percpu_counter *c)
{
	s64 word = atomic64_read_acquire(&c->remote);

	if (word & LAZY_PERCPU_COUNTER_PERCPU)
		return percpu_counter_read(&c->pcpu);
	return __lazy_percpu_counter_value(c, word);
}

/**
 * lazy_percpu_counter_read_positive() - lazy_percpu_counter_read(), clamped at 0
 * @c: the counter
 *
 * Return: the approximate value, or 0 when it is negative. Any context.
 */
static inline s64 lazy_percpu_counter_read_positive(struct lazy_percpu_counter *c)
{
	s64 ret = lazy_percpu_counter_read(c);

	return ret > 0 ? ret : 0;
}

/**
 * lazy_percpu_counter_sum() - exact value of a quiescent counter
 * @c: the counter
 *
 * Any context in lazy mode; in per-CPU mode, the context of
 * percpu_counter_sum(), which takes the counter's lock and walks the
 * online CPUs.
 *
 * Return: the value, exact for a quiescent counter in both modes. May be
 * negative.
 */
static inline s64 lazy_percpu_counter_sum(struct lazy_percpu_counter *c)
{
	s64 word = atomic64_read_acquire(&c->remote);

	if (word & LAZY_PERCPU_COUNTER_PERCPU)
		return percpu_counter_sum(&c->pcpu);
	return __lazy_percpu_counter_value(c, word);
}

/**
 * lazy_percpu_counter_sum_positive() - lazy_percpu_counter_sum(), clamped at 0
 * @c: the counter
 *
 * Return: the exact value of a quiescent counter, or 0 when it is
 * negative. Same context rules as lazy_percpu_counter_sum().
 */
static inline s64 lazy_percpu_counter_sum_positive(struct lazy_percpu_counter *c)
{
	s64 ret = lazy_percpu_counter_sum(c);

	return ret > 0 ? ret : 0;
}

int __lazy_percpu_counter_upgrade_many(struct lazy_percpu_counter *c,
				       u32 nr_counters, gfp_t gfp,
				       struct lock_class_key *key);

/**
 * lazy_percpu_counter_upgrade_many() - switch lazy counters to per-CPU mode
 * @c: array of counters
 * @nr_counters: number of counters in @c
 * @gfp: allocation flags of the one per-CPU allocation for all counters
 *
 * Only the owner may upgrade, and upgrades of one array must not run
 * concurrently. Remote adds and readers may run concurrently: no update is
 * lost. May sleep if @gfp allows it. Upgrading upgraded counters is a
 * no-op.
 *
 * Return: 0, or -ENOMEM when the allocation fails; the counters are then
 * still lazy and exact, and nothing was allocated.
 */
#define lazy_percpu_counter_upgrade_many(c, nr_counters, gfp)		\
	({								\
		static struct lock_class_key __key;			\
									\
		__lazy_percpu_counter_upgrade_many(c, nr_counters, gfp,	\
						   &__key);		\
	})

void lazy_percpu_counter_destroy_many(struct lazy_percpu_counter *c,
				      u32 nr_counters);

#if IS_ENABLED(CONFIG_KUNIT)
int lazy_percpu_counter_alloc_many(struct lazy_percpu_counter *c,
				   u32 nr_counters, gfp_t gfp,
				   struct lock_class_key *key);
#endif

#endif /* _LINUX_LAZY_PERCPU_COUNTER_H */
