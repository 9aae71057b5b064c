// SPDX-License-Identifier: GPL-2.0
/*
 * RSS counters across process creation: fork() with copy-on-write from
 * both sides, execve() into a helper (also from a secondary thread),
 * clone(CLONE_VM) without CLONE_THREAD, vfork() and posix_spawn(). The
 * side that is not running is blocked on a pipe while its counters are
 * compared with its page tables, so every comparison is exact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/io_uring.h>

#include "../kselftest_harness.h"
#include "rss_util.h"

#define NR_ANON		256
#define NR_FILE_PG		64
#define NR_SHM		32
#define NR_NEW		32
#define STACK_PAGES	64
#define TIMEOUT_MS	30000

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif

FIXTURE(fork_exec) {
	int fd;
	bool file_is_shmem;
	bool have_helper;
	char helper[PATH_MAX];
	char *anon, *file, *shm;
};

FIXTURE_SETUP(fork_exec)
{
	char *slash;
	ssize_t n;

	rss_no_thp();
	self->fd = rss_make_file(NR_FILE_PG, &self->file_is_shmem);
	ASSERT_LE(0, self->fd) {
		TH_LOG("cannot create a test file: %s", strerror(-self->fd));
	}
	self->anon = rss_map_anon(NR_ANON);
	self->file = rss_map_fd(self->fd, NR_FILE_PG, MAP_PRIVATE);
	self->shm = rss_map_shared_anon(NR_SHM);
	ASSERT_TRUE(self->anon && self->file && self->shm);

	n = readlink("/proc/self/exe", self->helper, sizeof(self->helper) - 32);
	ASSERT_LT(0, n);
	self->helper[n] = '\0';
	slash = strrchr(self->helper, '/');
	ASSERT_NE(NULL, slash);
	snprintf(slash + 1, 32, "rss_exec_helper");
	self->have_helper = !access(self->helper, X_OK);
}

FIXTURE_TEARDOWN(fork_exec)
{
	close(self->fd);
}

static int child_exit_code(struct __test_metadata *_metadata)
{
	return _metadata->exit_code == KSFT_FAIL ? 1 : 0;
}

/*
 * Parent and child copy-on-write different quarters of an anon area and
 * fault file and shmem pages. Each side's counters must be exact while
 * the other waits, and the parent's must not move when the child works.
 */
