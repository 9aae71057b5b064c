#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make proof: what lazy rss_stat changes, on the test kernels in -smp $SMP
# guests: Percpu growth and rss_stat upgrades around fork+exec, threaded and
# idle processes, then stress-ng fork/vfork/clone/pthread. The runner fails
# on "Bad rss-counter state", WARN or BUG.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

smp=${SMP:-4}
stage=$BUILD/proof/stage
bench_stage "$stage"
for k in base patched lazyoff; do
	kernel_boot "$k"
	say "proof: $k kernel, -smp $smp"
	"$TOP/scripts/vm" --kernel "$boot_image" --smp "$smp" --append "$boot_append" \
		--timeout 900 --log "$BUILD/proof/$k" --dir "$stage:/" \
		--add /usr/bin/numactl --add /usr/bin/stress-ng -- proof-guest |
		grep -v -E 'metrc: \[[0-9]+\] +[a-z]+ +[0-9]'
done
