/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the rss_stat selftests: read the RSS counters of a process
 * (/proc/PID/status, statm, stat) and an independent ground truth (page
 * table walks: /proc/PID/smaps, smaps_rollup, pagemap), and compare them.
 *
 * None of these helpers is thread-safe: they use static buffers so that
 * reading /proc does not allocate (and fault in) memory of the caller.
 */
#ifndef __RSS_UTIL_H
#define __RSS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef BIT_ULL
#define BIT_ULL(nr)	(1ULL << (nr))
#endif

/* The counters under test, as reported by the kernel. */
struct rss_counters {
	long vmrss;		/* kB, /proc/PID/status VmRSS */
	long anon;		/* kB, RssAnon */
	long file;		/* kB, RssFile */
	long shmem;		/* kB, RssShmem */
	long swap;		/* kB, VmSwap */
	long statm_resident;	/* pages, /proc/PID/statm field 2 */
	long statm_shared;	/* pages, /proc/PID/statm field 3 */
	long stat_rss;		/* pages, /proc/PID/stat field 24 */
};

/* Ground truth from the page tables, in kB. */
struct rss_truth {
	long rollup_rss;	/* smaps_rollup Rss */
	long rss;		/* sum of smaps Rss over all VMAs */
	long anon;		/* sum of smaps Anonymous */
	long file;		/* sum of Rss - Anonymous, non-shmem VMAs */
	long shmem;		/* sum of Rss - Anonymous, shmem VMAs */
	long swap;		/* sum of smaps Swap, non-shmem VMAs */
	long shmem_swap;	/* sum of smaps Swap, shmem VMAs */
	int nr_vmas;
};

/* Page kinds for rss_count_pages(), from /proc/PID/pagemap bits. */
enum rss_page_kind {
	RSS_PM_PRESENT,		/* present, any type (incl. the zero page) */
	RSS_PM_ANON,		/* present and not file/shared-anon */
	RSS_PM_FILE,		/* present and file or shmem ("file-page") */
	RSS_PM_SWAP,		/* swapped out */
	RSS_PM_EXCL,		/* present, exclusively mapped: not zero page */
};

extern size_t rss_page_size;	/* set by a constructor */
extern long rss_page_kb;

/* pid 0 means the calling process. All return 0 or -errno. */
int rss_read_counters(pid_t pid, struct rss_counters *c);
int rss_read_truth(pid_t pid, struct rss_truth *t);

/*
 * Compare every counter of a quiescent process with the truth: status and
 * statm exactly, stat rss within rss_stat_bound(). The reads are retried
 * while the counters change under us (a snapshot is only accepted when the
 * counters read before and after the page-table walk are identical), but a
 * stable mismatch is never retried. Returns the number of wrong counters
 * (0 = all good) and describes each one in @msg, or a negative errno.
 * @c and @t (may be NULL) receive the accepted snapshot.
 */
int rss_check(pid_t pid, struct rss_counters *c, struct rss_truth *t,
	      char *msg, size_t len);

/*
 * Max error of /proc/PID/stat rss: three percpu_counter_read_positive()
 * values, each off by less than batch * nr_possible_cpus pages.
 */
long rss_stat_bound(void);
int rss_nr_possible_cpus(void);
int rss_nr_online_cpus(void);

/* Pages of [addr, addr + npages) of @pid that pagemap reports as @kind. */
long rss_count_pages(pid_t pid, const void *addr, size_t npages,
		     enum rss_page_kind kind);

/* Memory helpers; all test areas get MADV_NOHUGEPAGE. */
void *rss_map_anon(size_t npages);
void *rss_map_shared_anon(size_t npages);
void *rss_map_fd(int fd, size_t npages, int flags);
void rss_touch(void *addr, size_t npages, bool write);

/*
 * Create an unlinked regular file of @npages written pages, synced so its
 * page cache is clean. Prefers a non-tmpfs directory, then (as root) a
 * private ramfs, then tmpfs; *is_shmem tells whether its pages are
 * accounted as shmem (file on tmpfs) or file pages. Returns the fd or
 * -errno. rss_file_where() says where the last file was created.
 */
int rss_make_file(size_t npages, bool *is_shmem);
const char *rss_file_where(void);
int rss_make_memfd(size_t npages);

/* Disable THP for this process (inherited over fork and exec). */
void rss_no_thp(void);

/* Count "Bad rss-counter state" records in /dev/kmsg; -errno if unreadable. */
int rss_kmsg_bad_rss(void);

/* Pipe helpers with a timeout in ms; return 0 or -errno (-ETIMEDOUT). */
int rss_wait_byte(int fd, char *c, int timeout_ms);
int rss_send_byte(int fd, char c);
int rss_read_full(int fd, void *buf, size_t len, int timeout_ms);

/*
 * Wait for a child; returns its exit code, 128 + signal, or -ETIMEDOUT
 * (after killing it) or -errno.
 */
int rss_wait_child(pid_t pid, int timeout_s);

/* What rss_exec_helper in "pause" mode writes to its stdout. */
#define RSS_HELPER_MAGIC	0x72737368UL
#define RSS_HELPER_ANON		128
#define RSS_HELPER_FILE		64
#define RSS_HELPER_SHM		32
struct rss_helper_report {
	unsigned long magic;
	int failures;		/* wrong counters seen by the helper */
	int file_is_shmem;
	void *anon, *file, *shm;
};

const char *rss_kind_name(enum rss_page_kind kind);

/*
 * The errno that the kernel returns for a system call number it does not
 * implement, found with an invalid number. Lets callers tell a missing
 * system call from other failures. errno is preserved.
 */
int rss_nosys_errno(void);

/* Read one numeric field of /proc/PID/smaps_rollup (kB) or status. */
long rss_rollup_field(pid_t pid, const char *name);
long rss_status_field(pid_t pid, const char *name);

#ifdef __KSELFTEST_HARNESS_H
/* Exact check of all counters of a quiescent process, naming each. */
#define CHECK_RSS(pid, step) do {					\
	char _rss_msg[2048];						\
	int _rss_nr = rss_check(pid, NULL, NULL, _rss_msg, sizeof(_rss_msg)); \
	EXPECT_EQ(0, _rss_nr) {						\
		TH_LOG("%s: %s", step, _rss_msg);			\
	}								\
} while (0)

/* Same, and keep the snapshot. */
#define CHECK_RSS_SNAP(pid, c, t, step) do {				\
	char _rss_msg[2048];						\
	int _rss_nr = rss_check(pid, c, t, _rss_msg, sizeof(_rss_msg));	\
	EXPECT_EQ(0, _rss_nr) {						\
		TH_LOG("%s: %s", step, _rss_msg);			\
	}								\
} while (0)

/* Pages of a test area as seen by pagemap, against the pages touched. */
#define CHECK_PAGES(pid, addr, npages, kind, expected, step) do {	\
	enum rss_page_kind _rss_kind = (kind);				\
	long _rss_got = rss_count_pages(pid, addr, npages, _rss_kind);	\
	long _rss_want = (expected);					\
	EXPECT_EQ(_rss_want, _rss_got) {				\
		TH_LOG("%s: pagemap %s pages in %s: %ld, touched %ld",	\
		       step, rss_kind_name(_rss_kind), #addr, _rss_got,	\
		       _rss_want);					\
	}								\
} while (0)
#endif

#endif /* __RSS_UTIL_H */
