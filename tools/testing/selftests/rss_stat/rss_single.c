// SPDX-License-Identifier: GPL-2.0
/*
 * RSS counters of a single-threaded process: anonymous, file and shmem
 * pages are faulted in, copied on write, zapped, moved and unmapped by the
 * process itself, and after every step /proc/self/status, statm and stat
 * must agree with the page tables (smaps, pagemap) and with the number of
 * pages the test touched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "../kselftest_harness.h"
#include "rss_util.h"

#define NR_ANON		256
#define NR_FILE		128
#define NR_SHM		64
#define NR_ZERO		64

FIXTURE(single) {
	int fd;
	int memfd;
	bool file_is_shmem;
};

FIXTURE_SETUP(single)
{
	rss_no_thp();
	self->fd = rss_make_file(NR_FILE, &self->file_is_shmem);
	ASSERT_LE(0, self->fd) {
		TH_LOG("cannot create a test file: %s", strerror(-self->fd));
	}
	TH_LOG("test file on %s", rss_file_where());
	self->memfd = rss_make_memfd(NR_SHM);
	ASSERT_LE(0, self->memfd) {
		TH_LOG("memfd_create: %s", strerror(-self->memfd));
	}
}

FIXTURE_TEARDOWN(single)
{
	close(self->fd);
	close(self->memfd);
}

TEST_F_TIMEOUT(single, anon_file_shmem, 120)
{
	char *anon, *file, *shm, *mfd, *moved;
	size_t ps = rss_page_size;

	CHECK_RSS(0, "start");

	/* N anonymous pages. */
	anon = rss_map_anon(NR_ANON);
	ASSERT_NE(NULL, anon);
	rss_touch(anon, NR_ANON, true);
	CHECK_PAGES(0, anon, NR_ANON, RSS_PM_ANON, NR_ANON, "anon touched");
	CHECK_RSS(0, "anon touched");

	/* M pages of a regular file, read-faulted. */
	file = rss_map_fd(self->fd, NR_FILE, MAP_PRIVATE);
	ASSERT_NE(NULL, file);
	rss_touch(file, NR_FILE, false);
	CHECK_PAGES(0, file, NR_FILE, RSS_PM_FILE, NR_FILE, "file read");
	CHECK_RSS(0, "file read");

	/* S pages of shared anonymous memory and S pages of a memfd. */
	shm = rss_map_shared_anon(NR_SHM);
	ASSERT_NE(NULL, shm);
	rss_touch(shm, NR_SHM, true);
	mfd = rss_map_fd(self->memfd, NR_SHM, MAP_SHARED);
	ASSERT_NE(NULL, mfd);
	rss_touch(mfd, NR_SHM, true);
	CHECK_PAGES(0, shm, NR_SHM, RSS_PM_FILE, NR_SHM, "shmem touched");
	CHECK_PAGES(0, mfd, NR_SHM, RSS_PM_FILE, NR_SHM, "memfd touched");
	CHECK_RSS(0, "shmem touched");

	/* Copy on write of a quarter of the file: file -> anon. */
	rss_touch(file, NR_FILE / 4, true);
	CHECK_PAGES(0, file, NR_FILE, RSS_PM_ANON, NR_FILE / 4, "file COW");
	CHECK_PAGES(0, file, NR_FILE, RSS_PM_FILE, NR_FILE - NR_FILE / 4,
		    "file COW");
	CHECK_RSS(0, "file COW");

	/* munmap the second half of each area. */
	ASSERT_EQ(0, munmap(anon + NR_ANON / 2 * ps, NR_ANON / 2 * ps));
	ASSERT_EQ(0, munmap(file + NR_FILE / 2 * ps, NR_FILE / 2 * ps));
	ASSERT_EQ(0, munmap(shm + NR_SHM / 2 * ps, NR_SHM / 2 * ps));
	ASSERT_EQ(0, munmap(mfd + NR_SHM / 2 * ps, NR_SHM / 2 * ps));
	CHECK_PAGES(0, anon, NR_ANON / 2, RSS_PM_ANON, NR_ANON / 2, "munmap half");
	CHECK_PAGES(0, file, NR_FILE / 2, RSS_PM_ANON, NR_FILE / 4, "munmap half");
	CHECK_PAGES(0, file, NR_FILE / 2, RSS_PM_FILE, NR_FILE / 4, "munmap half");
	CHECK_PAGES(0, shm, NR_SHM / 2, RSS_PM_FILE, NR_SHM / 2, "munmap half");
	CHECK_RSS(0, "munmap half");

	/* Zap a quarter of the anon area and of the shmem area. */
	ASSERT_EQ(0, madvise(anon, NR_ANON / 4 * ps, MADV_DONTNEED));
	ASSERT_EQ(0, madvise(shm, NR_SHM / 4 * ps, MADV_DONTNEED));
	CHECK_PAGES(0, anon, NR_ANON / 2, RSS_PM_ANON, NR_ANON / 4, "MADV_DONTNEED");
	CHECK_PAGES(0, shm, NR_SHM / 2, RSS_PM_FILE, NR_SHM / 4, "MADV_DONTNEED");
	CHECK_RSS(0, "MADV_DONTNEED");

	/* Move the anon area: pages move, nothing is counted twice. */
	moved = mmap(NULL, NR_ANON * ps, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, moved);
	madvise(moved, NR_ANON * ps, MADV_NOHUGEPAGE);
	ASSERT_EQ(moved, mremap(anon, NR_ANON / 2 * ps, NR_ANON / 2 * ps,
				MREMAP_MAYMOVE | MREMAP_FIXED, moved));
	anon = moved;
	CHECK_PAGES(0, anon, NR_ANON, RSS_PM_ANON, NR_ANON / 4, "mremap");
	CHECK_RSS(0, "mremap");

	/* Refault the zapped pages and the new tail. */
	rss_touch(anon, NR_ANON, true);
	CHECK_PAGES(0, anon, NR_ANON, RSS_PM_ANON, NR_ANON, "refault");
	CHECK_RSS(0, "refault");

	ASSERT_EQ(0, munmap(anon, NR_ANON * ps));
	ASSERT_EQ(0, munmap(file, NR_FILE / 2 * ps));
	ASSERT_EQ(0, munmap(shm, NR_SHM / 2 * ps));
	ASSERT_EQ(0, munmap(mfd, NR_SHM / 2 * ps));
	CHECK_RSS(0, "all unmapped");
}

