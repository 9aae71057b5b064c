// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for owned percpu counters (include/linux/owned_percpu_counter.h).
 *
 * The test thread is the owner of the sets it makes; kthreads are everyone
 * else.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/owned_percpu_counter.h>
#include <linux/poison.h>
#include <linux/random.h>
#include <linux/sched/task.h>

#define NR 3	/* counters per set: sets are upgraded as a whole */

struct owned_set {
	struct owned_percpu_counters oc;
};

#define HOTPLUG_LIST	(IS_ENABLED(CONFIG_SMP) && IS_ENABLED(CONFIG_HOTPLUG_CPU))

/* Is @fbc linked into the hotplug list (not unlinked, not poisoned)? */
static bool on_hotplug_list(struct percpu_counter *fbc)
{
#if defined(CONFIG_SMP) && defined(CONFIG_HOTPLUG_CPU)
	/* Racy against other counters' list_add(): a glance is all we need. */
	struct list_head *next = data_race(READ_ONCE(fbc->list.next));

	return next && next != &fbc->list && next != LIST_POISON1;
#else
	return false;
#endif
}

/* Lazy, owned by @owner, and owning no per-CPU memory. */
static void expect_lazy(struct kunit *test, struct owned_set *s,
			struct task_struct *owner)
{
	int i;

	KUNIT_EXPECT_FALSE(test, owned_percpu_counters_is_percpu(&s->oc));
	KUNIT_EXPECT_PTR_EQ(test, s->oc.owner, owner);
	for (i = 0; i < NR; i++) {
#ifdef CONFIG_SMP
		KUNIT_EXPECT_TRUE(test, !s->oc.percpu[i].counters);
#endif
		KUNIT_EXPECT_FALSE(test, on_hotplug_list(&s->oc.percpu[i]));
	}
}

static void expect_percpu(struct kunit *test, struct owned_set *s)
{
	int i;

	KUNIT_EXPECT_TRUE(test, owned_percpu_counters_is_percpu(&s->oc));
	KUNIT_EXPECT_PTR_EQ(test, s->oc.owner, __OWNED_PERCPU_SHARED);
	for (i = 0; i < NR; i++) {
#ifdef CONFIG_SMP
		KUNIT_EXPECT_TRUE(test, !!s->oc.percpu[i].counters);
#endif
		KUNIT_EXPECT_EQ(test, on_hotplug_list(&s->oc.percpu[i]), HOTPLUG_LIST);
	}
}

static void destroy_set(void *s)
{
	owned_percpu_counters_destroy(&((struct owned_set *)s)->oc);
}

/*
 * A set owned by the test thread. Allocated, as debugobjects wants for
 * percpu_counters, and destroyed when the case ends however it ends: an
 * upgraded set left on the hotplug list would corrupt it.
 */
static struct owned_set *new_set(struct kunit *test)
{
	struct owned_set *s = kunit_kmalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	owned_percpu_counters_init(&s->oc, current);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_set, s), 0);
	return s;
}

static long batch(void)
{
#ifdef CONFIG_SMP
	return percpu_counter_batch;
#else
	return 32;
#endif
}

static s64 read_error_bound(void)
{
	return IS_ENABLED(CONFIG_SMP) ? (s64)batch() * num_online_cpus() : 0;
}

/* All counters of a set, read one by one and in one pass, are @expect. */
static void expect_sums(struct kunit *test, struct owned_set *s, const s64 *expect)
{
	s64 bound = owned_percpu_counters_is_percpu(&s->oc) ? read_error_bound() : 0;
	s64 sums[NR];
	int i;

	owned_percpu_counters_sum_many(&s->oc, NR, sums);
	for (i = 0; i < NR; i++) {
		KUNIT_EXPECT_EQ_MSG(test, owned_percpu_counter_sum(&s->oc, i), expect[i],
				    "counter %d", i);
		KUNIT_EXPECT_EQ_MSG(test, sums[i], expect[i], "counter %d, one pass", i);
		KUNIT_EXPECT_LE_MSG(test, abs(owned_percpu_counter_read(&s->oc, i) - expect[i]),
				    bound, "counter %d, read", i);
	}
}

/*
 * An all-zero set, static like init_mm's, is lazy, 0 and has no owner: all
 * its adds are shared, and exact. An initialised set is lazy and 0 too.
 */
static void owned_zero_is_valid_test(struct kunit *test)
{
	static struct owned_set zeroed;
	struct owned_set *s = new_set(test);
	const s64 zero[NR] = {}, five[NR] = { 5, 0, -5 };

	expect_lazy(test, &zeroed, NULL);
	expect_sums(test, &zeroed, zero);
	owned_percpu_counter_add(&zeroed.oc, 0, 5);
	owned_percpu_counter_add(&zeroed.oc, NR - 1, -5);
	KUNIT_EXPECT_EQ(test, zeroed.oc.owner_adds[0], 0);
	expect_sums(test, &zeroed, five);
	owned_percpu_counter_add(&zeroed.oc, 0, -5);
	owned_percpu_counter_add(&zeroed.oc, NR - 1, 5);
	expect_sums(test, &zeroed, zero);
	expect_lazy(test, &zeroed, NULL);

	expect_lazy(test, s, current);
	expect_sums(test, s, zero);
}

