# SPDX-License-Identifier: GPL-2.0
# The kernels: the line's registry (patches/LINE/kernels), the variants, their trees and images, their configs. Sourced by scripts/lib/lib.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

# The kernels: the registry kernels of the line's series folder
# (patches/LINE/kernels), one line each, NAME ROLE PATCHES BOOT
# DESCRIPTION separated by tabs (see its header).
KERNELS_FILE=$PATCHES/kernels
kernel_names() {	# every NAME, in the registry's order, one a line
	awk -F'\t+' '!/^#/ && NF >= 5 { print $1 }' "$KERNELS_FILE"
}
kernels_of_role() {	# kernels_of_role ROLE: the NAMEs of ROLE, in the registry's order
	awk -F'\t+' -v r="$1" '!/^#/ && NF >= 5 && $2 == r { print $1 }' "$KERNELS_FILE"
}
kernel_field() {	# kernel_field NAME role|patches|boot|desc
	local n
	case $2 in role) n=2 ;; patches) n=3 ;; boot) n=4 ;; desc) n=5 ;; *) die "kernel_field: no field $2" ;; esac
	awk -F'\t+' -v k="$1" -v n="$n" '!/^#/ && NF >= 5 && $1 == k { print $n; found = 1; exit }
		END { exit !found }' "$KERNELS_FILE" ||
		die "unknown kernel '$1' (the kernels of ${KERNELS_FILE#"$TOP"/}: $(kernel_names | paste -sd' '))"
}
kernel_boot() {	# the kernel command line that NAME's guests add (may be empty)
	local b
	b=$(kernel_field "$1" boot) || exit
	[ "$b" = - ] || echo "$b"
}
# The bench tree of NAME: build/bench-FIRST, FIRST being the first kernel
# of the registry with NAME's patches (lazyoff: build/bench-patched).
bench_tree() {
	local p
	p=$(kernel_field "$1" patches) || exit
	echo "$BUILD/bench-$(awk -F'\t+' -v p="$p" '!/^#/ && NF >= 5 && $3 == p { print $1; exit }' "$KERNELS_FILE")"
}
# kernel_frags NAME: the config fragments among NAME's PATCHES (NAME.config
# files of the line's bench-only/), one path a line: a bench-only kernel
# that turns off what has a prompt (the 7.3 floor: SCHED_CACHE).
kernel_frags() {
	local p
	p=$(kernel_field "$1" patches) || exit
	for p in ${p//,/ }; do
		case $p in
		*.config) [ -f "$PATCHES/bench-only/$p" ] ||
				die "kernel $1: no config fragment ${PATCHES#"$TOP"/}/bench-only/$p"
			echo "$PATCHES/bench-only/$p" ;;
		esac
	done
}
# Guest kernel variants (scripts/tree/build.sh): test (guest + debug options),
# bench (guest only), kasan and kcsan (test + KASAN or KCSAN), norseq
# (test without rseq, so without mm_cid), irqsoff (bench + the irqsoff
# tracer).
VARIANTS="test bench kasan kcsan irqsoff norseq"
variant_ok() { [[ " $VARIANTS " == *" $1 "* ]]; }
# kernel_tree NAME VARIANT: the source tree of that kernel: the base and
# the patched test kernels (every variant but bench) are built in
# build/LINE/base and build/LINE/linux, the others in their bench tree.
kernel_tree() {
	variant_ok "$2" || die "unknown kernel variant '$2' ($VARIANTS)"
	case $2/$1 in
	bench/*|irqsoff/*) bench_tree "$1" ;;
	*/base)		echo "$BASE" ;;
	*/patched)	echo "$LINUX" ;;
	*)		bench_tree "$1" ;;
	esac
}
kernel_image() {	# kernel_image NAME VARIANT: the bzImage scripts/tree/build.sh makes
	local t
	t=$(kernel_tree "$1" "$2") || exit
	echo "$t/.out-$2/arch/x86/boot/bzImage"
}

# config_frags NAME...: the config fragments NAME (guest.config, ...), each
# configs/NAME followed by configs/LINE/NAME when the line has one (the
# last value of a symbol wins). One path a line.
config_frags() {
	local f
	for f in "$@"; do
		[ -f "$TOP/configs/$f" ] || [ -f "$LINE_CONFIGS/$f" ] ||
			die "no config fragment $f in configs/ or ${LINE_CONFIGS#"$TOP"/}/"
		[ ! -f "$TOP/configs/$f" ] || echo "$TOP/configs/$f"
		[ ! -f "$LINE_CONFIGS/$f" ] || echo "$LINE_CONFIGS/$f"
	done
}

# Every CONFIG_X=v of fragment $1 must hold in .config $2 ("=n" means unset).
# When fragments set a symbol twice, the last one wins, as in kconfig.
check_config() {
	local bad=0 line sym val
	while IFS= read -r line; do
		sym=${line%%=*} val=${line#*=}
		if [ "$val" = n ]; then
			grep -q "^$sym=" "$2" || continue
		else
			grep -qxF "$sym=$val" "$2" && continue
		fi
		printf 'config: %s requested, .config has: %s\n' "$line" \
			"$(grep -E "^(# )?${sym}[= ]" "$2" || echo "(not visible)")" >&2
		bad=1
	done < <(awk -F= '/^CONFIG_[A-Za-z0-9_]*=/ { last[$1] = $0; order[NR] = $1 }
			END { for (i = 1; i <= NR; i++) if (order[i] in last) { print last[order[i]]; delete last[order[i]] } }' "$1")
	return $bad
}
