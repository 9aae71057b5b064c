// SPDX-License-Identifier: GPL-2.0
/*
 * mm_cid of processes that share their mm late. A process that never
 * shared its mm has one task, and its cid is 0 wherever it runs. Once it
 * shares the mm, with threads, vfork or posix_spawn, no two of its tasks
 * that run at the same time may hold the same cid, from the first thread
 * on: rseq users index per-cid data with it, without atomics.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "rseq.h"

/* Kernels that keep an mm's per-CPU state lazy until it is shared. */
#define LAZY_EVENT	"/sys/kernel/tracing/events/kmem/mm_make_shared"
#define HOP_ARG		"--mm-cid-hop"	/* argv[1] of the exec'd self */
#define NOP_ARG		"--mm-cid-nop"
#define PAIR_ARG	"--mm-cid-pair"
#define HOP_ROUNDS	20
#define ADDS		100000
#define ROUNDS		16
#define MAX_CIDS	1024

static int pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/*
 * Visit every CPU this task may run on, HOP_ROUNDS times: after each
 * migration, the cid that rseq reports must still be 0. Returns the number
 * of times it was not.
 */
static int hop_cpus_expecting_cid_0(void)
{
	cpu_set_t all;
	int round, cpu, bad = 0;

	if (rseq_register_current_thread() || !rseq_mm_cid_available() ||
	    sched_getaffinity(0, sizeof(all), &all))
		return -1;
	bad += rseq_current_mm_cid() != 0;
	for (round = 0; round < HOP_ROUNDS; round++) {
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!CPU_ISSET(cpu, &all))
				continue;
			if (pin_to(cpu))
				return -1;
			bad += rseq_current_mm_cid() != 0;
		}
	}
	sched_setaffinity(0, sizeof(all), &all);
	return bad;
}

static int pinned_pair_here(void);

/* The exec'd self: the new mm has one user again. */
__attribute__((constructor)) static void exec_check(int argc, char **argv)
{
	if (argc < 2)
		return;
	if (!strcmp(argv[1], NOP_ARG))
		_exit(0);
	if (!strcmp(argv[1], HOP_ARG))
		_exit(hop_cpus_expecting_cid_0() ? 1 : 0);
	if (!strcmp(argv[1], PAIR_ARG))
		_exit(pinned_pair_here());
}

static int wait_status(pid_t pid)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static bool lazy_kernel(void)
{
	return !access(LAZY_EVENT, F_OK);
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

/* No state: a fixture only for TEST_F_TIMEOUT(). */
FIXTURE(mm_cid) {};
FIXTURE_SETUP(mm_cid) {}
FIXTURE_TEARDOWN(mm_cid) {}

/*
 * A process that never shares its mm has cid 0 on every CPU, and so has
 * the process it execs.
 */
TEST_F_TIMEOUT(mm_cid, solo_process_has_cid_0_wherever_it_runs, timeout_s(30))
{
	static char *const argv[] = { "mm_cid_share_test", HOP_ARG, NULL };
	pid_t pid;

	if (!lazy_kernel())
		SKIP(return, "a kernel without lazy mm_cid may move a solo task's cid");
	pid = fork();
	if (!pid) {
		if (hop_cpus_expecting_cid_0())
			_exit(1);
		execv("/proc/self/exe", argv);
		_exit(2);
	}
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, wait_status(pid));
}

struct pinned {
	int cid, done, seen;
};

