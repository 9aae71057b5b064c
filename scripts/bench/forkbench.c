// SPDX-License-Identifier: GPL-2.0
/*
 * fork/exec microbenchmarks for the lazy rss_stat series, in the spirit
 * of lmbench's lat_proc, will-it-scale's page_fault1 and the execve
 * scalability benchmarks, written for this project. Static, so that it
 * runs in a busybox guest.
 *
 *   forkbench exit N            fork + _exit + wait, N times
 *   forkbench exec N [PATH]     fork + execve(PATH) + wait, N times
 *   forkbench sh N              fork + /bin/sh -c true + wait, N times
 *   forkbench thread N          fork a child that starts and joins one
 *                               thread, N times (the upgrade cost)
 *   forkbench threxit N         fork a child with one thread pinned to each
 *                               online CPU, each faulting a few pages, then
 *                               the child exits; N times (teardown of an
 *                               mm whose counters have deltas on every CPU)
 *   forkbench execrate N        one worker per online CPU, pinned, each
 *                               re-execs this program N times
 *   forkbench pf_procs MIB      one process per online CPU, pinned: mmap
 *   forkbench pf_threads MIB    MIB MiB anon, write every page, munmap
 *                               (pf_threads: threads of one process)
 *   forkbench idle N            N idle children alive, print Percpu: delta
 *   forkbench status N [TRACING] start threxit's threads, then read
 *                               /proc/self/status N times (the exact sums
 *                               of per-CPU counters with deltas on every
 *                               CPU); with the tracefs directory TRACING,
 *                               reset its tracing_max_latency right before
 *                               the reads and stop tracing right after
 *                               (scripts/guest/irqsoff-guest)
 *   forkbench -m MODE W,N1,N2.. [PATH]
 *                               exit, exec, sh, thread or status (one
 *                               read, threads started first) for the
 *                               cache model and scripts/bench/insnprof.c:
 *                               W iterations, then N1, N2, ...,
 *                               each between two marks (the instruction
 *                               of scripts/bench/mark.c), all in this one
 *                               process (see cache_model_runs())
 *
 * Prints one line: "name=<mode> iters=N wall_s=.. sys_s=.. user_s=..",
 * where iters counts the operations (processes, execs, page faults) and
 * the CPU times are those of this process and its reaped children;
 * threxit adds exit_s, the time from the child's exit to its reaping.
 * For idle: "name=idle procs=N percpu_kb_before=.. percpu_kb_after=..".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The cache model's mark: scripts/bench/mark.c. */
static void mark(void)
{
	asm volatile(".byte 0x66, 0x87, 0xdb" ::: "memory");
}

static void reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "child failed: status %#x\n", status);
		exit(1);
	}
}

static void pin(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void *nothing(void *arg)
{
	return arg;
}

static void one_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
		die("pthread");
}

