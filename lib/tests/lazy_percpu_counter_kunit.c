// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for lazy percpu counters (include/linux/lazy_percpu_counter.h).
 *
 * The test thread plays the owner; kthreads play everyone else.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/lazy_percpu_counter.h>
#include <linux/poison.h>
#include <linux/random.h>
#include <linux/sched/task.h>

#define NR 3	/* counters per set: sets are upgraded as a whole */

struct lazy_set {
	struct lazy_percpu_counters lc;
};

static void expect_lazy(struct kunit *test, struct lazy_set *s)
{
	KUNIT_EXPECT_FALSE(test, lazy_percpu_counters_is_percpu(&s->lc));
	/* No percpu_counters, so none on the hotplug list. */
	KUNIT_EXPECT_NULL(test, s->lc.pcpu);
}

/* Is @pcpu linked into the hotplug list (not unlinked, not poisoned)? */
static bool on_hotplug_list(struct percpu_counter *pcpu)
{
#if defined(CONFIG_SMP) && defined(CONFIG_HOTPLUG_CPU)
	/* Racy against other counters' list_add(): a glance is all we need. */
	struct list_head *next = data_race(READ_ONCE(pcpu->list.next));

	return next && next != &pcpu->list && next != LIST_POISON1;
#else
	return true;
#endif
}

static void expect_percpu(struct kunit *test, struct lazy_set *s)
{
	int i;

	KUNIT_EXPECT_TRUE(test, lazy_percpu_counters_is_percpu(&s->lc));
	KUNIT_ASSERT_NOT_NULL(test, s->lc.pcpu);
	for (i = 0; i < NR; i++) {
#ifdef CONFIG_SMP
		KUNIT_EXPECT_TRUE(test, !!s->lc.pcpu[i].counters);
#endif
		KUNIT_EXPECT_TRUE(test, on_hotplug_list(&s->lc.pcpu[i]));
	}
}

static void destroy_set(void *s)
{
	lazy_percpu_counters_destroy(&((struct lazy_set *)s)->lc, NR);
}

/*
 * An all-zero set is lazy. Allocated, as debugobjects wants for
 * percpu_counters, and destroyed when the case ends however it ends: an
 * upgraded set left on the hotplug list would corrupt it.
 */