/*
 * The owner's adds go to its own word without touching the shared one;
 * shared adds to the shared word. Adds of both kinds and signs are exact,
 * read and sum alike, and leave the other counters alone. Either word may
 * wrap around: the value is exact as long as it fits in BITS_PER_LONG - 1
 * bits.
 */
static void owned_adds_are_exact_test(struct kunit *test)
{
	struct owned_set *s = new_set(test);
	const long big = LONG_MAX / 4 + 1;
	const s64 expect[NR] = { 92, -3, 0 };
	s64 sums[NR];
	int n;

	owned_percpu_counter_add(&s->oc, 0, 5);
	KUNIT_EXPECT_EQ(test, s->oc.owner_adds[0], 5);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->oc.shared_adds[0]), 0);
	owned_percpu_counter_add_shared(&s->oc, 0, -3);
	KUNIT_EXPECT_EQ(test, s->oc.owner_adds[0], 5);
	owned_percpu_counter_add(&s->oc, 0, -10);
	owned_percpu_counter_add_shared(&s->oc, 0, 100);
	owned_percpu_counter_add_shared(&s->oc, 1, -3);
	for (n = 0; n < 4; n++) {
		owned_percpu_counter_add(&s->oc, 2, big);
		owned_percpu_counter_add_shared(&s->oc, 2, -big);
	}
	expect_sums(test, s, expect);
	expect_lazy(test, s, current);
	/* A lazy set's release is its sum. */
	owned_percpu_counters_release(&s->oc, NR, sums);
	for (n = 0; n < NR; n++)
		KUNIT_EXPECT_EQ(test, sums[n], expect[n]);
}

/*
 * An owner that gives up the set adds as a shared adder from then on, and
 * its word keeps what it added; a set without an owner can get one, whose
 * adds then go to that word.
 */
static void owned_owner_can_change_test(struct kunit *test)
{
	struct owned_set *s = new_set(test);
	const s64 expect[NR] = { 9, 0, 0 };

	owned_percpu_counter_add(&s->oc, 0, 4);
	owned_percpu_counters_set_owner(&s->oc, NULL);
	expect_lazy(test, s, NULL);
	owned_percpu_counter_add(&s->oc, 0, 2);
	KUNIT_EXPECT_EQ(test, s->oc.owner_adds[0], 4);
	owned_percpu_counters_set_owner(&s->oc, current);
	owned_percpu_counter_add(&s->oc, 0, 3);
	KUNIT_EXPECT_EQ(test, s->oc.owner_adds[0], 7);
	expect_sums(test, s, expect);
	expect_lazy(test, s, current);
}

/*
 * The upgrade keeps every value and makes the set per-CPU, with no owner:
 * adds of both kinds then go to the percpu_counters. Upgrading again does
 * nothing, and release gives the values and takes the counters off the
 * hotplug list.
 */
static int fail_init(struct owned_percpu_counters *oc, unsigned int nr, gfp_t gfp)
{
	return -EAGAIN;
}

static void owned_upgrade_keeps_values_test(struct kunit *test)
{
	struct owned_set *s = new_set(test);
	s64 expect[NR], sums[NR];
	long owner[NR];
	int i, n;

	for (i = 0; i < NR; i++) {
		owned_percpu_counter_add(&s->oc, i, 1000 * (i + 1));
		owned_percpu_counter_add_shared(&s->oc, i, -7 * (i + 1));
		expect[i] = 993 * (i + 1);
		owner[i] = s->oc.owner_adds[i];
	}
	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade(&s->oc, NR, GFP_KERNEL), 0);
	expect_percpu(test, s);
	expect_sums(test, s, expect);

	for (n = 0; n < 1000; n++) {
		for (i = 0; i < NR; i++) {
			if (n & 1)
				owned_percpu_counter_add(&s->oc, i, 3);
			else
				owned_percpu_counter_add_shared(&s->oc, i, -1);
			expect[i] += (n & 1) ? 3 : -1;
		}
	}
	expect_sums(test, s, expect);
	for (i = 0; i < NR; i++)
		KUNIT_EXPECT_EQ(test, s->oc.owner_adds[i], owner[i]);

	kunit_activate_static_stub(test, owned_percpu_counters_init_percpu, fail_init);
	KUNIT_EXPECT_EQ(test, owned_percpu_counters_upgrade(&s->oc, NR, GFP_KERNEL), 0);
	kunit_deactivate_static_stub(test, owned_percpu_counters_init_percpu);
	expect_sums(test, s, expect);

	/* Released, the set owns nothing (and the kernel log tells). */
	owned_percpu_counters_release(&s->oc, NR, sums);
	for (i = 0; i < NR; i++) {
		KUNIT_EXPECT_EQ(test, sums[i], expect[i]);
		KUNIT_EXPECT_FALSE(test, on_hotplug_list(&s->oc.percpu[i]));
	}
	owned_percpu_counters_init(&s->oc, current);
}

/*
 * A failed upgrade returns the allocation's error and leaves the set lazy,
 * exact, owned and usable, with nothing allocated; a later upgrade
 * succeeds.
 */
