// SPDX-License-Identifier: GPL-2.0
/*
 * Cache-aware load balancing (CONFIG_SCHED_CACHE): a process of two threads
 * gets a preferred LLC, and the load balancer keeps its threads there.
 *
 * The kernel does not show a process's preferred LLC, so the test makes it
 * known: both threads run on the CPUs of one LLC (A) for a second, which
 * gives the process's cache group all its occupancy there (task_cache_work()
 * then prefers A). Then:
 *
 *  together: the threads are let run anywhere; they stay in A, where the
 *            generic balancer would spread them over the LLCs;
 *  pullback: one thread is made to run in the other LLC (B) for a short
 *            while, too short to move the preference, and let go; the LLC
 *            balancing (migrate_llc_task) brings it back to A. A
 *            single-threaded helper process, bound to a CPU of B, keeps B
 *            busy enough that the idle balancer runs.
 *
 * Both threads are half busy, so that A is never too busy to take them
 * (fits_llc_capacity()). The process has exactly two threads: with more,
 * three may run at once and, on an LLC of two CPUs, invalid_llc_nr() would
 * drop the preference.
 *
 * With cache-aware balancing off from the start, as for a process without a
 * cache group, both fail (7.3.4 under QEMU TCG: 53 of 88 samples together,
 * 2 of 5 rounds back).
 *
 * Needs root and debugfs, and at least two LLCs of two CPUs or more, e.g.
 * QEMU -smp 4,sockets=2,cores=2 on x86, or split_llc=2 on the kernel command
 * line of a one-socket x86 guest; skips otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest.h"

#define DEBUGFS		"/sys/kernel/debug"
#define SCHED_DIR	DEBUGFS "/sched"
#define LLC_DIR		SCHED_DIR "/llc_balancing"

#define BUSY_MS		5	/* each thread: busy, then asleep, ... */
#define SLEEP_MS	5
#define PRIME_MS	1000	/* both threads bound to LLC A */
#define TOGETHER_MS	2000	/* free; sampled for "both in A" */
#define TOGETHER_PCT	90	/* ... in at least this share of samples */
#define STRAY_MS	100	/* the worker bound to LLC B */
#define BACK_MS		3000	/* the time it has to come back to A */
#define ROUNDS		5
#define ROUNDS_OK	4	/* rounds in which it must come back */

static cpu_set_t allowed, llc_a, llc_b;
static int helper_cpu = -1;
static pid_t helper_pid;

static atomic_int stop;
static atomic_int worker_cpu = -1;
static atomic_int worker_tid;

/* Saved debugfs knobs, restored at exit; an empty string is "not saved". */
static char saved_enabled[16], saved_verbose[16], saved_tolerance[16];

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static void save_knob(const char *path, char *saved, size_t size)
{
	if (read_file(path, saved, size))
		saved[0] = '\0';
	saved[strcspn(saved, "\n")] = '\0';
}

static void restore_knobs(void)
{
	if (saved_tolerance[0])
		write_file(LLC_DIR "/aggr_tolerance", saved_tolerance);
	if (saved_enabled[0])
		write_file(LLC_DIR "/enabled", saved_enabled);
	/* Last: turning verbose off removes sched/domains/. */
	if (saved_verbose[0])
		write_file(SCHED_DIR "/verbose",
			   saved_verbose[0] == 'Y' ? "1" : "0");
}

static void cleanup(void)
{
	atomic_store(&stop, 1);
	if (helper_pid > 0) {
		kill(helper_pid, SIGKILL);
		waitpid(helper_pid, NULL, 0);
		helper_pid = 0;
	}
	restore_knobs();
}

/* Parse a "%*pb" cpumask (hex words, comma separated, highest first). */
static void parse_mask(const char *s, cpu_set_t *set)
{
	const char *end = s + strcspn(s, "\n ");
	int bit = 0;

	CPU_ZERO(set);
	while (end-- > s) {
		int v;

		if (*end == ',')
			continue;
		if (*end >= '0' && *end <= '9')
			v = *end - '0';
		else if (*end >= 'a' && *end <= 'f')
			v = *end - 'a' + 10;
		else
			break;
		for (int i = 0; i < 4; i++, bit++)
			if ((v & (1 << i)) && bit < CPU_SETSIZE)
				CPU_SET(bit, set);
	}
}

/*
 * The scheduler's LLC of each CPU: the span (from /proc/schedstat) of its
 * highest domain with SD_SHARE_LLC (from debugfs, there while verbose is
 * on). A CPU with no such domain is an LLC of its own.
 */
