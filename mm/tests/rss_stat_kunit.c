// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit test of the rules of the lazy mm->rss_stat (add_mm_counter(),
 * copy_mm()): while the counters are lazy, only the task the mm was created
 * for counts without atomics, and only in task context; a kthread_use_mm()
 * borrower and interrupts are counted atomically alongside it; any CLONE_VM
 * clone, thread or not, upgrades the counters first; a borrower cannot share
 * the mm it borrows; a failure inside the step that shares the mm
 * (mm_make_shared()) leaves it lazy, with nothing leaked; and once shared,
 * the cheap read clamps at zero where the global count lags below it.
 * mm_cid's per-CPU slots and the SCHED_CACHE group follow the counters:
 * absent on a new mm and on a fork of a shared one, present once shared,
 * with the owner holding the group as an mm's first task does.
 *
 * The owner is a task that is not a kernel thread, cloned from a kthread
 * that borrows an empty mm, so that it gets a lazy copy of its own. With
 * CONFIG_DEBUG_VM, anything else taking the owner's path is reported.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/percpu_counter.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <kunit/static_stub.h>
#ifdef CONFIG_PERCPU_STATS
#include "../percpu-internal.h"
#endif

#define ADDS		100000
#define MIN_IRQ_ADDS	10
#define IRQ_PERIOD_NS	(100 * NSEC_PER_USEC)

/*
 * The count of live per-CPU allocations is the whole system's: another CPU
 * can free one meanwhile, as when it drops a shared mm that it kept as its
 * lazy TLB mm. A leak adds to every failed clone, such noise to few: the
 * clone fails again, up to PCPU_TRIES times, until one leaves the count as
 * it was.
 */
#define PCPU_TRIES	5

struct owner_ctx {
	struct kunit *test;
	struct task_struct *owner;
	struct mm_struct *mm;		/* the owner's, pinned with mmgrab() */
	struct completion ready, sharer_done, done;
	struct hrtimer timer[2];	/* hardirq, softirq */
	atomic_long_t irq_adds[2];
	atomic_t irqs_as_owner;		/* interrupts that changed the owner's word */
	long owner_adds, other_adds;
	s64 sum, borrowed;		/* of the member, and of MM_SHMEMPAGES */
	long borrowed_as_owner;		/* MM_SHMEMPAGES in the owner's word */
	int clone_err;
	bool lazy;
	int sched_lazy;			/* of mm_cid's slots and the cache group */
	int child_lazy;			/* lazy parts of a fork child's mm */
	unsigned int grp_refs;		/* on the cache group, with the sharer */
	bool owner_in_grp;		/* the owner holds the mm's group */
	struct completion child_done;
	u64 pcpu_before, pcpu_after;	/* per-CPU allocations, around the clone */
	u64 pcpu_made;			/* by a clone that shares the mm */
	s64 pcpu_delta[PCPU_TRIES];	/* the count's change, try by try */
	int pcpu_tries;
};

/*
 * Interrupts that cut into the owner and counted, of the kinds that can:
 * threaded softirqs (PREEMPT_RT, threadirqs) run in a thread of their own.
 */
static long irq_adds_in_owner(struct owner_ctx *c)
{
	long hard = atomic_long_read(&c->irq_adds[0]);

	return force_irqthreads() ? hard : min(hard, atomic_long_read(&c->irq_adds[1]));
}

/* ADDS adds as the owner, and more until enough interrupts counted too. */
static void owner_adds(struct owner_ctx *c, int member, bool until_irqs)
{
	unsigned long stop = jiffies + 10 * HZ;
	long n = 0;

	do {
		add_mm_counter(c->mm, member, 1);
		if (!(++n % 256))
			cond_resched();
	} while (n < ADDS || (until_irqs && time_before(jiffies, stop) &&
			      irq_adds_in_owner(c) < MIN_IRQ_ADDS));
	c->owner_adds = n;
}

/*
 * Records what the test checks and leaves the counters at 0 for check_mm().
 * Only borrowers count into MM_SHMEMPAGES.
 */
