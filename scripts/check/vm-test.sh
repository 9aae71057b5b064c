#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two guests at once keep what is theirs: scripts/guest/vm runs without --log
# each get a log directory of their own (build/LINE/vm/last points at the
# newest), and a run with the --log of a running guest is refused at
# once, leaving that guest alone. Boots the patched test kernel twice, at
# the same time. Each guest leaves its verdict in verdict.json: ok for A,
# failed with the command's status for a guest whose command exits 7.
# Prints "vm: N passed, N failed, N skipped" on the last line; exits 1
# when a check failed.
set -uo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm

vm=$TOP/scripts/guest/vm
last=$BUILD/vm/last
before=$(readlink "$last" 2>/dev/null)
say "vm: guest A (sleeps 10 s) and, while it runs, a run that reuses its log directory and guest B"
# shellcheck disable=SC2016 # $OUT is the guest's
"$vm" --kernel patched --timeout 300 -- sh -c 'sleep 10; echo A >"$OUT/who"' >"$LOGS/vm-test-a.log" 2>&1 &
a_pid=$!
for _ in $(seq 240); do		# until A has made its directory (after a KVM probe)
	[ "$(readlink "$last" 2>/dev/null)" = "$before" ] || break
	sleep 0.5
done
a_dir=$BUILD/vm/$(readlink "$last")
[ "$a_dir" != "$BUILD/vm/$before" ] || { kill "$a_pid"; die "vm: guest A made no log directory"; }

"$vm" --kernel patched --timeout 300 --log "$a_dir" -- true >"$LOGS/vm-test-c.log" 2>&1
c_rc=$?
# shellcheck disable=SC2016 # $OUT is the guest's
"$vm" --kernel patched --timeout 300 -- sh -c 'echo B >"$OUT/who"' >"$LOGS/vm-test-b.log" 2>&1
b_rc=$?
b_dir=$BUILD/vm/$(readlink "$last")
wait "$a_pid"
a_rc=$?

ok() {	# ok WHAT STATUS: one check, passed when STATUS is 0
	if [ "$2" = 0 ]; then tally pass "$1"; else tally fail "$1"; fi
}
ok "guest B, started while A ran, exits 0 (log: ${LOGS#"$TOP"/}/vm-test-b.log)" "$b_rc"
[ "$b_dir" != "$a_dir" ] && [ "$(cat "$b_dir/out/who" 2>/dev/null)" = B ]
ok "guest B has a log directory of its own, and ${BUILD#"$TOP"/}/vm/last points at it" $?
[ "$c_rc" != 0 ] && grep -q "another scripts/guest/vm" "$LOGS/vm-test-c.log"
ok "a run with guest A's --log is refused, saying why (log: ${LOGS#"$TOP"/}/vm-test-c.log)" $?
[ "$a_rc" = 0 ] && [ "$(cat "$a_dir/out/who" 2>/dev/null)" = A ] &&
	grep -q "lazy-rss-vm: exit status 0" "$a_dir/console.log"
ok "guest A exits 0 with its own console and output (log: ${LOGS#"$TOP"/}/vm-test-a.log)" $?
verdict() { python3 -c 'import json, sys; v = json.load(open(sys.argv[1])); print(v["verdict"], v["status"])' "$1/verdict.json"; }
[ "$(verdict "$a_dir")" = "ok 0" ]
ok "guest A's verdict.json says ok 0" $?
"$vm" --kernel patched --timeout 300 --log "$BUILD/vm/vm-test-d" -- sh -c 'exit 7' >"$LOGS/vm-test-d.log" 2>&1
d_rc=$?
[ "$d_rc" = 7 ] && [ "$(verdict "$BUILD/vm/vm-test-d")" = "failed 7" ]
ok "a guest whose command exits 7: vm exits 7, its verdict.json says failed 7 (log: ${LOGS#"$TOP"/}/vm-test-d.log)" $?
tally_end vm
