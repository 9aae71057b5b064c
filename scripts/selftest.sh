#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build and install the kselftests of the patched tree (our rss_stat target,
# upstream's proc target, and a subset of mm), then run them in the guest on
# each kernel named: scripts/selftest.sh base patched
# Prints "N passed, N failed, N skipped" on the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: selftest.sh KERNEL..."
smp=${SMP:-4}
need_tree "$LINUX"
# Targets run with run_kselftest.sh; rss_stat only once the series has it.
targets=(proc)
[ -d "$LINUX/tools/testing/selftests/rss_stat" ] && targets=(rss_stat proc)
# mm's own runner, run_vmtests.sh, for the categories whose tests fault,
# unmap, reclaim or reap memory, that is, change rss_stat, and that finish
# in minutes under TCG.
# Left out: "mmap" (map_populate needs socketpair(), and the guest has no
# CONFIG_NET) and "soft_dirty" (no CONFIG_MEM_SOFT_DIRTY).
MM_CATEGORIES=${MM_CATEGORIES:-madv_populate mlock process_mrelease mkdirty}

out=$LINUX/.out-ksft
inst=$BUILD/ksft
logdir=$BUILD/logs
mkdir -p "$logdir"
say "kselftests: building ${targets[*]} mm (log: ${logdir#"$TOP"/}/ksft-build.log)"
{
	make -C "$LINUX" O="$out" headers
	# Debian's 6.12 tree: mm/khugepaged.c uses ksft_print_msg() without
	# including kselftest.h; include it for every mm test instead of
	# patching the base.
	rm -rf "$inst"
	make -C "$LINUX/tools/testing/selftests" O="$out" -j"$JOBS" \
		TARGETS="${targets[*]} mm" KSFT_INSTALL_PATH="$inst" \
		EXTRA_CFLAGS="-include $LINUX/tools/testing/selftests/kselftest.h" install
} >"$logdir/ksft-build.log" 2>&1 || { tail -30 "$logdir/ksft-build.log" >&2; die "building the kselftests failed"; }
# A target that fails to build is silently left out of the install.
for t in "${targets[@]}" mm; do
	grep -q "^$t:" "$inst/kselftest-list.txt" ||
		die "kselftest target $t was not installed (see ${logdir#"$TOP"/}/ksft-build.log)"
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

runner=$BUILD/ksft-run.sh	# not under /tmp: the guest mounts a tmpfs there
cat >"$runner" <<SCRIPT
#!/bin/sh
# Swap on zram, so that MADV_PAGEOUT can reclaim anon pages.
if [ -e /sys/block/zram0 ] && echo 256M >/sys/block/zram0/disksize &&
   mkswap /dev/zram0 >/dev/null && swapon /dev/zram0; then
	echo "# swap: 256M on zram0"
fi
cd /ksft
./run_kselftest.sh ${tests[*]}
echo "# mm: run_vmtests.sh -t \"$MM_CATEGORIES\""
cd mm && bash ./run_vmtests.sh -t "$MM_CATEGORIES" | sed -n 's/^ok /ok mm: /p; s/^not ok /not ok mm: /p; /^#/p'
SCRIPT
chmod +x "$runner"

passed=0 failed=0 skipped=0
for k in "$@"; do
	tap=$logdir/ksft-$k.tap
	say "kselftests: booting $k kernel, -smp $smp (TAP: ${tap#"$TOP"/})"
	set +e
	# run_kselftest.sh needs coreutils timeout (--foreground), not busybox's.
	"$TOP/scripts/vm" --kernel "$k" --smp "$smp" --timeout "${KSFT_TIMEOUT:-1500}" \
		--log "$BUILD/vm/ksft-$k" --dir "$inst:/ksft" --add /bin/bash \
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
	if [ "$rc" -ne 0 ]; then
		tail -5 "$tap" | sed 's/^/    /'
		echo "  $k: the guest run failed (status $rc; console: build/vm/ksft-$k/console.log)"
		f=$((f + 1))
	fi
	echo "  $k: $p passed, $f failed, $s skipped"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "kselftests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