static int __noreturn owner_finish(struct owner_ctx *c, int member)
{
	wait_for_completion(&c->sharer_done);
	c->sum = get_mm_counter_sum(c->mm, member);
	c->borrowed = get_mm_counter_sum(c->mm, MM_SHMEMPAGES);
	c->borrowed_as_owner = READ_ONCE(c->mm->rss_stat.owner_adds[MM_SHMEMPAGES]);
	c->lazy = !owned_percpu_counters_is_percpu(&c->mm->rss_stat);
	c->sched_lazy = !mm_cid_is_shared(c->mm) + !mm_sched_is_shared(c->mm);
	add_mm_counter(c->mm, member, -c->sum);
	add_mm_counter(c->mm, MM_SHMEMPAGES, -c->borrowed);
	complete(&c->done);
	do_exit(0);
}

static void owner_start(struct owner_ctx *c)
{
	c->owner = current;
	c->mm = current->mm;
	mmgrab(c->mm);
	complete(&c->ready);
}

/* @soft: 0 from a hardirq timer, 1 from a softirq one. */
static enum hrtimer_restart irq_add(struct owner_ctx *c, int soft)
{
	if (current == c->owner) {	/* cut into the owner */
		long *own = &current->mm->rss_stat.owner_adds[MM_FILEPAGES];
		long before = READ_ONCE(*own);

		add_mm_counter(current->mm, MM_FILEPAGES, 1);
		if (READ_ONCE(*own) != before)
			atomic_inc(&c->irqs_as_owner);
		atomic_long_inc(&c->irq_adds[soft]);
	}
	hrtimer_forward_now(&c->timer[soft], ns_to_ktime(IRQ_PERIOD_NS));
	return HRTIMER_RESTART;
}

static enum hrtimer_restart hardirq_add(struct hrtimer *timer)
{
	return irq_add(container_of(timer, struct owner_ctx, timer[0]), 0);
}

static enum hrtimer_restart softirq_add(struct hrtimer *timer)
{
	return irq_add(container_of(timer, struct owner_ctx, timer[1]), 1);
}

static int borrower_fn(void *arg)
{
	struct owner_ctx *c = arg;
	long n;

	wait_for_completion(&c->ready);
	kthread_use_mm(c->mm);
	for (n = 0; n < ADDS; n++) {
		add_mm_counter(c->mm, MM_FILEPAGES, 1);
		add_mm_counter(c->mm, MM_SHMEMPAGES, 1);
		if (!(n % 256))
			cond_resched();
	}
	kthread_unuse_mm(c->mm);
	c->other_adds = n;
	complete(&c->sharer_done);
	return 0;
}