TEST_F_TIMEOUT(fork_exec, fork_cow, 60)
{
	size_t ps = rss_page_size;
	struct rss_counters pc0, pc1;
	int p2c[2], c2p[2], status;
	char *anon = self->anon;
	void *child_new;
	pid_t pid;
	char c;

	rss_touch(anon, NR_ANON, true);
	rss_touch(self->file, NR_FILE_PG, false);
	rss_touch(self->shm, NR_SHM, true);
	CHECK_RSS(0, "parent before fork");
	ASSERT_EQ(0, pipe2(p2c, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(c2p, O_CLOEXEC));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (rss_wait_byte(p2c[0], &c, TIMEOUT_MS))
			_exit(2);
		/* COW the second quarter; the parent did the first. */
		rss_touch(anon + NR_ANON / 4 * ps, NR_ANON / 4, true);
		rss_touch(self->file, NR_FILE_PG, false);
		rss_touch(self->shm, NR_SHM, true);
		child_new = rss_map_anon(NR_NEW);
		if (!child_new)
			_exit(2);
		rss_touch(child_new, NR_NEW, true);
		CHECK_PAGES(0, anon, NR_ANON, RSS_PM_ANON, NR_ANON, "child COW");
		CHECK_PAGES(0, anon, NR_ANON, RSS_PM_EXCL, NR_ANON / 2,
			    "child COW");
		CHECK_RSS(0, "child after COW");
		if (write(c2p[1], &child_new, sizeof(child_new)) !=
		    sizeof(child_new))
			_exit(2);
		if (rss_wait_byte(p2c[0], &c, TIMEOUT_MS))
			_exit(2);
		munmap(anon + NR_ANON / 2 * ps, NR_ANON / 2 * ps);
		CHECK_PAGES(0, anon, NR_ANON, RSS_PM_ANON, NR_ANON / 2,
			    "child munmap");
		CHECK_RSS(0, "child munmap");
		_exit(child_exit_code(_metadata));
	}

	/* The child is blocked on the pipe. */
	CHECK_RSS(pid, "child after fork");
	CHECK_PAGES(pid, anon, NR_ANON, RSS_PM_ANON, NR_ANON, "child after fork");
	rss_touch(anon, NR_ANON / 4, true);
	CHECK_PAGES(0, anon, NR_ANON, RSS_PM_ANON, NR_ANON, "parent COW");
	CHECK_PAGES(0, anon, NR_ANON, RSS_PM_EXCL, NR_ANON / 4, "parent COW");
	CHECK_RSS_SNAP(0, &pc0, NULL, "parent COW");

	ASSERT_EQ(0, rss_send_byte(p2c[1], 'a'));
	EXPECT_EQ(0, rss_read_full(c2p[0], &child_new, sizeof(child_new),
				   TIMEOUT_MS));
	/* Child's COW and faults change nothing in the parent's mm. */
	CHECK_RSS_SNAP(0, &pc1, NULL, "parent after child COW");
	EXPECT_EQ(pc0.anon, pc1.anon) {
		TH_LOG("RssAnon of parent: %ld kB before child's COW, %ld kB after",
		       pc0.anon, pc1.anon);
	}
	EXPECT_EQ(pc0.file, pc1.file) {
		TH_LOG("RssFile of parent: %ld kB before child's faults, %ld kB after",
		       pc0.file, pc1.file);
	}
	EXPECT_EQ(pc0.shmem, pc1.shmem) {
		TH_LOG("RssShmem of parent: %ld kB before child's faults, %ld kB after",
		       pc0.shmem, pc1.shmem);
	}
	CHECK_PAGES(0, anon, NR_ANON, RSS_PM_EXCL, NR_ANON / 2,
		    "parent after child COW");

	CHECK_RSS(pid, "child after COW");
	CHECK_PAGES(pid, anon, NR_ANON, RSS_PM_ANON, NR_ANON, "child after COW");
	CHECK_PAGES(pid, child_new, NR_NEW, RSS_PM_ANON, NR_NEW,
		    "child after COW");
	CHECK_PAGES(pid, self->file, NR_FILE_PG, RSS_PM_FILE, NR_FILE_PG,
		    "child after COW");
	CHECK_PAGES(pid, self->shm, NR_SHM, RSS_PM_FILE, NR_SHM,
		    "child after COW");

	ASSERT_EQ(0, rss_send_byte(p2c[1], 'c'));
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status) {
		TH_LOG("child failed its own checks (status %d)", status);
	}
	CHECK_RSS(0, "parent after child exit");
	CHECK_PAGES(0, anon, NR_ANON, RSS_PM_EXCL, NR_ANON,
		    "parent after child exit");
	munmap(anon, NR_ANON / 2 * ps);
	CHECK_RSS(0, "parent munmap");
}

static void *exec_thread(void *arg)
{
	char *const *argv = arg;

	execv(argv[0], argv);
	_exit(127);
}

/*
 * Start the helper in "pause" mode (optionally from a second thread, so
 * execve() has to kill the other thread first) and check its counters
 * while it waits, then let it finish its own checks.
 */
