// SPDX-License-Identifier: GPL-2.0
/* A static /bin/true: the exec target of the benchmarks. */
int main(void)
{
	return 0;
}
