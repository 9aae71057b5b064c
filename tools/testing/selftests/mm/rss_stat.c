// SPDX-License-Identifier: GPL-2.0
/*
 * The RSS counters of an mm (mm->rss_stat) take no per-CPU memory until the
 * mm gets a second user: every CLONE_VM clone upgrades them, once. Until
 * then the task the mm was created for counts with plain stores, everyone
 * else atomically, and even the cheap read (/proc/PID/stat) is exact.
 *
 * - Laziness: which clones upgrade (tracepoint kmem:mm_make_shared, traced
 *   for this test's own processes only), and the per-CPU memory of idle
 *   processes.
 * - Exactness: /proc/PID/stat, statm and status against smaps_rollup and
 *   the pages each step touched, with the owner's and remote adds; the
 *   sizes the rss_stat tracepoint reports.
 * - Concurrency: every kind of second user faults pages at the same time as
 *   the first, and the counters end exact.
 * - Failure injection (fail_function) at the upgrade.
 *
 * Every case also fails on "Bad rss-counter state" (the kernel's own check
 * for lost updates) and on warnings, BUGs and KCSAN reports from the code
 * the series touches, logged while it ran. On a kernel without lazy
 * rss_stat the laziness and injection cases skip, and the others run
 * without checking /proc/PID/stat, which is approximate there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "../../../include/io_uring/mini_liburing.h"
#include "vm_util.h"

#define TRACING		"/sys/kernel/tracing"
#define UPGRADE_EVENT	"events/kmem/mm_make_shared"
#define RSS_EVENT	"events/kmem/rss_stat"
#define DEBUGFS		"/sys/kernel/debug"
#define FAIL_FN		DEBUGFS "/fail_function"
#define UPGRADE_FN	"__mm_make_shared"
#define NO_LAZY		"kernel without lazy rss_stat (no tracepoint kmem:mm_make_shared)"
#define NO_HOTPLUG	"needs a CPU that can go offline and a possible CPU never online (maxcpus=)"
#define EXEC_CHECK	"--rss-stat-exec-check"	/* argv[1] of the exec'd self */

/* Every second user and the first fault in and zap this many pages ... */
#define CHURN_PAGES	256
/* ... this many times, concurrently: 150,000 rss updates per case. */
#define CHURN_ROUNDS	300
#define STACK_SIZE	(256 << 10)

/*
 * Timeouts, in seconds, are for a kernel without debug options under QEMU
 * TCG. One with KCSAN or lockdep runs these cases several times slower:
 * like the net selftests, take KSFT_MACHINE_SLOW=yes to mean such a kernel.
 */
static int timeout_s(int seconds)
{
	const char *slow = getenv("KSFT_MACHINE_SLOW");

	return slow && !strcmp(slow, "yes") ? 10 * seconds : seconds;
}

/* For /proc, tracefs and kmsg reads: faulted in before anything is measured. */
static char buf[1 << 16];