static void run_paused_helper(struct __test_metadata *_metadata,
			      char *helper, bool have_helper, char *anon,
			      bool from_thread)
{
	char *const argv[] = { helper, "pause", NULL };
	struct rss_helper_report rep = { 0 };
	int to_child[2], from_child[2];
	int status, ret;
	pthread_t thread;
	pid_t pid;

	if (!have_helper)
		SKIP(return, "%.256s not found", helper);
	ASSERT_EQ(0, pipe2(to_child, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(from_child, O_CLOEXEC));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (dup2(to_child[0], STDIN_FILENO) < 0 ||
		    dup2(from_child[1], STDOUT_FILENO) < 0)
			_exit(126);
		if (from_thread) {
			/* Memory of the old mm, and a second thread. */
			rss_touch(anon, NR_ANON, true);
			if (pthread_create(&thread, NULL, exec_thread,
					   (void *)argv))
				_exit(126);
			pthread_join(thread, NULL);
			_exit(126);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);

	ret = rss_read_full(from_child[0], &rep, sizeof(rep), TIMEOUT_MS);
	EXPECT_EQ(0, ret) {
		TH_LOG("no report from the helper: %s", strerror(-ret));
	}
	if (!ret) {
		EXPECT_EQ(RSS_HELPER_MAGIC, rep.magic);
		EXPECT_EQ(0, rep.failures) {
			TH_LOG("the helper saw %d wrong counters", rep.failures);
		}
		/* The helper is blocked reading stdin. */
		CHECK_RSS(pid, "helper paused");
		CHECK_PAGES(pid, rep.anon, RSS_HELPER_ANON, RSS_PM_ANON,
			    RSS_HELPER_ANON, "helper paused");
		CHECK_PAGES(pid, rep.file, RSS_HELPER_FILE, RSS_PM_FILE,
			    RSS_HELPER_FILE, "helper paused");
		CHECK_PAGES(pid, rep.shm, RSS_HELPER_SHM, RSS_PM_FILE,
			    RSS_HELPER_SHM, "helper paused");
		EXPECT_EQ(0, rss_send_byte(to_child[1], 'x'));
	}
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status) {
		TH_LOG("helper exit status %d (1: wrong counters)", status);
	}
	close(to_child[1]);
	close(from_child[0]);
	CHECK_RSS(0, "parent after helper");
}

TEST_F_TIMEOUT(fork_exec, exec_helper, 60)
{
	run_paused_helper(_metadata, self->helper, self->have_helper,
			  self->anon, false);
}

TEST_F_TIMEOUT(fork_exec, exec_from_thread, 60)
{
	run_paused_helper(_metadata, self->helper, self->have_helper,
			  self->anon, true);
}

struct clone_arg {
	char *anon, *file, *shm;
	int to_parent, from_parent;
};

/* Runs in the parent's mm, on its own stack, as a separate process. */
static int clone_vm_child(void *data)
{
	struct clone_arg *a = data;
	size_t ps = rss_page_size;
	char c;

	rss_touch(a->anon, NR_ANON / 2, true);
	rss_touch(a->file, NR_FILE_PG / 2, false);
	rss_touch(a->shm, NR_SHM / 2, true);
	if (rss_send_byte(a->to_parent, 'd'))
		_exit(2);
	if (rss_wait_byte(a->from_parent, &c, TIMEOUT_MS))
		_exit(2);
	rss_touch(a->anon + NR_ANON / 2 * ps, NR_ANON / 4, true);
	/* _exit(): no atexit handlers or stdio flushing in a shared mm. */
	_exit(0);
}

TEST_F_TIMEOUT(fork_exec, clone_vm, 60)
{
	size_t ps = rss_page_size;
	int p2c[2], c2p[2], status;
	struct clone_arg arg;
	char *stack, *more, c;
	pid_t pid;

	ASSERT_EQ(0, pipe2(p2c, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(c2p, O_CLOEXEC));
	stack = rss_map_anon(STACK_PAGES);
	ASSERT_NE(NULL, stack);
	arg.anon = self->anon;
	arg.file = self->file;
	arg.shm = self->shm;
	arg.to_parent = c2p[1];
	arg.from_parent = p2c[0];
	CHECK_RSS(0, "before clone");

	pid = clone(clone_vm_child, stack + STACK_PAGES * ps, CLONE_VM | SIGCHLD,
		    &arg);
	ASSERT_LE(0, pid);
	/* Fault pages concurrently with the child. */
	rss_touch(self->anon + 3 * NR_ANON / 4 * ps, NR_ANON / 4, true);
	rss_touch(self->file + NR_FILE_PG / 2 * ps, NR_FILE_PG / 2, false);
	rss_touch(self->shm + NR_SHM / 2 * ps, NR_SHM / 2, true);
	ASSERT_EQ(0, rss_wait_byte(c2p[0], &c, TIMEOUT_MS));

	/* Both users of the mm are quiescent. */
	CHECK_PAGES(0, self->anon, NR_ANON, RSS_PM_ANON, 3 * NR_ANON / 4,
		    "CLONE_VM child waiting");
	CHECK_PAGES(0, self->file, NR_FILE_PG, RSS_PM_FILE, NR_FILE_PG,
		    "CLONE_VM child waiting");
	CHECK_PAGES(0, self->shm, NR_SHM, RSS_PM_FILE, NR_SHM,
		    "CLONE_VM child waiting");
	CHECK_RSS(0, "CLONE_VM child waiting");
	CHECK_RSS(pid, "CLONE_VM child waiting, via child pid");

	ASSERT_EQ(0, rss_send_byte(p2c[1], 'g'));
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status);
	CHECK_PAGES(0, self->anon, NR_ANON, RSS_PM_ANON, NR_ANON,
		    "CLONE_VM child exited");
	CHECK_RSS(0, "CLONE_VM child exited");

	/* Back to a single user of the mm. */
	munmap(self->anon, NR_ANON / 2 * ps);
	more = rss_map_anon(NR_NEW);
	ASSERT_NE(NULL, more);
	rss_touch(more, NR_NEW, true);
	CHECK_PAGES(0, more, NR_NEW, RSS_PM_ANON, NR_NEW, "after CLONE_VM child");
	CHECK_RSS(0, "after CLONE_VM child");
}