/*
 * Read faults on untouched private anonymous memory may map the shared
 * zero page, which is not counted (some kernels allocate a real page
 * instead, which is). Pages that pagemap reports as exclusively mapped are
 * real pages, so RssAnon must grow by exactly that many.
 */
TEST_F(single, read_fault_anon)
{
	struct rss_counters c0, c1;
	long excl;
	char *p;

	p = rss_map_anon(NR_ZERO);
	ASSERT_NE(NULL, p);
	CHECK_RSS_SNAP(0, &c0, NULL, "before read faults");
	rss_touch(p, NR_ZERO, false);
	CHECK_PAGES(0, p, NR_ZERO, RSS_PM_PRESENT, NR_ZERO, "read faults");
	excl = rss_count_pages(0, p, NR_ZERO, RSS_PM_EXCL);
	CHECK_RSS_SNAP(0, &c1, NULL, "read faults");
	EXPECT_EQ(c0.anon + excl * rss_page_kb, c1.anon) {
		TH_LOG("RssAnon: %ld kB, expected %ld kB + %ld real pages",
		       c1.anon, c0.anon, excl);
	}
	TH_LOG("%ld of %d read-faulted pages are real pages", excl, NR_ZERO);

	/* Writing replaces zero pages with anon pages. */
	rss_touch(p, NR_ZERO, true);
	CHECK_PAGES(0, p, NR_ZERO, RSS_PM_EXCL, NR_ZERO, "write after read");
	CHECK_RSS_SNAP(0, &c1, NULL, "write after read");
	EXPECT_EQ(c0.anon + NR_ZERO * rss_page_kb, c1.anon) {
		TH_LOG("RssAnon: %ld kB, expected %ld kB + %d pages",
		       c1.anon, c0.anon, NR_ZERO);
	}
	ASSERT_EQ(0, munmap(p, NR_ZERO * rss_page_size));
	CHECK_RSS(0, "unmapped");
}

/* Private mapping of a memfd: shmem pages, and anon pages after COW. */
TEST_F(single, private_shmem_cow)
{
	char *p;

	p = rss_map_fd(self->memfd, NR_SHM, MAP_PRIVATE);
	ASSERT_NE(NULL, p);
	rss_touch(p, NR_SHM, false);
	CHECK_PAGES(0, p, NR_SHM, RSS_PM_FILE, NR_SHM, "private memfd read");
	CHECK_RSS(0, "private memfd read");
	rss_touch(p, NR_SHM / 2, true);
	CHECK_PAGES(0, p, NR_SHM, RSS_PM_ANON, NR_SHM / 2, "private memfd COW");
	CHECK_PAGES(0, p, NR_SHM, RSS_PM_FILE, NR_SHM / 2, "private memfd COW");
	CHECK_RSS(0, "private memfd COW");
	ASSERT_EQ(0, munmap(p, NR_SHM * rss_page_size));
	CHECK_RSS(0, "unmapped");
}

static bool thp_available(void)
{
	char buf[128] = "";
	FILE *f;

	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strstr(buf, "[never]");
}

/* PMD-mapped THP are counted as HPAGE_PMD_NR pages; splitting keeps it. */
TEST_F(single, thp)
{
	size_t hp = 2UL << 20, ps = rss_page_size, n;
	char *raw, *p;
	long huge;

	if (!thp_available())
		SKIP(return, "transparent hugepages not available");
	if (ps != 4096)
		SKIP(return, "THP test assumes 4 kB pages");
	/* Undo the process-wide THP disable of the fixture. */
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);

	raw = mmap(NULL, 2 * hp, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	p = (char *)(((unsigned long)raw + hp - 1) & ~(hp - 1));
	n = hp / ps;
	madvise(p, hp, MADV_HUGEPAGE);
	rss_touch(p, n, true);
	huge = rss_rollup_field(0, "AnonHugePages");
	TH_LOG("AnonHugePages after touching 2 MB: %ld kB", huge);
	CHECK_PAGES(0, p, n, RSS_PM_ANON, n, "THP touched");
	CHECK_RSS(0, "THP touched");

	/* Split the PMD by unmapping one page in the middle. */
	ASSERT_EQ(0, munmap(p + n / 2 * ps, ps));
	CHECK_PAGES(0, p, n, RSS_PM_ANON, n - 1, "THP split");
	CHECK_RSS(0, "THP split");
	ASSERT_EQ(0, madvise(p, n / 4 * ps, MADV_DONTNEED));
	CHECK_PAGES(0, p, n, RSS_PM_ANON, n - 1 - n / 4, "THP zap");
	CHECK_RSS(0, "THP zap");
	ASSERT_EQ(0, munmap(raw, 2 * hp));
	CHECK_RSS(0, "THP unmapped");
}

TEST_HARNESS_MAIN