static ssize_t read_text(const char *path, char *b, size_t size)
{
	ssize_t n = 0, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while (len < size - 1 && (n = read(fd, b + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	b[len] = 0;
	return n < 0 ? -1 : len;
}

static int write_text(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The value of "name:" at the start of a line of @text, or -1. */
static long field(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ':')
			return strtol(p + len + 1, NULL, 10);
	return -1;
}

static char *map_anon(long pages)
{
	char *p = mmap(NULL, pages * psize(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void touch(char *area, long pages)
{
	long i;

	for (i = 0; i < pages; i++)
		area[i * psize()] = 1;
}

/* RSS of a process: all in pages. */
struct rss {
	long stat, statm, statm_shared;		/* /proc/PID/stat, statm */
	long vmrss, anon, file, shmem;		/* /proc/PID/status */
	long rollup, rollup_anon;		/* smaps_rollup: Rss, Anonymous */
};

static int read_proc(pid_t pid, const char *name)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	return read_text(path, buf, sizeof(buf)) < 0 ? -1 : 0;
}

static int read_rollup(pid_t pid, struct rss *r)
{
	long kb = psize() >> 10;

	if (read_proc(pid, "smaps_rollup"))
		return -1;
	r->rollup = field(buf, "Rss") / kb;
	r->rollup_anon = field(buf, "Anonymous") / kb;
	return 0;
}

/*
 * The counters of a quiescent process and its page tables, read before and
 * after the counters until both reads agree, so that the page tables did
 * not change under the counters. Returns 0 or -1.
 */
static int read_rss(pid_t pid, struct rss *r)
{
	long kb = psize() >> 10;
	struct rss after;
	char *p;
	int i, try;

	for (try = 0; try < 10; try++) {
		if (read_rollup(pid, r) || read_proc(pid, "stat"))
			return -1;
		/* rss is field 24; comm, field 2, may hold spaces */
		p = strrchr(buf, ')');
		for (i = 3; p && i <= 24; i++) {
			p = strchr(p, ' ');
			p = p ? p + 1 : NULL;
		}
		if (!p)
			return -1;
		r->stat = strtol(p, NULL, 10);
		if (read_proc(pid, "statm") ||
		    sscanf(buf, "%*d %ld %ld", &r->statm, &r->statm_shared) != 2 ||
		    read_proc(pid, "status"))
			return -1;
		r->vmrss = field(buf, "VmRSS") / kb;
		r->anon = field(buf, "RssAnon") / kb;
		r->file = field(buf, "RssFile") / kb;
		r->shmem = field(buf, "RssShmem") / kb;
		if (read_rollup(pid, &after))
			return -1;
		if (after.rollup == r->rollup && after.rollup_anon == r->rollup_anon)
			return 0;
	}
	return -1;
}

/*
 * Compare the counters of a quiescent process with its page tables and with
 * each other, exactly: status and statm always; stat too when @stat_exact,
 * that is while the counters are lazy. Returns true and describes the
 * counters in @msg when something differs.
 */
static bool rss_wrong(pid_t pid, bool stat_exact, struct rss *r, char *msg,
		      size_t len)
{
	if (read_rss(pid, r)) {
		snprintf(msg, len, "cannot read the RSS of pid %d", pid);
		return true;
	}
	snprintf(msg, len,
		 "pid %d: stat %ld, statm %ld shared %ld, status %ld (anon %ld file %ld shmem %ld), smaps_rollup %ld (anon %ld) pages",
		 pid, r->stat, r->statm, r->statm_shared, r->vmrss, r->anon,
		 r->file, r->shmem, r->rollup, r->rollup_anon);
	return r->vmrss != r->rollup || r->anon != r->rollup_anon ||
	       r->statm != r->vmrss || r->statm_shared != r->file + r->shmem ||
	       (stat_exact && r->stat != r->vmrss);
}

#define EXPECT_RSS_EXACT(pid, stat_exact, r) do {			\
	char _msg[256];							\
									\
	EXPECT_FALSE(rss_wrong(pid, stat_exact, r, _msg, sizeof(_msg)))	\
		TH_LOG("%s", _msg);					\
} while (0)

/*
 * Exec'd self (argv[1] == EXEC_CHECK, argv[2] "1" when stat must be exact):
 * the new mm holds the pages of the argument copy, added remotely, and the
 * pages the new program faulted in, added by its owner. Exit 0 if exact.
 */
__attribute__((constructor)) static void exec_check(int argc, char **argv)
{
	struct rss r;
	char msg[256];

	if (argc < 3 || strcmp(argv[1], EXEC_CHECK))
		return;
	memset(buf, 0, sizeof(buf));
	if (rss_wrong(0, argv[2][0] == '1', &r, msg, sizeof(msg))) {
		fprintf(stderr, "exec'd mm: %s\n", msg);
		_exit(1);
	}
	_exit(0);
}

/* argv for the exec'd self: 32 arguments of a page each, copied remotely. */
static char **exec_argv(bool stat_exact)
{
	static char arg[4096], *argv[36];
	int i;

	memset(arg, 'x', sizeof(arg) - 1);
	argv[0] = "rss_stat";
	argv[1] = EXEC_CHECK;
	argv[2] = stat_exact ? "1" : "0";
	for (i = 3; i < 35; i++)
		argv[i] = arg;
	return argv;
}

static int wait_status(pid_t pid)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* All participants wait here until @n of them are in: then they all run. */
static void spin_barrier(int *count, int n)
{
	__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < n)
		;
}

/*
 * CHURN_PAGES pages at the start of a page table of their own: faulting them
 * takes no page table lock that another churner takes, so that the rss
 * updates of two churners run at the same time.
 */
static char *map_churn(void)
{
	size_t span = psize() / sizeof(void *) * psize();
	char *p = mmap(NULL, 2 * span, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	return (char *)(((uintptr_t)p + span - 1) & ~(span - 1));
}

/* Fault in and zap pages, rounds times: many rss updates, owner or not. */
static void churn(char *area, int rounds)
{
	while (rounds--) {
		touch(area, CHURN_PAGES);
		madvise(area, CHURN_PAGES * psize(), MADV_DONTNEED);
	}
}

struct churner {
	char *area;
	int *ready;		/* spin_barrier() of two */
};

/* A second user of the mm: a CLONE_VM child or a thread. */
static int churn_fn(void *arg)
{
	struct churner *c = arg;

	spin_barrier(c->ready, 2);
	churn(c->area, CHURN_ROUNDS);
	return 0;
}

static void *churn_thread(void *arg)
{
	churn_fn(arg);
	return NULL;
}

static int nop_fn(void *arg)
{
	return 0;
}

static void *nop_thread(void *arg)
{
	return NULL;
}

static long percpu_kb(void)
{
	/* Let the per-CPU allocator's balance work settle first. */
	usleep(200000);
	return read_text("/proc/meminfo", buf, sizeof(buf)) < 0 ? -1 :
	       field(buf, "Percpu");
}

#define CPU_SYSFS	"/sys/devices/system/cpu"

/* The CPUs of the list /sys/devices/system/cpu/@name in @set; how many. */
static int read_cpus(const char *name, cpu_set_t *set)
{
	char path[64], *p = buf;
	long a, b, n = 0;

	CPU_ZERO(set);
	snprintf(path, sizeof(path), CPU_SYSFS "/%s", name);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	while (*p >= '0' && *p <= '9') {
		a = strtol(p, &p, 10);
		b = *p == '-' ? strtol(p + 1, &p, 10) : a;
		for (; a <= b && a < CPU_SETSIZE; a++, n++)
			CPU_SET(a, set);
		if (*p == ',')
			p++;
	}
	return n;
}

static int nr_possible_cpus(void)
{
	cpu_set_t possible;

	return read_cpus("possible", &possible);
}

/*
 * Run on every online CPU in turn, so that no CPU keeps an exited mm as its
 * lazy TLB mm: its teardown (check_mm()) then runs before we read kmsg.
 */
static void visit_cpus(void)
{
	cpu_set_t all, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(all), &all))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	sched_setaffinity(0, sizeof(all), &all);
}

/*
 * Kernel messages that fail a case: a lost update, a second user of a lazy
 * mm (CONFIG_DEBUG_VM), and reports (a warning, a BUG, KCSAN) that name the
 * code the series touches. Other drivers' warnings are not this test's
 * business.
 */
static const char * const kmsg_bad[] = {
	"Bad rss-counter state", "lazy rss_stat of mm",
};

static const char * const kmsg_report[] = { "WARNING:", "BUG:", "KCSAN:", "Oops" };

static const char * const kmsg_ours[] = {
	"kernel/fork.c", "mm/debug.c", "lib/owned_percpu_counter.c",
	"lib/percpu_counter.c", "kernel/sched/", "owned_percpu_counter",
	"percpu_counter_", "mm_make_shared", "mm_cid", "rss_stat",
};

static bool kmsg_is_bad(const char *msg)
{
	int i, j;

	for (i = 0; i < ARRAY_SIZE(kmsg_bad); i++)
		if (strstr(msg, kmsg_bad[i]))
			return true;
	for (i = 0; i < ARRAY_SIZE(kmsg_report); i++) {
		if (!strstr(msg, kmsg_report[i]))
			continue;
		for (j = 0; j < ARRAY_SIZE(kmsg_ours); j++)
			if (strstr(msg, kmsg_ours[j]))
				return true;
	}
	return false;
}

/* Fail on what the kernel logged after @marker. */
static void check_kmsg(struct __test_metadata *_metadata, const char *marker)
{
	char rec[2048], *msg;
	bool seen = false;
	ssize_t n;
	int fd;

	visit_cpus();
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	while ((n = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0 && errno == EPIPE)	/* overwritten: go on */
			continue;
		if (n < 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		if (!seen) {
			seen = strstr(msg, marker);
			continue;
		}
		EXPECT_FALSE(kmsg_is_bad(msg)) TH_LOG("kernel: %s", msg);
	}
	close(fd);
	EXPECT_TRUE(seen) TH_LOG("kmsg lost the start marker %s", marker);
}

struct upgrade {
	pid_t pid;		/* common_pid: the task that cloned */
	int err;
};

static struct upgrade upgrades[1024];

/*
 * One tracing instance for the whole run, set up by the harness process
 * before the first case: its pid filter (set_event_pid, with event-fork)
 * takes in every case and every process a case starts, and no other
 * process. The filter hooks the sched tracepoints, which patches their
 * call sites while every CPU runs them: once per run rather than once per
 * case, as multi-threaded TCG in QEMU before 8.1 can then run a call site
 * in its patched-back int3 form ("Oops: int3" in try_to_wake_up()).
 */
static char trace[64];
static pid_t trace_owner;	/* the harness process, which removes it */
static bool trace_ready, lazy_kernel;

__attribute__((constructor)) static void trace_open(int argc, char **argv)
{
	char path[128], pid[16];

	if (geteuid() || (argc > 1 && !strcmp(argv[1], EXEC_CHECK)))
		return;
	if (access(TRACING "/events", F_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	snprintf(trace, sizeof(trace), TRACING "/instances/rss_stat.%d", getpid());
	if (mkdir(trace, 0700)) {
		trace[0] = 0;
		return;
	}
	trace_owner = getpid();
	snprintf(path, sizeof(path), "%s/options/event-fork", trace);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_text(path, "1"))
		return;
	snprintf(path, sizeof(path), "%s/set_event_pid", trace);
	if (write_text(path, pid))
		return;
	snprintf(path, sizeof(path), "%s/" UPGRADE_EVENT "/enable", trace);
	lazy_kernel = !access(TRACING "/" UPGRADE_EVENT, F_OK);
	if (lazy_kernel && write_text(path, "1"))
		return;
	trace_ready = true;
}

__attribute__((destructor)) static void trace_close(void)
{
	if (trace_owner == getpid())
		rmdir(trace);
}

FIXTURE(rss_stat) {
	bool lazy;		/* the kernel has lazy rss_stat */
	char marker[128];	/* kmsg record that starts the case */
	int ncpus;		/* possible CPUs */
};

FIXTURE_SETUP(rss_stat)
{
	char path[128];

	if (geteuid())
		SKIP(return, "needs root: tracefs, debugfs and /dev/kmsg");
	memset(buf, 0, sizeof(buf));
	memset(upgrades, 0, sizeof(upgrades));
	/* Only small pages: each touch is one page of rss. */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	self->ncpus = nr_possible_cpus();
	ASSERT_LT(0, self->ncpus);
	snprintf(self->marker, sizeof(self->marker), "rss_stat: %s: start %d\n",
		 _metadata->name, getppid());
	ASSERT_EQ(0, write_text("/dev/kmsg", self->marker));

	ASSERT_TRUE(trace_ready) TH_LOG("no tracing instance (tracefs)");
	self->lazy = lazy_kernel;
	/* Only the events of this case, and no rss_stat ones unless it asks. */
	snprintf(path, sizeof(path), "%s/" RSS_EVENT "/enable", trace);
	if (!access(path, F_OK))
		ASSERT_EQ(0, write_text(path, "0"));
	snprintf(path, sizeof(path), "%s/trace", trace);
	ASSERT_EQ(0, write_text(path, ""));
}

/* In the parent of the case: after its mm and all others are torn down. */
FIXTURE_TEARDOWN_PARENT(rss_stat)
{
	write_text(FAIL_FN "/inject", "!" UPGRADE_FN);
	check_kmsg(_metadata, self->marker);
}

/* Read and clear the kmem:mm_make_shared events of the case so far. */
static int read_upgrades(void)
{
	char path[128], *line, *next, *p;
	int n = 0;

	snprintf(path, sizeof(path), "%s/trace", trace);
	if (read_text(path, buf, sizeof(buf)) < 0 || write_text(path, ""))
		return -1;
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		/* "  comm-PID  [CPU] flags  TIME: mm_make_shared: mm_id=N err=E" */
		p = strstr(line, "mm_make_shared: ");
		if (line[0] == '#' || !p || n == ARRAY_SIZE(upgrades) ||
		    sscanf(p, "%*s mm_id=%*u err=%d", &upgrades[n].err) != 1)
			continue;
		p = strchr(line, '[') ?: line;
		while (p > line && p[-1] == ' ')
			p--;
		while (p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		upgrades[n++].pid = atoi(p);
	}
	return n;
}

/* Upgrade events among the first @n by @pid (any if 0) that ended in @err. */
static int count_upgrades(int n, pid_t pid, int err)
{
	int i, nr = 0;

	for (i = 0; i < n; i++)
		nr += (!pid || upgrades[i].pid == pid) && upgrades[i].err == err;
	return nr;
}

/*
 * With lazy rss_stat: the case upgraded exactly one mm since the last look,
 * successfully, and @pid (the owner) did it.
 */
#define EXPECT_ONE_UPGRADE_BY(pid) do {					\
	if (self->lazy) {						\
		int _n = read_upgrades();				\
									\
		EXPECT_EQ(1, _n);					\
		EXPECT_EQ(1, count_upgrades(_n, pid, 0));		\
	}								\
} while (0)

/*
 * fork+exec makes two mms and shares neither: no upgrade. vfork+exec,
 * posix_spawn, a CLONE_VM child and a thread each share their parent's mm:
 * one upgrade, by the parent, the first time only. The exec'd mms check
 * that they are exact.
 */
enum { SHARE_VFORK, SHARE_SPAWN, SHARE_CLONE_VM, SHARE_THREAD, NR_SHARE };
static const char share_name[NR_SHARE][16] = {
	"vfork+exec", "posix_spawn", "clone(CLONE_VM)", "pthread_create",
};

static int share_twice(int how, char **argv)
{
	static char stack[STACK_SIZE];
	pthread_t t;
	pid_t pid;
	int i;

	for (i = 0; i < 2; i++) {
		switch (how) {
		case SHARE_VFORK:
			pid = vfork();
			if (!pid) {
				execv("/proc/self/exe", argv);
				_exit(127);
			}
			break;
		case SHARE_SPAWN:
			if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv,
					environ))
				pid = -1;
			break;
		case SHARE_CLONE_VM:
			pid = clone(nop_fn, stack + sizeof(stack), CLONE_VM | SIGCHLD,
				    NULL);
			break;
		default:
			if (pthread_create(&t, NULL, nop_thread, NULL) ||
			    pthread_join(t, NULL))
				return 1;
			continue;
		}
		if (wait_status(pid))
			return 1;
	}
	return 0;
}

TEST_F_TIMEOUT(rss_stat, upgrade_once_per_shared_mm_never_on_fork_exec, timeout_s(20))
{
	char **argv = exec_argv(true);
	pid_t pids[NR_SHARE], pid;
	int i, n;

	if (!self->lazy)
		SKIP(return, NO_LAZY);
	for (i = 0; i < 32; i++) {
		pid = fork();
		if (!pid) {
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		ASSERT_EQ(0, wait_status(pid)) TH_LOG("fork+exec %d", i);
	}
	EXPECT_EQ(0, read_upgrades());

	for (i = 0; i < NR_SHARE; i++) {
		pids[i] = fork();
		if (!pids[i])
			_exit(share_twice(i, argv));
	}
	for (i = 0; i < NR_SHARE; i++) {
		int status = wait_status(pids[i]);

		EXPECT_EQ(0, status) TH_LOG("%s", share_name[i]);
	}
	n = read_upgrades();
	for (i = 0; i < NR_SHARE; i++) {
		int upgrades = count_upgrades(n, pids[i], 0);

		EXPECT_EQ(1, upgrades) TH_LOG("%s", share_name[i]);
	}
	EXPECT_EQ(NR_SHARE, n);
}

/*
 * An idle single-threaded process took per-CPU memory for its rss counters
 * (16 bytes per possible CPU), its mm_cid (a cache line, 64 bytes here)
 * and, with CONFIG_SCHED_CACHE, its cache group (16 bytes); until its mm
 * is shared, it takes none. Bound the growth of Percpu for N idle
 * processes by half of what rss_stat alone took, as margin for other
 * processes of the machine. Percpu counts populated pages, so earlier
 * frees can hide some growth, never add to it.
 */
#define IDLE_PROCS	2000
#define RSS_STAT_BYTES	16

TEST_F_TIMEOUT(rss_stat, idle_processes_take_no_percpu_memory, timeout_s(90))
{
	long before, growth, rss_kb;
	int i, pipefd[2], status, exited_badly = 0;

	if (!self->lazy)
		SKIP(return, NO_LAZY);
	ASSERT_EQ(0, pipe(pipefd));
	before = percpu_kb();
	ASSERT_LT(0, before);
	for (i = 0; i < IDLE_PROCS; i++) {
		pid_t pid = fork();

		if (!pid) {
			struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

			close(pipefd[1]);
			/*
			 * Not read(): at EOF, the woken readers of one pipe
			 * take its mutex in turn, uninterruptibly, and where
			 * they are slow to run, the hung task detector reports
			 * them. poll() takes no lock. 0: it saw the EOF.
			 */
			_exit(poll(&p, 1, -1) != 1);
		}
		ASSERT_LT(0, pid);
	}
	growth = percpu_kb() - before;
	close(pipefd[1]);
	close(pipefd[0]);
	/* Each child lived to see the EOF, after the count. */
	while (wait(&status) > 0)
		exited_badly += !WIFEXITED(status) || WEXITSTATUS(status);
	EXPECT_EQ(0, exited_badly);
	rss_kb = IDLE_PROCS * (long)RSS_STAT_BYTES * self->ncpus / 1024;
	TH_LOG("Percpu: +%ld kB for %d idle processes (rss_stat alone took %ld kB), %d CPUs",
	       growth, IDLE_PROCS, rss_kb, self->ncpus);
	EXPECT_GT(rss_kb / 2, growth);
	EXPECT_EQ(0, read_upgrades());
}

/*
 * The per-CPU memory of a threaded process's mm is charged to the memory
 * cgroup of the task that makes it, and uncharged when the mm goes: with
 * lazy rss_stat, the process that starts the thread, at that moment;
 * otherwise, at fork. Run MEMCG_PROCS such processes in one cgroup, then,
 * after they have exited, in a second: each time only the cgroup that runs
 * them has their per-CPU memory in memory.stat's percpu, exactly once each,
 * and each gives all of it back. That is the same S bytes per possible CPU
 * for each, and the allocator's record of the cgroup, a pointer per 4 bytes:
 * S is 16 where only rss_stat is charged, more where the mm's other per-CPU
 * data shares its allocation. The test learns S from the first cgroup, and
 * wants at least rss_stat and the same S in the second. The stat is flushed
 * every 2 s or when enough has changed in the cgroup read: poll, and watch
 * the other cgroup for two periods.
 *
 * Allocations from the per-CPU allocator's first chunk are never charged
 * (it has no room for the cgroup records), and in a small guest it has room
 * for a hundred mms: fill it first, with threaded processes of the root
 * cgroup, until percpu_stats (CONFIG_PERCPU_STATS) shows no room for an
 * rss_stat, and check that it stays so.
 */
#define CGROUP_FS	"/sys/fs/cgroup"
#define PERCPU_STATS	DEBUGFS "/percpu_stats"
#define FIRST_CHUNK	"<- First Chunk"
#define MEMCG_PROCS	64
#define MEMCG_FLUSH_MS	2000
#define FILL_STEP	25
#define FILL_MAX	2000

/* cgroup v2 with the memory controller for the root's children, or a reason. */
static const char *memcg_ready(void)
{
	if (read_text("/proc/cmdline", buf, sizeof(buf)) >= 0 &&
	    strstr(buf, "cgroup.memory=nokmem"))
		return "kernel memory accounting is off (cgroup.memory=nokmem)";
	if (access(CGROUP_FS "/cgroup.controllers", F_OK)) {
		/* Not on v2 here: a mount of our own, in a namespace of our own. */
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("none", CGROUP_FS, "cgroup2", 0, NULL))
			return "cannot mount cgroup v2";
	}
	if (read_text(CGROUP_FS "/cgroup.controllers", buf, sizeof(buf)) < 0 ||
	    !strstr(buf, "memory") ||
	    write_text(CGROUP_FS "/cgroup.subtree_control", "+memory"))
		return "no cgroup v2 memory controller";
	return NULL;
}

/* The number after the first @key (then blanks and a colon) after @after in @path, or -1. */
static long text_number(const char *path, const char *after, const char *key)
{
	char *p;

	if (read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	p = after ? strstr(buf, after) : buf;
	p = p ? strstr(p, key) : NULL;
	if (!p)
		return -1;
	for (p += strlen(key); *p == ' ' || *p == ':'; p++)
		;
	return *p >= '0' && *p <= '9' ? strtol(p, NULL, 10) : -1;
}

/* The "percpu" of @cg's memory.stat, in bytes, or -1. */
static long memcg_percpu(const char *cg)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	return text_number(path, NULL, "\npercpu ");
}

/* The largest free area of the first chunk, in bytes per CPU, or -1. */
static long first_chunk_room(void)
{
	return text_number(PERCPU_STATS, FIRST_CHUNK, "contig_bytes");
}

/* Poll @cg's percpu until it is @want, for up to two flush periods; the last value. */
static long memcg_percpu_until(const char *cg, long want)
{
	long v = -1;
	int ms;

	for (ms = 0; ms <= timeout_s(2 * MEMCG_FLUSH_MS / 1000) * 1000; ms += 100) {
		v = memcg_percpu(cg);
		if (v < 0 || v == want)
			break;
		usleep(100000);
	}
	return v;
}

/* Poll @cg's percpu until it is at least @least and has not changed for a flush period. */
static long memcg_percpu_settled(const char *cg, long least)
{
	long v = -1, last = -1;
	int ms, same = 0;

	for (ms = 0; ms <= timeout_s(4 * MEMCG_FLUSH_MS / 1000) * 1000; ms += 100) {
		v = memcg_percpu(cg);
		same = v == last ? same + 100 : 0;
		if (v < 0 || (v >= least && same > MEMCG_FLUSH_MS))
			break;
		last = v;
		usleep(100000);
	}
	return v;
}

/* Watch @cg's percpu for two flush periods; the first value that is not @want, or @want. */
static long memcg_percpu_stays(const char *cg, long want)
{
	long v = want;
	int ms;

	for (ms = 0; v == want && ms <= 2 * MEMCG_FLUSH_MS + 500; ms += 250) {
		v = memcg_percpu(cg);
		usleep(250000);
	}
	return v;
}

/*
 * A process that moves into @cg and forks @n children. Each starts a
 * thread, joins it, says so and waits for EOF on pipe @hold. Returns once
 * they all have said so, or -1 if one cannot.
 */
static pid_t threaded_procs_in(const char *cg, int n, int *hold)
{
	char path[128], c;
	int i, status, bad = 0, ready[2];
	pid_t pid;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid) {
		close(ready[1]);
		/* EOF, if the process or a child ends early. */
		for (i = 0; pid > 0 && i < n && read(ready[0], &c, 1) == 1; i++)
			;
		close(ready[0]);
		return i == n ? pid : -1;
	}
	close(ready[0]);
	close(hold[1]);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (write_text(path, "0"))
		_exit(10);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			_exit(11);
		if (!pid) {
			struct pollfd p = { .fd = hold[0], .events = POLLIN };
			pthread_t t;

			if (pthread_create(&t, NULL, nop_thread, NULL) ||
			    pthread_join(t, NULL) || write(ready[1], "", 1) != 1)
				_exit(12);
			close(ready[1]);
			_exit(poll(&p, 1, -1) != 1);
		}
	}
	close(ready[1]);
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	_exit(bad);
}