static int owner_vs_borrower_and_irqs(void *arg)
{
	struct owner_ctx *c = arg;

	owner_start(c);
	migrate_disable();
	hrtimer_start(&c->timer[0], ns_to_ktime(IRQ_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_start(&c->timer[1], ns_to_ktime(IRQ_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_SOFT);
	owner_adds(c, MM_FILEPAGES, true);
	hrtimer_cancel(&c->timer[0]);
	hrtimer_cancel(&c->timer[1]);
	migrate_enable();
	owner_finish(c, MM_FILEPAGES);
}

static int sharer_fn(void *arg)
{
	struct owner_ctx *c = arg;
	long n;

#ifdef CONFIG_SCHED_CACHE
	/* The owner waits for this task: both hold the group now, if any. */
	if (current->mm->sched_cache_grp) {
		c->grp_refs = refcount_read(&current->mm->sched_cache_grp->refcnt);
		c->owner_in_grp = rcu_access_pointer(c->owner->sched_cache_grp) ==
				  current->mm->sched_cache_grp;
	}
#endif
	for (n = 0; n < ADDS; n++) {
		add_mm_counter(current->mm, MM_ANONPAGES, 1);
		if (!(n % 256))
			cond_resched();
	}
	c->other_adds = n;
	complete(&c->sharer_done);
	do_exit(0);
}

static int __noreturn clone_child_exits(void *arg)
{
	do_exit(0);
}

/* A borrower of the owner's mm clones it with CLONE_VM, as kernel_thread(). */
static int borrower_clones_fn(void *arg)
{
	struct owner_ctx *c = arg;
	struct kernel_clone_args args = {
		.flags = CLONE_VM | CLONE_UNTRACED,
		.exit_signal = SIGCHLD,
		.fn = clone_child_exits,
	};
	pid_t pid;

	wait_for_completion(&c->ready);
	kthread_use_mm(c->mm);
	pid = kernel_clone(&args);
	kthread_unuse_mm(c->mm);
	c->clone_err = pid < 0 ? pid : 0;
	complete(&c->sharer_done);
	return 0;
}

static int owner_counts(void *arg)
{
	struct owner_ctx *c = arg;

	owner_start(c);
	owner_adds(c, MM_FILEPAGES, false);
	owner_finish(c, MM_FILEPAGES);
}

/* The owner starts sharer_fn() on its mm with a CLONE_VM clone. */
static void clone_sharer(struct owner_ctx *c)
{
	struct kernel_clone_args args = {
		.flags = CLONE_VM | CLONE_UNTRACED,
		.exit_signal = SIGCHLD,
		.fn = sharer_fn,
		.fn_arg = c,
	};
	pid_t pid = kernel_clone(&args);

	c->clone_err = pid < 0 ? pid : 0;
	if (pid < 0)
		complete(&c->sharer_done);
}

/* Per-CPU allocations made so far (never freed ones only grow the count). */
static u64 pcpu_allocs_made(void)
{
#ifdef CONFIG_PERCPU_STATS
	/* As pcpu_allocs(): written under pcpu_lock. */
	return data_race(READ_ONCE(pcpu_stats.nr_alloc));
#else
	return 0;
#endif
}

static int owner_clones_vm(void *arg)
{
	struct owner_ctx *c = arg;

	owner_start(c);
	add_mm_counter(c->mm, MM_ANONPAGES, 7);
	c->pcpu_made = pcpu_allocs_made();
	clone_sharer(c);
	c->pcpu_made = pcpu_allocs_made() - c->pcpu_made;
	owner_adds(c, MM_ANONPAGES, false);
	c->owner_adds += 7;
	owner_finish(c, MM_ANONPAGES);
}

/* The parts of a lazy mm that the scheduler gets when it is shared. */
#define SCHED_LAZY_PARTS	(IS_ENABLED(CONFIG_SCHED_MM_CID) + IS_ENABLED(CONFIG_SCHED_CACHE))

/* Live per-CPU allocations, where the kernel counts them. */
static u64 pcpu_allocs(void)
{
#ifdef CONFIG_PERCPU_STATS
	/* Written under pcpu_lock, which is private to mm/percpu.c. */
	return data_race(READ_ONCE(pcpu_stats.nr_cur_alloc));
#else
	return 0;
#endif
}

/* The lazy parts of @mm: the rss counters, mm_cid's slots, the group, the block. */
static int lazy_parts(struct mm_struct *mm)
{
	return !owned_percpu_counters_is_percpu(&mm->rss_stat) + !mm_cid_is_shared(mm) +
	       !mm_sched_is_shared(mm) + !mm->pcpu;
}

static int fork_child_fn(void *arg)
{
	struct owner_ctx *c = arg;

	c->child_lazy = lazy_parts(current->mm);
	complete(&c->child_done);
	do_exit(0);
}

/* The owner shares its mm, then forks a child with an mm of its own. */
static int owner_shares_then_forks(void *arg)
{
	struct owner_ctx *c = arg;
	struct kernel_clone_args args = {
		.flags = CLONE_UNTRACED,
		.exit_signal = SIGCHLD,
		.fn = fork_child_fn,
		.fn_arg = c,
	};

	owner_start(c);
	clone_sharer(c);
	if (kernel_clone(&args) > 0)
		wait_for_completion(&c->child_done);
	else
		c->child_lazy = -1;
	owner_finish(c, MM_ANONPAGES);
}

/*
 * Each step of the share that can fail, made to fail in turn: the per-CPU
 * block (first) and the cache group (second); the rss counters' move onto
 * the block cannot fail. On UP, with no block, the rss upgrade.
 */
enum share_step { FAIL_PCPU_BLOCK, FAIL_CACHE_GROUP, FAIL_RSS_UPGRADE };

static const struct share_failure {
	const char *desc;
	enum share_step step;
	int err;
} share_failures[] = {
#ifdef CONFIG_SMP
	{ "per-CPU block", FAIL_PCPU_BLOCK, -ENOMEM },
#else
	{ "rss counters upgrade", FAIL_RSS_UPGRADE, -ENOSPC },
#endif
#ifdef CONFIG_SCHED_CACHE
	{ "cache group", FAIL_CACHE_GROUP, -ENOSPC },
#endif
};

KUNIT_ARRAY_PARAM_DESC(share_failures, share_failures, desc);

static struct mm_pcpu __percpu *fail_pcpu_block(void)
{
	return NULL;
}

static int fail_rss_upgrade(struct owned_percpu_counters *oc, unsigned int nr,
			    gfp_t gfp)
{
	return -ENOSPC;
}

static int __maybe_unused fail_shared_sched(struct mm_shared_sched *s)
{
	return -ENOSPC;
}

/* Make @step of the share fail, for the current test. */
static void fail_share_step(struct kunit *test, enum share_step step)
{
	switch (step) {
	case FAIL_PCPU_BLOCK:
		kunit_activate_static_stub(test, mm_alloc_pcpu, fail_pcpu_block);
		break;
	case FAIL_RSS_UPGRADE:
		kunit_activate_static_stub(test, owned_percpu_counters_init_percpu,
					   fail_rss_upgrade);
		break;
#ifdef CONFIG_SCHED_CACHE
	case FAIL_CACHE_GROUP:
		kunit_activate_static_stub(test, mm_sched_alloc_shared,
					   fail_shared_sched);
		break;
#endif
	default:
		KUNIT_FAIL(test, "no such step: %d", step);
	}
}

static int owner_clone_fails(void *arg)
{
	struct owner_ctx *c = arg;
	int try;

	owner_start(c);
	current->kunit_test = c->test;	/* for the static stub */
	add_mm_counter(c->mm, MM_ANONPAGES, 7);
	for (try = 1; ; try++) {
		/*
		 * Per-CPU memory that earlier frees left to RCU goes first;
		 * a failed share frees what it allocated before it returns.
		 */
		rcu_barrier();
		c->pcpu_before = pcpu_allocs();
		clone_sharer(c);
		c->pcpu_after = pcpu_allocs();
		c->pcpu_delta[try - 1] = (s64)(c->pcpu_after - c->pcpu_before);
		c->pcpu_tries = try;
		if (!c->clone_err || c->pcpu_after == c->pcpu_before ||
		    try == PCPU_TRIES)
			break;
		/* clone_sharer() completed it for this clone: rearm it. */
		reinit_completion(&c->sharer_done);
	}
	current->kunit_test = NULL;
	c->owner_adds = 7;
	owner_finish(c, MM_ANONPAGES);
}

static void free_ctx(void *arg)
{
	struct owner_ctx *c = arg;

	if (c->mm)
		mmdrop(c->mm);
}

static void stop_borrower(void *borrower)
{
	kthread_stop_put(borrower);
}

/*
 * Runs @fn as the owner of a new lazy mm, with a kthread_use_mm() borrower
 * of that mm running @borrower if there is one, and waits for it to finish.
 */
static struct owner_ctx *run_owner(struct kunit *test, int (*fn)(void *),
				   int (*borrower)(void *))
{
	struct owner_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct kernel_clone_args args = {
		.flags = CLONE_UNTRACED,	/* not CLONE_VM: an mm of its own */
		.exit_signal = SIGCHLD,
		.fn = fn,
	};
	struct mm_struct *seed;
	pid_t pid;

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_ctx, c), 0);
	c->test = test;
	test->priv = c;
	init_completion(&c->ready);
	init_completion(&c->sharer_done);
	init_completion(&c->done);
	init_completion(&c->child_done);
	hrtimer_setup(&c->timer[0], hardirq_add, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_setup(&c->timer[1], softirq_add, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_SOFT);
	args.fn_arg = c;
	if (borrower) {
		struct task_struct *t;

		t = kthread_run(borrower, c, "rss_stat_borrower");
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		get_task_struct(t);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, stop_borrower, t), 0);
	}

	seed = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, seed);
	kthread_use_mm(seed);
	pid = kernel_clone(&args);
	kthread_unuse_mm(seed);
	mmput(seed);
	KUNIT_ASSERT_GT(test, pid, 0);
	wait_for_completion(&c->done);
	return c;
}