static int llc_from_schedstat(cpu_set_t *llc)
{
	char line[4096], path[128], flags[1024];
	int cpu = -1, found = 0;
	FILE *f = fopen("/proc/schedstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int dom;
		char name[32], mask[1024];

		if (sscanf(line, "cpu%d ", &cpu) == 1) {
			if (cpu < CPU_SETSIZE) {
				CPU_ZERO(&llc[cpu]);
				CPU_SET(cpu, &llc[cpu]);
			}
			continue;
		}
		if (cpu < 0 || cpu >= CPU_SETSIZE ||
		    sscanf(line, "domain%d %31s %1023s", &dom, name, mask) != 3)
			continue;
		snprintf(path, sizeof(path), SCHED_DIR "/domains/cpu%d/domain%d/flags",
			 cpu, dom);
		if (read_file(path, flags, sizeof(flags)))
			continue;
		if (strstr(flags, "SD_SHARE_LLC")) {
			parse_mask(mask, &llc[cpu]);
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

/* Without schedstats: the highest level cache's shared_cpu_map. */
static int llc_from_cacheinfo(cpu_set_t *llc)
{
	char path[128], buf[1024];
	int found = 0;

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		int idx, best = -1, level, best_level = -1;

		if (!CPU_ISSET(cpu, &allowed))
			continue;
		for (idx = 0; idx < 16; idx++) {
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/cache/index%d/level",
				 cpu, idx);
			if (read_file(path, buf, sizeof(buf)))
				break;
			level = atoi(buf);
			if (level > best_level) {
				best_level = level;
				best = idx;
			}
		}
		if (best < 0)
			return -1;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_map",
			 cpu, best);
		if (read_file(path, buf, sizeof(buf)))
			return -1;
		parse_mask(buf, &llc[cpu]);
		found = 1;
	}
	return found ? 0 : -1;
}

static const char *cpus(const cpu_set_t *s, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int cpu = 0; cpu < CPU_SETSIZE && len < size; cpu++)
		if (CPU_ISSET(cpu, s))
			len += snprintf(buf + len, size - len, "%s%d",
					len ? "," : "", cpu);
	return buf;
}

/* Pick A and B: two LLCs with at least two allowed CPUs each. */
static int pick_llcs(cpu_set_t *llc, int *nr_llcs)
{
	cpu_set_t seen, s;
	int have_a = 0, have_b = 0;

	CPU_ZERO(&seen);
	*nr_llcs = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || CPU_ISSET(cpu, &seen))
			continue;
		CPU_AND(&s, &llc[cpu], &allowed);
		CPU_SET(cpu, &s);
		CPU_OR(&seen, &seen, &s);
		(*nr_llcs)++;
		if (CPU_COUNT(&s) < 2)
			continue;
		if (!have_a) {
			llc_a = s;
			have_a = 1;
		} else if (!have_b) {
			llc_b = s;
			have_b = 1;
		}
	}
	return have_a && have_b ? 0 : -1;
}

/*
 * Ask the kernel whether cache-aware balancing is active: with sched
 * verbose on, _sched_cache_active_set() logs its decision when the
 * llc_balancing/enabled knob is written. Returns 1 (active), 0 (not
 * supported on this topology) or -1 (nothing logged: unknown).
 */
static int sched_cache_active(void)
{
	char rec[1024];
	int fd, ret = -1;
	ssize_t n;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	if (write_file(LLC_DIR "/enabled", "1"))
		ksft_exit_fail_msg("cannot write %s/enabled: %s\n", LLC_DIR,
				   strerror(errno));
	if (fd < 0)
		return -1;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || errno == EPIPE) {
		if (n <= 0)
			continue;
		rec[n] = '\0';
		if (strstr(rec, "enabling cache aware scheduling"))
			ret = 1;
		else if (strstr(rec, "cache aware scheduling not supported"))
			ret = 0;
	}
	close(fd);
	return ret;
}

static bool in_set(int cpu, const cpu_set_t *s)
{
	return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, s);
}

/* Half busy: spin BUSY_MS, sleep SLEEP_MS. Returns the CPU it ran on. */
static int duty_cycle(void)
{
	struct timespec ts = { .tv_nsec = SLEEP_MS * 1000000L };
	long end = now_ms() + BUSY_MS;
	int cpu;

	while (now_ms() < end)
		;
	cpu = sched_getcpu();
	nanosleep(&ts, NULL);
	return cpu;
}

static void *worker(void *arg)
{
	atomic_store(&worker_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&stop))
		atomic_store(&worker_cpu, duty_cycle());
	return NULL;
}

