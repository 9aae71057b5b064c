// SPDX-License-Identifier: GPL-2.0
/*
 * mm_cid of processes that share their mm late: with threads, a vfork or a
 * posix_spawn child. rseq users index per-cid data with the cid, without
 * atomics, so no two tasks of an mm that run at the same time may hold the
 * same cid, whatever the mode of the mm's cids (per task while the mm has
 * no more users than max_cids, per CPU otherwise: max_cids depends on the
 * CPUs the mm's tasks may run on) and across the switches between them.
 * Since the rewrite of mm_cid in 6.19, an mm with one user is in per-task
 * mode and its task has cid 0 wherever it runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/compiler.h>

#include "../kselftest_harness.h"
#include "rseq.h"

#define HOP_ARG		"--mm-cid-hop"	/* argv[1] of the exec'd self */
#define NOP_ARG		"--mm-cid-nop"
#define PAIR_ARG	"--mm-cid-pair"
#define HOP_ROUNDS	20
#define ADDS		100000
#define ROUNDS		16
#define MAX_THREADS	256

/* The CPUs the test may use, as the test process found them. */
static cpu_set_t all_cpus;

static int pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* A cid is below the number of possible CPUs: one more than the last. */
static int nr_possible_cpus(void)
{
	static int nr;
	char buf[256], *p;
	FILE *f;
	int last;

	if (nr)
		return nr;
	f = fopen("/sys/devices/system/cpu/possible", "r");
	if (!f)
		return nr = CPU_SETSIZE;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	nr = CPU_SETSIZE;
	for (p = buf; *p; p++) {
		if (*p < '0' || *p > '9')
			continue;
		last = strtol(p, &p, 10);
		nr = last + 1;
		if (!*p)
			break;
	}
	return nr;
}

/*
 * Registers rseq for this task unless it is registered already: a fork
 * child inherits its parent's registration, which a second registration
 * would not survive when the library, not libc, owns it. Returns 0 if the
 * task's rseq area has an mm_cid field.
 */
static int rseq_ready(void)
{
	if (rseq_current_cpu_raw() < 0 && rseq_register_current_thread())
		return -1;
	return rseq_mm_cid_available() ? 0 : -1;
}

/* Why this kernel cannot run the tests, or NULL. */
static const char *no_mm_cid(void)
{
	if (!rseq_available())
		return "rseq is not available";
	if (rseq_register_current_thread())
		return "rseq registration failed";
	if (!rseq_mm_cid_available())
		return "rseq has no mm_cid field";
	if (sched_getaffinity(0, sizeof(all_cpus), &all_cpus))
		return "sched_getaffinity() failed";
	return NULL;
}

/*
 * Since 6.19 an mm with one user is in per-task mode (max_cids is 1) and
 * its task has cid 0 wherever it runs; while an mm has more users than
 * max_cids, cids are per task and a task keeps its cid. Before, cids were
 * per CPU, kept and compacted lazily: a solo task's cid could be 1 for a
 * while after a migration.
 */
static bool per_task_cids(void)
{
	return ksft_min_kernel_version(6, 19);
}

/*
 * Visit each CPU of @cpus HOP_ROUNDS times, and sleep after each migration
 * to be switched out and back in there too: the task's cid must be 0 every
 * time. Returns the number of times it was not, or -1.
 */
static int hop_expecting_cid_0(const cpu_set_t *cpus)
{
	int round, cpu, bad = 0;

	if (rseq_ready())
		return -1;
	bad += rseq_current_mm_cid() != 0;
	for (round = 0; round < HOP_ROUNDS; round++) {
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!CPU_ISSET(cpu, cpus))
				continue;
			if (pin_to(cpu))
				return -1;
			bad += rseq_current_mm_cid() != 0;
			usleep(100);
			bad += rseq_current_mm_cid() != 0;
		}
	}
	if (bad)
		fprintf(stderr, "a solo task's cid was not 0 %d times\n", bad);
	return bad;
}

static int pair(int a, int b, int c, bool per_cpu);

/* The exec'd self: the new mm has one user again. */
__attribute__((constructor)) static void exec_check(int argc, char **argv)
{
	cpu_set_t cpus;

	if (argc < 2 || strncmp(argv[1], "--mm-cid-", 9))
		return;
	if (!strcmp(argv[1], NOP_ARG))
		_exit(0);
	if (!strcmp(argv[1], HOP_ARG))
		_exit(sched_getaffinity(0, sizeof(cpus), &cpus) ||
		      hop_expecting_cid_0(&cpus) ? 1 : 0);
	if (!strcmp(argv[1], PAIR_ARG) && argc == 6)
		_exit(pair(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
			   !strcmp(argv[5], "per_cpu")));
	_exit(99);
}