static void owned_upgrade_failure_test(struct kunit *test)
{
	struct owned_set *s = new_set(test);
	s64 expect[NR];
	int i;

	for (i = 0; i < NR; i++) {
		owned_percpu_counter_add(&s->oc, i, 40 + i);
		owned_percpu_counter_add_shared(&s->oc, i, 2);
		expect[i] = 42 + i;
	}
	kunit_activate_static_stub(test, owned_percpu_counters_init_percpu, fail_init);
	KUNIT_EXPECT_EQ(test, owned_percpu_counters_upgrade(&s->oc, NR, GFP_KERNEL), -EAGAIN);
	kunit_deactivate_static_stub(test, owned_percpu_counters_init_percpu);
	expect_lazy(test, s, current);
	expect_sums(test, s, expect);
	owned_percpu_counter_add(&s->oc, 0, 1);
	owned_percpu_counter_add_shared(&s->oc, 0, -2);
	expect[0] -= 1;
	expect_sums(test, s, expect);

	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade(&s->oc, NR, GFP_KERNEL), 0);
	expect_percpu(test, s);
	expect_sums(test, s, expect);
}

/* Per-CPU deltas that a test gives to counters; freed when the case ends. */
struct deltas {
	s32 __percpu *d;
};

static void free_deltas(void *d)
{
	free_percpu(((struct deltas *)d)->d);
}

/*
 * @n zeroed deltas. Make them before the counters that use them: the
 * case's cleanups run in reverse, and a counter may still zero its deltas.
 */
static s32 __percpu *new_deltas(struct kunit *test, unsigned int n)
{
	struct deltas *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->d = __alloc_percpu(n * sizeof(s32), SMP_CACHE_BYTES);
	if (!d->d)
		KUNIT_FAIL_AND_ABORT(test, "no per-CPU memory for %u deltas", n);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_deltas, d), 0);
	return d->d;
}

/* The number of @n deltas from @d that are not @val, over every possible CPU. */
static unsigned int deltas_not(s32 __percpu *d, unsigned int n, s32 val)
{
	unsigned int cpu, i, bad = 0;

	for_each_possible_cpu(cpu)
		for (i = 0; i < n; i++)
			bad += per_cpu_ptr(d, cpu)[i] != val;
	return bad;
}

static void add_on_each_cpu(void *s)
{
	int i;

	for (i = 0; i < NR; i++)
		owned_percpu_counter_add(&((struct owned_set *)s)->oc, i, i + 1);
}

/*
 * A set upgraded on deltas it is given keeps its values and uses those
 * deltas; a second upgrade is refused and does not take others. Release
 * gives the exact values with deltas held on every online CPU, again if
 * repeated, takes the counters off the hotplug list and leaves the deltas
 * zero on every possible CPU, the rest of their allocation untouched: the
 * next set upgraded on them starts from its own values. Destroy does the
 * same without the values.
 */
static void owned_storage_is_returned_zero_test(struct kunit *test)
{
	s32 __percpu *all = new_deltas(test, NR + 2), *deltas = all + 1;
	struct owned_set *s = new_set(test);
	s64 expect[NR], sums[NR], again[NR];
	unsigned int cpu;
	int i, round;

	for_each_possible_cpu(cpu) {
		per_cpu_ptr(all, cpu)[0] = -1;
		per_cpu_ptr(all, cpu)[NR + 1] = -1;
	}
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NR; i++) {
			owned_percpu_counter_add(&s->oc, i, 10 * (i + 1) + round);
			owned_percpu_counter_add_shared(&s->oc, i, -(i + 1));
			expect[i] = 9 * (i + 1) + round;
		}
		KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade_storage(&s->oc, NR, deltas), 0);
		expect_percpu(test, s);
#ifdef CONFIG_SMP
		for (i = 0; i < NR; i++)
			KUNIT_EXPECT_TRUE(test, s->oc.percpu[i].counters == deltas + i);
#endif
		KUNIT_EXPECT_EQ(test, owned_percpu_counters_upgrade_storage(&s->oc, NR, all),
				-EEXIST);
		expect_sums(test, s, expect);

		on_each_cpu(add_on_each_cpu, s, 1);
		for (i = 0; i < NR; i++) {
			owned_percpu_counter_add(&s->oc, i, -2 * batch());
			expect[i] += (s64)(i + 1) * num_online_cpus() - 2 * batch();
		}
		expect_sums(test, s, expect);

		if (round) {
			owned_percpu_counters_destroy(&s->oc);
		} else {
			owned_percpu_counters_release(&s->oc, NR, sums);
			owned_percpu_counters_release(&s->oc, NR, again);
			for (i = 0; i < NR; i++) {
				KUNIT_EXPECT_EQ_MSG(test, sums[i], expect[i], "counter %d", i);
				KUNIT_EXPECT_EQ_MSG(test, again[i], expect[i], "counter %d", i);
			}
		}
		for (i = 0; i < NR; i++) {
#ifdef CONFIG_SMP
			KUNIT_EXPECT_TRUE(test, !s->oc.percpu[i].counters);
#endif
			KUNIT_EXPECT_FALSE(test, on_hotplug_list(&s->oc.percpu[i]));
		}
		KUNIT_EXPECT_EQ_MSG(test, deltas_not(deltas, NR, 0), 0, "round %d", round);
		KUNIT_EXPECT_EQ(test, deltas_not(all, 1, -1), 0);
		KUNIT_EXPECT_EQ(test, deltas_not(deltas + NR, 1, -1), 0);
		owned_percpu_counters_init(&s->oc, current);
	}
}

/*
 * Counters on given deltas, more of them than lockdep has subclasses for
 * (released in groups): each keeps its own value, and the deltas are zero
 * when they end.
 */
#define MANY	(MAX_LOCKDEP_SUBCLASSES + 2)