/*
 * The owner counts without atomics while a kthread_use_mm() borrower
 * counts into the same lazy counter on another CPU, and into one the owner
 * does not touch, and hardirq and softirq timers cut into the owner and
 * count too: no add is lost, none of the borrower's or the interrupts' adds
 * goes to the owner's word, and the counters stay lazy.
 */
static void rss_stat_owner_path_is_the_owners_only_test(struct kunit *test)
{
	struct owner_ctx *c = run_owner(test, owner_vs_borrower_and_irqs, borrower_fn);

	KUNIT_EXPECT_GE(test, irq_adds_in_owner(c), MIN_IRQ_ADDS);
	KUNIT_EXPECT_EQ(test, c->sum, c->owner_adds + c->other_adds +
			atomic_long_read(&c->irq_adds[0]) +
			atomic_long_read(&c->irq_adds[1]));
	KUNIT_EXPECT_EQ(test, c->borrowed, c->other_adds);
	/* The borrower's and the interrupts' adds were shared, every one. */
	KUNIT_EXPECT_EQ(test, c->borrowed_as_owner, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->irqs_as_owner), 0);
	KUNIT_EXPECT_TRUE(test, c->lazy);
	KUNIT_EXPECT_EQ(test, c->sched_lazy, SCHED_LAZY_PARTS);
}

