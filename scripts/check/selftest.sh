#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build and install the kselftests of the patched tree, then run them in the
# guest (scripts/guest/selftest-guest) on each kernel named: base, patched (the
# test kernels), base:VARIANT or patched:VARIANT (their kernel of that
# variant, such as norseq), kcsan (patched:kcsan, slow) or a bzImage path.
#   - mm's run_vmtests.sh: the categories the series adds to it (rss_stat)
#     and the upstream ones whose tests fault, unmap, reclaim or reap
#     memory, that is, change rss_stat, and that finish in minutes under TCG;
#   - run_kselftest.sh: upstream's proc and rseq targets (rseq: mm_cid, see
#     RSEQ_ARGS), and any target the series adds (a directory of its own
#     under selftests/).
# Rules: a test the series adds (a run_vmtests.sh category, a target, or a
# test it adds to an existing target's Makefile) that gives no result is a
# failure, and so is, on a kernel with the series, one of its cases that
# skips; so is a guest whose kernel log shows an oops, a WARN or "Bad
# rss-counter state"; so is an upstream test of the targets in
# SAME_TARGETS (rseq) whose outcome on a kernel differs from the base's.
# --only series: only the tests the series adds (make check-kcsan);
# --only TARGET: only that kselftest target (rseq); --only CATEGORY: only
# that run_vmtests.sh category; --only NAME: only the kselftest_harness
# tests NAME of the series' mm tests (-t NAME) (make mutate).
# --base-tap FILE: the base's TAP of an earlier run of the same tests,
# for the outcome comparison, instead of booting base (make mutate: its
# mutants change neither the base kernel nor the tests).
# usage: scripts/check/selftest.sh [--only series|TARGET|CATEGORY|NAME] [--base-tap FILE] KERNEL...
# Each test's result, each rule's failure and each guest's verdict is a
# check (scripts/lib/tally.sh); prints "kselftests: N passed, N failed, N
# skipped" on the last line; exits 1 on a failure, 3 when the kselftests
# do not build.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm check

only='' base_tap=''
if [ "${1:-}" = --only ]; then only=${2:?--only needs series, a target, a category or a test name}; shift 2; fi
if [ "${1:-}" = --base-tap ]; then base_tap=${2:?--base-tap needs a file}; shift 2; fi
[ -z "$base_tap" ] || [ -s "$base_tap" ] || die "--base-tap $base_tap: no such TAP file"
[ $# -gt 0 ] || die "usage: selftest.sh [--only series|TARGET|CATEGORY|NAME] KERNEL... (base, patched, NAME:VARIANT, kcsan or a bzImage path)"
need_tree "$LINUX"
ksft=tools/testing/selftests

# Upstream targets that run_kselftest.sh runs (mm runs by run_vmtests.sh),
# and the upstream mm categories. Left out: "mmap" (map_populate needs
# socketpair(), and the guest has no CONFIG_NET) and "soft_dirty" (no
# CONFIG_MEM_SOFT_DIRTY).
UPSTREAM_TARGETS="proc rseq"
MM_CATEGORIES=${MM_CATEGORIES:-madv_populate mlock process_mrelease mkdirty}
# Upstream tests left out: proc's that need namespaces (PID, IPC, NET) or
# /proc/net, which the guest kernel does not build (none reads rss_stat).
# KSFT_EXCLUDE: more of them (make check leaves out two of rseq for time).
EXCLUDE="proc:proc-loadavg-001 proc:setns-dcache proc:setns-sysvipc proc:proc-pidns proc:proc-net-dev-lseek ${KSFT_EXCLUDE:-}"
# rseq's run_param_test.sh runs param_test and its three variants (the
# mm_cid ones among them) for each of 8 tests, 37 times: with default
# parameters, then with delays injected at each of 9 points of the
# critical sections, then with yields, signals and sleeps at 3 of them:
# 1184 runs of 24 threads, about 50 minutes per kernel under TCG at -smp 4
# here (135 runs took 6 minutes), too long for make check. So make check
# runs its default-parameter pass (32 runs: every test, every variant)
# and the other rseq tests in full; RSEQ_PARAM=full runs all of it.
RSEQ_PARAM=${RSEQ_PARAM:-default}
case $RSEQ_PARAM in
default) EXCLUDE="$EXCLUDE rseq:run_param_test.sh" ;;
full)	;;
*)	die "RSEQ_PARAM=$RSEQ_PARAM: want default or full" ;;
esac
# Targets whose upstream tests must give the same outcome on every kernel
# as on the base (issue 18: mm_cid).
SAME_TARGETS="rseq"