/* Reports its cid, and keeps it until the first task has read its own. */
static void *pinned_thread(void *arg)
{
	struct pinned *p = arg;

	p->cid = rseq_register_current_thread() ? -1 : rseq_current_mm_cid();
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

/*
 * In a process that never shared its mm, pinned to @a, start a thread
 * pinned to @b while the first task spins on @a: the two run at the same
 * time on CPUs of their own, so their cids differ. Then, lazy kernels:
 * alone again, the first task has cid 0; with a new thread on a third CPU
 * @c, if there is one, the two have cids 0 and 1: the first thread gave
 * its cid back when it exited; and a fork child of the now threaded
 * process has a new mm with one user, and cid 0 on every CPU. Returns the
 * exit status.
 */
static int pinned_pair(int a, int b, int c, bool lazy)
{
	int cid, other;
	cpu_set_t all;
	pid_t pid;

	if (sched_getaffinity(0, sizeof(all), &all) || pin_to(a) ||
	    rseq_register_current_thread())
		return 20;
	if (cids_with_thread_on(b, &cid, &other))
		return 22;
	if (cid == other) {
		fprintf(stderr, "CPUs %d and %d both run with cid %d\n", a, b, cid);
		return 23;
	}
	if (!lazy)
		return 0;
	/*
	 * Alone again, and switched out and back in on @a: its cid is 0, the
	 * one the switch to per-CPU state gave this CPU, not a leaked one.
	 */
	usleep(1000);
	cid = rseq_current_mm_cid();
	if (cid) {
		fprintf(stderr, "alone again, with cid %d\n", cid);
		return 24;
	}
	if (c < 0) {
		fprintf(stderr, "two CPUs: no thread after one exited\n");
	} else if (cids_with_thread_on(c, &cid, &other) || cid + other != 1 ||
		   (cid && other)) {
		fprintf(stderr, "after a thread exited, cids %d and %d\n", cid, other);
		return 26;
	}
	/* The child hops over every CPU, not only the one it inherits. */
	pid = fork();
	if (!pid)
		_exit(sched_setaffinity(0, sizeof(all), &all) ||
		      hop_cpus_expecting_cid_0() ? 1 : 0);
	return wait_status(pid) ? 25 : 0;
}

/* pinned_pair() on the first CPUs this task may run on; then on all. */
static int pinned_pair_here(void)
{
	int cpus[3] = { -1, -1, -1 }, n = 0, cpu, ret;
	cpu_set_t all;

	if (sched_getaffinity(0, sizeof(all), &all))
		return 20;
	for (cpu = 0; cpu < CPU_SETSIZE && n < 3; cpu++)
		if (CPU_ISSET(cpu, &all))
			cpus[n++] = cpu;
	ret = pinned_pair(cpus[0], cpus[1], cpus[2], lazy_kernel());
	return sched_setaffinity(0, sizeof(all), &all) ? 20 : ret;
}

/*
 * Two tasks of a freshly shared mm, running on two CPUs at the same time,
 * have two cids: the first user's cid 0 is taken before the second runs.
 * In a fork child, and then in the program it execs.
 */
TEST_F_TIMEOUT(mm_cid, tasks_running_at_once_have_two_cids, timeout_s(30))
{
	static char *const argv[] = { "mm_cid_share_test", PAIR_ARG, NULL };
	cpu_set_t all;
	pid_t pid;
	int ret;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	if (CPU_COUNT(&all) < 2)
		SKIP(return, "needs two CPUs");
	pid = fork();
	if (!pid) {
		ret = pinned_pair_here();
		if (ret)
			_exit(ret);
		execv("/proc/self/exe", argv);
		_exit(27);
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

/* ADDS increments of this task's cid's counter, as rseq users do. */
static int count_by_cid(void)
{
	int i, cid;

	if (rseq_register_current_thread())
		return -1;
	for (i = 0; i < ADDS; i++) {
		do {
			cid = rseq_current_mm_cid();
			if (cid >= MAX_CIDS)
				return -1;
		} while (rseq_addv(RSEQ_MO_RELAXED, RSEQ_PERCPU_MM_CID,
				   &counts[cid].v, 1, cid));
	}
	return 0;
}

static void *count_thread(void *arg)
{
	return (void *)(intptr_t)count_by_cid();
}

enum { FIRST_THREAD, AFTER_VFORK, AFTER_SPAWN, NR_HOW };
static const char how_name[NR_HOW][16] = {
	"threads", "vfork, threads", "spawn, threads",
};

/*
 * In a fresh process, share the mm the way @how says, then start a thread
 * per CPU while the first task counts by cid too: every increment must be
 * there. Two running tasks with the same cid would lose some. Last, exec:
 * the new mm has cid 0 again (on kernels with lazy mm_cid). Returns the
 * exit status for the test.
 */
static int share_and_count(int how, int nr_threads, bool lazy)
{
	static char *const hop[] = { "mm_cid_share_test", HOP_ARG, NULL };
	static char *const nop[] = { "mm_cid_share_test", NOP_ARG, NULL };
	pthread_t t[MAX_CIDS];
	intptr_t sum = 0;
	void *ret;
	pid_t pid;
	int i, bad = 0;

	if (how == AFTER_VFORK) {
		pid = vfork();
		if (!pid)
			_exit(0);
		if (wait_status(pid))
			return 10;
	} else if (how == AFTER_SPAWN) {
		if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, nop, environ) ||
		    wait_status(pid))
			return 11;
	}
	for (i = 0; i < nr_threads; i++)
		if (pthread_create(&t[i], NULL, count_thread, NULL))
			return 12;
	bad |= count_by_cid();
	for (i = 0; i < nr_threads; i++) {
		if (pthread_join(t[i], &ret))
			return 13;
		bad |= (intptr_t)ret;
	}
	if (bad)
		return 14;
	for (i = 0; i < MAX_CIDS; i++)
		sum += counts[i].v;
	if (sum != (intptr_t)(nr_threads + 1) * ADDS) {
		fprintf(stderr, "%s: %ld of %ld increments by cid\n",
			how_name[how], (long)sum, (long)(nr_threads + 1) * ADDS);
		return 15;
	}
	if (lazy) {
		execv("/proc/self/exe", hop);
		return 16;
	}
	return 0;
}

/*
 * Threads started from a process that never shared its mm, or that shared
 * it only with a vfork or posix_spawn child, never share a cid with a task
 * that runs at the same time: the first task's cid 0 is taken before the
 * first thread can run.
 */
TEST_F_TIMEOUT(mm_cid, threads_of_a_solo_process_never_share_a_running_cid, timeout_s(30))
{
	int how, round, nr_threads = sysconf(_SC_NPROCESSORS_ONLN);
	bool lazy = lazy_kernel();
	pid_t pid;

	if (nr_threads < 2)
		SKIP(return, "needs two online CPUs");
	if (nr_threads >= MAX_CIDS)
		nr_threads = MAX_CIDS - 1;
	counts = mmap(NULL, MAX_CIDS * sizeof(*counts), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, counts);
	for (how = 0; how < NR_HOW; how++) {
		for (round = 0; round < ROUNDS; round++) {
			memset(counts, 0, MAX_CIDS * sizeof(*counts));
			pid = fork();
			if (!pid)
				_exit(share_and_count(how, nr_threads, lazy));
			ASSERT_LT(0, pid);
			EXPECT_EQ(0, wait_status(pid))
				TH_LOG("%s, round %d", how_name[how], round);
			if (_metadata->exit_code != KSFT_PASS)
				return;
		}
	}
}

TEST_HARNESS_MAIN
