// SPDX-License-Identifier: GPL-2.0
/*
 * RSS counters changed by another process: process_vm_writev() and
 * /proc/PID/mem writes fault in pages of a target that keeps faulting and
 * zapping its own pages meanwhile, process_madvise(MADV_PAGEOUT) reclaims
 * some of them, and an "upgrade storm" of short-lived processes creates a
 * thread at a random moment while a sibling pokes its memory. Finally the
 * kernel log must not contain "Bad rss-counter state".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "rss_util.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_process_madvise
#define __NR_process_madvise 440
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define NR_A		128	/* written with process_vm_writev() */
#define NR_B		64	/* written through /proc/PID/mem */
#define NR_C		256	/* faulted and zapped by the target itself */
#define NR_DA		64	/* anon pages to page out */
#define NR_DF		64	/* file pages to page out */
#define TIMEOUT_MS	30000

#define STORM_PROCS	200
#define STORM_BUDGET_S	30	/* stop starting new workers after this */
#define NR_R		32	/* poked by the sibling */
#define NR_T		32	/* touched by the worker and its thread */
#define POKE_CHUNK	4

FIXTURE(remote) {
	int fd;
	bool file_is_shmem;
	char *a, *b;
};

FIXTURE_SETUP(remote)
{
	rss_no_thp();
	self->fd = rss_make_file(NR_DF, &self->file_is_shmem);
	ASSERT_LE(0, self->fd) {
		TH_LOG("cannot create a test file: %s", strerror(-self->fd));
	}
	/* Untouched areas, inherited by the target at the same address. */
	self->a = rss_map_anon(NR_A);
	self->b = rss_map_anon(NR_B);
	ASSERT_TRUE(self->a && self->b);
}

FIXTURE_TEARDOWN(remote)
{
	close(self->fd);
}

/* process_vm_readv/writev need CONFIG_CROSS_MEMORY_ATTACH. */
static bool have_process_vm(void)
{
	char src[8] = "x", dst[8];
	struct iovec l = { dst, sizeof(dst) }, r = { src, sizeof(src) };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == sizeof(dst) ||
	       errno != rss_nosys_errno();
}

struct target_info {
	char *c, *da, *df;
};

/*
 * The target: fault and zap its own pages until the parent says stop,
 * then report how many of them are faulted and wait to be checked.
 */
static void target_main(int fd, int to_parent, int from_parent)
{
	struct pollfd pfd = { .fd = from_parent, .events = POLLIN };
	time_t end = time(NULL) + TIMEOUT_MS / 1000;
	size_t ps = rss_page_size;
	struct target_info info;
	long i = 0, iter = 0;
	char c;

	info.c = rss_map_anon(NR_C);
	info.da = rss_map_anon(NR_DA);
	info.df = rss_map_fd(fd, NR_DF, MAP_PRIVATE);
	if (!info.c || !info.da || !info.df)
		_exit(2);
	rss_touch(info.da, NR_DA, true);
	rss_touch(info.df, NR_DF, false);
	/* Resolve lazy bindings now: no faults on code or GOT later. */
	poll(&pfd, 1, 0);
	sched_yield();
	madvise(info.c, 0, MADV_DONTNEED);
	time(NULL);
	if (write(to_parent, &info, sizeof(info)) != sizeof(info) ||
	    rss_wait_byte(from_parent, &c, TIMEOUT_MS))
		_exit(2);

	while (poll(&pfd, 1, 0) == 0) {
		if (i == NR_C) {
			madvise(info.c, NR_C * ps, MADV_DONTNEED);
			i = 0;
		}
		rss_touch(info.c + i * ps, 1, true);
		i++;
		if (!(++iter % 16)) {
			sched_yield();
			if (time(NULL) > end)
				break;
		}
	}
	if (rss_wait_byte(from_parent, &c, TIMEOUT_MS) ||
	    write(to_parent, &i, sizeof(i)) != sizeof(i) ||
	    rss_wait_byte(from_parent, &c, TIMEOUT_MS))
		_exit(2);
	_exit(0);
}