# The tests the series adds, found once: the targets it adds, the tests
# it adds to the upstream targets (what `make emit_tests` lists in the
# patched tree and not in the base), and its run_vmtests.sh tests
# ("CATEGORY PROGRAM").
emit_tests() {	# emit_tests TREE TARGET: "TARGET:TEST" lines of the target's Makefile
	[ ! -f "$1/$ksft/$2/Makefile" ] ||
		make -s --no-print-directory -C "$1/$ksft/$2" COLLECTION="$2" emit_tests
}
makefile_targets() {	# makefile_targets A|M: targets whose Makefile the series adds or changes
	git -C "$LINUX" diff --name-only --diff-filter="$1" "$BASE_TAG" HEAD -- "$ksft" |
		sed -n "s,^$ksft/\\([^/]*\\)/Makefile\$,\\1,p"
}
mapfile -t series_targets < <(makefile_targets A)
# Other upstream targets whose Makefile the series changes (7.3: sched,
# for its LLC test): only the tests it adds to them run.
mapfile -t touched_targets < <(makefile_targets M |
	awk -v up="mm $UPSTREAM_TARGETS" 'BEGIN { split(up, a, " "); for (i in a) u[a[i]] } !($0 in u)')
series_added=()
for t in $UPSTREAM_TARGETS ${series_targets[@]+"${series_targets[@]}"} ${touched_targets[@]+"${touched_targets[@]}"}; do
	mapfile -t -O ${#series_added[@]} series_added < <(LC_ALL=C comm -13 \
		<(emit_tests "$BASE" "$t" | LC_ALL=C sort) <(emit_tests "$LINUX" "$t" | LC_ALL=C sort))
done
mapfile -t series_mm < <(git -C "$LINUX" diff "$BASE_TAG" HEAD -- "$ksft/mm/run_vmtests.sh" |
	sed -n 's/^+CATEGORY="\([^"]*\)" run_test \.\/\([^ ]*\).*/\1 \2/p' | sort -u)
