#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel text the series adds: scripts/bloat-o-meter -t of the line's
# tree on the bench kernels' vmlinux (the bench configuration: no debug
# options), the registry's reference kernel against each kernel named.
# scripts/tree/build.sh builds them first, or only what changed.
#
# usage: scripts/bench/text-size.sh [--out DIR] [KERNEL...]
#   KERNEL  kernels of the registry ./kernels [its candidates]
#   --out   where the report goes [results/LINE]
# Writes DIR/text-size.md, a table of bloat-o-meter's totals, and
# DIR/text-size/REF-KERNEL.txt, its whole output for each kernel.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"

outdir=$RESULTS_DIR
usage() { sed -n '/^# usage/,/^# Writes/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--out)		[ $# -ge 2 ] || usage; outdir=$2; shift 2 ;;
	-h|--help)	usage ;;
	-*)		echo "scripts/bench/text-size.sh: unknown option '$1'" >&2; usage ;;
	*)		break ;;
	esac
done
ref=$(kernels_of_role reference | head -1)
[ -n "$ref" ] || die "${KERNELS_FILE#"$TOP"/} has no reference kernel"
if [ $# -gt 0 ]; then
	kernels=("$@")
else
	mapfile -t kernels < <(kernels_of_role candidate)
fi
for k in "${kernels[@]}"; do
	kernel_field "$k" role >/dev/null	# dies on a kernel the registry lacks
	[ "$k" != "$ref" ] || die "'$k' is the reference kernel, which the others are measured against"
done
need_deps build

vmlinux() { echo "$(kernel_tree "$1" bench)/.out-bench/vmlinux"; }
for k in "$ref" "${kernels[@]}"; do
	say "text-size: building the $k bench kernel"
	"$TOP/scripts/tree/build.sh" bench "$k"
done
mkdir -p "$outdir/text-size"
table=$outdir/text-size.md
{
	echo "# Kernel text: $ref against each kernel"
	echo
	echo "$(base_info kernel) ($(base_info source)), x86_64 bench configuration; \`scripts/bloat-o-meter -t\` of the line's tree on the two vmlinux, whole output in [text-size/](text-size/). Made by \`make text-size\`."
	echo
	echo "| kernel | functions added/removed | grown/shrunk | bytes up/down | net bytes | text $ref → kernel |"
	echo "|---|---|---|---|---|---|"
} >"$table"
for k in "${kernels[@]}"; do
	out=$outdir/text-size/$ref-$k.txt
	python3 "$LINUX/scripts/bloat-o-meter" -t "$(vmlinux "$ref")" "$(vmlinux "$k")" >"$out" ||
		die "bloat-o-meter of $ref against $k failed"
	# add/remove: A/R grow/shrink: G/S up/down: U/-D (N)
	read -r add rem grow shrink up down net < <(sed -n '1s|^add/remove: \([0-9]*\)/\([0-9]*\) grow/shrink: \([0-9]*\)/\([0-9]*\) up/down: \([0-9]*\)/\(-[0-9]*\) (\(-\{0,1\}[0-9]*\))$|\1 \2 \3 \4 \5 \6 \7|p' "$out")
	[ -n "${net:-}" ] || die "bloat-o-meter's first line is not its totals (see ${out#"$TOP"/})"
	# Total: Before=B, After=A, chg +P%
	total=$(sed -n 's|^Total: Before=\([0-9]*\), After=\([0-9]*\), chg \(.*\)$|\1 → \2 (\3)|p' "$out")
	[ -n "$total" ] || die "bloat-o-meter's last line is not its text sizes (see ${out#"$TOP"/})"
	echo "| $k | $add/$rem | $grow/$shrink | +$up/$down | $net | $total |" >>"$table"
	say "text-size: $k: $net bytes of text against $ref ($total)"
done
say "text-size: ${table#"$TOP"/} written"