enum { REMOTE_WRITE, REMOTE_PAGEOUT };

/* SwapTotal of /proc/meminfo in kB, or -1. */
static long swap_total_kb(void)
{
	char line[128];
	long val = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SwapTotal: %ld kB", &val) == 1)
			break;
	fclose(f);
	return val;
}

static void run_remote(struct __test_metadata *_metadata, int fd,
		       bool file_is_shmem, char *a, char *b, int mode)
{
	long da0, da1, da2, df0, df1, sw0, sw1, sw2, c_pages, i, touched = -1;
	int p2c[2], c2p[2], memfd = -1, pidfd = -1, status;
	long file0, file1, swap_kb = swap_total_kb();
	struct rss_counters c0, c1, c2;
	const char *skip = NULL;
	char reason[160];
	struct target_info info;
	size_t ps = rss_page_size;
	char buf[64] = "remote";
	struct iovec local, remote, adv[2];
	ssize_t ret;
	pid_t pid;

	if (!have_process_vm())
		SKIP(return, "process_vm_writev() not supported");
	ASSERT_EQ(0, pipe2(p2c, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(c2p, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		target_main(fd, c2p[1], p2c[0]);

	ASSERT_EQ(0, rss_read_full(c2p[0], &info, sizeof(info), TIMEOUT_MS));
	/* The target waits for 'g': exact, and the base for the deltas. */
	CHECK_RSS_SNAP(pid, &c0, NULL, "target before remote access");
	da0 = rss_count_pages(pid, info.da, NR_DA, RSS_PM_ANON);
	df0 = rss_count_pages(pid, info.df, NR_DF, RSS_PM_FILE);
	sw0 = rss_count_pages(pid, info.da, NR_DA, RSS_PM_SWAP);
	EXPECT_EQ(NR_DA, da0);
	EXPECT_EQ(NR_DF, df0);
	if (mode == REMOTE_WRITE) {
		snprintf(buf, sizeof(buf), "/proc/%d/mem", pid);
		memfd = open(buf, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, memfd) {
			TH_LOG("open %s: %s", buf, strerror(errno));
		}
	} else {
		pidfd = syscall(__NR_pidfd_open, pid, 0);
		if (pidfd < 0)
			skip = "pidfd_open() not supported";
	}

	ASSERT_EQ(0, rss_send_byte(p2c[1], 'g'));
	/* The target is running its fault/zap loop now. */
	if (mode == REMOTE_WRITE) {
		local.iov_base = buf;
		local.iov_len = sizeof(buf);
		remote.iov_len = sizeof(buf);
		for (i = 0; i < NR_A; i++) {
			remote.iov_base = a + i * ps;
			ret = process_vm_writev(pid, &local, 1, &remote, 1, 0);
			EXPECT_EQ((ssize_t)sizeof(buf), ret) {
				TH_LOG("process_vm_writev page %ld: %s", i,
				       strerror(errno));
			}
			if (i < NR_B) {
				ret = pwrite(memfd, buf, sizeof(buf),
					     (off_t)(unsigned long)(b + i * ps));
				EXPECT_EQ((ssize_t)sizeof(buf), ret) {
					TH_LOG("write /proc/%d/mem page %ld: %s",
					       pid, i, strerror(errno));
				}
			}
			if (!(i % 8))
				sched_yield();
		}
	} else if (pidfd >= 0) {
		adv[0].iov_base = info.da;
		adv[0].iov_len = NR_DA * ps;
		adv[1].iov_base = info.df;
		adv[1].iov_len = NR_DF * ps;
		ret = syscall(__NR_process_madvise, pidfd, adv, 2, MADV_PAGEOUT, 0);
		if (ret < 0 && (errno == rss_nosys_errno() || errno == EINVAL))
			skip = "process_madvise(MADV_PAGEOUT) not supported";
		else if (ret < 0 && errno == EPERM)
			skip = "process_madvise() needs CAP_SYS_NICE";
		else
			EXPECT_EQ((ssize_t)((NR_DA + NR_DF) * ps), ret) {
				TH_LOG("process_madvise: %s", strerror(errno));
			}
	}
	/* Let the target fault some more pages on its own. */
	usleep(10000);
	ASSERT_EQ(0, rss_send_byte(p2c[1], 's'));
	EXPECT_EQ(0, rss_read_full(c2p[0], &touched, sizeof(touched),
				   TIMEOUT_MS));

	/* The target is blocked again: exact, and the deltas must add up. */
	CHECK_RSS_SNAP(pid, &c1, NULL, "target after remote access");
	c_pages = rss_count_pages(pid, info.c, NR_C, RSS_PM_ANON);
	da1 = rss_count_pages(pid, info.da, NR_DA, RSS_PM_ANON);
	df1 = rss_count_pages(pid, info.df, NR_DF, RSS_PM_FILE);
	sw1 = rss_count_pages(pid, info.da, NR_DA, RSS_PM_SWAP);
	EXPECT_EQ(touched, c_pages) {
		TH_LOG("target faulted %ld pages of its own area, pagemap has %ld",
		       touched, c_pages);
	}
	if (mode == REMOTE_WRITE) {
		CHECK_PAGES(pid, a, NR_A, RSS_PM_ANON, NR_A,
			    "process_vm_writev");
		CHECK_PAGES(pid, b, NR_B, RSS_PM_ANON, NR_B,
			    "/proc/PID/mem");
		EXPECT_EQ(c0.anon + (NR_A + NR_B + touched) * rss_page_kb,
			  c1.anon) {
			TH_LOG("RssAnon: %ld kB, expected %ld kB + %d remote + %ld own pages",
			       c1.anon, c0.anon, NR_A + NR_B, touched);
		}
	} else {
		EXPECT_EQ(c0.anon + (touched - (da0 - da1)) * rss_page_kb,
			  c1.anon) {
			TH_LOG("RssAnon: %ld kB, expected %ld kB + %ld own - %ld paged out pages",
			       c1.anon, c0.anon, touched, da0 - da1);
		}
		/* The test file is on tmpfs only if nothing else is writable. */
		file0 = file_is_shmem ? c0.shmem : c0.file;
		file1 = file_is_shmem ? c1.shmem : c1.file;
		EXPECT_EQ(file0 - (df0 - df1) * rss_page_kb, file1) {
			TH_LOG("%s: %ld kB, expected %ld kB - %ld paged out pages",
			       file_is_shmem ? "RssShmem" : "RssFile", file1,
			       file0, df0 - df1);
		}
		EXPECT_EQ(c0.swap + (sw1 - sw0) * rss_page_kb, c1.swap) {
			TH_LOG("VmSwap: %ld kB, expected %ld kB + %ld swapped pages",
			       c1.swap, c0.swap, sw1 - sw0);
		}
		TH_LOG("MADV_PAGEOUT: anon %ld -> %ld (swapped %ld), file %ld -> %ld pages",
		       da0, da1, sw1, df0, df1);
		TH_LOG("SwapTotal %ld kB, test file on %s", swap_kb,
		       rss_file_where());

		/* Swap the anon pages back in remotely: swap -> anon. */
		local.iov_base = buf;
		local.iov_len = 8;
		remote.iov_len = 8;
		for (i = 0; i < NR_DA; i++) {
			remote.iov_base = info.da + i * ps;
			EXPECT_EQ(8, process_vm_readv(pid, &local, 1, &remote, 1, 0));
		}
		CHECK_RSS_SNAP(pid, &c2, NULL, "target after remote swap-in");
		da2 = rss_count_pages(pid, info.da, NR_DA, RSS_PM_ANON);
		sw2 = rss_count_pages(pid, info.da, NR_DA, RSS_PM_SWAP);
		EXPECT_EQ(NR_DA, da2);
		EXPECT_EQ(0, sw2);
		EXPECT_EQ(c1.anon + (da2 - da1) * rss_page_kb, c2.anon) {
			TH_LOG("RssAnon: %ld kB, expected %ld kB + %ld swapped-in pages",
			       c2.anon, c1.anon, da2 - da1);
		}
		EXPECT_EQ(c1.swap - (sw1 - sw2) * rss_page_kb, c2.swap) {
			TH_LOG("VmSwap: %ld kB, expected %ld kB - %ld swapped-in pages",
			       c2.swap, c1.swap, sw1 - sw2);
		}
		/*
		 * Without swap no anon (or shmem) page can be paged out, and
		 * ramfs pages are unevictable: then nothing was tested.
		 */
		if (!skip && da0 == da1 && df0 == df1) {
			snprintf(reason, sizeof(reason),
				 "MADV_PAGEOUT reclaimed nothing: SwapTotal %ld kB, test file on %s",
				 swap_kb, rss_file_where());
			skip = reason;
		}
	}

	EXPECT_EQ(0, rss_send_byte(p2c[1], 'x'));
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status);
	if (memfd >= 0)
		close(memfd);
	if (pidfd >= 0)
		close(pidfd);
	if (skip && _metadata->exit_code != KSFT_FAIL)
		SKIP(return, "%s", skip);
}

TEST_F_TIMEOUT(remote, remote_write, 60)
{
	run_remote(_metadata, self->fd, self->file_is_shmem, self->a, self->b,
		   REMOTE_WRITE);
}

TEST_F_TIMEOUT(remote, remote_pageout, 60)
{
	run_remote(_metadata, self->fd, self->file_is_shmem, self->a, self->b,
		   REMOTE_PAGEOUT);
}

static void *storm_thread(void *arg)
{
	rss_touch(arg, NR_T / 2, true);
	return NULL;
}

/* A short-lived process that becomes multi-threaded at a random moment. */
static int storm_worker(char *r, char *t, int from_poker, unsigned int seed)
{
	size_t ps = rss_page_size;
	int failures = 0;
	char msg[2048], c;
	pthread_t thread;
	long got;

	srand(seed);
	rss_touch(t + NR_T / 2 * ps, NR_T / 4, true);
	usleep(rand() % 2000);
	if (pthread_create(&thread, NULL, storm_thread, t))
		return 2;
	rss_touch(t + 3 * NR_T / 4 * ps, NR_T / 4, true);
	pthread_join(thread, NULL);
	if (rss_wait_byte(from_poker, &c, TIMEOUT_MS))
		return 2;

	if (rss_check(0, NULL, NULL, msg, sizeof(msg))) {
		fprintf(stderr, "# storm worker %d: %s\n", getpid(), msg);
		failures++;
	}
	got = rss_count_pages(0, r, NR_R, RSS_PM_ANON);
	if (got != NR_R) {
		fprintf(stderr, "# storm worker %d: poked area: pagemap anon pages %ld, poked %d\n",
			getpid(), got, NR_R);
		failures++;
	}
	got = rss_count_pages(0, t, NR_T, RSS_PM_ANON);
	if (got != NR_T) {
		fprintf(stderr, "# storm worker %d: own area: pagemap anon pages %ld, touched %d\n",
			getpid(), got, NR_T);
		failures++;
	}
	return failures ? 1 : 0;
}

/* The sibling: write every page of the worker's area, in random order. */
static int storm_poker(pid_t worker, char *r, int to_worker, unsigned int seed)
{
	int order[NR_R / POKE_CHUNK], i, j, tmp;
	struct iovec local, remote;
	size_t ps = rss_page_size;
	char buf[8] = "poke";
	ssize_t ret;

	srand(seed);
	for (i = 0; i < NR_R / POKE_CHUNK; i++)
		order[i] = i;
	for (i = NR_R / POKE_CHUNK - 1; i > 0; i--) {
		j = rand() % (i + 1);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	local.iov_base = buf;
	local.iov_len = sizeof(buf);
	remote.iov_len = sizeof(buf);
	for (i = 0; i < NR_R / POKE_CHUNK; i++) {
		/* A few bytes fault in a whole page of the worker. */
		for (j = 0; j < POKE_CHUNK; j++) {
			remote.iov_base = r + (order[i] * POKE_CHUNK + j) * ps;
			ret = process_vm_writev(worker, &local, 1, &remote, 1, 0);
			if (ret != sizeof(buf)) {
				fprintf(stderr, "# storm poker: process_vm_writev: %s\n",
					strerror(errno));
				return 1;
			}
		}
		if (rand() % 2)
			usleep(rand() % 200);
	}
	return rss_send_byte(to_worker, 'p') ? 1 : 0;
}

struct storm_pair {
	pid_t worker, poker;
	int live;
};

static bool storm_reap(struct storm_pair *pairs, int nr, int *failed,
		       int *running)
{
	int status, code, i;
	pid_t pid;

	pid = waitpid(-1, &status, 0);
	if (pid < 0)
		return false;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	for (i = 0; i < nr; i++) {
		if (pairs[i].worker != pid && pairs[i].poker != pid)
			continue;
		if (code) {
			fprintf(stderr, "# storm %s %d failed: status %d\n",
				pairs[i].worker == pid ? "worker" : "poker",
				pid, code);
			(*failed)++;
		}
		if (!--pairs[i].live)
			(*running)--;
		break;
	}
	return true;
}

TEST_F_TIMEOUT(remote, upgrade_storm, 300)
{
	int par = rss_nr_online_cpus(), started = 0, running = 0, failed = 0;
	struct storm_pair pairs[STORM_PROCS];
	time_t end = time(NULL) + STORM_BUDGET_S;
	unsigned int seed = time(NULL) ^ getpid();
	char *r, *t;
	int fds[2];

	if (!have_process_vm())
		SKIP(return, "process_vm_writev() not supported");
	if (par < 2)
		par = 2;
	if (par > 8)
		par = 8;
	/* Untouched: every worker inherits them and faults them itself. */
	r = rss_map_anon(NR_R);
	t = rss_map_anon(NR_T);
	ASSERT_TRUE(r && t);
	TH_LOG("seed %u, %d workers at a time", seed, par);

	while (started < STORM_PROCS || running) {
		while (running < par && started < STORM_PROCS &&
		       time(NULL) < end) {
			struct storm_pair *p = &pairs[started];

			ASSERT_EQ(0, pipe2(fds, O_CLOEXEC));
			p->worker = fork();
			ASSERT_LE(0, p->worker);
			if (p->worker == 0)
				_exit(storm_worker(r, t, fds[0], seed + 2 * started));
			p->poker = fork();
			ASSERT_LE(0, p->poker);
			if (p->poker == 0)
				_exit(storm_poker(p->worker, r, fds[1],
						  seed + 2 * started + 1));
			close(fds[0]);
			close(fds[1]);
			p->live = 2;
			started++;
			running++;
		}
		if (!running)
			break;
		if (!storm_reap(pairs, started, &failed, &running))
			break;
	}
	EXPECT_EQ(0, failed) {
		TH_LOG("%d of %d storm processes failed", failed, 2 * started);
	}
	EXPECT_EQ(0, running);
	if (started < STORM_PROCS)
		TH_LOG("time budget used up after %d of %d workers", started,
		       STORM_PROCS);
	else
		TH_LOG("%d workers upgraded to multi-threaded while poked", started);
	CHECK_RSS(0, "after storm");
}

/* Last: no mm was torn down with unbalanced counters during the tests. */
TEST_F(remote, bad_rss_counter_kmsg)
{
	int n = rss_kmsg_bad_rss();

	if (n < 0)
		SKIP(return, "/dev/kmsg not readable: %s", strerror(-n));
	EXPECT_EQ(0, n) {
		TH_LOG("kernel log has %d \"Bad rss-counter state\" records", n);
	}
}

TEST_HARNESS_MAIN
