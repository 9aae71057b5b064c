#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages a step needs, only those that are missing.
# usage: scripts/setup/deps.sh GROUP...   (groups: build vm check bench arm64)
# The kernel sources are no package here: scripts/tree/tree.sh fetches each
# line's base (./lines) with an apt state of its own, never installed.
set -euo pipefail

declare -A pkgs=(
	[build]="gcc make flex bison bc libelf-dev libssl-dev
		 cpio xz-utils ccache python3 git perl kmod debian-archive-keyring"
	[vm]="qemu-system-x86 busybox-static cpio"
	[check]="sparse dpkg-dev libcap-dev libnuma-dev numactl rsync python3-ply python3-git shellcheck
		 gcc-s390x-linux-gnu shfmt"
	[arm64]="gcc-aarch64-linux-gnu qemu-system-arm"
	[bench]="numactl stress-ng linux-perf gnuplot-nox dpkg-dev patch pkg-config libglib2.0-dev"
)

want=()
for group in "$@"; do
	[ -n "${pkgs[$group]:-}" ] || { echo "error: unknown package group '$group' (${!pkgs[*]})" >&2; exit 2; }
	# -d '': the whole group, across its newlines (read stops at EOF).
	read -r -d '' -a list <<<"${pkgs[$group]}" || true
	want+=("${list[@]}")
done

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=''
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
# Another install (a second make job, unattended-upgrades) holds dpkg's
# lock: wait for it, as apt(8) does, rather than fail at once.
if ! { $sudo apt-get update -qq &&
       $sudo apt-get install -oDPkg::Lock::Timeout=600 -y -qq --no-install-recommends "${missing[@]}"; } >"${TMPDIR:-/tmp}/lazy-rss-apt.log" 2>&1; then
	still=()
	for p in "${missing[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || still+=("$p")
	done
	echo "error: could not install: ${still[*]} (apt log: ${TMPDIR:-/tmp}/lazy-rss-apt.log)" >&2
	exit 1
fi