static long percpu_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Percpu: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int idle(long n)
{
	long before, after, i;
	pid_t *pids = calloc(n, sizeof(*pids));
	int ready[2];
	char c;

	if (!pids || pipe(ready))
		die("setup");
	before = percpu_kb();
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (!pids[i]) {
			close(ready[0]);
			if (write(ready[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
	}
	for (i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			die("read");
	after = percpu_kb();
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	printf("name=idle procs=%ld percpu_kb_before=%ld percpu_kb_after=%ld\n",
	       n, before, after);
	return 0;
}

/* One page_fault1 cycle: map, write one byte per page, unmap. */
static void fault_region(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t off;

	if (p == MAP_FAILED)
		die("mmap");
	/* Count 4 KiB faults, not THP ones, whatever the THP setting. */
	if (madvise(p, bytes, MADV_NOHUGEPAGE))
		die("madvise");
	for (off = 0; off < bytes; off += page)
		p[off] = 1;
	if (munmap(p, bytes))
		die("munmap");
}

static size_t pf_bytes;
static pthread_barrier_t pf_start;

static void *pf_thread(void *arg)
{
	pin((long)arg);
	pthread_barrier_wait(&pf_start);
	fault_region(pf_bytes);
	return NULL;
}

/* threxit: each thread faults its own THREXIT_PAGES pages of tx_mem. */
#define THREXIT_PAGES 16
static char *tx_mem;
static pthread_barrier_t tx_ready;

static void tx_fault(long cpu)
{
	long page = sysconf(_SC_PAGESIZE), i;

	for (i = 0; i < THREXIT_PAGES; i++)
		tx_mem[(cpu * THREXIT_PAGES + i) * page] = 1;
}

static void *tx_thread(void *arg)
{
	pin((long)arg);
	tx_fault((long)arg);
	pthread_barrier_wait(&tx_ready);
	pause();	/* until the exit_group() of the main thread */
	return NULL;
}

/* threxit's threads: one on each online CPU but this one, each faulting. */
static void threads_on_cpus(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), i;
	size_t bytes = cpus * THREXIT_PAGES * sysconf(_SC_PAGESIZE);
	pthread_t t;

	tx_mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tx_mem == MAP_FAILED || madvise(tx_mem, bytes, MADV_NOHUGEPAGE))
		die("mmap");
	pthread_barrier_init(&tx_ready, NULL, cpus);
	for (i = 1; i < cpus; i++)
		if (pthread_create(&t, NULL, tx_thread, (void *)i))
			die("pthread_create");
	pin(0);
	tx_fault(0);
	pthread_barrier_wait(&tx_ready);
}

/* The child of threxit: threads on all CPUs, then exit, saying so on fd. */
static void threaded_exit(int fd)
{
	threads_on_cpus();
	if (write(fd, "x", 1) != 1)
		die("write");
	_exit(0);
}

/* Write @s to the file @name of the tracefs directory @dir, if there is one. */
static void trace_write(const char *dir, const char *name, const char *s)
{
	char path[4096];
	int fd;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		die(path);
	close(fd);
}

static void read_status_once(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
		die("/proc/self/status");
	close(fd);
}

/* status: threads on all CPUs, then n reads of /proc/self/status. */
static long read_status(long n, const char *tracing)
{
	long i;

	threads_on_cpus();
	trace_write(tracing, "tracing_max_latency", "0");
	for (i = 0; i < n; i++)
		read_status_once();
	trace_write(tracing, "tracing_on", "0");
	return n;
}

/* Workers pinned one per online CPU; returns the operations done. */
static long per_cpu_workers(const char *mode, long n, char *self)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), i;
	long pages = cpus * (((size_t)n << 20) / sysconf(_SC_PAGESIZE));
	pthread_t *t = calloc(cpus, sizeof(*t));
	pid_t *pids = calloc(cpus, sizeof(*pids));
	char arg[32];

	if (!t || !pids)
		die("calloc");
	pf_bytes = (size_t)n << 20;
	if (!strcmp(mode, "pf_threads")) {
		pthread_barrier_init(&pf_start, NULL, cpus);
		for (i = 0; i < cpus; i++)
			if (pthread_create(&t[i], NULL, pf_thread, (void *)i))
				die("pthread_create");
		for (i = 0; i < cpus; i++)
			pthread_join(t[i], NULL);
		return pages;
	}
	snprintf(arg, sizeof(arg), "%ld", n);
	for (i = 0; i < cpus; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (!pids[i]) {
			pin(i);
			if (strcmp(mode, "execrate")) {
				fault_region(pf_bytes);
				_exit(0);
			}
			execl(self, "forkbench", "reexec", arg, (char *)NULL);
			_exit(127);
		}
	}
	for (i = 0; i < cpus; i++)
		reap(pids[i]);
	return strcmp(mode, "execrate") ? pages : cpus * n;
}

/* One iteration of the single-process modes; the exit time of threxit. */
static double one_op(const char *mode, const char *path, int exited[2])
{
	double t_exit;
	pid_t pid;
	char c;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		if (!strcmp(mode, "exit"))
			_exit(0);
		if (!strcmp(mode, "exec"))
			execl(path, path, (char *)NULL);
		if (!strcmp(mode, "sh"))
			execl("/bin/sh", "sh", "-c", "true", (char *)NULL);
		if (!strcmp(mode, "thread")) {
			one_thread();
			_exit(0);
		}
		if (!strcmp(mode, "threxit"))
			threaded_exit(exited[1]);
		_exit(127);
	}
	if (strcmp(mode, "threxit")) {
		reap(pid);
		return 0;
	}
	if (read(exited[0], &c, 1) != 1)
		die("read");
	t_exit = now();
	reap(pid);
	return now() - t_exit;
}