static void add_many_on_each_cpu(void *fbc)
{
	int i;

	for (i = 0; i < MANY; i++)
		percpu_counter_add((struct percpu_counter *)fbc + i, i + 1);
}

static void percpu_counter_storage_many_test(struct kunit *test)
{
	s32 __percpu *deltas = new_deltas(test, MANY);
	struct percpu_counter *fbc = kunit_kcalloc(test, MANY, sizeof(*fbc), GFP_KERNEL);
	s64 sums[MANY];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, fbc);
	/* Nothing may abort the case until the counters end. */
	percpu_counter_init_many_storage(fbc, 7, deltas, MANY);
	on_each_cpu(add_many_on_each_cpu, fbc, 1);
	percpu_counter_release_many(fbc, MANY, sums);
	for (i = 0; i < MANY; i++)
		KUNIT_EXPECT_EQ_MSG(test, sums[i], 7 + (s64)(i + 1) * num_online_cpus(),
				    "counter %d", i);
	KUNIT_EXPECT_EQ(test, deltas_not(deltas, MANY, 0), 0);
}

/* Runs @fn(@arg) in a kthread and waits for it: "anyone else". */
struct other {
	int (*fn)(struct owned_set *s);
	struct owned_set *s;
	int ret;
	struct completion done;
};

static int other_fn(void *arg)
{
	struct other *o = arg;

	o->ret = o->fn(o->s);
	complete(&o->done);
	return 0;
}

static int as_other(struct kunit *test, int (*fn)(struct owned_set *s),
		    struct owned_set *s)
{
	struct other o = { .fn = fn, .s = s };
	struct task_struct *t;

	init_completion(&o.done);
	t = kthread_run(other_fn, &o, "owned_pcpu_other");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&o.done);
	return o.ret;
}

static int upgrade(struct owned_set *s)
{
	return owned_percpu_counters_upgrade(&s->oc, NR, GFP_KERNEL);
}

static int add_seven(struct owned_set *s)
{
	owned_percpu_counter_add(&s->oc, 1, 7);
	return 0;
}

/*
 * Anyone but the owner adds as a shared adder, and may not upgrade: it
 * could fold the owner's word in the middle of an add.
 */
static void owned_others_share_and_cannot_upgrade_test(struct kunit *test)
{
	struct owned_set *s = new_set(test);
	const s64 expect[NR] = { 0, 7, 0 };

	KUNIT_EXPECT_EQ(test, as_other(test, add_seven, s), 0);
	KUNIT_EXPECT_EQ(test, s->oc.owner_adds[1], 0);
	KUNIT_EXPECT_EQ(test, as_other(test, upgrade, s), -EINVAL);
	expect_lazy(test, s, current);
	expect_sums(test, s, expect);
}

/*
 * What everyone else can see in the middle of the fold of each counter,
 * and right after it, while the next ones are still lazy.
 */
struct fold_seen {
	struct kunit *test;
	struct owned_set *s;
	s64 read[NR], sum[NR][NR], sum_many[NR][NR];
	bool excluded[NR], listed[NR], flagged[NR];
	int calls[2];
};

static void record_fold(struct percpu_counter *fbc, bool locked)
{
	struct fold_seen *seen;
	int i, j;

	/* Any upgrade in the kernel gets here: only ours counts. */
	if (!kunit_get_current_test())
		return;
	seen = kunit_get_current_test()->priv;
	if (!seen || fbc < seen->s->oc.percpu || fbc >= seen->s->oc.percpu + NR)
		return;
	i = fbc - seen->s->oc.percpu;
	seen->calls[locked]++;
	if (!locked) {
		/* Counters 0..i folded, the others lazy: sums take both kinds. */
		owned_percpu_counters_sum_many(&seen->s->oc, NR, seen->sum_many[i]);
		for (j = 0; j < NR; j++)
			seen->sum[i][j] = owned_percpu_counter_sum(&seen->s->oc, j);
		return;
	}
	seen->read[i] = owned_percpu_counter_read(&seen->s->oc, i);
#ifdef CONFIG_SMP
	seen->excluded[i] = raw_spin_is_locked(&fbc->lock);
#else
	seen->excluded[i] = irqs_disabled();
#endif
	seen->listed[i] = on_hotplug_list(fbc);
	seen->flagged[i] = atomic_long_read(&seen->s->oc.shared_adds[i]) & 1;
}

static void clear_fold_hook(void *unused)
{
	WRITE_ONCE(owned_percpu_counter_fold_hook, NULL);
}

/*
 * Once a counter's flag is visible, a lockless read already finds the lazy
 * value in its count, percpu_counter_sum() and a dying CPU's fold are held
 * off until the count is final, and the counter is on the hotplug list, so
 * that no CPU can hold a delta for it that the fold would miss. Between
 * two folds, with some counters per-CPU and the others lazy, both kinds of
 * exact sum are exact for every counter.
 */
