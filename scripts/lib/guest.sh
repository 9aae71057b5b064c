# SPDX-License-Identifier: GPL-2.0
# Guests: their vCPUs, and what their kernel logs must never show. Sourced by scripts/lib/lib.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

# A number of vCPUs a guest can have, at least $2 (default 1): the pc
# machine takes up to 255 vCPUs; the guest kernels have NR_CPUS=256.
cpus_ok() { [[ $1 =~ ^[1-9][0-9]*$ ]] && [ "$1" -le 255 ] && [ "$1" -ge "${2:-1}" ]; }
# Online vCPUs of a test guest (scripts/guest/vm --online, make selftest
# ONLINE=, KUnit on QEMU). SMP= was its name before: QEMU's -smp counts the
# possible ones.
[ -z "${SMP:-}" ] || die "SMP=$SMP: the online vCPUs of the test guests are ONLINE= now"
GUEST_ONLINE=${ONLINE:-4}
cpus_ok "$GUEST_ONLINE" || die "ONLINE=$ONLINE: want a number of vCPUs from 1 to 255"
# Possible CPUs of the test guests (KUnit on x86, kselftests): two more than
# are online at boot, present and offline, so that the tests see per-CPU
# state of CPUs that were not online when it was set up, and bring one up.
GUEST_POSSIBLE=$((GUEST_ONLINE + 2 > 255 ? 255 : GUEST_ONLINE + 2))

# What a kernel log must never contain during our runs; STALL_LOG is the
# part of it that says the kernel is stuck (scripts/guest/vm stops the
# guest STALL_GRACE seconds after it appears). AE_AML_LOOP_TIMEOUT: an
# ACPI method (_PRT) ran out of time at boot on a starved host, leaving the
# guest's virtio disk without an interrupt: it then idles until its
# timeout instead of failing.
STUCK_LOG='INFO: task .* blocked|rcu: INFO:|self-detected stall|AE_AML_LOOP_TIMEOUT'
BAD_LOG="Kernel panic|Oops|BUG:|WARNING:|Bad rss-counter state|general protection fault|KCSAN:|KASAN:|UBSAN:|ODEBUG:|$STUCK_LOG"
# "soft lockup" says so after "BUG:", which BAD_LOG already has.
STALL_LOG="$STUCK_LOG|soft lockup"
STALL_GRACE=30

# Print the first bad report of log $1 and return 0 when it has one.
log_has_bad() {
	grep -E -q "$BAD_LOG" "$1" || return 1
	grep -E -m 1 -A 25 "$BAD_LOG" "$1" | sed 's/^/  | /' >&2
	return 0
}