static struct lazy_set *new_set(struct kunit *test)
{
	struct lazy_set *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
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
static void expect_sums(struct kunit *test, struct lazy_set *s, const s64 *expect)
{
	s64 sums[NR];
	int i;

	lazy_percpu_counters_sum(&s->lc, NR, sums);
	for (i = 0; i < NR; i++) {
		KUNIT_EXPECT_EQ_MSG(test, lazy_percpu_counter_sum(&s->lc, i), expect[i],
				    "counter %d", i);
		KUNIT_EXPECT_EQ_MSG(test, sums[i], expect[i], "counter %d, one pass", i);
		KUNIT_EXPECT_LE_MSG(test, abs(lazy_percpu_counter_read(&s->lc, i) - expect[i]),
				    lazy_percpu_counters_is_percpu(&s->lc) ? read_error_bound() : 0,
				    "counter %d, read", i);
	}
}

/* An all-zero set, static like init_mm's or allocated, is lazy and 0. */
static void lazy_zero_is_valid_test(struct kunit *test)
{
	static struct lazy_set zeroed;
	struct lazy_set *s = new_set(test);
	const s64 zero[NR] = {}, five[NR] = { 5, 0, -5 };

	expect_lazy(test, &zeroed);
	expect_sums(test, &zeroed, zero);
	lazy_percpu_counter_add_owner(&zeroed.lc, 0, 5);
	lazy_percpu_counter_add_shared(&zeroed.lc, NR - 1, -5);
	KUNIT_ASSERT_EQ(test, lazy_percpu_counters_upgrade(&zeroed.lc, NR, GFP_KERNEL), 0);
	expect_sums(test, &zeroed, five);
	lazy_percpu_counters_destroy(&zeroed.lc, NR);
	lazy_percpu_counters_init(&zeroed.lc);
	expect_lazy(test, &zeroed);

	expect_lazy(test, s);
	expect_sums(test, s, zero);
}

/*
 * Lazy adds of both kinds and signs are exact, read and sum alike, and
 * leave the other counters alone. Either word may wrap around: the value
 * is exact as long as it fits in BITS_PER_LONG - 1 bits.
 */
static void lazy_adds_are_exact_test(struct kunit *test)
{
	struct lazy_set *s = new_set(test);
	const long big = LONG_MAX / 4 + 1;
	const s64 expect[NR] = { 92, -3, 0 };
	int n;

	lazy_percpu_counter_add_owner(&s->lc, 0, 5);
	lazy_percpu_counter_add_shared(&s->lc, 0, -3);
	lazy_percpu_counter_add_owner(&s->lc, 0, -10);
	lazy_percpu_counter_add_shared(&s->lc, 0, 100);
	lazy_percpu_counter_add_shared(&s->lc, 1, -3);
	for (n = 0; n < 4; n++) {
		lazy_percpu_counter_add_owner(&s->lc, 2, big);
		lazy_percpu_counter_add_shared(&s->lc, 2, -big);
	}
	expect_sums(test, s, expect);
	expect_lazy(test, s);
}

/*
 * The upgrade keeps every value and makes the set per-CPU: adds of both
 * kinds then go to the percpu_counters. Upgrading again does nothing, and
 * destroying takes the counters off the hotplug list.
 */
static int fail_alloc(struct lazy_percpu_counters *lc, unsigned int nr, gfp_t gfp)
{
	return -EAGAIN;
}

static void lazy_upgrade_keeps_values_test(struct kunit *test)
{
	struct lazy_set *s = new_set(test);
	struct percpu_counter *pcpu;
	s64 expect[NR];
	long owner[NR];
	int i, n;

	for (i = 0; i < NR; i++) {
		lazy_percpu_counter_add_owner(&s->lc, i, 1000 * (i + 1));
		lazy_percpu_counter_add_shared(&s->lc, i, -7 * (i + 1));
		expect[i] = 993 * (i + 1);
		owner[i] = s->lc.owner[i];
	}
	KUNIT_ASSERT_EQ(test, lazy_percpu_counters_upgrade(&s->lc, NR, GFP_KERNEL), 0);
	expect_percpu(test, s);
	expect_sums(test, s, expect);

	for (n = 0; n < 1000; n++) {
		for (i = 0; i < NR; i++) {
			if (n & 1)
				lazy_percpu_counter_add_owner(&s->lc, i, 3);
			else
				lazy_percpu_counter_add_shared(&s->lc, i, -1);
			expect[i] += (n & 1) ? 3 : -1;
		}
	}
	expect_sums(test, s, expect);
	for (i = 0; i < NR; i++)
		KUNIT_EXPECT_EQ(test, s->lc.owner[i], owner[i]);

	pcpu = s->lc.pcpu;
	kunit_activate_static_stub(test, lazy_percpu_counters_alloc, fail_alloc);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counters_upgrade(&s->lc, NR, GFP_KERNEL), 0);
	kunit_deactivate_static_stub(test, lazy_percpu_counters_alloc);
	KUNIT_EXPECT_PTR_EQ(test, s->lc.pcpu, pcpu);
	expect_sums(test, s, expect);

	/* Destroyed, the set owns nothing (and the kernel log tells). */
	lazy_percpu_counters_destroy(&s->lc, NR);
	KUNIT_EXPECT_NULL(test, s->lc.pcpu);
	lazy_percpu_counters_init(&s->lc);
}

/*
 * A failed upgrade returns the allocation's error and leaves the set lazy,
 * exact and usable, with nothing allocated; a later upgrade succeeds.
 */
