// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for lazy percpu counters (include/linux/lazy_percpu_counter.h).
 *
 * The test thread plays the owner; kthreads play the remote updaters.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/lazy_percpu_counter.h>
#include <linux/module.h>
#include <linux/poison.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/task.h>

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define NR 3	/* counters per array: the upgrade handles arrays */

static void expect_lazy(struct kunit *test, struct lazy_percpu_counter *c)
{
	KUNIT_EXPECT_FALSE(test, lazy_percpu_counter_is_percpu(c));
#ifdef CONFIG_SMP
	/* No per-CPU memory, and never on the hotplug list. */
	KUNIT_EXPECT_TRUE(test, !c->pcpu.counters);
#ifdef CONFIG_HOTPLUG_CPU
	KUNIT_EXPECT_NULL(test, c->pcpu.list.next);
#endif
#endif
}

static void expect_percpu(struct kunit *test, struct lazy_percpu_counter *c)
{
	KUNIT_EXPECT_TRUE(test, lazy_percpu_counter_is_percpu(c));
#ifdef CONFIG_SMP
	KUNIT_EXPECT_TRUE(test, !!c->pcpu.counters);
#ifdef CONFIG_HOTPLUG_CPU
	/* Linked into the hotplug list, consistently. */
	KUNIT_EXPECT_PTR_EQ(test, c->pcpu.list.next->prev, &c->pcpu.list);
	KUNIT_EXPECT_PTR_EQ(test, c->pcpu.list.prev->next, &c->pcpu.list);
#endif
#endif
}

static void destroy_counters(void *c)
{
	lazy_percpu_counter_destroy_many(c, NR);
}

/*
 * Counters off the stack, as debugobjects wants for percpu_counters, and
 * destroyed when the case ends, however it ends: an upgraded counter left
 * on the hotplug list would corrupt it.
 */
static struct lazy_percpu_counter *new_counters(struct kunit *test, s64 amount)
{
	struct lazy_percpu_counter *c;

	c = kunit_kcalloc(test, NR, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	lazy_percpu_counter_init_many(c, amount, NR);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_counters, c), 0);
	return c;
}

/* Largest error of percpu_counter_read() on an upgraded counter. */
static s64 read_error_bound(void)
{
#ifdef CONFIG_SMP
	return (s64)percpu_counter_batch * num_online_cpus();
#else
	return 0;
#endif
}

/* 1. A fresh counter is lazy, reads 0 and owns no per-CPU memory. */
static void lazy_init_test(struct kunit *test)
{
	static struct lazy_percpu_counter zeroed[NR];	/* like init_mm */
	struct lazy_percpu_counter *c = new_counters(test, 0);
	int i;

	for (i = 0; i < NR; i++) {
		expect_lazy(test, &c[i]);
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_read(&c[i]), 0);
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[i]), 0);
		/* An all-zero counter is a valid lazy counter. */
		expect_lazy(test, &zeroed[i]);
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&zeroed[i]), 0);
	}
	lazy_percpu_counter_init_many(c, -7, NR);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[NR - 1]), -7);

	/* The zeroed array works like any other, through its whole life. */
	lazy_percpu_counter_add_local(&zeroed[0], 5);
	lazy_percpu_counter_add_remote(&zeroed[1], -5);
	KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(zeroed, NR, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&zeroed[0]), 5);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&zeroed[1]), -5);
	lazy_percpu_counter_destroy_many(zeroed, NR);
	memset(zeroed, 0, sizeof(zeroed));
}

/* 2. Owner and remote adds of both signs are exact; values are s64. */
static void lazy_add_test(struct kunit *test)
{
	struct lazy_percpu_counter *c = new_counters(test, 0);
	const s64 big = 3LL << 33;	/* beyond 2^31, also on 32-bit */

	lazy_percpu_counter_add_local(&c[0], 5);
	lazy_percpu_counter_add_remote(&c[0], -3);
	lazy_percpu_counter_add_local(&c[0], -10);
	lazy_percpu_counter_add_remote(&c[0], 100);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_read(&c[0]), 92);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[0]), 92);

	lazy_percpu_counter_add_local(&c[1], big);
	lazy_percpu_counter_add_remote(&c[1], big);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[1]), 2 * big);
	lazy_percpu_counter_add_remote(&c[1], -3 * big);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[1]), -big);
	lazy_percpu_counter_add_local(&c[1], big + 1);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[1]), 1);

	/* Adds to one counter leave its neighbours alone. */
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[2]), 0);
	expect_lazy(test, &c[0]);
	lazy_percpu_counter_destroy_many(c, NR);
}

