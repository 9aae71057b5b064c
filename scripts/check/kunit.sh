#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the series' KUnit suites (every .kunitconfig it adds, or $KUNITCONFIG)
# with tools/testing/kunit/kunit.py.
# usage: scripts/check/kunit.sh uml|x86_64|kcsan|norseq|i386|arm64
#   uml:    kunit.py run, UML (UP), build dir .kunit
#   x86_64: kunit.py exec on the patched test kernel (.out-test, built by
#           scripts/tree/build.sh, which puts the suites in it), QEMU with $ONLINE
#           CPUs online and two more possible (lib.sh: GUEST_POSSIBLE)
#   kcsan, norseq: the same on the patched kernel of that variant
#           (.out-kcsan, .out-norseq: without rseq and mm_cid)
#   i386:   kunit.py run --arch=i386, SMP (the series' smp.kunitconfig), QEMU
#           as for x86_64, build dir .kunit-i386
#   arm64:  kunit.py run --arch=arm64 with Debian's cross compiler, SMP,
#           QEMU with $ONLINE CPUs (weakly ordered: its atomics and barriers are
#           not x86's), build dir .kunit-arm64
# Each kernel is built in the tree $LINUX (build/LINE/linux) with ccache.
# The counts come from kunit.py's JSON (build/LINE/logs/kunit-ARCH.json, read
# by scripts/check/kunit_summary.py). Prints "kunit-ARCH: N passed, N failed,
# N skipped" on the last line; exits 1 when a test failed or none ran
# (the kernel crashed or did not boot), 3 when the kernel did not build.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm

arch=${1:?usage: kunit.sh uml|x86_64|kcsan|norseq|i386|arm64}
need_tree "$LINUX"
mapfile -t kconfigs < <(kunitconfigs "$LINUX" "$arch")
[ ${#kconfigs[@]} -gt 0 ] || exit 1
use_ccache
# kunit.py's QEMU runs with TCG only (scripts/guest/qemu-tcg says why).
tcg=$BUILD/qemu-tcg
mkdir -p "$tcg"
for q in x86_64 i386 aarch64; do ln -sfn "$TOP/scripts/guest/qemu-tcg" "$tcg/qemu-system-$q"; done
log=$LOGS/kunit-$arch.log
timeout=${KUNIT_TIMEOUT:-900}
args=()
for k in "${kconfigs[@]}"; do args+=(--kunitconfig="$k"); done
# kunit.py build (config and build), unless the kernel is built already,
# then kunit.py exec, each with the common options.
build=1 exec_args=()
case $arch in
uml)
	# 6.12 UML WARNs at boot when PCI over virtio has no device ID;
	# none of our tests use it.
	bdir=.kunit
	common=("${args[@]}" --build_dir="$bdir" --make_options="CC=$CC_CCACHE"
		--kconfig_add=CONFIG_UML_PCI_OVER_VIRTIO=n)
	what="building (cold: ~8 min) and running the UML KUnit kernel"
	;;
x86_64|kcsan|norseq)
	variant=${arch/#x86_64/test}
	bdir=.out-$variant
	"$TOP/scripts/tree/build.sh" "$variant" patched
	for k in "${kconfigs[@]}"; do
		check_config "$k" "$LINUX/$bdir/.config" ||
			die "the test kernel lacks the KUnit suite of $k (see above)"
	done
	build=0
	common=(--arch=x86_64 --build_dir="$bdir" --qemu_args="-smp $GUEST_POSSIBLE")
	exec_args=(--kernel_args="maxcpus=$GUEST_ONLINE")
	what="running the KUnit suites of the patched $variant kernel, QEMU: $GUEST_ONLINE of $GUEST_POSSIBLE CPUs online"
	;;
i386)
	# kunit.py's i386 kernel has the PS/2 keyboard and mouse: their
	# "input: ..." lines, printed when the async probe ends, can land
	# inside the KTAP output, between a suite's "KTAP version 1" and its
	# "# Subtest:", and kunit.py then reports a crash ("main: missing
	# expected subtest!") after every case passed. No PS/2 ports.
	bdir=.kunit-i386
	exec_args=(--kernel_args=i8042.nokbd --kernel_args=i8042.noaux
		--kernel_args="maxcpus=$GUEST_ONLINE")
	common=("${args[@]}" --arch=i386
		--build_dir="$bdir" --make_options="CC=$CC_CCACHE" --qemu_args="-smp $GUEST_POSSIBLE")
	what="building (cold: ~13 min) and running the i386 SMP KUnit kernel, QEMU: $GUEST_ONLINE of $GUEST_POSSIBLE CPUs online"
	;;
arm64)
	need_deps arm64
	bdir=.kunit-arm64
	common=("${args[@]}" --arch=arm64 --cross_compile=aarch64-linux-gnu-
		--build_dir="$bdir" --make_options="CC=ccache aarch64-linux-gnu-gcc"
		--qemu_args="-smp $GUEST_ONLINE")
	what="building (cold: ~10 min) and running the arm64 SMP KUnit kernel, QEMU with $GUEST_ONLINE CPUs"
	;;
*)	die "unknown KUnit arch '$arch' (uml x86_64 kcsan norseq i386 arm64)" ;;
esac
kunit() { (cd "$LINUX" && PATH=$tcg:$PATH python3 tools/testing/kunit/kunit.py "$@") >>"$log" 2>&1; }

say "kunit $arch: $what (log: ${log#"$TOP"/})"
: >"$log"
if [ "$build" = 1 ] && ! kunit build "${common[@]}" --jobs="$JOBS"; then
	tail -30 "$log" | sed 's/^/  | /' >&2
	die_build "kunit-$arch: the KUnit kernel did not build (log: ${log#"$TOP"/})"
fi
json=$LOGS/kunit-$arch.json
rm -f "$json"
set +e
kunit exec "${common[@]}" ${exec_args[@]+"${exec_args[@]}"} --timeout="$timeout" \
	--json="$json" ${KUNIT_FILTER:+"$KUNIT_FILTER"}
rc=$?
set -e
# The results come from kunit.py's parse of the kernel's KTAP, as JSON:
# a record per case.
before=$(wc -l <"$RESULTS")
if ! python3 "$TOP/scripts/check/kunit_summary.py" --records "kunit-$arch" "$json" >"$json.jsonl"; then
	tail -30 "$log" | sed 's/^/  | /'
	tally fail "kunit-$arch: kunit.py left no results (status $rc, log: ${log#"$TOP"/})"
	tally_end "kunit-$arch" || exit
fi
if [ ! -s "$json.jsonl" ]; then
	tail -30 "$log" | sed 's/^/  | /'
	tally fail "kunit-$arch: no test ran: the kernel did not boot or crashed (kunit.py status $rc, log: ${log#"$TOP"/})"
fi
tally_records "$json.jsonl"
if log_has_bad "$LINUX/$bdir/test.log"; then
	tally fail "kunit $arch: the kernel reported a problem (log: $LINUX/$bdir/test.log)"
fi
if [ "$rc" -ne 0 ] && [ "$(failures_since "$before")" -eq 0 ]; then
	tail -20 "$log" | sed 's/^/  | /'
	tally fail "kunit.py exited with status $rc"
fi

tally_end "kunit-$arch"