static void owned_fold_is_published_safely_test(struct kunit *test)
{
	struct fold_seen seen = { .test = test, .s = new_set(test) };
	int i, j;

	for (i = 0; i < NR; i++) {
		owned_percpu_counter_add(&seen.s->oc, i, 10 + i);
		owned_percpu_counter_add_shared(&seen.s->oc, i, 20 + i);
	}
	test->priv = &seen;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, clear_fold_hook, NULL), 0);
	WRITE_ONCE(owned_percpu_counter_fold_hook, record_fold);
	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade(&seen.s->oc, NR, GFP_KERNEL), 0);
	clear_fold_hook(NULL);

	KUNIT_EXPECT_EQ(test, seen.calls[true], NR);
	KUNIT_EXPECT_EQ(test, seen.calls[false], NR);
	for (i = 0; i < NR; i++) {
		KUNIT_EXPECT_EQ_MSG(test, seen.read[i], 30 + 2 * i, "counter %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, seen.excluded[i], "counter %d", i);
		KUNIT_EXPECT_EQ_MSG(test, seen.listed[i], HOTPLUG_LIST, "counter %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, seen.flagged[i], "counter %d", i);
		for (j = 0; j < NR; j++) {
			KUNIT_EXPECT_EQ_MSG(test, seen.sum[i][j], 30 + 2 * j,
					    "counter %d after %d folds", j, i + 1);
			KUNIT_EXPECT_EQ_MSG(test, seen.sum_many[i][j], 30 + 2 * j,
					    "counter %d after %d folds, one pass", j, i + 1);
		}
	}
}

#ifdef CONFIG_SMP
/* A one-pass sum on another CPU, started when the test says go. */
struct sum_in_flight {
	struct owned_set *s;
	atomic_t go, done;
	s64 sums[NR];
};

static int sum_in_flight_fn(void *arg)
{
	struct sum_in_flight *f = arg;

	while (!atomic_read_acquire(&f->go))
		cpu_relax();
	owned_percpu_counters_sum_many(&f->s->oc, NR, f->sums);
	atomic_set_release(&f->done, 1);
	while (!kthread_should_stop())
		schedule_timeout_idle(1);
	return 0;
}

/*
 * Counter @n of @s gets an add in flight on this CPU, between its two
 * stores, while another CPU sums the set: returns whether the sum waited
 * for the second store, and the sums in @sums.
 */
static bool sum_during_add_to(struct kunit *test, struct owned_set *s, int n,
			      s64 *sums)
{
	struct sum_in_flight f = { .s = s };
	struct percpu_counter *fbc = &s->oc.percpu[n];
	unsigned int cpu, other;
	struct task_struct *t;
	unsigned long flags;
	bool waited;

	/* The sum runs on another CPU than this one, whatever happens. */
	migrate_disable();
	cpu = smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, cpu);
	t = kthread_create_on_cpu(sum_in_flight_fn, &f, other, "owned_pcpu_sum");
	if (IS_ERR(t))
		migrate_enable();
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);

	raw_spin_lock_irqsave(&fbc->lock, flags);
	/* This CPU has 500 in its delta, and the add moves it to the count. */
	*per_cpu_ptr(fbc->counters, cpu) += 500;
	fbc->count += 500;
	atomic_set_release(&f.go, 1);
	mdelay(50);
	waited = !atomic_read_acquire(&f.done);
	*per_cpu_ptr(fbc->counters, cpu) -= 500;
	raw_spin_unlock_irqrestore(&fbc->lock, flags);
	migrate_enable();

	while (!atomic_read_acquire(&f.done))
		schedule_timeout_idle(1);
	kthread_stop_put(t);
	memcpy(sums, f.sums, sizeof(f.sums));
	return waited;
}
#endif

/*
 * An add whose CPU delta overflows moves the delta into the count in two
 * stores, under the counter's lock: count += delta, then delta -= delta.
 * A one-pass sum that starts between them must wait for the second, and
 * then count the delta once; so for each counter of the set in turn.
 */
static void owned_sum_waits_for_a_delta_in_flight_test(struct kunit *test)
{
#ifdef CONFIG_SMP
	struct owned_set *s = new_set(test);
	s64 expect[NR], sums[NR];
	int i, n;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	for (i = 0; i < NR; i++) {
		owned_percpu_counter_add(&s->oc, i, 2 * i + 1);
		expect[i] = 2 * i + 1;
	}
	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade(&s->oc, NR, GFP_KERNEL), 0);
	for (n = 0; n < NR; n++) {
		KUNIT_EXPECT_TRUE_MSG(test, sum_during_add_to(test, s, n, sums),
				      "counter %d", n);
		expect[n] += 500;
		for (i = 0; i < NR; i++)
			KUNIT_EXPECT_EQ_MSG(test, sums[i], expect[i],
					    "counter %d, add to counter %d", i, n);
	}
	expect_sums(test, s, expect);
#else
	kunit_skip(test, "no concurrent sums on UP");
#endif
}

#ifdef CONFIG_HOTPLUG_CPU
/* A CPU other than the current one, to take offline and online again. */
static unsigned int pick_hotplug_cpu(void)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (cpu != raw_smp_processor_id() && cpu_is_hotpluggable(cpu))
			return cpu;
	return nr_cpu_ids;
}

static void restore_cpu(void *cpu)
{
	unsigned int c = (uintptr_t)cpu;

	if (!cpu_online(c))
		WARN_ON(add_cpu(c));
}

/* Whatever happens in the case, @cpu is online again at its end. */
static int restore_cpu_at_end(struct kunit *test, unsigned int cpu)
{
	return kunit_add_action_or_reset(test, restore_cpu, (void *)(uintptr_t)cpu);
}
#endif

struct race;

/*
 * One per CPU: its adds are counted here, not in a shared atomic, before
 * (announced) and after (done) each add, so that any sum lies between the
 * adds done before it and the adds announced after it.
 */