static void check_read_sum(struct kunit *test, struct lazy_percpu_counter *c)
{
	lazy_percpu_counter_add_local(c, -20);
	lazy_percpu_counter_add_remote(c, 15);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(c), -5);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum_positive(c), 0);
	KUNIT_EXPECT_LE(test, abs(lazy_percpu_counter_read(c) + 5), read_error_bound());
	KUNIT_EXPECT_GE(test, lazy_percpu_counter_read_positive(c), 0);
	lazy_percpu_counter_add_remote(c, 12);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(c), 7);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum_positive(c), 7);
}

/* 3. read vs sum, and the clamping of the _positive variants. */
static void lazy_read_sum_test(struct kunit *test)
{
	struct lazy_percpu_counter *c = new_counters(test, 0);

	check_read_sum(test, &c[0]);
	/* Lazy read is exact for a quiescent counter. */
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_read(&c[0]), 7);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_read_positive(&c[0]), 7);

	KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(c, NR, GFP_KERNEL), 0);
	check_read_sum(test, &c[1]);
	lazy_percpu_counter_destroy_many(c, NR);
}

/* 4. The upgrade keeps every value; then the counter is a percpu_counter. */
static void lazy_upgrade_test(struct kunit *test)
{
	struct lazy_percpu_counter *c = new_counters(test, 0);
	s64 expect[NR], err;
	int i, n;

	for (i = 0; i < NR; i++) {
		lazy_percpu_counter_add_local(&c[i], 1000 * (i + 1));
		lazy_percpu_counter_add_remote(&c[i], -7 * (i + 1));
		expect[i] = 993 * (i + 1);
	}
	KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(c, NR, GFP_KERNEL), 0);
	for (i = 0; i < NR; i++) {
		expect_percpu(test, &c[i]);
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[i]), expect[i]);
	}

	/* Small adds stay in the per-CPU deltas: read is approximate. */
	for (n = 0; n < 1000; n++) {
		for (i = 0; i < NR; i++) {
			if (n & 1)
				lazy_percpu_counter_add_local(&c[i], 3);
			else
				lazy_percpu_counter_add_remote(&c[i], -1);
			expect[i] += (n & 1) ? 3 : -1;
		}
	}
	for (i = 0; i < NR; i++) {
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[i]), expect[i]);
		err = lazy_percpu_counter_read(&c[i]) - expect[i];
		KUNIT_EXPECT_LE(test, abs(err), read_error_bound());
	}
	lazy_percpu_counter_destroy_many(c, NR);
}

struct race {
	struct lazy_percpu_counter c[NR];
	struct task_struct **tasks;	/* one worker per online CPU */
	atomic_t ready;
	atomic_t go;
	atomic_long_t progress;		/* remote adds done, all workers */
	long adds;			/* remote adds per worker */
};

static void race_stop_workers(void *arg)
{
	struct race *r = arg;
	int cpu;

	atomic_set_release(&r->go, 1);
	for_each_possible_cpu(cpu) {
		if (r->tasks[cpu]) {
			kthread_stop_put(r->tasks[cpu]);
			r->tasks[cpu] = NULL;
		}
	}
}

static int race_worker(void *arg)
{
	struct race *r = arg;
	long n;

	atomic_inc(&r->ready);
	/* Yield while waiting: on UP kernels the owner must run. */
	while (!atomic_read_acquire(&r->go) && !kthread_should_stop())
		cond_resched();
	/* -1 and +3 alternate on counter 0; +1 each on the last one. */
	for (n = 0; n < r->adds; n++) {
		lazy_percpu_counter_add_remote(&r->c[0], (n & 1) ? 3 : -1);
		lazy_percpu_counter_add_remote(&r->c[NR - 1], 1);
		atomic_long_inc(&r->progress);
		if (!(n % 64))
			cond_resched();
	}
	return 0;
}

#define RACE_ROUNDS	50
#define RACE_ADDS	4000

/*
 * 5. Remote adds on every online CPU race with the owner's adds and with
 * the upgrade, which lands at a random point of the stream. Not a single
 * add may be lost, in any round.
 */