/* End what threaded_procs_in() started with @hold; 0 if all went well. */
static int end_procs(pid_t *pids, int n, int *hold)
{
	int i, status, bad = 0;

	close(hold[1]);
	close(hold[0]);
	for (i = 0; i < n; i++)
		bad |= waitpid(pids[i], &status, 0) != pids[i] ||
		       !WIFEXITED(status) || WEXITSTATUS(status);
	return bad;
}

TEST_F_TIMEOUT(rss_stat, threaded_processes_charge_percpu_to_their_cgroup, timeout_s(90))
{
	const char *cg[2] = { CGROUP_FS "/rss_stat_a", CGROUP_FS "/rss_stat_b" };
	/* Bytes per process for each byte of S: a copy per CPU, the records. */
	long per_s = self->ncpus + (long)sizeof(void *) / 4;
	long before[2], room, share = 0;
	int i, n, round, fill_hold[2];
	pid_t fillers[FILL_MAX / FILL_STEP];
	const char *why = memcg_ready();

	if (why)
		SKIP(return, "%s", why);
	if (first_chunk_room() < 0)
		SKIP(return, "no " PERCPU_STATS " (CONFIG_PERCPU_STATS)");
	ASSERT_EQ(0, pipe(fill_hold));
	for (n = 0; n < FILL_MAX / FILL_STEP && first_chunk_room() >= RSS_STAT_BYTES; n++) {
		fillers[n] = threaded_procs_in(CGROUP_FS, FILL_STEP, fill_hold);
		ASSERT_LT(0, fillers[n]);
	}
	room = first_chunk_room();
	TH_LOG("first per-CPU chunk: room for %ld bytes after %d threaded processes", room,
	       n * FILL_STEP);
	ASSERT_LE(0, room);
	ASSERT_GT(RSS_STAT_BYTES, room);

	for (i = 0; i < 2; i++) {
		rmdir(cg[i]);
		ASSERT_EQ(0, mkdir(cg[i], 0755));
		before[i] = memcg_percpu(cg[i]);
		ASSERT_LE(0, before[i]);
	}
	for (round = 0; round < 2; round++) {
		const char *in = cg[round], *out = cg[!round];
		long in_now, out_now;
		int hold[2];
		pid_t pid;

		ASSERT_EQ(0, pipe(hold));
		pid = threaded_procs_in(in, MEMCG_PROCS, hold);
		ASSERT_LT(0, pid);
		if (!round) {
			in_now = memcg_percpu_settled(in, before[round] + MEMCG_PROCS *
						      RSS_STAT_BYTES * per_s);
			share = in_now - before[round];
			TH_LOG("S = %ld bytes per possible CPU and threaded process",
			       share / MEMCG_PROCS / per_s);
			EXPECT_EQ(0, share % (MEMCG_PROCS * per_s));
			EXPECT_LE(RSS_STAT_BYTES, share / MEMCG_PROCS / per_s);
		} else {
			in_now = memcg_percpu_until(in, before[round] + share);
		}
		out_now = memcg_percpu_stays(out, before[!round]);
		TH_LOG("%d threaded processes in %s: percpu %+ld bytes, %+ld in %s",
		       MEMCG_PROCS, in, in_now - before[round], out_now - before[!round], out);
		EXPECT_EQ(before[round] + share, in_now);
		EXPECT_EQ(before[!round], out_now);
		EXPECT_GT(RSS_STAT_BYTES, first_chunk_room());

		EXPECT_EQ(0, end_procs(&pid, 1, hold));
		visit_cpus();
		in_now = memcg_percpu_until(in, before[round]);
		TH_LOG("after they exited: %+ld bytes", in_now - before[round]);
		EXPECT_EQ(before[round], in_now);
	}
	EXPECT_EQ(0, end_procs(fillers, n, fill_hold));
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, rmdir(cg[i]));
}

