// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers of the rss_stat selftests, see rss_util.h.
 *
 * How the ground truth maps onto the counters (mm_struct::rss_stat):
 *
 * - /proc/PID/smaps and smaps_rollup walk the page tables. A present PTE
 *   (or PMD) whose page vm_normal_page() returns is added to "Rss", and to
 *   "Anonymous" when the folio is anonymous. The fault, unmap, COW, fork,
 *   migration and reclaim paths update MM_ANONPAGES, MM_FILEPAGES and
 *   MM_SHMEMPAGES for exactly those pages (mm_counter(folio) picks the
 *   counter: anon folio -> ANON, swap-backed file folio -> SHMEM, other ->
 *   FILE). Migration entries are still counted by both sides.
 * - Pages that vm_normal_page() rejects (the shared zero page, VM_PFNMAP
 *   special PTEs such as the vvar pages) are in neither: a read fault that
 *   maps the zero page changes no counter and no smaps field, although
 *   pagemap and mincore() report the page as present. (Some kernels map a
 *   real page instead; it is then counted by both, and pagemap reports it
 *   as exclusively mapped, which the zero page never is.)
 * - The vDSO is a special mapping of ordinary kernel pages: they are in
 *   smaps Rss of [vdso] and in RssFile (not anon, not swap-backed).
 * - RssAnon == sum of "Anonymous" over all VMAs, including COW copies in
 *   private file or shmem mappings.
 * - RssShmem == sum of (Rss - Anonymous) over the VMAs backed by shmem:
 *   files on tmpfs (also a tmpfs-backed rootfs, as in an initramfs, where
 *   the test binaries themselves are shmem), memfd, MAP_SHARED|MAP_ANONYMOUS
 *   ("/dev/zero (deleted)") and SysV shm. Those VMAs are recognised by the
 *   statfs() type of their file (TMPFS_MAGIC), and when the file cannot be
 *   reached, by their device: that of a tmpfs mount or of the internal shm
 *   mount (the device of a fresh memfd). Files on ramfs are not shmem: their
 *   pages are not swap-backed.
 * - RssFile == sum of (Rss - Anonymous) over all other VMAs.
 * - VmRSS and statm resident == smaps_rollup Rss; statm shared ==
 *   RssFile + RssShmem.
 * - VmSwap (MM_SWAPENTS) == sum of "Swap" over non-shmem VMAs. The "Swap"
 *   of a shmem VMA is swapped shmem, which is not in MM_SWAPENTS, so VmSwap
 *   is only compared when no shmem VMA reports swap.
 * - The Pss_* fields of smaps_rollup divide shared pages by the number of
 *   mappers, so they are not used.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/types.h>

#include "../kselftest.h"
#include "rss_util.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

#define PM_PRESENT	BIT_ULL(63)
#define PM_SWAP		BIT_ULL(62)
#define PM_FILE		BIT_ULL(61)
#define PM_EXCL		BIT_ULL(56)

#define MAX_DEVS	64
#define SNAP_TRIES	50

size_t rss_page_size;
long rss_page_kb;

static char status_buf[16384];
static char smaps_buf[65536];
static char misc_buf[16384];

struct dev_id {
	unsigned int major, minor;
};

/* Devices classified during the current smaps walk. */
static struct {
	unsigned int major, minor;
	bool shmem;
} devs[MAX_DEVS];
static int nr_devs;
static bool mountinfo_read;
static int max_online_seen;

/*
 * Fault in the static buffers and some stack now, so that reading /proc
 * later does not itself change the RSS of the caller.
 */
static void prefault_stack(void)
{
	char stack[64 * 1024];
	size_t i;

	for (i = 0; i < sizeof(stack); i += 1024)
		stack[i] = 1;
	/* The stores must happen: the empty asm may read the array. */
	asm volatile("" : : "r" (stack) : "memory");
}

static void __attribute__((constructor)) rss_util_init(void)
{
	rss_page_size = sysconf(_SC_PAGESIZE);
	rss_page_kb = rss_page_size / 1024;
	memset(status_buf, 1, sizeof(status_buf));
	memset(smaps_buf, 1, sizeof(smaps_buf));
	memset(misc_buf, 1, sizeof(misc_buf));
	prefault_stack();
	max_online_seen = rss_nr_online_cpus();
}