/*
 * A CLONE_VM clone that is not a thread shares the mm as much as a thread:
 * it upgrades the counters first, and the adds of both tasks, before and
 * after, are all there.
 */
static void rss_stat_clone_vm_upgrades_test(struct kunit *test)
{
	struct owner_ctx *c = run_owner(test, owner_clones_vm, NULL);

	KUNIT_EXPECT_EQ(test, c->clone_err, 0);
	KUNIT_EXPECT_FALSE(test, c->lazy);
	KUNIT_EXPECT_EQ(test, c->sum, c->owner_adds + c->other_adds);
	KUNIT_EXPECT_EQ(test, c->sched_lazy, 0);
}

/*
 * The share makes one per-CPU allocation, the mm's block, where each of
 * rss_stat, mm_cid and the cache group made its own; a CLONE_VM clone also
 * allocates the private futex hash's reference. Other CPUs can allocate
 * meanwhile, never take one back from the count: the fewest of a few
 * tries is the clone's.
 */
static void rss_stat_share_makes_one_pcpu_alloc_test(struct kunit *test)
{
	const u64 want = 1 + IS_ENABLED(CONFIG_FUTEX_PRIVATE_HASH);
	u64 fewest = U64_MAX;
	int try;

	if (!IS_ENABLED(CONFIG_PERCPU_STATS))
		kunit_skip(test, "needs CONFIG_PERCPU_STATS");
	if (!SCHED_LAZY_PARTS)
		kunit_skip(test, "rss_stat has the block to itself");
	for (try = 0; try < PCPU_TRIES && fewest != want; try++) {
		struct owner_ctx *c = run_owner(test, owner_clones_vm, NULL);

		KUNIT_ASSERT_EQ(test, c->clone_err, 0);
		fewest = min(fewest, c->pcpu_made);
	}
	KUNIT_EXPECT_EQ(test, fewest, want);
}

