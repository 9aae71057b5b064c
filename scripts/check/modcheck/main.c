// SPDX-License-Identifier: GPL-2.0
/*
 * An out-of-tree module that reads the rss counters through the inline
 * readers of <linux/mm.h>, as distribution modules do, so that make check
 * (scripts/check/modcheck.sh) sees whether it still links: the readers call
 * whatever the kernel implements them with, and that must be exported.
 * Not the updaters (inc_mm_counter(), add_mm_counter()): they call
 * mm_trace_rss_stat(), which Linux 6.12 does not export, so no module
 * could use them before the series either.
 * Built, never loaded; loaded, it prints its own process's counters.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>

#include "modcheck.h"

static int __init modcheck_init(void)
{
	struct mm_struct *mm = current->mm;

	if (!mm)
		return -EINVAL;
	pr_info("modcheck: rss %lu (high water %lu), anon %lu (exact %lu), all %lu\n",
		get_mm_rss(mm), get_mm_hiwater_rss(mm), get_mm_counter(mm, MM_ANONPAGES),
		get_mm_counter_sum(mm, MM_ANONPAGES), modcheck_counters_sum(mm));
	return 0;
}
module_init(modcheck_init);

MODULE_DESCRIPTION("lazy-rss: an out-of-tree reader of the rss counters");
MODULE_LICENSE("GPL");