TEST_F_TIMEOUT(fork_exec, vfork_touch, 60)
{
	size_t ps = rss_page_size;
	int status;
	pid_t pid;

	CHECK_RSS(0, "before vfork");
	pid = vfork();
	if (pid == 0) {
		/* Borrowing the parent's mm until _exit(). */
		rss_touch(self->anon, NR_ANON / 2, true);
		/* All of it: fault-around may map more than was read. */
		rss_touch(self->file, NR_FILE_PG, false);
		rss_touch(self->shm, NR_SHM / 2, true);
		_exit(0);
	}
	ASSERT_LT(0, pid);
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status);
	CHECK_PAGES(0, self->anon, NR_ANON, RSS_PM_ANON, NR_ANON / 2,
		    "vfork child touched");
	CHECK_PAGES(0, self->file, NR_FILE_PG, RSS_PM_FILE, NR_FILE_PG,
		    "vfork child touched");
	CHECK_PAGES(0, self->shm, NR_SHM, RSS_PM_FILE, NR_SHM / 2,
		    "vfork child touched");
	CHECK_RSS(0, "vfork child touched");

	rss_touch(self->anon + NR_ANON / 2 * ps, NR_ANON / 2, true);
	rss_touch(self->shm, NR_SHM, true);
	CHECK_PAGES(0, self->anon, NR_ANON, RSS_PM_ANON, NR_ANON,
		    "parent after vfork");
	CHECK_RSS(0, "parent after vfork");
	munmap(self->anon, NR_ANON * ps);
	CHECK_RSS(0, "parent munmap after vfork");
}

TEST_F_TIMEOUT(fork_exec, vfork_exec, 60)
{
	char *const argv[] = { self->helper, "quick", NULL };
	size_t ps = rss_page_size;
	int status;
	pid_t pid;

	if (!self->have_helper)
		SKIP(return, "%.256s not found", self->helper);
	pid = vfork();
	if (pid == 0) {
		rss_touch(self->anon, NR_ANON / 4, true);
		execv(argv[0], argv);
		_exit(127);
	}
	ASSERT_LT(0, pid);
	rss_touch(self->anon + NR_ANON / 4 * ps, NR_ANON / 4, true);
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status) {
		TH_LOG("helper exit status %d (1: wrong counters)", status);
	}
	CHECK_PAGES(0, self->anon, NR_ANON, RSS_PM_ANON, NR_ANON / 2,
		    "after vfork+exec");
	CHECK_RSS(0, "after vfork+exec");
}