static int wait_status(pid_t pid)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/*
 * Timeouts, in seconds, are for a kernel without debug options under QEMU
 * TCG. One with KCSAN or lockdep runs these tests several times slower:
 * like the net selftests, take KSFT_MACHINE_SLOW=yes to mean such a kernel.
 */
static int timeout_s(int seconds)
{
	const char *slow = getenv("KSFT_MACHINE_SLOW");

	return slow && !strcmp(slow, "yes") ? 10 * seconds : seconds;
}

FIXTURE(solo) {};

FIXTURE_SETUP(solo)
{
	const char *why = no_mm_cid();

	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(solo) {}

/*
 * A process that never shared its mm has cid 0 on every CPU, after every
 * migration and every switch back in, and so has the program it execs.
 */
TEST_F_TIMEOUT(solo, process_has_cid_0_wherever_it_runs, timeout_s(30))
{
	static char *const argv[] = { "mm_cid_share_test", HOP_ARG, NULL };
	pid_t pid;

	if (!per_task_cids())
		SKIP(return, "before 6.19, a solo task's cid may move");
	pid = fork();
	if (!pid) {
		if (hop_expecting_cid_0(&all_cpus))
			_exit(1);
		sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
		execv("/proc/self/exe", argv);
		_exit(2);
	}
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, wait_status(pid));
}

struct pinned {
	int cid, done, seen;
};

/* Reports its cid, and keeps running until the first task has read its own. */
static void *pinned_thread(void *arg)
{
	struct pinned *p = arg;

	p->cid = rseq_ready() ? -1 : (int)rseq_current_mm_cid();
	RSEQ_WRITE_ONCE(p->done, 1);
	while (!RSEQ_READ_ONCE(p->seen))
		;
	return NULL;
}

/*
 * Starts a thread pinned to @cpu while this task spins, and reads this
 * task's cid while the thread runs with its own: into @mine and @theirs.
 */
static int cids_with_thread_on(int cpu, int *mine, int *theirs)
{
	struct pinned p = { .cid = -1 };
	pthread_attr_t attr;
	pthread_t t;
	cpu_set_t on;
	int err;

	CPU_ZERO(&on);
	CPU_SET(cpu, &on);
	if (pthread_attr_init(&attr))
		return -1;
	err = pthread_attr_setaffinity_np(&attr, sizeof(on), &on) ||
	      pthread_create(&t, &attr, pinned_thread, &p);
	pthread_attr_destroy(&attr);
	if (err)
		return -1;
	while (!RSEQ_READ_ONCE(p.done))
		;
	*mine = rseq_current_mm_cid();
	RSEQ_WRITE_ONCE(p.seen, 1);
	*theirs = p.cid;
	return pthread_join(t, NULL) || p.cid < 0 ? -1 : 0;
}

static bool same_or_out_of_range(int a, int b, int mine, int theirs)
{
	if (mine != theirs && mine < nr_possible_cpus() &&
	    theirs < nr_possible_cpus())
		return false;
	fprintf(stderr, "tasks running on CPUs %d and %d at once: cids %d and %d\n",
		a, b, mine, theirs);
	return true;
}

/*
 * In a process that never shared its mm, pinned to @a, start a thread
 * pinned to @b while the first task spins on @a: the two run at the same
 * time on CPUs of their own, so their cids differ. Once the thread exited,
 * the same with a new thread on @c (@b again on two CPUs).
 *
 * With @per_cpu, the mm was made while its task could run on @a alone:
 * max_cids is 1 and the first thread switches the mm to per-CPU mode. Else
 * it was made with at least two CPUs allowed: the mm stays in per-task mode,
 * where the first task keeps cid 0 throughout and each thread, the second
 * user, gets cid 1, free again once the first thread exited.
 *
 * Last, a fork child of the now threaded process has an mm of its own with
 * one user, and cid 0 on @a, @b and @c. Returns the exit status.
 */
static int pair(int a, int b, int c, bool per_cpu)
{
	bool task_mode = !per_cpu && per_task_cids();
	int mine, theirs;
	cpu_set_t abc;
	pid_t pid;

	if (pin_to(a) || rseq_ready())
		return 20;
	if (cids_with_thread_on(b, &mine, &theirs))
		return 21;
	if (same_or_out_of_range(a, b, mine, theirs))
		return 22;
	if (task_mode && (mine || theirs != 1)) {
		fprintf(stderr, "per-task mode: cids %d and %d, not 0 and 1\n",
			mine, theirs);
		return 23;
	}
	/* Alone again, switched out and back in on @a. */
	usleep(1000);
	mine = rseq_current_mm_cid();
	if (task_mode && mine) {
		fprintf(stderr, "per-task mode: alone again with cid %d\n", mine);
		return 24;
	}
	if (cids_with_thread_on(c, &mine, &theirs))
		return 21;
	if (same_or_out_of_range(a, c, mine, theirs))
		return 25;
	if (task_mode && (mine || theirs != 1)) {
		fprintf(stderr, "per-task mode, after a thread exited: cids %d and %d\n",
			mine, theirs);
		return 26;
	}
	if (!per_task_cids())
		return 0;
	CPU_ZERO(&abc);
	CPU_SET(a, &abc);
	CPU_SET(b, &abc);
	CPU_SET(c, &abc);
	pid = fork();
	if (!pid)
		_exit(hop_expecting_cid_0(&abc) ? 1 : 0);
	return wait_status(pid) ? 27 : 0;
}