/*
 * Map every page of our file mappings but the memfd's: code that runs for
 * the first time then adds nothing between two reads of the counters (in a
 * guest whose root is tmpfs, the program and its libraries are shmem).
 */
static void populate_files(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned long start, end;
	char line[512];

	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx r", &start, &end) == 2 &&
		    strchr(line, '/') && !strstr(line, "memfd:"))
			madvise((void *)start, end - start, MADV_POPULATE_READ);
	fclose(maps);
}

/* What the child of the exactness case does on each command byte. */
static void exact_child(int cmd, int ack, char *own, char *shm, long pages,
			char **argv)
{
	char c;

	populate_files();
	while (read(cmd, &c, 1) == 1) {
		if (c == 'a')
			touch(own, pages);
		else if (c == 's')
			touch(shm, pages);
		else if (c == 'z')
			madvise(own, pages * psize(), MADV_DONTNEED);
		else if (c == 'x')
			execv("/proc/self/exe", argv);
		if (write(ack, &c, 1) != 1)
			break;
	}
	_exit(127);
}

static int command(int cmd, int ack, char c)
{
	char r;

	return write(cmd, &c, 1) == 1 && read(ack, &r, 1) == 1 && r == c ? 0 : -1;
}

/*
 * A process that never shared its mm: /proc/PID/stat, statm and status are
 * exact at every step, and each step changes them by the pages it touched.
 * Its counters hold the pages fork copied and the pages other processes
 * write into it (remote adds), and the pages it faults itself (owner adds):
 * a reader that drops either kind is wrong. Last, it execs, and the new mm
 * checks itself the same way.
 */