TEST_F_TIMEOUT(fork_exec, posix_spawn, 60)
{
	char *const argv[] = { self->helper, "quick", NULL };
	size_t ps = rss_page_size;
	int status, ret;
	pid_t pid;

	if (!self->have_helper)
		SKIP(return, "%.256s not found", self->helper);
	rss_touch(self->anon, NR_ANON / 4, true);
	ret = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
	ASSERT_EQ(0, ret) {
		TH_LOG("posix_spawn: %s", strerror(ret));
	}
	/* Touch while the helper runs. */
	rss_touch(self->anon + NR_ANON / 4 * ps, NR_ANON / 4, true);
	rss_touch(self->shm, NR_SHM, true);
	status = rss_wait_child(pid, TIMEOUT_MS / 1000);
	EXPECT_EQ(0, status) {
		TH_LOG("helper exit status %d (1: wrong counters)", status);
	}
	CHECK_PAGES(0, self->anon, NR_ANON, RSS_PM_ANON, NR_ANON / 2,
		    "after posix_spawn");
	CHECK_RSS(0, "after posix_spawn");
	rss_touch(self->anon, NR_ANON, true);
	CHECK_RSS(0, "touch after posix_spawn");
}

/*
 * Read @len bytes of @fd into @buf with an io_uring request forced onto an
 * io-wq worker (IOSQE_ASYNC): the worker, a CLONE_VM thread created by the
 * kernel, faults in the buffer. Returns the bytes read or -errno.
 */
static int uring_read_async(int fd, void *buf, unsigned int len)
{
	struct io_uring_params p = { 0 };
	size_t sq_len, cq_len, sqes_len;
	struct io_uring_sqe *sqes, *sqe;
	struct io_uring_cqe *cqe;
	unsigned int *tail, idx;
	char *sq, *cq;
	int ring, ret;

	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -errno;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP && cq_len > sq_len)
		sq_len = cq_len;
	sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_SQ_RING);
	cq = sq;
	if (sq != MAP_FAILED && !(p.features & IORING_FEAT_SINGLE_MMAP))
		cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		    IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		ret = -ENOMEM;
		goto out;
	}

	tail = (unsigned int *)(sq + p.sq_off.tail);
	idx = *tail & *(unsigned int *)(sq + p.sq_off.ring_mask);
	sqe = &sqes[idx];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->flags = IOSQE_ASYNC;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	((unsigned int *)(sq + p.sq_off.array))[idx] = idx;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);

	ret = syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS,
		      NULL, 0);
	if (ret < 0) {
		ret = -errno;
		goto out;
	}
	idx = __atomic_load_n((unsigned int *)(cq + p.cq_off.head),
			      __ATOMIC_ACQUIRE);
	idx &= *(unsigned int *)(cq + p.cq_off.ring_mask);
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) + idx;
	ret = cqe->res;
out:
	if (sqes != MAP_FAILED)
		munmap(sqes, sqes_len);
	if (cq != MAP_FAILED && cq != sq)
		munmap(cq, cq_len);
	if (sq != MAP_FAILED)
		munmap(sq, sq_len);
	close(ring);
	return ret;
}

/* An io_uring io-wq worker (a kernel-made CLONE_VM thread) faults pages. */
TEST_F_TIMEOUT(fork_exec, io_uring_worker, 60)
{
	size_t ps = rss_page_size;
	char *buf;
	int ret;

	CHECK_RSS(0, "before io_uring");
	buf = self->anon;
	ret = uring_read_async(self->fd, buf, NR_FILE_PG * ps);
	if (ret == -rss_nosys_errno() || ret == -EPERM)
		SKIP(return, "io_uring not available: %s", strerror(-ret));
	ASSERT_EQ((int)(NR_FILE_PG * ps), ret) {
		TH_LOG("io_uring read: %s", ret < 0 ? strerror(-ret) : "short");
	}
	/* The io-wq worker may still be alive, idle. */
	TH_LOG("threads after the io_uring read: %ld",
	       rss_status_field(0, "Threads"));
	CHECK_PAGES(0, buf, NR_ANON, RSS_PM_ANON, NR_FILE_PG, "io_uring read");
	CHECK_RSS(0, "io_uring read");
	rss_touch(buf, NR_ANON, true);
	CHECK_PAGES(0, buf, NR_ANON, RSS_PM_ANON, NR_ANON, "after io_uring");
	CHECK_RSS(0, "after io_uring");
	munmap(buf, NR_ANON * ps);
	CHECK_RSS(0, "unmapped after io_uring");
}

TEST_HARNESS_MAIN
