/* SPDX-License-Identifier: GPL-2.0 */
struct mm_struct;

/* The sum of every rss counter of @mm: sum-one.c or sum-many.c. */
unsigned long modcheck_counters_sum(struct mm_struct *mm);