TEST_F_TIMEOUT(rss_stat, lazy_stat_statm_status_exact_with_owner_and_remote_adds, timeout_s(10))
{
	const long pages = 64, ps = psize();
	char *copied = map_anon(pages), *own = map_anon(pages);
	char *remote = map_anon(pages), *shm, one = 1, path[64];
	int memfd = memfd_create("rss_stat", 0), cmd[2], ack[2], mem, i;
	struct rss r0, r;
	pid_t pid;

	ASSERT_TRUE(copied && own && remote);
	ASSERT_EQ(0, ftruncate(memfd, pages * ps));
	shm = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, shm);
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(ack));
	touch(copied, pages);
	pid = fork();
	if (!pid)
		exact_child(cmd[0], ack[1], own, shm, pages, exec_argv(self->lazy));
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, command(cmd[1], ack[0], '-'));	/* the child is up */

	EXPECT_RSS_EXACT(pid, self->lazy, &r0);
	EXPECT_LE(pages, r0.anon) TH_LOG("fork did not copy the anon pages");

	ASSERT_EQ(0, command(cmd[1], ack[0], 'a'));
	EXPECT_RSS_EXACT(pid, self->lazy, &r);
	EXPECT_EQ(r0.anon + pages, r.anon) TH_LOG("after faulting anon pages");

	ASSERT_EQ(0, command(cmd[1], ack[0], 's'));
	EXPECT_RSS_EXACT(pid, self->lazy, &r0);
	EXPECT_EQ(r.shmem + pages, r0.shmem) TH_LOG("after faulting shmem pages");

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDWR);
	ASSERT_LE(0, mem);
	for (i = 0; i < pages; i++) {
		struct iovec local = { &one, 1 }, to = { remote + i * ps, 1 };

		EXPECT_EQ(1, i & 1 ? process_vm_writev(pid, &local, 1, &to, 1, 0) :
				     pwrite(mem, &one, 1, (uintptr_t)to.iov_base));
	}
	close(mem);
	EXPECT_RSS_EXACT(pid, self->lazy, &r);
	EXPECT_EQ(r0.anon + pages, r.anon) TH_LOG("after remote writes");

	ASSERT_EQ(0, command(cmd[1], ack[0], 'z'));
	EXPECT_RSS_EXACT(pid, self->lazy, &r0);
	EXPECT_EQ(r.anon - pages, r0.anon) TH_LOG("after MADV_DONTNEED");

	ASSERT_EQ(1, write(cmd[1], "x", 1));
	EXPECT_EQ(0, wait_status(pid)) TH_LOG("the exec'd mm is not exact");
	EXPECT_RSS_EXACT(0, self->lazy, &r);	/* and so is this process */
	if (self->lazy)
		EXPECT_EQ(0, read_upgrades());
}

/* The last kmem:rss_stat event so far for MM_ANONPAGES of one mm. */
struct rss_event {
	unsigned int mm_id;
	long size;		/* bytes */
	int nr;			/* events for that mm and type */
	int remote;		/* of which curr=0 */
};

/*
 * Read and clear the rss_stat events of the case; find the mm that @pid
 * counted into as its own (curr=1), or the mm @ev->mm_id if set, and the
 * last MM_ANONPAGES size reported for it.
 */
static int read_rss_events(pid_t pid, struct rss_event *ev)
{
	char path[128], *line, *next, *p, type[32];
	unsigned int mm_id, curr;
	long size;

	snprintf(path, sizeof(path), "%s/trace", trace);
	if (read_text(path, buf, sizeof(buf)) < 0 || write_text(path, ""))
		return -1;
	ev->nr = 0;
	ev->remote = 0;
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		p = strstr(line, " rss_stat: ");
		if (line[0] == '#' || !p ||
		    sscanf(p, " rss_stat: mm_id=%u curr=%u type=%31s size=%ldB",
			   &mm_id, &curr, type, &size) != 4 ||
		    strcmp(type, "MM_ANONPAGES"))
			continue;
		if (!ev->mm_id && curr) {
			char *q = strchr(line, '[') ?: line;

			while (q > line && q[-1] == ' ')
				q--;
			while (q > line && q[-1] >= '0' && q[-1] <= '9')
				q--;
			if (atoi(q) == pid)
				ev->mm_id = mm_id;
		}
		if (mm_id != ev->mm_id)
			continue;
		ev->size = size;
		ev->nr++;
		ev->remote += !curr;
	}
	return 0;
}

#define EVENT_PAGES	45	/* not a multiple of any percpu_counter batch */

static void *touch_event_pages(void *arg)
{
	touch((char *)arg + psize(), EVENT_PAGES - 1);
	return NULL;
}

/*
 * The rss_stat event reports the exact size of the counter it updated, in
 * both modes: a child faults EVENT_PAGES pages, itself while lazy, or its
 * first page itself (which names its mm in the trace) and the others from
 * a thread once shared; then another process writes EVENT_PAGES more into
 * it (remote adds, curr=0). Each step's last event is the child's RssAnon.
 */
TEST_F_TIMEOUT(rss_stat, rss_stat_event_reports_exact_sizes, timeout_s(20))
{
	const long ps = psize();
	char path[128], one = 1;
	int shared, cmd[2], ack[2], i;
	struct rss_event ev;
	struct rss r;

	if (access(TRACING "/" RSS_EVENT, F_OK))
		SKIP(return, "no tracepoint kmem:rss_stat");
	snprintf(path, sizeof(path), "%s/" RSS_EVENT "/enable", trace);
	ASSERT_EQ(0, write_text(path, "1"));
	for (shared = 0; shared < 2; shared++) {
		char *own = map_anon(EVENT_PAGES), *remote = map_anon(EVENT_PAGES);
		pid_t pid;

		ASSERT_TRUE(own && remote);
		ASSERT_EQ(0, pipe(cmd));
		ASSERT_EQ(0, pipe(ack));
		pid = fork();
		if (!pid) {
			pthread_t t;
			char c;

			if (read(cmd[0], &c, 1) != 1)
				_exit(1);
			touch(own, 1);
			if (shared) {
				if (pthread_create(&t, NULL, touch_event_pages, own) ||
				    pthread_join(t, NULL))
					_exit(1);
			} else {
				touch(own + psize(), EVENT_PAGES - 1);
			}
			if (write(ack[1], &c, 1) != 1 || read(cmd[0], &c, 1) != 1)
				_exit(1);
			_exit(0);
		}
		ASSERT_LT(0, pid);
		memset(&ev, 0, sizeof(ev));
		read_rss_events(pid, &ev);	/* clear */
		ASSERT_EQ(0, command(cmd[1], ack[0], 'g'));
		ASSERT_EQ(0, read_rss_events(pid, &ev));
		EXPECT_RSS_EXACT(pid, !shared && self->lazy, &r);
		ASSERT_NE(0, ev.mm_id) TH_LOG("no rss_stat event of the child's mm");
		EXPECT_LE(EVENT_PAGES, ev.nr);
		EXPECT_EQ(0, ev.remote);
		EXPECT_EQ(r.anon * ps, ev.size) TH_LOG("%s", shared ? "shared" : "lazy");

		for (i = 0; i < EVENT_PAGES; i++) {
			struct iovec local = { &one, 1 }, to = { remote + i * ps, 1 };

			EXPECT_EQ(1, process_vm_writev(pid, &local, 1, &to, 1, 0));
		}
		ASSERT_EQ(0, read_rss_events(pid, &ev));
		EXPECT_RSS_EXACT(pid, !shared && self->lazy, &r);
		EXPECT_EQ(EVENT_PAGES, ev.remote);
		EXPECT_EQ(r.anon * ps, ev.size) TH_LOG("%s, remote", shared ? "shared" : "lazy");

		EXPECT_EQ(1, write(cmd[1], "q", 1));
		EXPECT_EQ(0, wait_status(pid));
		close(cmd[0]), close(cmd[1]), close(ack[0]), close(ack[1]);
		munmap(own, EVENT_PAGES * ps);
		munmap(remote, EVENT_PAGES * ps);
	}
}

/* A CLONE_VM child that is no thread (no CLONE_THREAD, no CLONE_VFORK). */
TEST_F_TIMEOUT(rss_stat, clone_vm_child_faulting_with_parent_ends_exact, timeout_s(45))
{
	static char stack[STACK_SIZE];
	int ready = 0;
	struct churner c = { map_churn(), &ready };
	char *mine = map_churn();
	struct rss r;
	pid_t pid;

	ASSERT_TRUE(c.area && mine);
	pid = clone(churn_fn, stack + sizeof(stack), CLONE_VM | SIGCHLD, &c);
	ASSERT_LT(0, pid);
	spin_barrier(&ready, 2);
	churn(mine, CHURN_ROUNDS);
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_RSS_EXACT(0, false, &r);
	EXPECT_ONE_UPGRADE_BY(getpid());
}

/*
 * The vfork parent waits, but its other threads do not: a vfork child
 * faulting while a thread of its parent faults.
 */
