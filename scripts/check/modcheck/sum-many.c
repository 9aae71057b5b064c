// SPDX-License-Identifier: GPL-2.0
/* With the series: get_mm_counters_sum() sums all counters in one pass. */
#include <linux/mm.h>

#include "modcheck.h"

unsigned long modcheck_counters_sum(struct mm_struct *mm)
{
	unsigned long val[NR_MM_COUNTERS], sum = 0;
	int i;

	get_mm_counters_sum(mm, val);
	for (i = 0; i < NR_MM_COUNTERS; i++)
		sum += val[i];
	return sum;
}