[ $((${#series_added[@]} + ${#series_mm[@]})) -gt 0 ] ||
	die "the series adds no kselftest (no target, no test in a target's Makefile, no run_vmtests.sh category)"

# What this run runs: targets (run_kselftest.sh), mm categories, and the
# harness filter of --only NAME (for the series' mm programs).
mm_programs=$(printf '%s\n' ${series_mm[@]+"${series_mm[@]}"} | cut -s -d' ' -f2 | sort -u | tr '\n' ' ')
targets="$UPSTREAM_TARGETS ${series_targets[*]} ${touched_targets[*]}" harness='' mm_direct=''
case $only in
'')	;;
series)	targets="${series_targets[*]} $(printf '%s\n' ${series_added[@]+"${series_added[@]}"} | cut -s -d: -f1 | sort -u | tr '\n' ' ')"
	MM_CATEGORIES='' ;;
*)	if ksft_target "$only"; then
		targets=$only MM_CATEGORIES=''
	elif grep -q "^CATEGORY=\"$only\" " "$LINUX/$ksft/mm/run_vmtests.sh"; then
		# a category of the series: its programs, on their own (below)
		mm_direct=$(printf '%s\n' ${series_mm[@]+"${series_mm[@]}"} | awk -v c="$only" '$1 == c { printf "%s%s", s, $2; s = " " }')
		targets='' MM_CATEGORIES=$only
		[ -z "$mm_direct" ] || MM_CATEGORIES=''
	else
		[ -n "$mm_programs" ] || die "--only $only: no target, no run_vmtests.sh category, and the series adds no mm test"
		targets='' MM_CATEGORIES='' harness=$only
	fi
	series_mm=() ;;
esac
# The series' categories run as programs of their own (selftest-guest
# --mm-programs), the upstream ones through run_vmtests.sh.
for t in ${series_mm[@]+"${series_mm[@]}"}; do
	mm_direct="${mm_direct:+$mm_direct }${t#* }"
done
read -r -a targets <<<"$targets"
# mm is built for run_vmtests.sh and the harness runs.
build_targets=${targets[*]}
[ -z "$MM_CATEGORIES$mm_direct$harness" ] || build_targets="$build_targets mm"

out=$LINUX/.out-ksft
inst=$out/install
say "kselftests: building $build_targets (~3 min; log: ${LOGS#"$TOP"/}/ksft-build.log)"
{
	make -C "$LINUX" O="$out" headers
	# Debian's 6.12 tree: mm/khugepaged.c uses ksft_print_msg() without
	# including kselftest.h; include it for every mm test instead of
	# patching the base.
	rm -rf "$inst"
	make -C "$LINUX/$ksft" O="$out" -j"$JOBS" \
		TARGETS="$build_targets" KSFT_INSTALL_PATH="$inst" \
		EXTRA_CFLAGS="-include $LINUX/$ksft/kselftest.h" install
} >"$LOGS/ksft-build.log" 2>&1 || { tail -30 "$LOGS/ksft-build.log" >&2; die_build "building the kselftests failed"; }
# A target that fails to build is silently left out of the install.
for t in $build_targets; do
	grep -q "^$t:" "$inst/kselftest-list.txt" ||
		die_build "kselftest target $t was not installed (see ${LOGS#"$TOP"/}/ksft-build.log)"
done

# The guest's command line: every installed test of the targets (with
# --only series, the series' own), the mm categories, the harness filter.
args=()
while read -r t; do
	[[ " $EXCLUDE " != *" $t "* ]] || continue
	[[ " ${targets[*]} " == *" ${t%%:*} "* ]] || continue
	[[ " ${touched_targets[*]} " != *" ${t%%:*} "* ]] || [[ " ${series_added[*]} " == *" $t "* ]] || continue
	[ "$only" != series ] || [[ " ${series_added[*]} " == *" $t "* ]] ||
		[[ " ${series_targets[*]} " == *" ${t%%:*} "* ]] || continue
	args+=(-t "$t")
done <"$inst/kselftest-list.txt"
if [[ " ${targets[*]} " == *" rseq "* ]] && [ "$RSEQ_PARAM" = default ] && [ "$only" != series ]; then
	args+=(--param-test-default)
fi
[ -z "$MM_CATEGORIES" ] || args+=(--mm "$MM_CATEGORIES")
[ -z "$mm_direct" ] || args+=(--mm-programs "$mm_direct")
# shellcheck disable=SC2206 # one program a word
[ -z "$harness" ] || args+=(--harness "$harness" $mm_programs)

# The guests' TAP is read by scripts/check/ktap.py, the one parser of it.
ktap() { python3 "$TOP/scripts/check/ktap.py" "$@"; }

# rules KERNEL TAP: the failures that the TAP's results do not show, one a line.
rules() {
	local k=$1 tap=$2 t
	for t in ${series_mm[@]+"${series_mm[@]}"}; do
		ktap has "$tap" mm "${t#* }" ||
			echo "$k: no result from mm test ${t#* } (run_vmtests.sh -t ${t% *})"
	done
	for t in ${series_added[@]+"${series_added[@]}"}; do
		[[ " ${targets[*]} " == *" ${t%%:*} "* ]] || continue
		ktap has "$tap" "${t%%:*}" "${t#*:}" ||
			echo "$k: no result from kselftest $t, which the series adds"
	done
	for t in ${series_targets[@]+"${series_targets[@]}"}; do
		[[ " ${targets[*]} " == *" $t "* ]] || continue
		[ -n "$(ktap outcomes "$tap" "$t")" ] ||
			echo "$k: no result from kselftest target $t"
	done
	# With the series, a skipped case of its tests is a failure
	# (fail_function or tracing would be missing).
	[ "$k" != base ] && [[ $k != base:* ]] || return 0
	for t in ${series_mm[@]+"${series_mm[@]#* }"} ${series_added[@]+"${series_added[@]#*:}"}; do
		ktap skipped "$tap" "$t" | awk -v k="$k" '{ print k ": a test of the series skipped: " $0 }'
	done
}

declare -A tap_of
[ -z "$base_tap" ] || tap_of[base]=$base_tap
for k in "$@"; do
	name=$(basename "${k/:/-}")
	tap=$LOGS/ksft-$name.tap
	vmlog=$BUILD/vm/ksft-$name
	image=$k slow=() vmargs=()
	case $k in
	base|patched)	image=$(kernel_image "$k" test) ;;
	base:*|patched:*) image=$(kernel_image "${k%%:*}" "${k#*:}") ;;
	kcsan)		image=$(kernel_image patched kcsan) slow=(--slow)
			# Slow under TCG, slower on a loaded host: a grace-period
			# kthread can wait its turn for 21 s (the default). Real
			# stalls still show, after 100 s.
			vmargs=(--append rcupdate.rcu_cpu_stall_timeout=100) ;;
	esac
	# Two vCPUs to an LLC: the online ones span two LLCs, so that 7.3's
	# cache-aware scheduling is on (sched_cache_active) in every test.
	[ $((GUEST_POSSIBLE % 2)) -ne 0 ] || vmargs+=(--llc 2)
	say "kselftests: booting the $k kernel, $GUEST_ONLINE of $GUEST_POSSIBLE CPUs online (TAP: ${tap#"$TOP"/})"
	# run_kselftest.sh needs coreutils timeout (--foreground), not busybox's.
	"$TOP/scripts/guest/vm" --kernel "$image" --online "$GUEST_ONLINE" --possible "$GUEST_POSSIBLE" --timeout "${KSFT_TIMEOUT:-3600}" ${vmargs[@]+"${vmargs[@]}"} \
		--log "$vmlog" --dir "$inst:/ksft" --add /bin/bash \
		--add /usr/bin/timeout --add "$TOP/scripts/guest/selftest-guest" \
		-- "$TOP/scripts/guest/selftest-guest" ${slow[@]+"${slow[@]}"} ${args[@]+"${args[@]}"} >"$tap" 2>&1 || true
	tap_of[$k]=$tap
	kstart=$(wc -l <"$RESULTS")
	ktap failures "$tap" | head -80 | sed 's/^/  /'
	ktap records "$tap" "$k" >"$tap.jsonl"
	tally_records "$tap.jsonl" >/dev/null
	mapfile -t bad < <(rules "$k" "$tap")
	for b in ${bad[@]+"${bad[@]}"}; do tally fail "$b"; done
	# The guest's verdict (scripts/guest/vm): selftest-guest exits 0 when it
	# ran its tests, whatever they gave.
	verdict=$(sed -n 's/^{"verdict":"\([a-z]*\)".*/\1/p' "$vmlog/verdict.json" 2>/dev/null) || true
	if [ "$verdict" = ok ]; then
		tally pass "$k: the guest ran the tests" "$vmlog/console.log"
	else
		tail -5 "$tap" | sed 's/^/    /'
		tally fail "$k: the guest run failed (${verdict:-no verdict}: ${vmlog#"$TOP"/}/verdict.json)" "$vmlog/console.log"
	fi
	echo "  $k: $(python3 "$TOP/scripts/check/results.py" total "$RESULTS" --from "$kstart")"
done

# same_outcomes TARGET BASE-TAP TAP: a line for each test of TARGET (but
# those the series adds) whose outcome in TAP is not the one in BASE-TAP.
same_outcomes() {
	local test a b
	while read -r test a b; do
		[[ " ${series_added[*]} " == *" $1:$test "* ]] || [ "$a" = "$b" ] ||
			echo "$1:$test: $b, but $a on the base"
	done < <(LC_ALL=C join -a 1 -a 2 -e none -o 0,1.2,2.2 <(ktap outcomes "$2" "$1" | LC_ALL=C sort) \
		<(ktap outcomes "$3" "$1" | LC_ALL=C sort))
}
if [ -n "${tap_of[base]:-}" ]; then
	for t in $SAME_TARGETS; do
		[[ " ${targets[*]} " == *" $t "* ]] || continue
		for k in "$@"; do
			[ "$k" != base ] || continue
			mapfile -t bad < <(same_outcomes "$t" "${tap_of[base]}" "${tap_of[$k]}")
			for b in ${bad[@]+"${bad[@]}"}; do tally fail "$k: $b"; done
		done
	done
fi
tally_end kselftests
