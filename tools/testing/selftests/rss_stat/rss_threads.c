// SPDX-License-Identifier: GPL-2.0
/*
 * RSS counters of a multi-threaded process: 1 and then 2 * nr_cpus
 * threads, each pinned to a different CPU, fault anon, file and shmem
 * pages. While the threads are parked /proc/self/stat rss must be within
 * the percpu_counter error bound and status/statm exact; after they
 * exit, and after the process is back to one thread, status and statm
 * must be exact. A last test offlines and onlines CPU1 while a threaded
 * child keeps faulting pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "rss_util.h"

#define MAX_THREADS	64
#define NR_T_ANON	32	/* per thread, touched before parking */
#define NR_T_FILE	8
#define NR_T_SHM	8
#define NR_MAIN		32
#define NR_HOT		16
#define TIMEOUT_MS	30000
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"

/* A barrier whose waits time out, so a lost thread cannot hang the test. */
struct tbarrier {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int count, waiting, generation;
};

static void tbarrier_init(struct tbarrier *b, int count)
{
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->count = count;
	b->waiting = 0;
	b->generation = 0;
}

static int tbarrier_wait(struct tbarrier *b)
{
	struct timespec ts;
	int gen, ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += TIMEOUT_MS / 1000;
	pthread_mutex_lock(&b->lock);
	gen = b->generation;
	if (++b->waiting == b->count) {
		b->waiting = 0;
		b->generation++;
		pthread_cond_broadcast(&b->cond);
	} else {
		while (gen == b->generation && !ret)
			ret = pthread_cond_timedwait(&b->cond, &b->lock, &ts);
	}
	pthread_mutex_unlock(&b->lock);
	return ret;
}

struct worker {
	pthread_t thread;
	int cpu;		/* -1: not pinned */
	int pin_err;
	char *anon;		/* 2 * NR_T_ANON pages */
	char *file;		/* NR_T_FILE pages */
	char *shm;		/* NR_T_SHM pages */
	struct tbarrier *parked, *resume;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	size_t ps = rss_page_size;
	cpu_set_t set;

	if (w->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			w->pin_err = errno;
	}
	rss_touch(w->anon, NR_T_ANON, true);
	rss_touch(w->file, NR_T_FILE, false);
	rss_touch(w->shm, NR_T_SHM, true);
	if (tbarrier_wait(w->parked) || tbarrier_wait(w->resume))
		return NULL;
	/* Second phase, concurrently with the other threads. */
	rss_touch(w->anon + NR_T_ANON * ps, NR_T_ANON, true);
	munmap(w->anon, NR_T_ANON / 2 * ps);
	madvise(w->shm, NR_T_SHM / 2 * ps, MADV_DONTNEED);
	return NULL;
}

FIXTURE(threads) {
	int fd;
	bool file_is_shmem;
	int cpus[CPU_SETSIZE];
	int nr_cpus;		/* CPUs this process may run on */
	int nr_online;
	bool cpu1_offlined;
};

FIXTURE_SETUP(threads)
{
	cpu_set_t set;
	int i;

	rss_no_thp();
	self->fd = rss_make_file(MAX_THREADS * NR_T_FILE, &self->file_is_shmem);
	ASSERT_LE(0, self->fd) {
		TH_LOG("cannot create a test file: %s", strerror(-self->fd));
	}
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	self->nr_cpus = 0;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			self->cpus[self->nr_cpus++] = i;
	ASSERT_LT(0, self->nr_cpus);
	self->nr_online = rss_nr_online_cpus();
}