/*
 * A kernel thread that borrows a lazy mm is not its owner and cannot share
 * it: its CLONE_VM clone fails with -EINVAL, and the counters stay lazy and
 * exact while the owner counts.
 */
static void rss_stat_borrower_cannot_share_test(struct kunit *test)
{
	struct owner_ctx *c = run_owner(test, owner_counts, borrower_clones_fn);

	KUNIT_EXPECT_EQ(test, c->clone_err, -EINVAL);
	KUNIT_EXPECT_TRUE(test, c->lazy);
	KUNIT_EXPECT_EQ(test, c->sum, c->owner_adds);
	KUNIT_EXPECT_EQ(test, c->sched_lazy, SCHED_LAZY_PARTS);
}

struct cpu_add {
	struct mm_struct *mm;
	long n;
};

/* A cross-CPU call adds on the CPU it runs on: never as the owner. */
static void add_on_cpu(void *arg)
{
	struct cpu_add *a = arg;

	add_mm_counter(a->mm, MM_SHMEMPAGES, a->n);
}

/* A CPU's delta of a shared counter stays below this. */
static int shared_batch(void)
{
#ifdef CONFIG_SMP
	return percpu_counter_batch;
#else
	return 0;	/* UP: no deltas, every add goes to the count */
#endif
}

KUNIT_DEFINE_ACTION_WRAPPER(mmput_action, mmput, struct mm_struct *);

/*
 * Once shared, the cheap read (get_mm_counter(): /proc/PID/stat, the OOM
 * badness and reports, the hiwater marks) is the global count, which lags
 * the CPUs' deltas by less than a batch each and can be below zero while
 * the counter is not: it reads 0 then, and the exact reads stay exact.
 * The first CPU folds a batch, every other one keeps batch - 1, then the
 * first takes all but one away: the count is 1 - (n - 1) * (batch - 1).
 */
static void rss_stat_shared_read_clamps_at_zero_test(struct kunit *test)
{
	unsigned long sums[NR_MM_COUNTERS];
	int cpu, first, others = 0;
	struct mm_struct *mm;
	struct cpu_add a;
	int batch;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mmput_action, mm), 0);
	a.mm = mm;
	mm_rss_stat_set_owner(mm, current);	/* who may upgrade it */
	KUNIT_ASSERT_EQ(test, owned_percpu_counters_upgrade(&mm->rss_stat,
							    NR_MM_COUNTERS,
							    GFP_KERNEL), 0);
	cpus_read_lock();	/* the online CPUs and the batch stay */
	batch = shared_batch();
	first = cpumask_first(cpu_online_mask);
	a.n = batch;
	smp_call_function_single(first, add_on_cpu, &a, 1);
	a.n = batch - 1;
	for_each_online_cpu(cpu) {
		if (cpu == first)
			continue;
		smp_call_function_single(cpu, add_on_cpu, &a, 1);
		others++;
	}
	a.n = 1 - batch - others * (batch - 1L);
	smp_call_function_single(first, add_on_cpu, &a, 1);

	KUNIT_EXPECT_EQ(test, owned_percpu_counter_read(&mm->rss_stat, MM_SHMEMPAGES),
			1 - others * (batch - 1LL));
	KUNIT_EXPECT_EQ(test, get_mm_counter(mm, MM_SHMEMPAGES), 0);
	KUNIT_EXPECT_EQ(test, get_mm_rss(mm), 0);
	KUNIT_EXPECT_EQ(test, get_mm_counter_sum(mm, MM_SHMEMPAGES), 1);
	get_mm_counters_sum(mm, sums);
	KUNIT_EXPECT_EQ(test, sums[MM_SHMEMPAGES], 1);
	a.n = -1;	/* check_mm() wants 0 */
	smp_call_function_single(first, add_on_cpu, &a, 1);
	cpus_read_unlock();
}