struct race_worker {
	struct race *r;
	struct task_struct *task;
	long announced[NR], done[NR];
	unsigned int sums;		/* sums checked, of both kinds in turn */
	int dips;			/* sums that went down */
	int out_of_bounds;		/* sums that counted too little or too much */
} ____cacheline_aligned;

struct race {
	struct owned_set *s;
	struct race_worker *w;		/* per CPU, and the owner's at nr_cpu_ids */
	struct task_struct *hotplugger;
	atomic_t ready, go, stop, done;
	atomic_t hp_cycles;		/* CPU offline and online again */
	unsigned int hp_cpu;		/* nr_cpu_ids: none */
};

/* Adds so far of counter @i, announced (@done false) or done. */
static long race_adds(struct race *r, int i, bool done)
{
	long total = 0;
	unsigned int cpu;

	for (cpu = 0; cpu <= nr_cpu_ids; cpu++)
		total += done ? READ_ONCE(r->w[cpu].done[i]) : READ_ONCE(r->w[cpu].announced[i]);
	return total;
}

static long race_all_done(struct race *r)
{
	long total = 0;
	int i;

	for (i = 0; i < NR; i++)
		total += race_adds(r, i, true);
	return total;
}

static void race_add(struct race *r, struct race_worker *w, int i, long amount)
{
	WRITE_ONCE(w->announced[i], w->announced[i] + amount);
	smp_mb();	/* announced before anyone can sum the add: race_check_sums() */
	owned_percpu_counter_add(&r->s->oc, i, amount);
	smp_mb();	/* summable before it counts as done: race_check_sums() */
	WRITE_ONCE(w->done[i], w->done[i] + amount);
}

/* Exact sums of the set: between the adds done before and announced after. */
static void race_check_sums(struct race *r, struct race_worker *w, s64 *last)
{
	long lo[NR], hi;
	s64 sums[NR];
	int i;

	for (i = 0; i < NR; i++)
		lo[i] = race_adds(r, i, true);
	smp_mb();	/* pairs with the second one in race_add() */
	if (w->sums++ & 1)
		owned_percpu_counters_sum_many(&r->s->oc, NR, sums);
	else
		for (i = 0; i < NR; i++)
			sums[i] = owned_percpu_counter_sum(&r->s->oc, i);
	smp_mb();	/* pairs with the first one in race_add() */
	for (i = 0; i < NR; i++) {
		hi = race_adds(r, i, false);
		if (sums[i] < lo[i] || sums[i] > hi)
			w->out_of_bounds++;
		if (sums[i] < last[i])
			w->dips++;
		last[i] = sums[i];
	}
}

/*
 * Everyone but the owner, until the owner says stop: shared adds, all
 * positive, so that every exact sum is at least the one before; one add
 * in 16 is a whole batch, so that the per-CPU slow path runs too; and now
 * and then exact sums of both kinds, checked against the adds around them.
 * Mostly adds, so that some land right at the fold.
 */
static int race_worker_fn(void *arg)
{
	struct race_worker *w = arg;
	struct race *r = w->r;
	s64 last[NR] = {};
	long n;

	atomic_inc(&r->ready);
	while (!atomic_read_acquire(&r->go) && !kthread_should_stop())
		cond_resched();
	for (n = 0; !atomic_read(&r->stop); n++) {
		race_add(r, w, n % NR, (n % 16) ? 1 : batch());
		if (n % 64 >= NR)
			continue;
		race_check_sums(r, w, last);
		cond_resched();
	}
	atomic_inc(&r->done);
	while (!kthread_should_stop())
		schedule_timeout_idle(1);
	return 0;
}

#ifdef CONFIG_HOTPLUG_CPU
/* Takes a CPU offline and online again, over and over, during the race. */
static int race_hotplugger(void *arg)
{
	struct race *r = arg;

	while (!kthread_should_stop()) {
		if (!remove_cpu(r->hp_cpu) && !WARN_ON(add_cpu(r->hp_cpu)))
			atomic_inc(&r->hp_cycles);
		schedule_timeout_idle(1);
	}
	return 0;
}
#endif

static void race_stop_workers(struct race *r)
{
	unsigned int cpu;

	atomic_set_release(&r->go, 1);
	atomic_set(&r->stop, 1);
	for_each_possible_cpu(cpu) {
		if (r->w[cpu].task) {
			kthread_stop_put(r->w[cpu].task);
			r->w[cpu].task = NULL;
		}
	}
}

static void race_stop(void *arg)
{
	struct race *r = arg;

	race_stop_workers(r);
	if (r->hotplugger)
		kthread_stop_put(r->hotplugger);
}

/* A worker on each online CPU, waiting for go; returns their number. */
static int race_start_workers(struct race *r)
{
	unsigned int cpu;
	int nr = 0;

	atomic_set(&r->ready, 0);
	atomic_set(&r->go, 0);
	atomic_set(&r->stop, 0);
	atomic_set(&r->done, 0);
	memset(r->w, 0, (nr_cpu_ids + 1) * sizeof(*r->w));
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		r->w[cpu].r = r;
		t = kthread_create_on_cpu(race_worker_fn, &r->w[cpu], cpu, "owned_pcpu/%u");
		if (IS_ERR(t))
			continue;
		get_task_struct(t);
		r->w[cpu].task = t;
		nr++;
		wake_up_process(t);
	}
	cpus_read_unlock();
	while (atomic_read(&r->ready) < nr)
		cond_resched();
	return nr;
}

