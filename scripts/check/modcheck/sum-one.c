// SPDX-License-Identifier: GPL-2.0
/* Without get_mm_counters_sum() (the base): one get_mm_counter_sum() each. */
#include <linux/mm.h>

#include "modcheck.h"

unsigned long modcheck_counters_sum(struct mm_struct *mm)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < NR_MM_COUNTERS; i++)
		sum += get_mm_counter_sum(mm, i);
	return sum;
}
