#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build and install the kselftests of the patched tree, then run them in the
# guest on each kernel named: base, patched (the test kernels), kcsan (the
# patched KCSAN kernel) or a bzImage path.
#   - mm's run_vmtests.sh: the categories the series adds to it (rss_stat)
#     and the upstream ones whose tests fault, unmap, reclaim or reap
#     memory, that is, change rss_stat, and that finish in minutes under TCG;
#   - run_kselftest.sh: upstream's proc target, and any target the series
#     adds (a directory of its own under selftests/).
# A test the series adds that gives no result is a failure; so is a guest
# whose kernel log shows an oops, a WARN or "Bad rss-counter state".
# --only series: only the tests the series adds (make check-kcsan);
# --only CATEGORY: only that run_vmtests.sh category; --only NAME: only the
# kselftest_harness tests NAME of the series' mm tests (-t NAME) (make mutate).
# usage: scripts/selftest.sh [--only series|CATEGORY|NAME] KERNEL...
# Prints "kselftests: N passed, N failed, N skipped" on the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build vm check

only=''
if [ "${1:-}" = --only ]; then only=${2:?--only needs series, a category or a test name}; shift 2; fi
[ $# -gt 0 ] || die "usage: selftest.sh [--only series|CATEGORY|NAME] KERNEL... (base, patched, kcsan or a bzImage path)"
need_tree "$LINUX"
# What the series adds: targets, and run_vmtests.sh lines (CATEGORY TEST).
mapfile -t series_targets < <(git -C "$LINUX" diff --name-only --diff-filter=A "$BASE_TAG" HEAD -- tools/testing/selftests |
	sed -n 's,^tools/testing/selftests/\([^/]*\)/Makefile$,\1,p')
mapfile -t series_tests < <(git -C "$LINUX" diff "$BASE_TAG" HEAD -- tools/testing/selftests/mm/run_vmtests.sh |
	sed -n 's/^+CATEGORY="\([^"]*\)" run_test \.\/\([^ ]*\).*/\1 \2/p')
[ $((${#series_targets[@]} + ${#series_tests[@]})) -gt 0 ] ||
	die "the series adds no kselftest (no selftests/TARGET/Makefile, no run_vmtests.sh category)"
targets=(proc ${series_targets[@]+"${series_targets[@]}"})
# Left out: "mmap" (map_populate needs socketpair(), and the guest has no
# CONFIG_NET) and "soft_dirty" (no CONFIG_MEM_SOFT_DIRTY).
MM_CATEGORIES=${MM_CATEGORIES:-madv_populate mlock process_mrelease mkdirty}
harness=''
if [ -n "$only" ]; then
	targets=(${series_targets[@]+"${series_targets[@]}"}) MM_CATEGORIES=''
	if [ "$only" != series ]; then
		targets=()
		if grep -q "^CATEGORY=\"$only\" " "$LINUX/tools/testing/selftests/mm/run_vmtests.sh"; then
			MM_CATEGORIES=$only
		else
			harness=$only
		fi
		series_tests=() series_targets=()
	fi
fi
for t in ${series_tests[@]+"${series_tests[@]}"}; do
	case " $MM_CATEGORIES " in *" ${t% *} "*) ;; *) MM_CATEGORIES="${t% *} $MM_CATEGORIES" ;; esac
done

out=$LINUX/.out-ksft
inst=$out/install
say "kselftests: building ${targets[*]} mm (~3 min; log: build/logs/ksft-build.log)"
{
	make -C "$LINUX" O="$out" headers
	# Debian's 6.12 tree: mm/khugepaged.c uses ksft_print_msg() without
	# including kselftest.h; include it for every mm test instead of
	# patching the base.
	rm -rf "$inst"
	make -C "$LINUX/tools/testing/selftests" O="$out" -j"$JOBS" \
		TARGETS="${targets[*]} mm" KSFT_INSTALL_PATH="$inst" \
		EXTRA_CFLAGS="-include $LINUX/tools/testing/selftests/kselftest.h" install
} >"$LOGS/ksft-build.log" 2>&1 || { tail -30 "$LOGS/ksft-build.log" >&2; die "building the kselftests failed"; }
# A target that fails to build is silently left out of the install.
for t in "${targets[@]}" mm; do
	grep -q "^$t:" "$inst/kselftest-list.txt" ||
		die "kselftest target $t was not installed (see build/logs/ksft-build.log)"
done

# Upstream proc tests left out, because they need namespaces (PID, IPC,
# NET) that the guest kernel does not build; none of them reads rss_stat.
PROC_EXCLUDE="proc-loadavg-001 setns-dcache setns-sysvipc"
tests=()
while IFS=: read -r t name; do
	case " $PROC_EXCLUDE " in *" $name "*) [ "$t" = proc ] && continue ;; esac
	for want in "${targets[@]}"; do
		[ "$t" = "$want" ] && tests+=(-t "$t:$name")
	done
done <"$inst/kselftest-list.txt"

mm_bins=$(git -C "$LINUX" diff "$BASE_TAG" HEAD -- tools/testing/selftests/mm/run_vmtests.sh |
	sed -n 's/^+CATEGORY="[^"]*" run_test \.\/\([^ ]*\).*/\1/p' | sort -u | tr '\n' ' ')
[ -z "$harness" ] || [ -n "$mm_bins" ] || die "--only $harness: no run_vmtests.sh category, and the series adds no mm test"
runner=$BUILD/ksft-run.sh	# not under /tmp: the guest mounts a tmpfs there
cat >"$runner" <<SCRIPT
#!/bin/sh
# Swap on zram, so that MADV_PAGEOUT can reclaim anon pages.
if [ -e /sys/block/zram0 ] && echo 256M >/sys/block/zram0/disksize &&
   mkswap /dev/zram0 >/dev/null && swapon /dev/zram0; then
	echo "# swap: 256M on zram0"
fi
cd /ksft
${tests[*]:+./run_kselftest.sh ${tests[*]}}
cd mm
${MM_CATEGORIES:+echo "# mm: run_vmtests.sh -t \"$MM_CATEGORIES\""}
${MM_CATEGORIES:+bash ./run_vmtests.sh -t "$MM_CATEGORIES" | sed -n 's/^ok /ok mm: /p; s/^not ok /not ok mm: /p; /^#/p'}
${harness:+for t in $mm_bins; do ./\$t -t "$harness"; done}
SCRIPT
chmod +x "$runner"

for k in "$@"; do
	name=$(basename "$k")
	tap=$LOGS/ksft-$name.tap
	image=$k
	[ "$k" != kcsan ] || image=$LINUX/.out-kcsan/arch/x86/boot/bzImage
	say "kselftests: booting the $k kernel, -smp $GUEST_SMP (TAP: ${tap#"$TOP"/})"
	set +e
	# run_kselftest.sh needs coreutils timeout (--foreground), not busybox's.
	"$TOP/scripts/vm" --kernel "$image" --smp "$GUEST_SMP" --timeout "${KSFT_TIMEOUT:-1500}" \
		--log "$BUILD/vm/ksft-$name" --dir "$inst:/ksft" --add /bin/bash \
		--add /usr/bin/timeout \
		--add "$runner" -- "$runner" >"$tap" 2>&1
	rc=$?
	set -e
	p=$(grep '^ok ' "$tap" | grep -vc '# SKIP' || true)
	s=$(grep '^ok ' "$tap" | grep -c '# SKIP' || true)
	f=$(grep -c '^not ok ' "$tap" || true)
	# Show the output of each failing test: the "#" lines before it.
	awk '/^# selftests: |^# running /{buf = ""} /^# /{buf = buf "\n    " $0; next}
	     /^not ok /{print "  " $0 buf} /^(not )?ok /{buf = ""}' "$tap" | head -80
	# Every test the series adds must have given a result.
	for t in ${series_tests[@]+"${series_tests[@]}"}; do
		grep -Eq "^(not )?ok mm: [0-9]+ ${t#* }( |$)" "$tap" ||
			{ echo "  $k: no result from mm test ${t#* } (run_vmtests.sh -t ${t% *})"; f=$((f + 1)); }
	done
	# Their cases ("# ok N test.case" lines): with the series, a skipped
	# case is a failure (fail_function or tracing would be missing).
	[ "$k" = base ] || for t in ${series_tests[@]+"${series_tests[@]}"}; do
		while IFS= read -r line; do
			echo "  $k: ${line#\# }: a test of the series skipped"
			f=$((f + 1))
		done < <(grep -E "^# ok [0-9]+ ${t#* }\.[^ ]+ # SKIP" "$tap" || true)
	done
	for t in ${series_targets[@]+"${series_targets[@]}"}; do
		grep -Eq "^(not )?ok [0-9]+ selftests: $t: " "$tap" ||
			{ echo "  $k: no result from kselftest target $t"; f=$((f + 1)); }
	done
	if [ "$rc" -ne 0 ]; then
		tail -5 "$tap" | sed 's/^/    /'
		echo "  $k: the guest run failed (status $rc; console: build/vm/ksft-$name/console.log)"
		f=$((f + 1))
	fi
	echo "  $k: $p passed, $f failed, $s skipped"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
tally_end kselftests