/*
 * The step that shares an mm is all or nothing: when any of its parts
 * fails, the clone fails with that error, the mm stays lazy and exact, and
 * no per-CPU allocation is left behind.
 */
static void rss_stat_failed_share_leaves_mm_lazy_test(struct kunit *test)
{
	const struct share_failure *f = test->param_value;
	struct owner_ctx *c;
	int i;

	fail_share_step(test, f->step);
	c = run_owner(test, owner_clone_fails, NULL);	/* the stub ends with the test */

	KUNIT_EXPECT_EQ(test, c->clone_err, f->err);
	KUNIT_EXPECT_TRUE(test, c->lazy);
	KUNIT_EXPECT_EQ(test, c->sum, c->owner_adds);
	KUNIT_EXPECT_EQ(test, c->pcpu_after, c->pcpu_before);
	for (i = 0; c->pcpu_after != c->pcpu_before && i < c->pcpu_tries; i++)
		kunit_info(test, "try %d changed the count by %lld\n", i + 1,
			   c->pcpu_delta[i]);
	KUNIT_EXPECT_EQ(test, c->sched_lazy, SCHED_LAZY_PARTS);
}

/*
 * At the share, the owner holds the mm's new cache group as the new task
 * does, and as the owner of an mm that had it from the start would: the
 * group has three references, the mm's and the two tasks'.
 */
static void rss_stat_share_gives_owner_the_group_test(struct kunit *test)
{
	struct owner_ctx *c;

	if (!IS_ENABLED(CONFIG_SCHED_CACHE))
		kunit_skip(test, "needs CONFIG_SCHED_CACHE");
	c = run_owner(test, owner_clones_vm, NULL);
	KUNIT_ASSERT_EQ(test, c->clone_err, 0);
	KUNIT_EXPECT_EQ(test, c->grp_refs, 3);
	KUNIT_EXPECT_TRUE(test, c->owner_in_grp);
}

/*
 * A fork of a shared mm (not CLONE_VM) gets an mm of its own that is as
 * lazy as any new mm: dup_mm() copies the parent's mm_struct, which has
 * per-CPU counters, slots, a group and a per-CPU block.
 */
static void rss_stat_fork_of_shared_mm_is_lazy_test(struct kunit *test)
{
	struct owner_ctx *c = run_owner(test, owner_shares_then_forks, NULL);

	KUNIT_ASSERT_EQ(test, c->clone_err, 0);
	KUNIT_EXPECT_FALSE(test, c->lazy);
	KUNIT_EXPECT_EQ(test, c->sched_lazy, 0);
	KUNIT_EXPECT_EQ(test, c->child_lazy, 2 + SCHED_LAZY_PARTS);
}

static struct kunit_case rss_stat_cases[] = {
	/* First: no case before it leaves a shared mm to be freed meanwhile. */
	KUNIT_CASE_PARAM(rss_stat_failed_share_leaves_mm_lazy_test,
			 share_failures_gen_params),
	KUNIT_CASE(rss_stat_owner_path_is_the_owners_only_test),
	KUNIT_CASE(rss_stat_clone_vm_upgrades_test),
	KUNIT_CASE(rss_stat_share_makes_one_pcpu_alloc_test),
	KUNIT_CASE(rss_stat_borrower_cannot_share_test),
	KUNIT_CASE(rss_stat_shared_read_clamps_at_zero_test),
	KUNIT_CASE(rss_stat_share_gives_owner_the_group_test),
	KUNIT_CASE(rss_stat_fork_of_shared_mm_is_lazy_test),
	{}
};

static struct kunit_suite rss_stat_suite = {
	.name = "rss_stat",
	.test_cases = rss_stat_cases,
};

kunit_test_suite(rss_stat_suite);

MODULE_DESCRIPTION("KUnit test of the lazy rss_stat rules");
MODULE_LICENSE("GPL");