TEST_F_TIMEOUT(rss_stat, vfork_child_faulting_with_parent_thread_ends_exact, timeout_s(45))
{
	int ready = 0;
	struct churner c = { map_churn(), &ready };
	char *mine = map_churn();
	struct rss r;
	pthread_t t;
	pid_t pid;

	ASSERT_TRUE(c.area && mine);
	ASSERT_EQ(0, pthread_create(&t, NULL, churn_thread, &c));
	pid = vfork();
	if (!pid) {
		spin_barrier(&ready, 2);
		churn(mine, CHURN_ROUNDS);
		_exit(0);
	}
	EXPECT_EQ(0, wait_status(pid));
	EXPECT_EQ(0, pthread_join(t, NULL));
	EXPECT_RSS_EXACT(0, false, &r);
	EXPECT_ONE_UPGRADE_BY(getpid());
}

#define IO_QD		16	/* reads in flight, each into fresh pages */
#define IO_PAGES	16	/* pages per read */

static void prep_read(struct io_uring *ring, int fd, char *dst, long len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->flags = IOSQE_ASYNC;	/* in an io-wq worker */
	sqe->fd = fd;
	sqe->addr = (uintptr_t)dst;
	sqe->len = len;
}

/*
 * The result of the next completion; -ETIME if none came within 3 s: a
 * request that io-wq neither ran nor cancelled, which then fails the case
 * by name rather than by the case's timeout.
 */
static int reap(struct io_uring *ring)
{
	struct pollfd pfd = { .fd = ring->ring_fd, .events = POLLIN };
	struct io_uring_cqe *cqe;
	int res;

	if (poll(&pfd, 1, timeout_s(3) * 1000) != 1)
		return -ETIME;
	if (io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(ring);
	return res;
}

static int data_memfd(long len)
{
	int fd = memfd_create("rss_stat", 0);

	if (fd >= 0 && ftruncate(fd, len))
		return -1;
	return fd;
}

/*
 * io-wq workers share the mm (CLONE_VM): buffered reads copy into fresh
 * anon pages, so the workers fault them in while the owner faults its own.
 */
TEST_F_TIMEOUT(rss_stat, io_wq_reads_into_fresh_anon_while_owner_faults_ends_exact, timeout_s(45))
{
	const long len = IO_PAGES * psize();
	char *dst = map_churn(), *mine = map_churn();
	int fd = data_memfd(len), round, i;
	struct io_uring ring;
	struct rss r;

	ASSERT_TRUE(dst && mine && fd >= 0);
	ASSERT_EQ(0, io_uring_queue_init(IO_QD, &ring, 0));
	for (round = 0; round < CHURN_ROUNDS / 4; round++) {
		for (i = 0; i < IO_QD; i++)
			prep_read(&ring, fd, dst + i * len, len);
		ASSERT_EQ(IO_QD, io_uring_submit(&ring));
		churn(mine, 4);
		for (i = 0; i < IO_QD && reap(&ring) == len; i++)
			;
		ASSERT_EQ(IO_QD, i);
		madvise(dst, IO_QD * len, MADV_DONTNEED);
	}
	io_uring_queue_exit(&ring);
	EXPECT_RSS_EXACT(0, false, &r);
	EXPECT_ONE_UPGRADE_BY(getpid());
}

#define REMOTE_ITERS	24
#define REMOTE_PAGES	128
#define NR_THREADS	8

static void *fault_thread(void *arg)
{
	touch(arg, 4);
	return NULL;
}

/*
 * A process creates threads, the first of which upgrades its counters,
 * while another process writes into it with process_vm_writev() and
 * /proc/PID/mem, faulting pages in: adds to the shared word race with the
 * upgrade that folds it. Many processes, so many upgrades.
 */
TEST_F_TIMEOUT(rss_stat, threads_created_while_remote_writers_fault_ends_exact, timeout_s(20))
{
	pthread_barrier_t *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const long ps = psize();
	pthread_barrierattr_t attr;
	char path[64], one = 1;
	int iter, i, mem;
	struct rss r;

	ASSERT_NE(MAP_FAILED, b);
	pthread_barrierattr_init(&attr);
	pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	ASSERT_EQ(0, pthread_barrier_init(b, &attr, 2));
	for (iter = 0; iter < REMOTE_ITERS; iter++) {
		char *dst = map_anon(REMOTE_PAGES), *own = map_anon(4 * NR_THREADS);
		pid_t pid;

		ASSERT_TRUE(dst && own);
		pid = fork();
		if (!pid) {
			pthread_t t;
			int bad = 0;

			pthread_barrier_wait(b);
			for (i = 0; i < NR_THREADS; i++)
				bad |= pthread_create(&t, NULL, fault_thread,
						      own + 4 * i * ps) ||
				       pthread_join(t, NULL);
			pthread_barrier_wait(b);	/* threads gone */
			pthread_barrier_wait(b);	/* checked */
			_exit(bad);
		}
		ASSERT_LT(0, pid);
		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		mem = open(path, O_RDWR);
		ASSERT_LE(0, mem);
		pthread_barrier_wait(b);
		for (i = 0; i < REMOTE_PAGES; i++) {
			struct iovec local = { &one, 1 }, to = { dst + i * ps, 1 };

			EXPECT_EQ(1, i & 1 ?
				  process_vm_writev(pid, &local, 1, &to, 1, 0) :
				  pwrite(mem, &one, 1, (uintptr_t)to.iov_base));
		}
		close(mem);
		pthread_barrier_wait(b);
		EXPECT_RSS_EXACT(pid, false, &r);
		EXPECT_ONE_UPGRADE_BY(pid);
		pthread_barrier_wait(b);
		EXPECT_EQ(0, wait_status(pid));
		munmap(dst, REMOTE_PAGES * ps);
		munmap(own, 4 * NR_THREADS * ps);
	}
}

/*
 * Why fail_upgrade() cannot make the upgrade fail for one task. On x86 a
 * kprobe that is not ftrace-based (CONFIG_KPROBES_ON_FTRACE, and the
 * function built with CC_FLAGS_FTRACE) runs in int3 context, where in_task()
 * is false, so fail_function's task-filter never matches.
 */
static const char * const no_fail[] = {
	NULL, "no " FAIL_FN " (CONFIG_FAIL_FUNCTION)",
	"fail_function cannot single out a task: no ftrace kprobe on " UPGRADE_FN,
};

/*
 * Make the upgrade fail with -@err for this task only (make-it-fail); 0:
 * stop. Returns 0, -1, or the index of the reason in no_fail[].
 */
static int fail_upgrade(int err)
{
	static const char * const attr[][2] = {
		{ FAIL_FN "/task-filter", "Y" }, { FAIL_FN "/probability", "100" },
		{ FAIL_FN "/interval", "1" }, { FAIL_FN "/times", "-1" },
		{ FAIL_FN "/space", "0" }, { FAIL_FN "/verbose", "0" },
		{ FAIL_FN "/inject", UPGRADE_FN },
	};
	char retval[32], *p, *eol;
	int i;

	if (!err)
		return write_text("/proc/self/make-it-fail", "0") ?:
		       write_text(FAIL_FN "/inject", "!" UPGRADE_FN);
	if (access(FAIL_FN, F_OK))
		mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
	if (access(FAIL_FN, F_OK))
		return 1;
	for (i = 0; i < ARRAY_SIZE(attr); i++)
		if (write_text(attr[i][0], attr[i][1]))
			return -1;
	if (read_text(DEBUGFS "/kprobes/list", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, UPGRADE_FN "+0x0");
	eol = p ? strchr(p, '\n') : NULL;
	if (eol)
		*eol = 0;
	if (!p || !strstr(p, "[FTRACE]"))
		return 2;
	snprintf(retval, sizeof(retval), "%lu", (unsigned long)-err);
	return write_text(FAIL_FN "/" UPGRADE_FN "/retval", retval) ?:
	       write_text("/proc/self/make-it-fail", "1");
}

#define INJECT_ROUNDS	50

/*
 * With the upgrade failing: pthread_create(), vfork(), posix_spawn() and
 * clone(CLONE_VM) fail with its error, and the process carries on with its
 * counters still lazy and exact. Once the upgrade works again, the next
 * thread upgrades. (What a failure inside the step frees is tested in
 * KUnit: fail_function fails the step as a whole, before it allocates.)
 */
TEST_F_TIMEOUT(rss_stat, failed_upgrade_fails_clone_keeps_counters_lazy_exact, timeout_s(15))
{
	static char stack[STACK_SIZE];
	char **argv = exec_argv(true);
	struct rss r;
	pthread_t t;
	pid_t pid;
	int i, n, err;

	if (!self->lazy)
		SKIP(return, NO_LAZY);
	err = fail_upgrade(ENOMEM);
	if (err > 0)
		SKIP(return, "%s", no_fail[err]);
	ASSERT_EQ(0, err);
	for (i = 0; i < INJECT_ROUNDS; i++) {
		/* glibc reports any failed clone as EAGAIN, as POSIX asks */
		EXPECT_EQ(EAGAIN, pthread_create(&t, NULL, nop_thread, NULL));
		pid = vfork();
		if (!pid)
			_exit(0);
		EXPECT_EQ(-1, pid);
		EXPECT_EQ(ENOMEM, errno);
		EXPECT_EQ(ENOMEM, posix_spawn(&pid, "/proc/self/exe", NULL, NULL,
					      argv, environ));
		pid = clone(nop_fn, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
		EXPECT_EQ(-1, pid);
		EXPECT_EQ(ENOMEM, errno);
		if (_metadata->exit_code != KSFT_PASS)
			break;
	}
	ASSERT_EQ(0, fail_upgrade(0));
	while (wait(NULL) > 0)	/* children of clones that should have failed */
		;
	n = read_upgrades();
	EXPECT_EQ(4 * INJECT_ROUNDS, count_upgrades(n, getpid(), -ENOMEM));
	EXPECT_EQ(4 * INJECT_ROUNDS, n);
	EXPECT_RSS_EXACT(0, true, &r);

	ASSERT_EQ(0, pthread_create(&t, NULL, nop_thread, NULL));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_RSS_EXACT(0, false, &r);
	EXPECT_ONE_UPGRADE_BY(getpid());
}

/*
 * io-wq creates its workers with CLONE_VM from the submitting task, which
 * then upgrades. If that fails with -ENOMEM, the first worker is not
 * created and the request is cancelled; -EAGAIN is retried
 * (io_should_retry_thread()) a few times before that. The submitter carries
 * on, exact and lazy, and a later request gets its worker.
 */
TEST_F_TIMEOUT(rss_stat, failed_upgrade_for_io_wq_worker_cancels_request, timeout_s(15))
{
	static const int errs[] = { ENOMEM, EAGAIN };
	const long len = IO_PAGES * psize();
	char *dst = map_anon(IO_PAGES);
	int fd = data_memfd(len), i, n, res, err;
	struct io_uring ring;
	struct rss r;

	if (!self->lazy)
		SKIP(return, NO_LAZY);
	ASSERT_TRUE(dst && fd >= 0);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		err = fail_upgrade(errs[i]);
		if (err > 0)
			SKIP(return, "%s", no_fail[err]);
		ASSERT_EQ(0, err);
		prep_read(&ring, fd, dst, len);
		ASSERT_EQ(1, io_uring_submit(&ring));
		res = reap(&ring);
		ASSERT_EQ(0, fail_upgrade(0));
		n = read_upgrades();
		TH_LOG("upgrade failing with -%d: %d worker creation attempt(s), read: %d",
		       errs[i], n, res);
		ASSERT_EQ(-ECANCELED, res);	/* else the next reap can get it */
		EXPECT_LE(1, n);
		EXPECT_EQ(n, count_upgrades(n, getpid(), -errs[i]));
		EXPECT_RSS_EXACT(0, true, &r);
	}
	prep_read(&ring, fd, dst, len);
	ASSERT_EQ(1, io_uring_submit(&ring));
	EXPECT_EQ(len, reap(&ring));
	io_uring_queue_exit(&ring);
	EXPECT_ONE_UPGRADE_BY(getpid());
	EXPECT_RSS_EXACT(0, false, &r);
}

/*
 * Once the mm is shared, get_mm_counter() reads a percpu_counter's global
 * count, which misses less than a batch per online CPU (the batch of
 * lib/percpu_counter.c). /proc/PID/stat and the hiwater marks (VmHWM,
 * ru_maxrss) read three counters so; status and statm read them exactly,
 * and so does the OOM badness since 7.0, which read four counters so
 * before: it keeps that error, so that the test runs on either.
 */
static long cheap_read_error(int counters)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return counters * cpus * ((2 * cpus > 32 ? 2 * cpus : 32) - 1);
}

/* Threads, each on its CPU from its first instruction, all running at once. */
struct on_cpu {
	int cpu;
	char *p;		/* fault in, or unmap, n pages at p */
	long n;
	bool unmap;
	int *running;
	int nr;
	pthread_t thread;
};

static void *on_cpu_thread(void *arg)
{
	struct on_cpu *o = arg;

	spin_barrier(o->running, o->nr);
	if (o->unmap)
		return munmap(o->p, o->n * psize()) ? arg : NULL;
	touch(o->p, o->n);
	return NULL;
}

/* Wait for the threads of @o[0..n-1]: 0 if each did its work. */
static int on_cpus_join(struct on_cpu *o, int n)
{
	int i, ret = 0;
	void *bad;

	for (i = 0; i < n; i++)
		if (pthread_join(o[i].thread, &bad) || bad)
			ret = -1;
	return ret;
}

/*
 * Start a thread for each of @o[0..n-1], on its CPU from its first
 * instruction; they run together with @nr - n others that count @running
 * too. 0, or -1 with the started ones let go.
 */
static int on_cpus_start(struct on_cpu *o, int n, int *running, int nr)
{
	pthread_attr_t attr;
	int started = 0;
	cpu_set_t one;

	if (!pthread_attr_init(&attr)) {
		for (; started < n; started++) {
			CPU_ZERO(&one);
			CPU_SET(o[started].cpu, &one);
			o[started].running = running;
			o[started].nr = nr;
			if (pthread_attr_setaffinity_np(&attr, sizeof(one), &one) ||
			    pthread_create(&o[started].thread, &attr, on_cpu_thread,
					   &o[started]))
				break;
		}
		pthread_attr_destroy(&attr);
	}
	if (started == n)
		return 0;
	__atomic_add_fetch(running, nr - started, __ATOMIC_ACQ_REL);
	on_cpus_join(o, started);
	return -1;
}

/* The threads of @o[0..n-1], all running at the same time. */
static int on_cpus(struct on_cpu *o, int n)
{
	int running = 0;

	return on_cpus_start(o, n, &running, n) ?: on_cpus_join(o, n);
}

static int pages_on_cpu(int cpu, char *p, long n, bool unmap)
{
	struct on_cpu o = { .cpu = cpu, .p = p, .n = n, .unmap = unmap };

	return on_cpus(&o, 1);
}

/* The online CPUs we may run on, in @cpus; their number. */
static int our_cpus(int *cpus)
{
	cpu_set_t all;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(all), &all))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all))
			cpus[n++] = cpu;
	return n;
}