/*
 * The cache model's runs: a warm-up, then runs of the given lengths, each
 * between two marks, back to back in this process. A run that started
 * new processes for each length (a shell, this program) would give the
 * per-CPU allocator a new set of long-lived allocations each time, and
 * with them, possibly, new offsets for the allocations that each
 * operation makes and frees again: the base's misses per operation
 * change with those offsets (a 16-byte per-CPU object that straddles two
 * cache lines touches two lines on every possible CPU).
 */
static int cache_model_runs(const char *mode, char *lengths, const char *path)
{
	long n[64], i, r, runs = 0;
	char *tok, *end;

	bool status = !strcmp(mode, "status");

	if (strcmp(mode, "exit") && strcmp(mode, "exec") && strcmp(mode, "sh") &&
	    strcmp(mode, "thread") && !status) {
		fprintf(stderr, "forkbench -m: exit, exec, sh, thread or status, not %s\n", mode);
		return 2;
	}
	for (tok = strtok(lengths, ","); tok; tok = strtok(NULL, ",")) {
		if (runs == 64) {
			fprintf(stderr, "forkbench -m: at most 64 lengths\n");
			return 2;
		}
		n[runs] = strtol(tok, &end, 10);
		if (*end || n[runs] <= 0) {
			fprintf(stderr, "forkbench -m: bad length '%s'\n", tok);
			return 2;
		}
		runs++;
	}
	if (runs < 2) {
		fprintf(stderr, "forkbench -m: want a warm-up and at least one marked length\n");
		return 2;
	}
	if (status)
		threads_on_cpus();
	for (r = 0; r < runs; r++) {
		if (r)
			mark();
		for (i = 0; i < n[r]; i++) {
			if (status)
				read_status_once();
			else
				one_op(mode, path, NULL);
		}
		if (r)
			mark();
	}
	printf("name=%s runs=%ld\n", mode, runs - 1);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0, i, ops = n;
	char *path = argc > 3 ? argv[3] : "/bin/true";
	char self[4096], extra[64] = "";
	struct rusage ru, rc;
	double t0, exit_s = 0;
	int exited[2];
	ssize_t len;

	if (argc > 3 && !strcmp(argv[1], "-m"))
		return cache_model_runs(argv[2], argv[3], argc > 4 ? argv[4] : "/bin/true");
	if (n <= 0 && strcmp(mode, "reexec")) {
		fprintf(stderr, "usage: forkbench exit|exec|sh|thread|threxit|execrate|pf_procs|pf_threads|idle|status N [PATH]\n"
				"       forkbench -m exit|exec|sh|thread|status W,N1[,N2...] [PATH]\n");
		return 2;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		die("/proc/self/exe");
	self[len] = '\0';
	if (!strcmp(mode, "reexec")) {	/* one step of an execrate worker */
		char arg[32];

		if (n <= 1)
			return 0;
		snprintf(arg, sizeof(arg), "%ld", n - 1);
		execl(self, "forkbench", "reexec", arg, (char *)NULL);
		die("execl");
	}
	if (!strcmp(mode, "idle"))
		return idle(n);

	if (pipe(exited))
		die("pipe");
	t0 = now();
	if (!strcmp(mode, "execrate") || !strncmp(mode, "pf_", 3)) {
		ops = per_cpu_workers(mode, n, self);
		goto done;
	}
	if (!strcmp(mode, "status")) {
		ops = read_status(n, argc > 3 ? argv[3] : NULL);
		goto done;
	}
	for (i = 0; i < n; i++)
		exit_s += one_op(mode, path, exited);
	if (!strcmp(mode, "threxit"))
		snprintf(extra, sizeof(extra), " exit_s=%.6f", exit_s);
done:
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &rc);
	printf("name=%s iters=%ld wall_s=%.6f sys_s=%.6f user_s=%.6f%s\n",
	       mode, ops, now() - t0,
	       ru.ru_stime.tv_sec + rc.ru_stime.tv_sec +
	       (ru.ru_stime.tv_usec + rc.ru_stime.tv_usec) / 1e6,
	       ru.ru_utime.tv_sec + rc.ru_utime.tv_sec +
	       (ru.ru_utime.tv_usec + rc.ru_utime.tv_usec) / 1e6, extra);
	return 0;
}