static void lazy_upgrade_failure_test(struct kunit *test)
{
	struct lazy_set *s = new_set(test);
	s64 expect[NR];
	int i;

	for (i = 0; i < NR; i++) {
		lazy_percpu_counter_add_owner(&s->lc, i, 40 + i);
		lazy_percpu_counter_add_shared(&s->lc, i, 2);
		expect[i] = 42 + i;
	}
	kunit_activate_static_stub(test, lazy_percpu_counters_alloc, fail_alloc);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counters_upgrade(&s->lc, NR, GFP_KERNEL), -EAGAIN);
	kunit_deactivate_static_stub(test, lazy_percpu_counters_alloc);
	expect_lazy(test, s);
	expect_sums(test, s, expect);
	lazy_percpu_counter_add_owner(&s->lc, 0, 1);
	lazy_percpu_counter_add_shared(&s->lc, 0, -2);
	expect[0] -= 1;
	expect_sums(test, s, expect);

	KUNIT_ASSERT_EQ(test, lazy_percpu_counters_upgrade(&s->lc, NR, GFP_KERNEL), 0);
	expect_percpu(test, s);
	expect_sums(test, s, expect);
}

/* What everyone else can see in the middle of the fold of each counter. */
struct fold_seen {
	struct lazy_set *s;
	s64 read[NR];
	bool excluded[NR], listed[NR], flagged[NR];
	int calls;
};

static void record_fold_point(struct percpu_counter *pcpu)
{
	struct fold_seen *seen = kunit_get_current_test()->priv;
	int i = pcpu - seen->s->lc.pcpu;

	seen->calls++;
	seen->read[i] = lazy_percpu_counter_read(&seen->s->lc, i);
#ifdef CONFIG_SMP
	seen->excluded[i] = raw_spin_is_locked(&pcpu->lock);
#else
	seen->excluded[i] = irqs_disabled();
#endif
	seen->listed[i] = on_hotplug_list(pcpu);
	seen->flagged[i] = lazy_percpu_counters_is_percpu(&seen->s->lc);
}

/*
 * Once a counter's flag is visible, a lockless read already finds the lazy
 * value in its count, percpu_counter_sum() and a dying CPU's fold are held
 * off until the count is final, and the counter is on the hotplug list, so
 * that no CPU can hold a delta for it that the fold would miss.
 */