/* RAM and swap, in pages: the OOM killer's and oom_score's total. */
static long oom_total(void)
{
	if (read_text("/proc/meminfo", buf, sizeof(buf)) < 0)
		return -1;
	return (field(buf, "MemTotal") + field(buf, "SwapTotal")) / (psize() >> 10);
}

/*
 * /proc/self/oom_score against the badness of mm/oom_kill.c: rss, swap
 * entries and page tables, within @err pages of @rss plus the exact swap
 * entries and page tables; scaled as fs/proc/base.c does.
 */
static bool oom_score_wrong(long rss, long err, char *msg, size_t len)
{
	long kb = psize() >> 10, total = oom_total(), pages, lo, hi, score;

	if (total <= 0 || read_proc(0, "status"))
		return true;
	pages = rss + (field(buf, "VmSwap") + field(buf, "VmPTE")) / kb;
	lo = (1000 + (pages - err) * 1000 / total) * 2 / 3;
	hi = (1000 + (pages + err) * 1000 / total) * 2 / 3;
	if (read_proc(0, "oom_score"))
		return true;
	score = strtol(buf, NULL, 10);
	snprintf(msg, len, "oom_score %ld, for %ld +- %ld pages of %ld: %ld..%ld",
		 score, pages, err, total, lo, hi);
	return score < lo || score > hi;
}

/*
 * A thread on each CPU faults in a share of a large area, all at once: one
 * user of the mm per CPU, and the process. Then one CPU unmaps half of it
 * in adds of up to a page table's worth, which fold into the count. Before
 * and after, status and statm are exact, and the cheap reads within their
 * error: /proc/PID/stat, oom_score, and the hiwater marks of the peak in
 * between. The area is at least 8 of oom_score's units (3/2000 of RAM and
 * swap), so that a read that missed it would show there too. (Where the
 * count is below zero get_mm_counter() reads 0: the rss_stat KUnit suite
 * checks that; the sums of three counters read here would not show it.)
 */