static void proc_path(char *buf, size_t len, pid_t pid, const char *file)
{
	if (pid)
		snprintf(buf, len, "/proc/%d/%s", (int)pid, file);
	else
		snprintf(buf, len, "/proc/self/%s", file);
}

/* Read a whole (small) file into @buf, NUL terminated. */
static int read_small(const char *path, char *buf, size_t size)
{
	size_t off = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < size - 1) {
		n = read(fd, buf + off, size - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		off += n;
	}
	close(fd);
	buf[off] = '\0';
	return off;
}

/* Line reader over a file, using a static buffer. */
struct line_reader {
	int fd;
	char *buf;
	size_t size, start, end;
	bool eof;
	int err;
};

static char *next_line(struct line_reader *r)
{
	char *nl, *line;
	ssize_t n;

	for (;;) {
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl) {
			*nl = '\0';
			line = r->buf + r->start;
			r->start = nl - r->buf + 1;
			return line;
		}
		if (r->eof) {
			if (r->start == r->end)
				return NULL;
			r->buf[r->end] = '\0';
			line = r->buf + r->start;
			r->start = r->end;
			return line;
		}
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		if (r->end >= r->size - 1) {
			r->err = -E2BIG;
			return NULL;
		}
		n = read(r->fd, r->buf + r->end, r->size - 1 - r->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->err = -errno;
			return NULL;
		}
		if (n == 0)
			r->eof = true;
		r->end += n;
	}
}

static int status_field(const char *buf, const char *name, long *val)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "\n%s:", name);
	p = strstr(buf, key);
	if (!p)
		return -ENOENT;
	if (sscanf(p + strlen(key), " %ld", val) != 1)
		return -EINVAL;
	return 0;
}

int rss_read_counters(pid_t pid, struct rss_counters *c)
{
	char path[64], *p;
	int ret, i;

	proc_path(path, sizeof(path), pid, "status");
	ret = read_small(path, status_buf, sizeof(status_buf));
	if (ret < 0)
		return ret;
	if (status_field(status_buf, "VmRSS", &c->vmrss) ||
	    status_field(status_buf, "RssAnon", &c->anon) ||
	    status_field(status_buf, "RssFile", &c->file) ||
	    status_field(status_buf, "RssShmem", &c->shmem) ||
	    status_field(status_buf, "VmSwap", &c->swap))
		return -ENOENT;

	proc_path(path, sizeof(path), pid, "statm");
	ret = read_small(path, status_buf, sizeof(status_buf));
	if (ret < 0)
		return ret;
	if (sscanf(status_buf, "%*d %ld %ld", &c->statm_resident,
		   &c->statm_shared) != 2)
		return -EINVAL;

	/* Field 24 (rss); the comm in field 2 may contain spaces. */
	proc_path(path, sizeof(path), pid, "stat");
	ret = read_small(path, status_buf, sizeof(status_buf));
	if (ret < 0)
		return ret;
	p = strrchr(status_buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (i = 3; i < 24; i++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	if (sscanf(p, " %ld", &c->stat_rss) != 1)
		return -EINVAL;
	return 0;
}

static int dev_lookup(unsigned int major, unsigned int minor)
{
	int i;

	for (i = 0; i < nr_devs; i++)
		if (devs[i].major == major && devs[i].minor == minor)
			return devs[i].shmem;
	return -1;
}

static void dev_add(unsigned int major, unsigned int minor, bool shmem)
{
	if (dev_lookup(major, minor) >= 0 || nr_devs >= MAX_DEVS)
		return;
	devs[nr_devs].major = major;
	devs[nr_devs].minor = minor;
	devs[nr_devs].shmem = shmem;
	nr_devs++;
}

/*
 * Is @path on a tmpfs (shmem) superblock? Only trusted when the path still
 * leads to device @major:@minor. Returns 1 (shmem), 0 (not) or -1 (unknown).
 */
static int path_is_shmem(const char *path, unsigned int major,
			 unsigned int minor)
{
	struct statfs sfs;
	struct stat st;

	if (stat(path, &st) || major(st.st_dev) != major ||
	    minor(st.st_dev) != minor)
		return -1;
	if (statfs(path, &sfs))
		return -1;
	return sfs.f_type == TMPFS_MAGIC;
}

/*
 * Fallback for devices that cannot be classified through a path: the tmpfs
 * mounts seen by @pid, and a "rootfs" mount if it is tmpfs-backed.
 */
static void read_mountinfo_devs(pid_t pid)
{
	unsigned int major, minor;
	struct line_reader r = { 0 };
	char path[64], mnt[256], *line, *sep;
	int ret;

	proc_path(path, sizeof(path), pid, "mountinfo");
	r.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r.fd < 0)
		return;
	r.buf = misc_buf;
	r.size = sizeof(misc_buf);
	while ((line = next_line(&r))) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*u %*u %u:%u %*s %255s", &major,
				   &minor, mnt) != 3)
			continue;
		if (!strncmp(sep + 3, "tmpfs ", 6)) {
			dev_add(major, minor, true);
		} else if (!strncmp(sep + 3, "rootfs ", 7)) {
			/* ramfs or tmpfs: ask the file system itself. */
			ret = path_is_shmem(mnt, major, minor);
			if (ret >= 0)
				dev_add(major, minor, ret);
		}
	}
	close(r.fd);
}