static int write_online(const char *val)
{
	int fd, ret = 0;

	fd = open(CPU1_ONLINE, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE_TEARDOWN(threads)
{
	/* Always give CPU1 back. */
	if (self->cpu1_offlined && write_online("1"))
		TH_LOG("could not online CPU1 again!");
	close(self->fd);
}

static void run_threads(struct __test_metadata *_metadata, int fd,
			const int *cpus, int nr_cpus, int n)
{
	struct tbarrier parked, resume;
	struct worker w[MAX_THREADS];
	char *anon, *file, *shm, *mine, *more;
	size_t ps = rss_page_size;
	struct rss_counters c;
	struct rss_truth t;
	char step[64];
	int i, created;

	anon = rss_map_anon(n * 2 * NR_T_ANON);
	file = rss_map_fd(fd, n * NR_T_FILE, MAP_SHARED);
	shm = rss_map_shared_anon(n * NR_T_SHM);
	mine = rss_map_anon(2 * NR_MAIN);
	ASSERT_TRUE(anon && file && shm && mine);
	tbarrier_init(&parked, n + 1);
	tbarrier_init(&resume, n + 1);
	CHECK_RSS(0, "before threads");

	for (created = 0; created < n; created++) {
		w[created] = (struct worker) {
			.cpu = cpus[created % nr_cpus],
			.anon = anon + created * 2 * NR_T_ANON * ps,
			.file = file + created * NR_T_FILE * ps,
			.shm = shm + created * NR_T_SHM * ps,
			.parked = &parked,
			.resume = &resume,
		};
		if (pthread_create(&w[created].thread, NULL, worker_fn,
				   &w[created]))
			break;
	}
	ASSERT_EQ(n, created);
	/* The main thread faults pages too, concurrently. */
	rss_touch(mine, NR_MAIN, true);
	ASSERT_EQ(0, tbarrier_wait(&parked));

	/* All threads alive but parked: the mm is quiescent. */
	snprintf(step, sizeof(step), "%d threads parked", n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, w[i].pin_err) {
			TH_LOG("pinning thread %d to CPU %d: %s", i, w[i].cpu,
			       strerror(w[i].pin_err));
		}
	CHECK_PAGES(0, anon, n * 2 * NR_T_ANON, RSS_PM_ANON, n * NR_T_ANON, step);
	CHECK_PAGES(0, file, n * NR_T_FILE, RSS_PM_FILE, n * NR_T_FILE, step);
	CHECK_PAGES(0, shm, n * NR_T_SHM, RSS_PM_FILE, n * NR_T_SHM, step);
	CHECK_RSS_SNAP(0, &c, &t, step);
	TH_LOG("%s: stat rss %ld pages, smaps_rollup Rss %ld pages, bound %ld",
	       step, c.stat_rss, t.rollup_rss / rss_page_kb, rss_stat_bound());

	ASSERT_EQ(0, tbarrier_wait(&resume));
	rss_touch(mine + NR_MAIN * ps, NR_MAIN, true);
	for (i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);

	snprintf(step, sizeof(step), "%d threads joined", n);
	CHECK_PAGES(0, anon, n * 2 * NR_T_ANON, RSS_PM_ANON,
		    n * (2 * NR_T_ANON - NR_T_ANON / 2), step);
	CHECK_PAGES(0, shm, n * NR_T_SHM, RSS_PM_FILE,
		    n * (NR_T_SHM - NR_T_SHM / 2), step);
	CHECK_PAGES(0, mine, 2 * NR_MAIN, RSS_PM_ANON, 2 * NR_MAIN, step);
	CHECK_RSS(0, step);

	/* Back to one thread: more faults and unmaps. */
	snprintf(step, sizeof(step), "single-threaded after %d threads", n);
	more = rss_map_anon(NR_MAIN);
	ASSERT_NE(NULL, more);
	rss_touch(more, NR_MAIN, true);
	rss_touch(shm, n * NR_T_SHM, true);
	munmap(mine, NR_MAIN * ps);
	CHECK_PAGES(0, more, NR_MAIN, RSS_PM_ANON, NR_MAIN, step);
	CHECK_PAGES(0, shm, n * NR_T_SHM, RSS_PM_FILE, n * NR_T_SHM, step);
	CHECK_RSS(0, step);
	munmap(more, NR_MAIN * ps);
	munmap(anon, n * 2 * NR_T_ANON * ps);
	munmap(file, n * NR_T_FILE * ps);
	munmap(shm, n * NR_T_SHM * ps);
	munmap(mine + NR_MAIN * ps, NR_MAIN * ps);
	CHECK_RSS(0, "all unmapped");
}

static int nr_many(void)
{
	int n = 2 * rss_nr_online_cpus();

	if (n < 2)
		n = 2;
	return n > MAX_THREADS ? MAX_THREADS : n;
}

TEST_F_TIMEOUT(threads, one_thread, 60)
{
	run_threads(_metadata, self->fd, self->cpus, self->nr_cpus, 1);
}

TEST_F_TIMEOUT(threads, many_threads, 120)
{
	run_threads(_metadata, self->fd, self->cpus, self->nr_cpus, 1);
	run_threads(_metadata, self->fd, self->cpus, self->nr_cpus, nr_many());
	/* Once more, from a process that has been multi-threaded. */
	run_threads(_metadata, self->fd, self->cpus, self->nr_cpus, nr_many());
}

struct hot_worker {
	pthread_t thread;
	int cpu;
	char *area;
	int *stop;
};

/* Fault and zap NR_HOT pages until told to stop; leave them faulted. */
static void *hot_fn(void *arg)
{
	struct hot_worker *w = arg;
	size_t ps = rss_page_size;
	time_t end = time(NULL) + TIMEOUT_MS / 1000;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (;;) {
		rss_touch(w->area, NR_HOT, true);
		if (__atomic_load_n(w->stop, __ATOMIC_ACQUIRE) || time(NULL) > end)
			break;
		madvise(w->area, NR_HOT * ps, MADV_DONTNEED);
	}
	return NULL;
}

static void hotplug_child(struct __test_metadata *_metadata,
			  const int *cpus, int nr_cpus, int to_parent,
			  int from_parent)
{
	struct hot_worker w[MAX_THREADS];
	size_t ps = rss_page_size;
	int stop = 0;
	int i, n = nr_many();
	char *area, c;

	area = rss_map_anon(n * NR_HOT);
	if (!area)
		_exit(2);
	for (i = 0; i < n; i++) {
		w[i] = (struct hot_worker) {
			.cpu = cpus[i % nr_cpus],
			.area = area + i * NR_HOT * ps,
			.stop = &stop,
		};
		if (pthread_create(&w[i].thread, NULL, hot_fn, &w[i]))
			_exit(2);
	}
	if (rss_send_byte(to_parent, 'r') ||
	    rss_wait_byte(from_parent, &c, TIMEOUT_MS))
		_exit(2);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
	CHECK_PAGES(0, area, n * NR_HOT, RSS_PM_ANON, n * NR_HOT,
		    "child after hotplug");
	CHECK_RSS(0, "child after hotplug, threads joined");
	if (rss_send_byte(to_parent, 'c') ||
	    rss_wait_byte(from_parent, &c, TIMEOUT_MS))
		_exit(2);
	_exit(_metadata->exit_code == KSFT_FAIL ? 1 : 0);
}

TEST_F_TIMEOUT(threads, cpu_hotplug, 120)
{
	int p2c[2], c2p[2], status, err = 0, round;
	char state[8] = "", c;
	pid_t pid;
	int fd;

	if (geteuid())
		SKIP(return, "CPU hotplug needs root");
	fd = open(CPU1_ONLINE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP(return, "no " CPU1_ONLINE " (no hotplug or one CPU)");
	if (read(fd, state, sizeof(state) - 1) < 1)
		state[0] = '\0';
	close(fd);
	if (state[0] != '1')
		SKIP(return, "CPU1 is offline already");
	if (access(CPU1_ONLINE, W_OK))
		SKIP(return, CPU1_ONLINE " is not writable");

	ASSERT_EQ(0, pipe2(p2c, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(c2p, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		hotplug_child(_metadata, self->cpus, self->nr_cpus,
			      c2p[1], p2c[0]);

	ASSERT_EQ(0, rss_wait_byte(c2p[0], &c, TIMEOUT_MS));
	for (round = 0; round < 2 && !err; round++) {
		usleep(20000);
		self->cpu1_offlined = true;
		err = write_online("0");
		if (err) {
			self->cpu1_offlined = false;
			break;
		}
		usleep(20000);
		if (rss_nr_online_cpus() >= self->nr_online)
			TH_LOG("CPU1 still counted online after offlining");
		err = write_online("1");
		EXPECT_EQ(0, err) {
			TH_LOG("onlining CPU1 again: %s", strerror(-err));
		}
		if (!err)
			self->cpu1_offlined = false;
	}
	TH_LOG("CPU1 offlined and onlined %d times while %d threads faulted",
	       round, nr_many());
	usleep(20000);
	EXPECT_EQ(0, rss_send_byte(p2c[1], 's'));
	EXPECT_EQ(0, rss_wait_byte(c2p[0], &c, TIMEOUT_MS));
	/* The child has joined its threads and waits for us. */
	CHECK_RSS(pid, "threaded child after hotplug");
	EXPECT_EQ(0, rss_send_byte(p2c[1], 'x'));
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status);
	CHECK_RSS(0, "parent after hotplug");
	if (err && round == 0 && _metadata->exit_code != KSFT_FAIL)
		SKIP(return, "offlining CPU1 failed: %s", strerror(-err));
}

TEST_HARNESS_MAIN
