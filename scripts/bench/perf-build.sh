#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build perf from the base tree's tools/perf (the kernel's own `perf bench
# syscall fork|execve` and `perf bench sched pipe|messaging`; Debian's perf
# 6.1 has no syscall fork or execve), static and with no optional library,
# for the bench guests. Prints its path; builds only when the base moved.
# usage: scripts/bench/perf-build.sh
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build bench
need_tree "$BASE"

out=$BUILD/perf
stamp=$(git -C "$BASE" rev-parse HEAD) || die "cannot read the commit of $BASE"
if [ -x "$out/perf" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$out/perf"
	exit 0
fi
mkdir -p "$out"
say "building perf from ${BASE#"$TOP"/}/tools/perf, static, no optional libraries (~3 min; log: ${out#"$TOP"/}/build.log)" >&2
# The perf binary only: the dlfilter examples are shared objects, which
# do not link with -static. NO_RUST: perf 7.x builds a Rust test workload
# whenever a rustc is in PATH (one not from Debian aborted the build).
no=(LIBELF LIBTRACEEVENT JEVENTS LIBPYTHON LIBPERL SLANG GTK2 LIBUNWIND LIBNUMA
    LIBCRYPTO LIBBPF BPF_SKEL LIBCAP ZLIB LZMA ZSTD LIBBABELTRACE AUXTRACE LIBPFM4
    SDT JVMTI DEMANGLE SHELLCHECK RUST)
flags=()
for n in "${no[@]}"; do flags+=("NO_$n=1"); done
if ! make -C "$BASE/tools/perf" O="$out" LDFLAGS=-static WERROR=0 "${flags[@]}" \
		-j"$JOBS" "$out/perf" >"$out/build.log" 2>&1; then
	grep -E -m 20 'error|Error' "$out/build.log" >&2 || tail -20 "$out/build.log" >&2
	die "building perf failed (full log: $out/build.log)"
fi
"$out/perf" bench syscall fork -l 1 >/dev/null || die "$out/perf does not run"
echo "$stamp" >"$out/stamp"
echo "$out/perf"