/* The helper: a process of one thread, half busy on helper_cpu. */
static void start_helper(void)
{
	cpu_set_t s;

	helper_pid = fork();
	if (helper_pid < 0)
		ksft_exit_fail_perror("fork");
	if (helper_pid)
		return;
	CPU_ZERO(&s);
	CPU_SET(helper_cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
	for (;;)
		duty_cycle();
}

static void bind_tid(pid_t tid, const cpu_set_t *s)
{
	if (sched_setaffinity(tid, sizeof(*s), s))
		ksft_exit_fail_perror("sched_setaffinity");
}

/* Run the main thread's half of the load for @ms; count samples in A. */
static void run(long ms, int *in_a, int *samples)
{
	long end = now_ms() + ms;

	while (now_ms() < end) {
		int me = duty_cycle();
		int w = atomic_load(&worker_cpu);

		if (samples)
			(*samples)++;
		if (in_a && in_set(me, &llc_a) && in_set(w, &llc_a))
			(*in_a)++;
	}
}

/*
 * Bind the worker to B (all of B but the helper's CPU) until it has run
 * there STRAY_MS, let it go, and wait for it to run in A again. Returns the
 * milliseconds it took, or -1.
 */
static long stray_and_back(void)
{
	cpu_set_t b = llc_b;
	long t, deadline;

	CPU_CLR(helper_cpu, &b);
	bind_tid(atomic_load(&worker_tid), &b);
	deadline = now_ms() + BACK_MS;
	while (!in_set(atomic_load(&worker_cpu), &b) && now_ms() < deadline)
		run(SLEEP_MS, NULL, NULL);
	run(STRAY_MS, NULL, NULL);
	bind_tid(atomic_load(&worker_tid), &allowed);
	/* Not yet moved: it ran in B since the bind. */
	atomic_store(&worker_cpu, -1);
	t = now_ms();
	deadline = t + BACK_MS;
	while (now_ms() < deadline) {
		int w;

		run(SLEEP_MS, NULL, NULL);
		w = atomic_load(&worker_cpu);
		if (in_set(w, &llc_a))
			return now_ms() - t;
	}
	return -1;
}

int main(void)
{
	cpu_set_t llc[CPU_SETSIZE];
	int nr_llcs, active, in_a = 0, samples = 0, back = 0;
	char buf[64], a[256], b[256];
	pthread_t thr;
	long t;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root (debugfs knobs, /dev/kmsg)\n");
	if (access(SCHED_DIR, F_OK))
		mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
	if (access(SCHED_DIR, F_OK))
		ksft_exit_skip("no %s: debugfs (CONFIG_DEBUG_FS) is needed\n",
			       SCHED_DIR);
	if (access(LLC_DIR, F_OK))
		ksft_exit_skip("no %s: the kernel has no CONFIG_SCHED_CACHE\n",
			       LLC_DIR);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		ksft_exit_fail_perror("sched_getaffinity");

	save_knob(SCHED_DIR "/verbose", saved_verbose, sizeof(saved_verbose));
	save_knob(LLC_DIR "/enabled", saved_enabled, sizeof(saved_enabled));
	save_knob(LLC_DIR "/aggr_tolerance", saved_tolerance,
		  sizeof(saved_tolerance));
	atexit(cleanup);
	write_file(SCHED_DIR "/verbose", "1");

	if (llc_from_schedstat(llc) && llc_from_cacheinfo(llc))
		ksft_exit_skip("cannot tell the CPUs' LLCs (no /proc/schedstat, no cacheinfo)\n");
	if (pick_llcs(llc, &nr_llcs))
		ksft_exit_skip("needs two LLCs of 2+ CPUs, has %d on %d CPUs\n",
			       nr_llcs, CPU_COUNT(&allowed));

	active = sched_cache_active();
	if (!active)
		ksft_exit_skip("%s\n", "cache-aware scheduling is off on this topology");
	ksft_print_msg("%d LLCs; A: CPUs %s; B: CPUs %s; sched_cache_active: %s\n",
		       nr_llcs, cpus(&llc_a, a, sizeof(a)), cpus(&llc_b, b, sizeof(b)),
		       active > 0 ? "on" : "not logged, assumed on");
	/* The default; 0 would turn the aggregation off. */
	write_file(LLC_DIR "/aggr_tolerance", "1");

	for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, &llc_b)) {
			helper_cpu = cpu;
			break;
		}

	ksft_set_plan(2);
	start_helper();

	/* Prime: both threads in A. */
	bind_tid(0, &llc_a);
	if (pthread_create(&thr, NULL, worker, NULL))
		ksft_exit_fail_msg("pthread_create failed\n");
	while (!atomic_load(&worker_tid))
		sched_yield();
	bind_tid(atomic_load(&worker_tid), &llc_a);
	run(PRIME_MS, NULL, NULL);

	/* together */
	bind_tid(0, &allowed);
	bind_tid(atomic_load(&worker_tid), &allowed);
	run(TOGETHER_MS, &in_a, &samples);
	ksft_print_msg("together: both threads in A in %d of %d samples\n",
		       in_a, samples);
	ksft_test_result(samples && in_a * 100 >= samples * TOGETHER_PCT,
			 "together\n");

	/* pullback */
	for (int i = 0; i < ROUNDS; i++) {
		t = stray_and_back();
		ksft_print_msg("pullback round %d: %s after %ld ms\n", i,
			       t >= 0 ? "back in A" : "still away", t >= 0 ? t : BACK_MS);
		back += t >= 0;
		run(200, NULL, NULL);
	}
	ksft_test_result(back >= ROUNDS_OK, "pullback (%d of %d rounds)\n",
			 back, ROUNDS);

	if (!read_file(LLC_DIR "/epoch_period", buf, sizeof(buf)))
		ksft_print_msg("llc_balancing/epoch_period: %s", buf);

	atomic_store(&stop, 1);
	pthread_join(thr, NULL);
	ksft_finished();
}