static void lazy_fold_is_published_safely_test(struct kunit *test)
{
	struct fold_seen seen = { .s = new_set(test) };
	int i;

	for (i = 0; i < NR; i++) {
		lazy_percpu_counter_add_owner(&seen.s->lc, i, 10 + i);
		lazy_percpu_counter_add_shared(&seen.s->lc, i, 20 + i);
	}
	test->priv = &seen;
	kunit_activate_static_stub(test, lazy_percpu_counter_fold_point, record_fold_point);
	KUNIT_ASSERT_EQ(test, lazy_percpu_counters_upgrade(&seen.s->lc, NR, GFP_KERNEL), 0);
	kunit_deactivate_static_stub(test, lazy_percpu_counter_fold_point);

	KUNIT_EXPECT_EQ(test, seen.calls, NR);
	for (i = 0; i < NR; i++) {
		KUNIT_EXPECT_EQ_MSG(test, seen.read[i], 30 + 2 * i, "counter %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, seen.excluded[i], "counter %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, seen.listed[i], "counter %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, seen.flagged[i], "counter %d", i);
	}
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

/* One per CPU: its adds are counted here, not in a shared atomic. */
struct race_worker {
	struct race *r;
	struct task_struct *task;
	long adds[NR];
	int dips;			/* sums that went down */
} ____cacheline_aligned;

struct race {
	struct lazy_set *s;
	struct race_worker *w;		/* per CPU */
	struct task_struct *hotplugger;
	atomic_t ready, go, stop, done;
	atomic_t hp_cycles;		/* CPU offline and online again */
	unsigned int hp_cpu;		/* nr_cpu_ids: none */
};

/*
 * Everyone but the owner, until the owner says stop: shared adds, all
 * positive, so that every exact sum is at least the one before; one add
 * in 16 is a whole batch, so that the per-CPU slow path runs too; and now
 * and then a sum. Mostly adds, so that some land right at the fold.
 */
static int race_worker_fn(void *arg)
{
	struct race_worker *w = arg;
	struct race *r = w->r;
	s64 last[NR] = {}, sum;
	long n, amount;
	int i;

	atomic_inc(&r->ready);
	while (!atomic_read_acquire(&r->go) && !kthread_should_stop())
		cond_resched();
	for (n = 0; !atomic_read(&r->stop); n++) {
		i = n % NR;
		amount = (n % 16) ? 1 : batch();
		lazy_percpu_counter_add_shared(&r->s->lc, i, amount);
		WRITE_ONCE(w->adds[i], w->adds[i] + amount);
		if (n % 64 >= NR)
			continue;
		sum = lazy_percpu_counter_sum(&r->s->lc, i);
		if (sum < last[i])
			w->dips++;
		last[i] = sum;
		cond_resched();
	}
	atomic_inc(&r->done);
	while (!kthread_should_stop())
		schedule_timeout_idle(1);
	return 0;
}

/* Shared adds so far, of counter @i or, for @i == NR, of all. */
static long race_adds(struct race *r, int i)
{
	long total = 0;
	unsigned int cpu;
	int j;

	for_each_possible_cpu(cpu)
		for (j = 0; j < NR; j++)
			if (i == NR || i == j)
				total += READ_ONCE(r->w[cpu].adds[j]);
	return total;
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
	memset(r->w, 0, nr_cpu_ids * sizeof(*r->w));
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		r->w[cpu].r = r;
		t = kthread_create_on_cpu(race_worker_fn, &r->w[cpu], cpu, "lazy_pcpu/%u");
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
 * Shared adds and exact sums on every online CPU race with the owner's adds
 * and with the upgrade, which lands at a random point of the stream, while
 * a CPU goes offline and online again. Not a single add may be lost, and
 * no exact sum may ever go down.
 */
static void lazy_upgrade_race_test(struct kunit *test)
{
	unsigned int cpu;
	struct race *r;
	int round, i, nr, dips = 0;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->w = kunit_kcalloc(test, nr_cpu_ids, sizeof(*r->w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->w);
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
		r->hotplugger = kthread_run(race_hotplugger, r, "lazy_pcpu_hp");
		KUNIT_ASSERT_FALSE(test, IS_ERR(r->hotplugger));
		get_task_struct(r->hotplugger);
	}
#endif

	for (round = 0; round < RACE_ROUNDS; round++) {
		long owner = 0, at;

		lazy_percpu_counters_destroy(&r->s->lc, NR);
		lazy_percpu_counters_init(&r->s->lc);
		nr = race_start_workers(r);
		KUNIT_ASSERT_GT(test, nr, 0);
		at = get_random_u32_below(nr * RACE_ADDS);
		atomic_set_release(&r->go, 1);
		/* The owner counts too, then upgrades in mid-stream. */
		while (race_adds(r, NR) < at) {
			lazy_percpu_counter_add_owner(&r->s->lc, 0, 2);
			owner += 2;
			cond_resched();
		}
		KUNIT_ASSERT_EQ(test, lazy_percpu_counters_upgrade(&r->s->lc, NR, GFP_KERNEL), 0);
		lazy_percpu_counter_add_owner(&r->s->lc, 0, 2);
		owner += 2;
		at = race_adds(r, NR) + nr * RACE_ADDS / 4;
		while (race_adds(r, NR) < at)
			cond_resched();
		atomic_set(&r->stop, 1);
		while (atomic_read(&r->done) < nr)
			cond_resched();

		for (i = 0; i < NR; i++)
			KUNIT_EXPECT_EQ_MSG(test, lazy_percpu_counter_sum(&r->s->lc, i),
					    race_adds(r, i) + (i ? 0 : owner),
					    "counter %d, round %d", i, round);
		for_each_possible_cpu(cpu)
			dips += r->w[cpu].dips;
		race_stop_workers(r);
	}
	KUNIT_EXPECT_EQ(test, dips, 0);
#ifdef CONFIG_HOTPLUG_CPU
	if (r->hp_cpu < nr_cpu_ids)
		KUNIT_EXPECT_GT(test, atomic_read(&r->hp_cycles), 0);
#endif
	kunit_info(test, "%d rounds on %u CPUs, %d CPU offline/online cycles\n",
		   RACE_ROUNDS, num_present_cpus(), atomic_read(&r->hp_cycles));
}

#ifdef CONFIG_HOTPLUG_CPU
struct hp_add {
	struct lazy_set *s;
	int i;
	long amount;
	struct completion done;
};

static int hp_add_fn(void *arg)
{
	struct hp_add *a = arg;

	lazy_percpu_counter_add_shared(&a->s->lc, a->i, a->amount);
	complete(&a->done);
	return 0;
}

/* Make @cpu hold a delta of @amount for counter @i of @s. */
static void add_on_cpu(struct kunit *test, struct lazy_set *s, int i,
		       unsigned int cpu, long amount)
{
	struct hp_add a = { .s = s, .i = i, .amount = amount };
	struct task_struct *t;

	init_completion(&a.done);
	t = kthread_create_on_cpu(hp_add_fn, &a, cpu, "lazy_hp/%u");
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
static void lazy_hotplug_folds_deltas_test(struct kunit *test)
{
#ifdef CONFIG_HOTPLUG_CPU
	struct lazy_set *up = new_set(test), *lazy = new_set(test);
	s64 small = percpu_counter_batch / 2;	/* stays in the CPU's delta */
	const s64 expect_lazy[NR] = { 3, 0, 0 };
	s64 expect[NR] = { small, 0, -small };
	unsigned int cpu = pick_hotplug_cpu();

	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "no hot-pluggable CPU besides the current one");
	KUNIT_ASSERT_EQ(test, restore_cpu_at_end(test, cpu), 0);
	KUNIT_ASSERT_EQ(test, lazy_percpu_counters_upgrade(&up->lc, NR, GFP_KERNEL), 0);
	add_on_cpu(test, up, 0, cpu, small);
	add_on_cpu(test, up, NR - 1, cpu, -small);
	add_on_cpu(test, lazy, 0, cpu, 3);
	KUNIT_EXPECT_EQ(test, *per_cpu_ptr(up->lc.pcpu[0].counters, cpu), small);

	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_EXPECT_EQ(test, *per_cpu_ptr(up->lc.pcpu[0].counters, cpu), 0);
	expect_sums(test, up, expect);
	KUNIT_EXPECT_EQ(test, lazy_percpu_counter_read(&up->lc, 0), small);
	expect_sums(test, lazy, expect_lazy);
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);

	add_on_cpu(test, up, 1, cpu, 1);
	expect[1] = 1;
	expect_sums(test, up, expect);
#else
	kunit_skip(test, "no CPU hotplug in this kernel");
#endif
}

static struct kunit_case lazy_percpu_counter_cases[] = {
	KUNIT_CASE(lazy_zero_is_valid_test),
	KUNIT_CASE(lazy_adds_are_exact_test),
	KUNIT_CASE(lazy_upgrade_keeps_values_test),
	KUNIT_CASE(lazy_upgrade_failure_test),
	KUNIT_CASE(lazy_fold_is_published_safely_test),
	KUNIT_CASE_SLOW(lazy_upgrade_race_test),
	KUNIT_CASE(lazy_hotplug_folds_deltas_test),
	{}
};

static struct kunit_suite lazy_percpu_counter_suite = {
	.name = "lazy_percpu_counter",
	.test_cases = lazy_percpu_counter_cases,
};

kunit_test_suite(lazy_percpu_counter_suite);

MODULE_DESCRIPTION("KUnit tests for lazy percpu counters");
MODULE_LICENSE("GPL");