/*
 * Are the page cache pages of a file-backed VMA shmem (swap-backed)? That
 * is a property of the file system: tmpfs (including a tmpfs-backed
 * rootfs), and the internal shm mount behind memfd, MAP_SHARED anonymous
 * memory and SysV shm. Ask statfs() through /proc/PID/map_files (works for
 * deleted files too, but needs CAP_SYS_ADMIN), then through the path in
 * the smaps header, and fall back to the device numbers of tmpfs mounts.
 * Results are cached per device for one smaps walk.
 */
static bool vma_is_shmem(pid_t pid, unsigned long start, unsigned long end,
			 unsigned int major, unsigned int minor,
			 unsigned long inode, char *name)
{
	size_t len = strlen(name);
	char path[96];
	int ret;

	/* Anonymous memory and special mappings ([vdso], [vvar]). */
	if (!inode)
		return false;
	ret = dev_lookup(major, minor);
	if (ret >= 0)
		return ret;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx",
			 (int)pid, start, end);
	else
		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
			 start, end);
	ret = path_is_shmem(path, major, minor);
	if (ret < 0 && name[0] == '/' &&
	    !(len > 10 && !strcmp(name + len - 10, " (deleted)")))
		ret = path_is_shmem(name, major, minor);
	if (ret >= 0) {
		dev_add(major, minor, ret);
		return ret;
	}

	if (!mountinfo_read) {
		read_mountinfo_devs(pid);
		mountinfo_read = true;
		ret = dev_lookup(major, minor);
		if (ret >= 0)
			return ret;
	}
	/* Fallback when memfd_create() is not available. */
	return major == 0 && (!strncmp(name, "/dev/zero ", 10) ||
			      !strncmp(name, "/memfd:", 7) ||
			      !strncmp(name, "/SYSV", 5));
}

/* Start a smaps walk: forget the classification of the previous one. */
static void reset_devs(void)
{
	static struct dev_id memfd_dev;
	static bool have_memfd_dev;
	struct stat st;
	int fd;

	nr_devs = 0;
	mountinfo_read = false;
	if (!have_memfd_dev) {
		fd = syscall(__NR_memfd_create, "rss_dev", 0);
		if (fd < 0)
			return;
		if (!fstat(fd, &st)) {
			memfd_dev.major = major(st.st_dev);
			memfd_dev.minor = minor(st.st_dev);
			have_memfd_dev = true;
		}
		close(fd);
	}
	if (have_memfd_dev)
		dev_add(memfd_dev.major, memfd_dev.minor, true);
}