static void lazy_upgrade_race_test(struct kunit *test)
{
	struct race *r;
	int round, cpu, nr_workers;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->tasks = kunit_kcalloc(test, nr_cpu_ids, sizeof(*r->tasks), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->tasks);
	r->adds = RACE_ADDS;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_counters, r->c), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, race_stop_workers, r), 0);

	for (round = 0; round < RACE_ROUNDS; round++) {
		long owner = 0, total, at, per_worker;

		lazy_percpu_counter_init_many(r->c, 0, NR);
		atomic_set(&r->ready, 0);
		atomic_set(&r->go, 0);
		atomic_long_set(&r->progress, 0);
		nr_workers = 0;
		cpus_read_lock();
		for_each_online_cpu(cpu) {
			struct task_struct *t;

			t = kthread_create_on_cpu(race_worker, r, cpu, "lazy_pcpu/%u");
			if (IS_ERR(t))
				continue;
			get_task_struct(t);
			r->tasks[cpu] = t;
			nr_workers++;
			wake_up_process(t);
		}
		cpus_read_unlock();
		KUNIT_ASSERT_GT(test, nr_workers, 0);
		while (atomic_read(&r->ready) < nr_workers)
			cond_resched();

		total = (long)nr_workers * r->adds;
		at = get_random_u32_below(total);
		atomic_set_release(&r->go, 1);
		/* The owner counts too, then upgrades in mid-stream. */
		while (atomic_long_read(&r->progress) < at) {
			lazy_percpu_counter_add_local(&r->c[0], 2);
			owner += 2;
			cond_resched();
		}
		KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(r->c, NR, GFP_KERNEL), 0);
		lazy_percpu_counter_add_local(&r->c[0], 2);
		owner += 2;

		race_stop_workers(r);
		per_worker = 3 * (r->adds / 2) - (r->adds - r->adds / 2);
		KUNIT_EXPECT_EQ_MSG(test, lazy_percpu_counter_sum(&r->c[0]),
				    owner + nr_workers * per_worker,
				    "round %d, upgrade after %ld of %ld remote adds",
				    round, at, total);
		KUNIT_EXPECT_EQ_MSG(test, lazy_percpu_counter_sum(&r->c[NR - 1]),
				    total, "round %d, upgrade after %ld of %ld remote adds",
				    round, at, total);
		lazy_percpu_counter_destroy_many(r->c, NR);
	}
}

static int fail_alloc_many(struct lazy_percpu_counter *c, u32 nr_counters,
			   gfp_t gfp, struct lock_class_key *key)
{
	return -ENOMEM;
}

/*
 * 6. A failed upgrade returns -ENOMEM and leaves the counters lazy, exact
 * and usable, with nothing allocated; a later upgrade succeeds.
 */
static void lazy_upgrade_fail_test(struct kunit *test)
{
	struct lazy_percpu_counter *c = new_counters(test, 0);
	int i;

	for (i = 0; i < NR; i++) {
		lazy_percpu_counter_add_local(&c[i], 40 + i);
		lazy_percpu_counter_add_remote(&c[i], 2);
	}
	kunit_activate_static_stub(test, lazy_percpu_counter_alloc_many,
				   fail_alloc_many);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_upgrade_many(c, NR, GFP_KERNEL),
			-ENOMEM);
	for (i = 0; i < NR; i++) {
		expect_lazy(test, &c[i]);
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[i]), 42 + i);
		lazy_percpu_counter_add_local(&c[i], 1);
		lazy_percpu_counter_add_remote(&c[i], -2);
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[i]), 41 + i);
	}
	/* Destroying counters whose upgrade failed is a no-op. */
	lazy_percpu_counter_destroy_many(c, NR);
	expect_lazy(test, &c[0]);

	kunit_deactivate_static_stub(test, lazy_percpu_counter_alloc_many);
	KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(c, NR, GFP_KERNEL), 0);
	for (i = 0; i < NR; i++) {
		expect_percpu(test, &c[i]);
		KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[i]), 41 + i);
	}
	lazy_percpu_counter_destroy_many(c, NR);
}

/*
 * 7. Destroy a never-upgraded and an upgraded array. Under
 * CONFIG_DEBUG_OBJECTS_PERCPU_COUNTER a wrong activate/deactivate pairing
 * reports an ODEBUG warning, and CONFIG_DEBUG_LIST checks the hotplug list
 * operations; the test runners fail on either in the kernel log.
 */
static void lazy_destroy_test(struct kunit *test)
{
	struct lazy_percpu_counter *lazy = new_counters(test, 5);
	struct lazy_percpu_counter *up = new_counters(test, 5);
	int i;

	lazy_percpu_counter_destroy_many(lazy, NR);
	expect_lazy(test, &lazy[0]);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&lazy[0]), 5);

	KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(up, NR, GFP_KERNEL), 0);
	for (i = 0; i < NR; i++)
		expect_percpu(test, &up[i]);
	lazy_percpu_counter_destroy_many(up, NR);
#ifdef CONFIG_SMP
	for (i = 0; i < NR; i++) {
		KUNIT_EXPECT_TRUE(test, !up[i].pcpu.counters);
#ifdef CONFIG_HOTPLUG_CPU
		/* list_del() poisons the entry: it left the hotplug list. */
		KUNIT_EXPECT_PTR_EQ(test, up[i].pcpu.list.next, LIST_POISON1);
#endif
	}
#endif
}

#ifdef CONFIG_HOTPLUG_CPU
struct hp_add {
	struct lazy_percpu_counter *c;
	s64 amount;
	struct completion done;
};