TEST_F_TIMEOUT(rss_stat, shared_mm_cheap_reads_within_their_error, timeout_s(60))
{
	long ps = psize(), kb = ps >> 10, err = cheap_read_error(3), peak, hwm, pages;
	struct on_cpu o[CPU_SETSIZE] = {};
	int cpus[CPU_SETSIZE], n, i;
	struct rusage ru;
	char *area, msg[256];
	struct rss r;

	n = our_cpus(cpus);
	if (n < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, write_text("/proc/self/oom_score_adj", "0"));
	pages = 8 * 3 * oom_total() / 2000 / n * n;
	pages = pages > 8192 ? pages : 8192;
	area = map_anon(pages);
	ASSERT_NE(NULL, area);
	for (i = 0; i < n; i++) {
		o[i].cpu = cpus[i];
		o[i].n = pages / n;
		o[i].p = area + i * o[i].n * ps;
	}
	ASSERT_EQ(0, on_cpus(o, n));
	EXPECT_ONE_UPGRADE_BY(getpid());
	EXPECT_RSS_EXACT(0, false, &r);
	EXPECT_GE(err, labs(r.stat - r.vmrss)) TH_LOG("stat %ld, status %ld", r.stat, r.vmrss);
	EXPECT_FALSE(oom_score_wrong(r.vmrss, cheap_read_error(4), msg, sizeof(msg)))
		TH_LOG("%s", msg);
	peak = r.vmrss;

	ASSERT_EQ(0, pages_on_cpu(cpus[n - 1], area, pages / 2, true));
	EXPECT_RSS_EXACT(0, false, &r);
	EXPECT_GE(err, labs(r.stat - r.vmrss)) TH_LOG("stat %ld, status %ld", r.stat, r.vmrss);
	EXPECT_FALSE(oom_score_wrong(r.vmrss, cheap_read_error(4), msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, read_proc(0, "status"));
	hwm = field(buf, "VmHWM") / kb;
	EXPECT_GE(err, labs(hwm - peak)) TH_LOG("VmHWM %ld, peak %ld pages", hwm, peak);
	ASSERT_EQ(0, getrusage(RUSAGE_SELF, &ru));
	EXPECT_GE(err, labs(ru.ru_maxrss / kb - peak))
		TH_LOG("ru_maxrss %ld, peak %ld pages", ru.ru_maxrss / kb, peak);
}

static int set_cpu_online(int cpu, bool on)
{
	char path[64];

	snprintf(path, sizeof(path), CPU_SYSFS "/cpu%d/online", cpu);
	return write_text(path, on ? "1" : "0");
}

/* Live per-CPU allocations (CONFIG_PERCPU_STATS), or -1. */
static long percpu_allocs(void)
{
	char *p;

	if (read_text(DEBUGFS "/percpu_stats", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "nr_cur_alloc");
	p = p ? strchr(p, ':') : NULL;
	return p ? strtol(p + 1, NULL, 10) : -1;
}

/* Take @cpu offline and online, again and again, until we die. */
static __noreturn void toggle_cpu(int cpu)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		set_cpu_online(cpu, false);
		usleep(20000);
		set_cpu_online(cpu, true);
		usleep(20000);
	}
}

/* A process whose thread faults in pages: exit 0 if its counters were exact. */
static __noreturn void threaded_process(void)
{
	char *area = map_anon(4), msg[256];
	struct rss r;
	pthread_t t;

	if (!area || pthread_create(&t, NULL, fault_thread, area) ||
	    pthread_join(t, NULL))
		_exit(2);
	touch(area, 4);
	if (rss_wrong(0, false, &r, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		_exit(1);
	}
	_exit(0);
}

#define HOTPLUG_PROCS	1000
/*
 * The deltas a thread leaves on its CPU: its pages, and the few of its
 * stack, which its exit gives back. Far below any batch, and not 0.
 */
#define HOTPLUG_PAGES	16

/*
 * The process, pinned to one CPU (home), shares its mm with a thread on
 * another (victim), whose pages leave a delta there. The victim goes
 * offline: its delta is counted once, the dead CPU's fold moved it into the
 * count and zeroed its slot; it comes back and gives its pages back: counted
 * once. A possible CPU that was offline when the mm was shared (fresh) is
 * brought up, a thread on every online CPU faults in and unmaps pages, all
 * running at once, and fresh goes offline again: the counters stay exact.
 * Then 1000 threaded processes start, count and exit,
 * four at a time, while the victim goes offline and online every 20 ms: each
 * is exact, and they leave no per-CPU allocation behind.
 */
TEST_F_TIMEOUT(rss_stat, shared_mms_across_cpu_hotplug, timeout_s(240))
{
	int cpu, home, victim = -1, fresh = -1, i, n, together = 0, running = 0;
	int bad = 0, status;
	struct on_cpu o[CPU_SETSIZE] = {};
	cpu_set_t possible, online, one;
	long before, percpu_kb_before;
	char *area;
	pid_t toggler, pid;
	struct rss r;

	ASSERT_LT(0, read_cpus("possible", &possible));
	ASSERT_LT(1, read_cpus("online", &online));
	for (home = 0; !CPU_ISSET(home, &online); home++)
		;
	for (cpu = home + 1; cpu < CPU_SETSIZE; cpu++) {
		char path[64];

		snprintf(path, sizeof(path), CPU_SYSFS "/cpu%d/online", cpu);
		if (CPU_ISSET(cpu, &online) && !access(path, W_OK))
			victim = cpu;
		else if (CPU_ISSET(cpu, &possible) && !CPU_ISSET(cpu, &online) &&
			 fresh < 0)
			fresh = cpu;
	}
	if (victim < 0 || fresh < 0)
		SKIP(return, NO_HOTPLUG);
	before = percpu_allocs();
	ASSERT_LE(0, before) TH_LOG("no " DEBUGFS "/percpu_stats (CONFIG_PERCPU_STATS)");
	percpu_kb_before = percpu_kb();
	CPU_ZERO(&one);
	CPU_SET(home, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	area = map_anon(HOTPLUG_PAGES);
	ASSERT_NE(NULL, area);

	ASSERT_EQ(0, pages_on_cpu(victim, area, HOTPLUG_PAGES, false));
	ASSERT_EQ(0, set_cpu_online(victim, false));
	EXPECT_RSS_EXACT(0, false, &r);
	ASSERT_EQ(0, set_cpu_online(victim, true));
	ASSERT_EQ(0, pages_on_cpu(victim, area, HOTPLUG_PAGES, true));
	EXPECT_RSS_EXACT(0, false, &r);

	ASSERT_EQ(0, set_cpu_online(fresh, true));
	ASSERT_LT(1, read_cpus("online", &online));
	n = 0;
	for (cpu = home + 1; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &online))
			o[n++].cpu = cpu;
	area = map_anon((n + 1) * HOTPLUG_PAGES);
	ASSERT_NE(NULL, area);
	for (i = 0; i < n; i++) {
		o[i].p = area + (i + 1) * HOTPLUG_PAGES * psize();
		o[i].n = HOTPLUG_PAGES;
	}
	ASSERT_EQ(0, on_cpus_start(o, n, &together, n + 1));
	spin_barrier(&together, n + 1);
	touch(area, HOTPLUG_PAGES);
	ASSERT_EQ(0, on_cpus_join(o, n));
	EXPECT_RSS_EXACT(0, false, &r);
	ASSERT_EQ(0, set_cpu_online(fresh, false));
	EXPECT_RSS_EXACT(0, false, &r);
	ASSERT_EQ(0, munmap(area, (n + 1) * HOTPLUG_PAGES * psize()));
	EXPECT_RSS_EXACT(0, false, &r);

	toggler = fork();
	ASSERT_LE(0, toggler);
	if (!toggler)
		toggle_cpu(victim);
	for (i = 0; i < HOTPLUG_PROCS || running; ) {
		if (i < HOTPLUG_PROCS && running < 4) {
			pid = fork();
			if (!pid)
				threaded_process();
			ASSERT_LT(0, pid);
			running++;
			i++;
			continue;
		}
		pid = wait(&status);
		ASSERT_LT(0, pid);
		ASSERT_NE(toggler, pid);
		running--;
		bad += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	kill(toggler, SIGKILL);
	EXPECT_EQ(toggler, waitpid(toggler, NULL, 0));
	ASSERT_EQ(0, set_cpu_online(victim, true));
	EXPECT_EQ(0, bad);

	visit_cpus();
	TH_LOG("per-CPU allocations %+ld, Percpu %+ld kB, after %d threaded processes",
	       percpu_allocs() - before, percpu_kb() - percpu_kb_before, HOTPLUG_PROCS);
	EXPECT_GT(HOTPLUG_PROCS / 2, percpu_allocs() - before);
}

TEST_HARNESS_MAIN
