// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit test of the rules of the lazy mm->rss_stat (add_mm_counter(),
 * copy_mm()): while the counters are lazy, only the task the mm was created
 * for counts without atomics, and only in task context; a kthread_use_mm()
 * borrower and interrupts are counted atomically alongside it; and any
 * CLONE_VM clone, thread or not, upgrades the counters first.
 *
 * The owner is a task that is not a kernel thread, cloned from a kthread
 * that borrows an empty mm, so that it gets a lazy copy of its own. With
 * CONFIG_DEBUG_VM, anything else taking the owner's path is reported.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>

#define ADDS		100000
#define MIN_IRQ_ADDS	10
#define IRQ_PERIOD_NS	(100 * NSEC_PER_USEC)

struct owner_ctx {
	struct task_struct *owner;
	struct mm_struct *mm;		/* the owner's, pinned with mmgrab() */
	struct completion ready, sharer_done, done;
	struct hrtimer timer;
	atomic_long_t irq_adds;
	long owner_adds, other_adds;
	s64 sum;
	int clone_err;
	bool lazy;
};

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
			      atomic_long_read(&c->irq_adds) < MIN_IRQ_ADDS));
	c->owner_adds = n;
}

/* Records what the test checks and leaves the counter at 0 for check_mm(). */
static int __noreturn owner_finish(struct owner_ctx *c, int member)
{
	wait_for_completion(&c->sharer_done);
	c->sum = get_mm_counter_sum(c->mm, member);
	c->lazy = !lazy_percpu_counters_is_percpu(&c->mm->rss_stat);
	add_mm_counter(c->mm, member, -c->sum);
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

static enum hrtimer_restart irq_add(struct hrtimer *timer)
{
	struct owner_ctx *c = container_of(timer, struct owner_ctx, timer);

	if (current == c->owner) {	/* cut into the owner */
		add_mm_counter(current->mm, MM_FILEPAGES, 1);
		atomic_long_inc(&c->irq_adds);
	}
	hrtimer_forward_now(timer, ns_to_ktime(IRQ_PERIOD_NS));
	return HRTIMER_RESTART;
}

static int borrower_fn(void *arg)
{
	struct owner_ctx *c = arg;
	long n;

	wait_for_completion(&c->ready);
	kthread_use_mm(c->mm);
	for (n = 0; n < ADDS; n++) {
		add_mm_counter(c->mm, MM_FILEPAGES, 1);
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
	hrtimer_start(&c->timer, ns_to_ktime(IRQ_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
	owner_adds(c, MM_FILEPAGES, true);
	hrtimer_cancel(&c->timer);
	migrate_enable();
	owner_finish(c, MM_FILEPAGES);
}

static int sharer_fn(void *arg)
{
	struct owner_ctx *c = arg;
	long n;

	for (n = 0; n < ADDS; n++) {
		add_mm_counter(current->mm, MM_ANONPAGES, 1);
		if (!(n % 256))
			cond_resched();
	}
	c->other_adds = n;
	complete(&c->sharer_done);
	do_exit(0);
}

static int owner_clones_vm(void *arg)
{
	struct owner_ctx *c = arg;
	struct kernel_clone_args args = {
		.flags = CLONE_VM | CLONE_UNTRACED,
		.exit_signal = SIGCHLD,
		.fn = sharer_fn,
		.fn_arg = c,
	};
	pid_t pid;

	owner_start(c);
	add_mm_counter(c->mm, MM_ANONPAGES, 7);
	pid = kernel_clone(&args);
	c->clone_err = pid < 0 ? pid : 0;
	if (pid < 0)
		complete(&c->sharer_done);
	owner_adds(c, MM_ANONPAGES, false);
	c->owner_adds += 7;
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
 * of that mm if @borrow, and waits for it to finish.
 */
static struct owner_ctx *run_owner(struct kunit *test, int (*fn)(void *),
				   bool borrow)
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
	init_completion(&c->ready);
	init_completion(&c->sharer_done);
	init_completion(&c->done);
	hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	c->timer.function = irq_add;
	args.fn_arg = c;
	if (borrow) {
		struct task_struct *t;

		t = kthread_run(borrower_fn, c, "rss_stat_borrower");
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
 * counts into the same lazy counter on another CPU, and timer interrupts
 * cut into the owner and count too: no add is lost, and the counters stay
 * lazy.
 */
static void rss_stat_owner_path_is_the_owners_only_test(struct kunit *test)
{
	struct owner_ctx *c = run_owner(test, owner_vs_borrower_and_irqs, true);

	KUNIT_EXPECT_GE(test, atomic_long_read(&c->irq_adds), MIN_IRQ_ADDS);
	KUNIT_EXPECT_EQ(test, c->sum,
			c->owner_adds + c->other_adds + atomic_long_read(&c->irq_adds));
	KUNIT_EXPECT_TRUE(test, c->lazy);
}

/*
 * A CLONE_VM clone that is not a thread shares the mm as much as a thread:
 * it upgrades the counters first, and the adds of both tasks, before and
 * after, are all there.
 */
static void rss_stat_clone_vm_upgrades_test(struct kunit *test)
{
	struct owner_ctx *c = run_owner(test, owner_clones_vm, false);

	KUNIT_EXPECT_EQ(test, c->clone_err, 0);
	KUNIT_EXPECT_FALSE(test, c->lazy);
	KUNIT_EXPECT_EQ(test, c->sum, c->owner_adds + c->other_adds);
}

static struct kunit_case rss_stat_cases[] = {
	KUNIT_CASE(rss_stat_owner_path_is_the_owners_only_test),
	KUNIT_CASE(rss_stat_clone_vm_upgrades_test),
	{}
};

static struct kunit_suite rss_stat_suite = {
	.name = "rss_stat",
	.test_cases = rss_stat_cases,
};

kunit_test_suite(rss_stat_suite);

MODULE_DESCRIPTION("KUnit test of the lazy rss_stat rules");
MODULE_LICENSE("GPL");
