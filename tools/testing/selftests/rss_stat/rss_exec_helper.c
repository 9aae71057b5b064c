// SPDX-License-Identifier: GPL-2.0
/*
 * Helper of rss_fork_exec, started by execve() (fork+exec, exec from a
 * thread, vfork+exec, posix_spawn), so it runs in a brand new mm.
 *
 * rss_exec_helper quick: touch anon, file and shmem pages, check its own
 *	counters against its own smaps and pagemap, exit 0 if they match,
 *	1 if not, 2 on setup errors.
 * rss_exec_helper pause: same, then write a struct rss_helper_report to
 *	stdout and wait for one byte on stdin (the parent checks our /proc
 *	meanwhile), then unmap half of each area and check again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "rss_util.h"

static int failures;

static void check(const char *step)
{
	char msg[2048];
	int nr;

	nr = rss_check(0, NULL, NULL, msg, sizeof(msg));
	if (nr) {
		fprintf(stderr, "# rss_exec_helper: %s: %s\n", step, msg);
		failures++;
	}
}

static void check_pages(void *addr, long npages, enum rss_page_kind kind,
			long expected, const char *step)
{
	long got = rss_count_pages(0, addr, npages, kind);

	if (got != expected) {
		fprintf(stderr,
			"# rss_exec_helper: %s: pagemap %s pages: %ld, touched %ld\n",
			step, rss_kind_name(kind), got, expected);
		failures++;
	}
}

int main(int argc, char **argv)
{
	struct rss_helper_report rep = { .magic = RSS_HELPER_MAGIC };
	size_t ps = rss_page_size;
	bool pause_mode, is_shmem;
	char c;
	int fd;

	if (argc != 2 || (strcmp(argv[1], "quick") && strcmp(argv[1], "pause"))) {
		fprintf(stderr, "usage: %s quick|pause\n", argv[0]);
		return 2;
	}
	pause_mode = !strcmp(argv[1], "pause");

	rss_no_thp();
	check("after exec");
	fd = rss_make_file(RSS_HELPER_FILE, &is_shmem);
	rep.anon = rss_map_anon(RSS_HELPER_ANON);
	rep.shm = rss_map_shared_anon(RSS_HELPER_SHM);
	if (fd < 0 || !rep.anon || !rep.shm) {
		fprintf(stderr, "# rss_exec_helper: setup failed: %s\n",
			strerror(errno));
		return 2;
	}
	rep.file = rss_map_fd(fd, RSS_HELPER_FILE, MAP_PRIVATE);
	if (!rep.file)
		return 2;
	rep.file_is_shmem = is_shmem;

	rss_touch(rep.anon, RSS_HELPER_ANON, true);
	rss_touch(rep.file, RSS_HELPER_FILE, false);
	rss_touch(rep.shm, RSS_HELPER_SHM, true);
	check_pages(rep.anon, RSS_HELPER_ANON, RSS_PM_ANON, RSS_HELPER_ANON,
		    "touched");
	check_pages(rep.file, RSS_HELPER_FILE, RSS_PM_FILE, RSS_HELPER_FILE,
		    "touched");
	check_pages(rep.shm, RSS_HELPER_SHM, RSS_PM_FILE, RSS_HELPER_SHM,
		    "touched");
	check("touched");

	if (pause_mode) {
		rep.failures = failures;
		if (write(STDOUT_FILENO, &rep, sizeof(rep)) != sizeof(rep))
			return 2;
		if (rss_wait_byte(STDIN_FILENO, &c, 30000))
			return 2;
	}

	munmap((char *)rep.anon + RSS_HELPER_ANON / 2 * ps,
	       RSS_HELPER_ANON / 2 * ps);
	munmap((char *)rep.file + RSS_HELPER_FILE / 2 * ps,
	       RSS_HELPER_FILE / 2 * ps);
	munmap((char *)rep.shm + RSS_HELPER_SHM / 2 * ps,
	       RSS_HELPER_SHM / 2 * ps);
	check_pages(rep.anon, RSS_HELPER_ANON, RSS_PM_ANON, RSS_HELPER_ANON / 2,
		    "unmapped half");
	check("unmapped half");
	return failures ? 1 : 0;
}