int rss_read_truth(pid_t pid, struct rss_truth *t)
{
	struct line_reader r = { 0 };
	long rss = 0, anon = 0, swap = 0, val;
	unsigned long start, end, inode;
	unsigned int major, minor;
	bool shmem = false, in_vma = false;
	char path[64], *line;
	int pos, ret;

	memset(t, 0, sizeof(*t));
	reset_devs();

	proc_path(path, sizeof(path), pid, "smaps");
	r.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r.fd < 0)
		return -errno;
	r.buf = smaps_buf;
	r.size = sizeof(smaps_buf);
	for (;;) {
		line = next_line(&r);
		/* A VMA header line starts with its (lower case hex) address. */
		if (!line || isdigit(line[0]) || (line[0] >= 'a' && line[0] <= 'f')) {
			if (in_vma) {
				t->rss += rss;
				t->anon += anon;
				if (shmem) {
					t->shmem += rss - anon;
					t->shmem_swap += swap;
				} else {
					t->file += rss - anon;
					t->swap += swap;
				}
				t->nr_vmas++;
			}
			if (!line)
				break;
			pos = 0;
			if (sscanf(line, "%lx-%lx %*s %*x %x:%x %lu %n", &start,
				   &end, &major, &minor, &inode, &pos) < 5 ||
			    !pos) {
				close(r.fd);
				return -EINVAL;
			}
			shmem = vma_is_shmem(pid, start, end, major, minor,
					     inode, line + pos);
			in_vma = true;
			rss = 0;
			anon = 0;
			swap = 0;
			continue;
		}
		if (sscanf(line, "Rss: %ld kB", &val) == 1)
			rss = val;
		else if (sscanf(line, "Anonymous: %ld kB", &val) == 1)
			anon = val;
		else if (sscanf(line, "Swap: %ld kB", &val) == 1)
			swap = val;
	}
	close(r.fd);
	if (r.err)
		return r.err;

	proc_path(path, sizeof(path), pid, "smaps_rollup");
	ret = read_small(path, misc_buf, sizeof(misc_buf));
	if (ret < 0)
		return ret;
	/* The first line is the [rollup] header, so "\nRss:" matches. */
	if (status_field(misc_buf, "Rss", &t->rollup_rss))
		return -ENOENT;
	return 0;
}

static int parse_cpu_list(const char *path)
{
	char buf[256], *p = buf;
	int a, b, n, count = 0;

	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	while (*p && *p != '\n') {
		if (sscanf(p, "%d%n", &a, &n) != 1)
			return -1;
		p += n;
		b = a;
		if (*p == '-') {
			if (sscanf(p + 1, "%d%n", &b, &n) != 1)
				return -1;
			p += n + 1;
		}
		count += b - a + 1;
		if (*p == ',')
			p++;
	}
	return count;
}

int rss_nr_possible_cpus(void)
{
	int n = parse_cpu_list("/sys/devices/system/cpu/possible");

	return n > 0 ? n : (int)sysconf(_SC_NPROCESSORS_CONF);
}

int rss_nr_online_cpus(void)
{
	int n = parse_cpu_list("/sys/devices/system/cpu/online");

	return n > 0 ? n : (int)sysconf(_SC_NPROCESSORS_ONLN);
}

long rss_stat_bound(void)
{
	int online = rss_nr_online_cpus();
	long batch;

	/*
	 * Mirror of compute_batch_value() in lib/percpu_counter.c:
	 * percpu_counter_batch = max(32, 2 * num_online_cpus()). It is
	 * recomputed on CPU hotplug, so use the largest online count seen:
	 * per-CPU deltas built up with an older, larger batch may remain.
	 * Each per-CPU delta stays below batch, so one counter read with
	 * percpu_counter_read_positive() is off by less than batch * CPUs.
	 * stat rss adds three counters (file, anon, shmem).
	 */
	if (online > max_online_seen)
		max_online_seen = online;
	batch = 2L * max_online_seen;
	if (batch < 32)
		batch = 32;
	return 3 * batch * rss_nr_possible_cpus();
}

static bool same_counters(const struct rss_counters *a,
			  const struct rss_counters *b)
{
	/* stat rss is approximate and may move without activity. */
	return a->vmrss == b->vmrss && a->anon == b->anon &&
	       a->file == b->file && a->shmem == b->shmem &&
	       a->swap == b->swap && a->statm_resident == b->statm_resident &&
	       a->statm_shared == b->statm_shared;
}