FIXTURE(pair) {};

FIXTURE_VARIANT(pair) {
	bool per_cpu;
};

FIXTURE_VARIANT_ADD(pair, per_task) {
	.per_cpu = false,
};

FIXTURE_VARIANT_ADD(pair, per_cpu) {
	.per_cpu = true,
};

FIXTURE_SETUP(pair)
{
	const char *why = no_mm_cid();

	if (why)
		SKIP(return, "%s", why);
	if (CPU_COUNT(&all_cpus) < 2)
		SKIP(return, "needs two CPUs");
}

FIXTURE_TEARDOWN(pair) {}

/*
 * Two tasks of a freshly shared mm, running on two CPUs at the same time,
 * have two cids: in a fork child, then in the program it execs, with the
 * mm made as the variant says.
 */
TEST_F_TIMEOUT(pair, tasks_running_at_once_have_two_cids, timeout_s(30))
{
	int cpus[3] = { -1, -1, -1 }, n = 0, cpu, ret;
	char arg[3][16];
	pid_t pid;

	for (cpu = 0; cpu < CPU_SETSIZE && n < 3; cpu++)
		if (CPU_ISSET(cpu, &all_cpus))
			cpus[n++] = cpu;
	if (n < 3)
		cpus[2] = cpus[1];
	for (n = 0; n < 3; n++)
		snprintf(arg[n], sizeof(arg[n]), "%d", cpus[n]);
	/* The fork child's mm takes the CPUs this task may run on. */
	if (variant->per_cpu)
		ASSERT_EQ(0, pin_to(cpus[0]));
	pid = fork();
	if (!pid) {
		char *const argv[] = {
			"mm_cid_share_test", PAIR_ARG, arg[0], arg[1], arg[2],
			variant->per_cpu ? "per_cpu" : "per_task", NULL
		};

		ret = pair(cpus[0], cpus[1], cpus[2], variant->per_cpu);
		if (ret)
			_exit(ret);
		/* So does the mm that execve() makes. */
		if (!variant->per_cpu &&
		    sched_setaffinity(0, sizeof(all_cpus), &all_cpus))
			_exit(28);
		execv("/proc/self/exe", argv);
		_exit(29);
	}
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, wait_status(pid));
}

/* One counter per cid, each on cache lines of its own. */
struct cid_count {
	intptr_t v;
	char pad[128 - sizeof(intptr_t)];
};

static struct cid_count *counts;

/* The @n-th CPU of all_cpus, counting round. */
static int nth_cpu(int n)
{
	int cpu;

	n %= CPU_COUNT(&all_cpus);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all_cpus) && !n--)
			break;
	return cpu;
}

static int nr_tasks, nr_ready;

/*
 * ADDS increments of this task's cid's counter, as rseq users do, once
 * all nr_tasks tasks of the process are ready, so that they count at the
 * same time. With @cpu set, the task first moves to that CPU and then may
 * run on all of them: a pinned mm's tasks would take longer to spread out
 * by load balancing than to count.
 */
static int count_by_cid(int cpu)
{
	int i, cid, err;

	err = cpu >= 0 && (pin_to(cpu) ||
			   sched_setaffinity(0, sizeof(all_cpus), &all_cpus));
	err = err || rseq_ready();
	__atomic_add_fetch(&nr_ready, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&nr_ready, __ATOMIC_RELAXED) < nr_tasks)
		;
	if (err)
		return -1;
	for (i = 0; i < ADDS; i++) {
		do {
			cid = rseq_current_mm_cid();
			if (cid >= nr_possible_cpus()) {
				fprintf(stderr, "cid %d of %d possible CPUs\n",
					cid, nr_possible_cpus());
				return -1;
			}
		} while (rseq_addv(RSEQ_MO_RELAXED, RSEQ_PERCPU_MM_CID,
				   &counts[cid].v, 1, cid));
	}
	return 0;
}

static void *count_thread(void *cpu)
{
	return (void *)(intptr_t)count_by_cid((intptr_t)cpu);
}

enum share { SHARE_NONE, SHARE_VFORK, SHARE_SPAWN };

FIXTURE(count) {};