#define RACE_ROUNDS	100
#define RACE_ADDS	3000

/*
 * Shared adds and exact sums of both kinds on every online CPU race with
 * the owner's adds and with the upgrade, which lands at a random point of
 * the stream, while a CPU goes offline and online again. Not a single add
 * may be lost or counted twice, at the end or in any sum on the way, and
 * no exact sum may ever go down.
 */
static void owned_upgrade_race_test(struct kunit *test)
{
	int round, i, nr, dips = 0, out_of_bounds = 0;
	struct race_worker *owner;
	unsigned int cpu;
	struct race *r;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->w = kunit_kcalloc(test, nr_cpu_ids + 1, sizeof(*r->w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->w);
	owner = &r->w[nr_cpu_ids];
	r->s = new_set(test);
	r->hp_cpu = nr_cpu_ids;
#ifdef CONFIG_HOTPLUG_CPU
	/* Registered first, so that it runs after race_stop(). */
	r->hp_cpu = pick_hotplug_cpu();
	if (r->hp_cpu < nr_cpu_ids)
		KUNIT_ASSERT_EQ(test, restore_cpu_at_end(test, r->hp_cpu), 0);
#endif
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, race_stop, r), 0);
#ifdef CONFIG_HOTPLUG_CPU
	if (r->hp_cpu < nr_cpu_ids) {
		r->hotplugger = kthread_run(race_hotplugger, r, "owned_pcpu_hp");
		KUNIT_ASSERT_FALSE(test, IS_ERR(r->hotplugger));
		get_task_struct(r->hotplugger);
	}
#endif

	for (round = 0; round < RACE_ROUNDS; round++) {
		s64 last[NR] = {};
		long at;

		owned_percpu_counters_destroy(&r->s->oc);
		owned_percpu_counters_init(&r->s->oc, current);
		nr = race_start_workers(r);
		KUNIT_ASSERT_GT(test, nr, 0);
		at = get_random_u32_below(nr * RACE_ADDS);
		atomic_set_release(&r->go, 1);
		/* The owner counts too, then upgrades in mid-stream. */
		while (race_all_done(r) < at) {
			race_add(r, owner, 0, 2);
			race_check_sums(r, owner, last);
			cond_resched();
		}
		KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade(&r->s->oc, NR, GFP_KERNEL), 0);
		race_add(r, owner, 0, 2);
		at = race_all_done(r) + nr * RACE_ADDS / 4;
		while (race_all_done(r) < at)
			cond_resched();
		atomic_set(&r->stop, 1);
		while (atomic_read(&r->done) < nr)
			cond_resched();

		for (i = 0; i < NR; i++)
			KUNIT_EXPECT_EQ_MSG(test, owned_percpu_counter_sum(&r->s->oc, i),
					    race_adds(r, i, true),
					    "counter %d, round %d", i, round);
		for (cpu = 0; cpu <= nr_cpu_ids; cpu++) {
			dips += r->w[cpu].dips;
			out_of_bounds += r->w[cpu].out_of_bounds;
		}
		race_stop_workers(r);
	}
	KUNIT_EXPECT_EQ(test, dips, 0);
	KUNIT_EXPECT_EQ(test, out_of_bounds, 0);
#ifdef CONFIG_HOTPLUG_CPU
	if (r->hp_cpu < nr_cpu_ids)
		KUNIT_EXPECT_GT(test, atomic_read(&r->hp_cycles), 0);
#endif
	kunit_info(test, "%d rounds on %u CPUs, %d CPU offline/online cycles\n",
		   RACE_ROUNDS, num_present_cpus(), atomic_read(&r->hp_cycles));
}

#ifdef CONFIG_HOTPLUG_CPU
struct hp_add {
	struct owned_set *s;
	int i;
	long amount;
	struct completion done;
};

static int hp_add_fn(void *arg)
{
	struct hp_add *a = arg;

	owned_percpu_counter_add(&a->s->oc, a->i, a->amount);
	complete(&a->done);
	return 0;
}

/* Make @cpu hold a delta of @amount for counter @i of @s. */
static void add_on_cpu(struct kunit *test, struct owned_set *s, int i,
		       unsigned int cpu, long amount)
{
	struct hp_add a = { .s = s, .i = i, .amount = amount };
	struct task_struct *t;

	init_completion(&a.done);
	t = kthread_create_on_cpu(hp_add_fn, &a, cpu, "owned_hp/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);
	wait_for_completion(&a.done);
	kthread_stop_put(t);
}
#endif

/*
 * Deltas that a CPU holds when it goes offline are folded into the counts
 * of upgraded counters, and stay exact in both kinds of sum; lazy counters,
 * on no list, are not affected.
 */
static void owned_hotplug_folds_deltas_test(struct kunit *test)
{
#ifdef CONFIG_HOTPLUG_CPU
	struct owned_set *up = new_set(test), *lazy = new_set(test);
	s64 small = percpu_counter_batch / 2;	/* stays in the CPU's delta */
	const s64 expect_lazy[NR] = { 3, 0, 0 };
	s64 expect[NR] = { small, 0, -small };
	unsigned int cpu = pick_hotplug_cpu();

	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "no hot-pluggable CPU besides the current one");
	KUNIT_ASSERT_EQ(test, restore_cpu_at_end(test, cpu), 0);
	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade(&up->oc, NR, GFP_KERNEL), 0);
	add_on_cpu(test, up, 0, cpu, small);
	add_on_cpu(test, up, NR - 1, cpu, -small);
	add_on_cpu(test, lazy, 0, cpu, 3);
	KUNIT_EXPECT_EQ(test, *per_cpu_ptr(up->oc.percpu[0].counters, cpu), small);

	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_EXPECT_EQ(test, *per_cpu_ptr(up->oc.percpu[0].counters, cpu), 0);
	expect_sums(test, up, expect);
	KUNIT_EXPECT_EQ(test, owned_percpu_counter_read(&up->oc, 0), small);
	expect_sums(test, lazy, expect_lazy);
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);

	add_on_cpu(test, up, 1, cpu, 1);
	expect[1] = 1;
	expect_sums(test, up, expect);
