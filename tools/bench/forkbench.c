// SPDX-License-Identifier: GPL-2.0
/*
 * fork/exec microbenchmarks for the lazy rss_stat series, in the spirit
 * of lmbench's lat_proc and the execve scalability benchmarks, written
 * for this project. Static, so that it runs in a busybox guest.
 *
 *   forkbench exit N            fork + _exit, N times
 *   forkbench exec N PATH       fork + execve(PATH) + wait, N times
 *   forkbench sh N              fork + /bin/sh -c true + wait, N times
 *   forkbench thread N          fork a child that starts and joins one
 *                               thread, N times (the upgrade cost)
 *   forkbench threads N         one process starts and joins N threads
 *   forkbench idle N            N idle children alive, print Percpu: delta
 *
 * Prints one line: "name=<mode> iters=N wall_s=.. child_sys_s=.. child_user_s=.."
 * (for idle: "name=idle procs=N percpu_kb_before=.. percpu_kb_after=..").
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "child failed: status %#x\n", status), exit(1);
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

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0, i;
	char *path = argc > 3 ? argv[3] : "/bin/true";
	struct rusage ru;
	double t0;

	if (n <= 0) {
		fprintf(stderr, "usage: forkbench exit|exec|sh|thread|threads|idle N [PATH]\n");
		return 2;
	}
	if (!strcmp(mode, "idle"))
		return idle(n);

	t0 = now();
	for (i = 0; i < n; i++) {
		pid_t pid;

		if (!strcmp(mode, "threads")) {
			one_thread();
			continue;
		}
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
			_exit(127);
		}
		reap(pid);
	}
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("name=%s iters=%ld wall_s=%.4f child_sys_s=%.4f child_user_s=%.4f\n",
	       mode, n, now() - t0,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
	return 0;
}