static int hp_worker(void *arg)
{
	struct hp_add *a = arg;

	lazy_percpu_counter_add_remote(a->c, a->amount);
	complete(&a->done);
	return 0;
}

/* Make @cpu hold a delta of @amount for @c, from a kthread bound to it. */
static void add_on_cpu(struct kunit *test, struct lazy_percpu_counter *c,
		       unsigned int cpu, s64 amount)
{
	struct hp_add a = { .c = c, .amount = amount };
	struct task_struct *t;

	init_completion(&a.done);
	t = kthread_create_on_cpu(hp_worker, &a, cpu, "lazy_hp/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);
	wait_for_completion(&a.done);
	kthread_stop_put(t);
}

static unsigned int pick_hotplug_cpu(void)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (cpu != raw_smp_processor_id() && cpu_is_hotpluggable(cpu))
			return cpu;
	return nr_cpu_ids;
}
#endif

/*
 * 8. Offline and online a CPU while it holds per-CPU deltas: the dying
 * CPU's fold finds the upgraded counter on the hotplug list, and the sum
 * stays exact. A lazy counter, never on the list, is unaffected.
 */
static void lazy_hotplug_test(struct kunit *test)
{
#ifdef CONFIG_HOTPLUG_CPU
	struct lazy_percpu_counter *c;
	s64 small;
	unsigned int cpu;
	int ret;

	cpu = pick_hotplug_cpu();
	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "no hot-pluggable CPU besides the current one");
	small = percpu_counter_batch / 2;	/* stays in the CPU's delta */

	c = new_counters(test, 0);
	add_on_cpu(test, &c[0], cpu, small);
	ret = remove_cpu(cpu);
	if (ret)
		kunit_skip(test, "remove_cpu(%u) failed: %d", cpu, ret);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[0]), small);
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);

	KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(c, NR, GFP_KERNEL), 0);
	add_on_cpu(test, &c[0], cpu, small);
	add_on_cpu(test, &c[1], cpu, -small);
	KUNIT_EXPECT_EQ(test, *per_cpu_ptr(c[0].pcpu.counters, cpu), small);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[0]), 2 * small);
	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	/* The fold moved the dead CPU's delta into the count. */
	KUNIT_EXPECT_EQ(test, *per_cpu_ptr(c[0].pcpu.counters, cpu), 0);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[0]), 2 * small);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[1]), -small);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_read(&c[0]), 2 * small);
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);
	add_on_cpu(test, &c[0], cpu, 1);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[0]), 2 * small + 1);
	lazy_percpu_counter_destroy_many(c, NR);
#else
	kunit_skip(test, "no CPU hotplug in this kernel");
#endif
}

/* 9. Upgrading upgraded counters is a no-op: no new allocation. */
static void lazy_upgrade_twice_test(struct kunit *test)
{
	struct lazy_percpu_counter *c = new_counters(test, 9);
#ifdef CONFIG_SMP
	s32 __percpu *first;
#endif

	KUNIT_ASSERT_EQ(test, lazy_percpu_counter_upgrade_many(c, NR, GFP_KERNEL), 0);
#ifdef CONFIG_SMP
	first = c[0].pcpu.counters;
#endif
	kunit_activate_static_stub(test, lazy_percpu_counter_alloc_many,
				   fail_alloc_many);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_upgrade_many(c, NR, GFP_KERNEL), 0);
	kunit_deactivate_static_stub(test, lazy_percpu_counter_alloc_many);
#ifdef CONFIG_SMP
	KUNIT_EXPECT_TRUE(test, c[0].pcpu.counters == first);
#endif
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_sum(&c[NR - 1]), 9);
	lazy_percpu_counter_destroy_many(c, NR);
}

static struct kunit_case lazy_percpu_counter_cases[] = {
	KUNIT_CASE(lazy_init_test),
	KUNIT_CASE(lazy_add_test),
	KUNIT_CASE(lazy_read_sum_test),
	KUNIT_CASE(lazy_upgrade_test),
	KUNIT_CASE_SLOW(lazy_upgrade_race_test),
	KUNIT_CASE(lazy_upgrade_fail_test),
	KUNIT_CASE(lazy_destroy_test),
	KUNIT_CASE(lazy_hotplug_test),
	KUNIT_CASE(lazy_upgrade_twice_test),
	{}
};

static struct kunit_suite lazy_percpu_counter_suite = {
	.name = "lazy_percpu_counter",
	.test_cases = lazy_percpu_counter_cases,
};

kunit_test_suite(lazy_percpu_counter_suite);

MODULE_DESCRIPTION("KUnit tests for lazy percpu counters");
MODULE_LICENSE("GPL");