FIXTURE_VARIANT(count) {
	enum share share;
	bool pinned;
};

FIXTURE_VARIANT_ADD(count, first_thread) {
	.share = SHARE_NONE,
};

FIXTURE_VARIANT_ADD(count, after_vfork) {
	.share = SHARE_VFORK,
};

FIXTURE_VARIANT_ADD(count, after_spawn) {
	.share = SHARE_SPAWN,
};

FIXTURE_VARIANT_ADD(count, pinned_first_thread) {
	.share = SHARE_NONE,
	.pinned = true,
};

FIXTURE_VARIANT_ADD(count, pinned_after_spawn) {
	.share = SHARE_SPAWN,
	.pinned = true,
};

FIXTURE_SETUP(count)
{
	const char *why = no_mm_cid();

	if (why)
		SKIP(return, "%s", why);
	if (CPU_COUNT(&all_cpus) < 2)
		SKIP(return, "needs two CPUs");
	counts = mmap(NULL, nr_possible_cpus() * sizeof(*counts),
		      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, counts);
}

FIXTURE_TEARDOWN(count)
{
	if (counts && counts != MAP_FAILED)
		munmap(counts, nr_possible_cpus() * sizeof(*counts));
}

/* The vfork child shares the mm until it exits. */
static noinline int share_by_vfork(void)
{
	pid_t pid = vfork();

	if (!pid)
		_exit(0);
	return wait_status(pid);
}

/*
 * In a fresh process, share the mm the way @share says, then start a thread
 * per CPU while the first task counts by cid too: every increment must be
 * there. Two running tasks with the same cid would lose some. If @pinned,
 * the mm was made on one CPU, and each task moves to a CPU of its own
 * before it counts. Last, exec: the new mm has one user, and cid 0 on
 * every CPU. Returns the exit status.
 */
static int share_and_count(enum share share, bool pinned, int nr_threads)
{
	static char *const hop[] = { "mm_cid_share_test", HOP_ARG, NULL };
	static char *const nop[] = { "mm_cid_share_test", NOP_ARG, NULL };
	pthread_t t[MAX_THREADS];
	intptr_t sum = 0;
	void *ret;
	pid_t pid;
	int i, bad = 0;

	if (share == SHARE_VFORK) {
		if (share_by_vfork())
			return 10;
	} else if (share == SHARE_SPAWN) {
		if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, nop, environ) ||
		    wait_status(pid))
			return 11;
	}
	nr_tasks = nr_threads + 1;
	for (i = 0; i < nr_threads; i++)
		if (pthread_create(&t[i], NULL, count_thread,
				   (void *)(intptr_t)(pinned ? nth_cpu(i + 1) : -1)))
			return 12;
	bad |= count_by_cid(pinned ? nth_cpu(0) : -1);
	for (i = 0; i < nr_threads; i++) {
		if (pthread_join(t[i], &ret))
			return 13;
		bad |= (intptr_t)ret;
	}
	if (bad)
		return 14;
	for (i = 0; i < nr_possible_cpus(); i++)
		sum += counts[i].v;
	if (sum != (intptr_t)(nr_threads + 1) * ADDS) {
		fprintf(stderr, "%ld of %ld increments by cid\n",
			(long)sum, (long)(nr_threads + 1) * ADDS);
		return 15;
	}
	if (per_task_cids()) {
		execv("/proc/self/exe", hop);
		return 16;
	}
	return 0;
}

/*
 * Threads started from a process that never shared its mm, or that shared
 * it only with a vfork or posix_spawn child, never share a cid with a task
 * that runs at the same time, from the first thread on. In the pinned
 * variants the mm is made while its task can run on one CPU, so that the
 * first thread (or the spawn) switches the mm to per-CPU mode, and then
 * every task may run on every CPU: max_cids and the mode follow.
 */
TEST_F_TIMEOUT(count, running_tasks_never_share_a_cid, timeout_s(30))
{
	int round, nr_threads = CPU_COUNT(&all_cpus), cpu = 0;
	pid_t pid;

	if (nr_threads > MAX_THREADS)
		nr_threads = MAX_THREADS;
	if (variant->pinned) {
		while (!CPU_ISSET(cpu, &all_cpus))
			cpu++;
		ASSERT_EQ(0, pin_to(cpu));
	}
	for (round = 0; round < ROUNDS; round++) {
		memset(counts, 0, nr_possible_cpus() * sizeof(*counts));
		pid = fork();
		if (!pid)
			_exit(share_and_count(variant->share, variant->pinned,
					      nr_threads));
		ASSERT_LT(0, pid);
		EXPECT_EQ(0, wait_status(pid))
			TH_LOG("round %d", round);
		if (_metadata->exit_code != KSFT_PASS)
			return;
	}
}

TEST_HARNESS_MAIN