static __printf(4, 5)
int add_msg(char *msg, size_t len, int nr, const char *fmt, ...)
{
	size_t used = strlen(msg);
	va_list ap;

	if (used + 3 >= len)
		return nr + 1;
	if (used) {
		memcpy(msg + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(msg + used, len - used, fmt, ap);
	va_end(ap);
	return nr + 1;
}

int rss_check(pid_t pid, struct rss_counters *cp, struct rss_truth *tp,
	      char *msg, size_t len)
{
	struct rss_counters c, c2;
	struct rss_truth t;
	long bound, diff, kb = rss_page_kb;
	int ret, try, nr = 0;

	msg[0] = '\0';
	for (try = 0; try < SNAP_TRIES; try++) {
		ret = rss_read_counters(pid, &c);
		if (!ret)
			ret = rss_read_truth(pid, &t);
		if (!ret)
			ret = rss_read_counters(pid, &c2);
		if (ret) {
			snprintf(msg, len, "reading /proc of %d: %s",
				 (int)pid, strerror(-ret));
			return ret;
		}
		if (same_counters(&c, &c2) && t.rss == t.rollup_rss)
			break;
		usleep(1000);
	}
	if (try == SNAP_TRIES)
		return add_msg(msg, len, nr,
			       "VmRSS: %ld then %ld kB, smaps Rss %ld, smaps_rollup Rss %ld kB: memory kept changing, process not quiescent",
			       c.vmrss, c2.vmrss, t.rss, t.rollup_rss);
	if (cp)
		*cp = c;
	if (tp)
		*tp = t;

	if (c.vmrss != t.rollup_rss)
		nr = add_msg(msg, len, nr, "VmRSS: %ld kB, smaps_rollup Rss %ld kB",
			     c.vmrss, t.rollup_rss);
	if (c.anon != t.anon)
		nr = add_msg(msg, len, nr, "RssAnon: %ld kB, smaps Anonymous %ld kB",
			     c.anon, t.anon);
	if (c.file != t.file)
		nr = add_msg(msg, len, nr,
			     "RssFile: %ld kB, smaps Rss-Anonymous of non-shmem VMAs %ld kB",
			     c.file, t.file);
	if (c.shmem != t.shmem)
		nr = add_msg(msg, len, nr,
			     "RssShmem: %ld kB, smaps Rss-Anonymous of shmem VMAs %ld kB",
			     c.shmem, t.shmem);
	if (c.vmrss != c.anon + c.file + c.shmem)
		nr = add_msg(msg, len, nr,
			     "VmRSS: %ld kB, RssAnon+RssFile+RssShmem %ld kB",
			     c.vmrss, c.anon + c.file + c.shmem);
	if (c.statm_resident * kb != t.rollup_rss)
		nr = add_msg(msg, len, nr,
			     "statm resident: %ld pages, smaps_rollup Rss %ld pages",
			     c.statm_resident, t.rollup_rss / kb);
	if (c.statm_shared * kb != t.file + t.shmem)
		nr = add_msg(msg, len, nr,
			     "statm shared: %ld pages, smaps file+shmem %ld pages",
			     c.statm_shared, (t.file + t.shmem) / kb);
	if (!t.shmem_swap && c.swap != t.swap)
		nr = add_msg(msg, len, nr, "VmSwap: %ld kB, smaps Swap %ld kB",
			     c.swap, t.swap);
	bound = rss_stat_bound();
	diff = labs(c.stat_rss - t.rollup_rss / kb);
	if (diff >= bound)
		nr = add_msg(msg, len, nr,
			     "stat rss: %ld pages, smaps_rollup Rss %ld pages, off by %ld >= bound %ld",
			     c.stat_rss, t.rollup_rss / kb, diff, bound);
	return nr;
}

long rss_count_pages(pid_t pid, const void *addr, size_t npages,
		     enum rss_page_kind kind)
{
	__u64 ent[512];
	size_t done = 0, n, i;
	long count = 0;
	char path[64];
	ssize_t ret;
	off_t off;
	int fd;

	proc_path(path, sizeof(path), pid, "pagemap");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < npages) {
		n = npages - done;
		if (n > 512)
			n = 512;
		off = ((uintptr_t)addr / rss_page_size + done) * sizeof(ent[0]);
		ret = pread(fd, ent, n * sizeof(ent[0]), off);
		if (ret != (ssize_t)(n * sizeof(ent[0]))) {
			close(fd);
			return ret < 0 ? -errno : -EIO;
		}
		for (i = 0; i < n; i++) {
			switch (kind) {
			case RSS_PM_PRESENT:
				count += !!(ent[i] & PM_PRESENT);
				break;
			case RSS_PM_ANON:
				count += (ent[i] & (PM_PRESENT | PM_FILE)) == PM_PRESENT;
				break;
			case RSS_PM_FILE:
				count += (ent[i] & (PM_PRESENT | PM_FILE)) ==
					 (PM_PRESENT | PM_FILE);
				break;
			case RSS_PM_SWAP:
				count += !!(ent[i] & PM_SWAP);
				break;
			case RSS_PM_EXCL:
				count += (ent[i] & (PM_PRESENT | PM_EXCL)) ==
					 (PM_PRESENT | PM_EXCL);
				break;
			}
		}
		done += n;
	}
	close(fd);
	return count;
}

const char *rss_kind_name(enum rss_page_kind kind)
{
	switch (kind) {
	case RSS_PM_PRESENT:
		return "present";
	case RSS_PM_ANON:
		return "anon";
	case RSS_PM_FILE:
		return "file/shmem";
	case RSS_PM_SWAP:
		return "swapped";
	case RSS_PM_EXCL:
		return "exclusive";
	}
	return "?";
}

long rss_rollup_field(pid_t pid, const char *name)
{
	char path[64];
	long val;
	int ret;

	proc_path(path, sizeof(path), pid, "smaps_rollup");
	ret = read_small(path, misc_buf, sizeof(misc_buf));
	if (ret < 0)
		return ret;
	ret = status_field(misc_buf, name, &val);
	return ret ? ret : val;
}

long rss_status_field(pid_t pid, const char *name)
{
	char path[64];
	long val;
	int ret;

	proc_path(path, sizeof(path), pid, "status");
	ret = read_small(path, misc_buf, sizeof(misc_buf));
	if (ret < 0)
		return ret;
	ret = status_field(misc_buf, name, &val);
	return ret ? ret : val;
}

static void *map_common(size_t npages, int flags, int fd)
{
	void *p = mmap(NULL, npages * rss_page_size, PROT_READ | PROT_WRITE,
		       flags, fd, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Keep page counts deterministic: no THP in the test areas. */
	madvise(p, npages * rss_page_size, MADV_NOHUGEPAGE);
	return p;
}

void *rss_map_anon(size_t npages)
{
	return map_common(npages, MAP_PRIVATE | MAP_ANONYMOUS, -1);
}

void *rss_map_shared_anon(size_t npages)
{
	return map_common(npages, MAP_SHARED | MAP_ANONYMOUS, -1);
}

void *rss_map_fd(int fd, size_t npages, int flags)
{
	return map_common(npages, flags, fd);
}

/*
 * Fault in one byte per page. The empty asm statements keep the compiler
 * from dropping or merging the accesses: each read value is consumed by
 * one, and each store must reach memory before the next one may read it.
 */
void rss_touch(void *addr, size_t npages, bool write)
{
	char *p = addr;
	size_t i;
	char v;

	for (i = 0; i < npages; i++) {
		if (write) {
			p[i * rss_page_size] = (char)(i | 1);
			asm volatile("" : : : "memory");
		} else {
			v = p[i * rss_page_size];
			asm volatile("" : : "r" (v) : "memory");
		}
	}
}

static int fill_file(int fd, size_t npages)
{
	size_t i;

	memset(misc_buf, 0x5a, rss_page_size);
	for (i = 0; i < npages; i++)
		if (pwrite(fd, misc_buf, rss_page_size, i * rss_page_size) !=
		    (ssize_t)rss_page_size)
			return -errno ? -errno : -EIO;
	if (fsync(fd))
		return -errno;
	return 0;
}

static int open_tmp(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (snprintf(path, sizeof(path), "%s/rss_stat.XXXXXX", dir) >=
	    (int)sizeof(path))
		return -1;
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	return fd;
}

/*
 * Root only: an unlinked file on a fresh ramfs mounted on a temporary
 * directory in @dir. The mount is detached (and the directory removed) at
 * once; the open file keeps the superblock alive until it is closed.
 */
static int open_private_ramfs(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/rss_stat_ramfs.XXXXXX", dir) >=
	    (int)sizeof(path) || !mkdtemp(path))
		return -1;
	if (mount("rss_stat", path, "ramfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0700")) {
		rmdir(path);
		return -1;
	}
	fd = open_tmp(path);
	umount2(path, MNT_DETACH);
	rmdir(path);
	return fd;
}

static const char *file_where = "no test file";

const char *rss_file_where(void)
{
	return file_where;
}

int rss_make_file(size_t npages, bool *is_shmem)
{
	const char *dirs[5] = { getenv("TMPDIR"), "/var/tmp", "/tmp", NULL, "." };
	const int nr = ARRAY_SIZE(dirs);
	int i, fd = -1, ret, tmpfs_fd = -1;
	char exe[PATH_MAX], *slash;
	struct statfs sfs;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash && slash != exe) {
			*slash = '\0';
			dirs[3] = exe;
		}
	}
	/*
	 * The page cache of a file on tmpfs is shmem: prefer a file system
	 * whose pages are not swap-backed, so that RssFile is exercised.
	 */
	for (i = 0; i < nr; i++) {
		if (!dirs[i])
			continue;
		fd = open_tmp(dirs[i]);
		if (fd < 0)
			continue;
		if (!fstatfs(fd, &sfs) && sfs.f_type != TMPFS_MAGIC) {
			file_where = "a non-tmpfs file system";
			break;
		}
		if (tmpfs_fd < 0)
			tmpfs_fd = fd;
		else
			close(fd);
		fd = -1;
	}
	/* Only tmpfs is writable (e.g. an initramfs): try a private ramfs. */
	for (i = 0; fd < 0 && !geteuid() && i < nr; i++) {
		if (!dirs[i])
			continue;
		fd = open_private_ramfs(dirs[i]);
		if (fd >= 0)
			file_where = "a private ramfs";
	}
	if (fd >= 0) {
		if (tmpfs_fd >= 0)
			close(tmpfs_fd);
		*is_shmem = false;
	} else {
		if (tmpfs_fd < 0)
			return -ENOENT;
		fd = tmpfs_fd;
		*is_shmem = true;
		file_where = "tmpfs (no other writable file system): its pages are shmem";
	}
	ret = fill_file(fd, npages);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int rss_make_memfd(size_t npages)
{
	int fd = syscall(__NR_memfd_create, "rss_stat", 0);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, npages * rss_page_size)) {
		close(fd);
		return -errno;
	}
	return fd;
}