#else
	kunit_skip(test, "no CPU hotplug in this kernel");
#endif
}

#ifdef CONFIG_HOTPLUG_CPU
/* A set to release from a CPU hotplug teardown callback, for @cpu. */
static struct owned_set *release_set;
static unsigned int release_cpu;
static s64 release_sums[NR];

static int release_on_teardown(unsigned int cpu)
{
	if (cpu == release_cpu && release_set)
		owned_percpu_counters_release(&release_set->oc, NR, release_sums);
	return 0;
}

static void remove_release_state(void *state)
{
	release_set = NULL;
	cpuhp_remove_state_nocalls((uintptr_t)state);
}
#endif

/*
 * Counters on given deltas are on the hotplug list from the upgrade: a CPU
 * that goes offline with a delta has it folded and zeroed. Release walks
 * the CPUs that may hold deltas: one that came back up after that (and
 * holds one again), and one that is dead but not yet through the fold,
 * here released from a teardown callback that runs between the two. It
 * still gives the exact values and leaves every delta zero.
 */
static void owned_storage_hotplug_test(struct kunit *test)
{
#ifdef CONFIG_HOTPLUG_CPU
	s32 __percpu *deltas = new_deltas(test, NR);
	struct owned_set *s = new_set(test);
	s64 small = percpu_counter_batch / 2, sums[NR];
	unsigned int cpu = pick_hotplug_cpu();
	int state;

	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "no hot-pluggable CPU besides the current one");
	KUNIT_ASSERT_EQ(test, restore_cpu_at_end(test, cpu), 0);
	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade_storage(&s->oc, NR, deltas), 0);
	add_on_cpu(test, s, 1, cpu, small);
	KUNIT_EXPECT_EQ(test, per_cpu_ptr(deltas, cpu)[1], small);
	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_EXPECT_EQ(test, per_cpu_ptr(deltas, cpu)[1], 0);
	owned_percpu_counters_release(&s->oc, NR, sums);
	KUNIT_EXPECT_EQ(test, sums[1], small);
	KUNIT_EXPECT_EQ(test, deltas_not(deltas, NR, 0), 0);
	owned_percpu_counters_init(&s->oc, current);
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);

	/* BP_PREPARE_DYN states are torn down before the fold (CPUHP_PERCPU_CNT_DEAD). */
	state = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "test/owned_pcpu:release",
					  NULL, release_on_teardown);
	KUNIT_ASSERT_GT(test, state, 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, remove_release_state,
							(void *)(uintptr_t)state), 0);
	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade_storage(&s->oc, NR, deltas), 0);
	add_on_cpu(test, s, 2, cpu, -small);
	memset(release_sums, 0, sizeof(release_sums));
	release_cpu = cpu;
	release_set = s;
	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_EXPECT_FALSE(test, on_hotplug_list(&s->oc.percpu[2]));
	KUNIT_EXPECT_EQ(test, release_sums[2], -small);
	KUNIT_EXPECT_EQ(test, deltas_not(deltas, NR, 0), 0);
	owned_percpu_counters_init(&s->oc, current);
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);
#else
	kunit_skip(test, "no CPU hotplug in this kernel");
#endif
}

static struct kunit_case owned_percpu_counter_cases[] = {
	KUNIT_CASE(owned_zero_is_valid_test),
	KUNIT_CASE(owned_adds_are_exact_test),
	KUNIT_CASE(owned_owner_can_change_test),
	KUNIT_CASE(owned_upgrade_keeps_values_test),
	KUNIT_CASE(owned_upgrade_failure_test),
	KUNIT_CASE(owned_others_share_and_cannot_upgrade_test),
	KUNIT_CASE(owned_fold_is_published_safely_test),
	KUNIT_CASE(owned_sum_waits_for_a_delta_in_flight_test),
	KUNIT_CASE_SLOW(owned_upgrade_race_test),
	KUNIT_CASE(owned_hotplug_folds_deltas_test),
	KUNIT_CASE(owned_storage_is_returned_zero_test),
	KUNIT_CASE(percpu_counter_storage_many_test),
	KUNIT_CASE(owned_storage_hotplug_test),
	{}
};

static struct kunit_suite owned_percpu_counter_suite = {
	.name = "owned_percpu_counter",
	.test_cases = owned_percpu_counter_cases,
};

kunit_test_suite(owned_percpu_counter_suite);

MODULE_DESCRIPTION("KUnit tests for owned percpu counters");
MODULE_LICENSE("GPL");
