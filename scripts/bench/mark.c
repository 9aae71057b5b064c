// SPDX-License-Identifier: GPL-2.0
/*
 * mark: one cache-model mark. Executes xchg %bx,%bx (66 87 db), a no-op
 * that QEMU's cache plugin, with scripts/bench/cache-marker.patch, answers
 * by printing the totals of all its caches so far (scripts/bench/qemu-plugin.sh).
 */
int main(void)
{
	asm volatile(".byte 0x66, 0x87, 0xdb" ::: "memory");
	return 0;
}