int rss_nosys_errno(void)
{
	static int nosys_errno;
	int saved = errno;

	/* No architecture has a system call number -1. */
	if (!nosys_errno && syscall(-1) < 0)
		nosys_errno = errno;
	errno = saved;
	return nosys_errno ? nosys_errno : -1;
}

void rss_no_thp(void)
{
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

int rss_kmsg_bad_rss(void)
{
	int fd, count = 0;
	ssize_t n;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		n = read(fd, misc_buf, sizeof(misc_buf) - 1);
		if (n < 0) {
			if (errno == EINTR || errno == EPIPE)
				continue;	/* EPIPE: records overwritten */
			if (errno == EAGAIN)
				break;
			count = -errno;
			break;
		}
		if (n == 0)
			break;
		misc_buf[n] = '\0';
		if (strstr(misc_buf, "Bad rss-counter state"))
			count++;
	}
	close(fd);
	return count;
}

int rss_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t off = 0;
	ssize_t n;
	int ret;

	while (off < len) {
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -ETIMEDOUT;
		n = read(fd, (char *)buf + off, len - off);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		off += n;
	}
	return 0;
}

int rss_wait_byte(int fd, char *c, int timeout_ms)
{
	return rss_read_full(fd, c, 1, timeout_ms);
}

int rss_send_byte(int fd, char c)
{
	ssize_t n;

	do {
		n = write(fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -errno;
}

int rss_wait_child(pid_t pid, int timeout_s)
{
	int status, i;
	pid_t ret;

	for (i = 0; i < timeout_s * 200; i++) {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
						   128 + WTERMSIG(status);
		usleep(5000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -ETIMEDOUT;
}
