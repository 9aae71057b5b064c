#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: scripts/setup/deps.sh installs every package that the scripts need.
# For each script, the groups it installs (need_deps GROUP...) or names
# ("run scripts/setup/deps.sh GROUP") are given to scripts/setup/deps.sh with stand-ins
# for dpkg-query (nothing is installed) and apt-get (records what it is
# asked to install) first in PATH. Every external command the script calls
# and every host file it uses by path (scripts/check/commands.py) must come from
# a recorded package or from what those depend on, unless Debian always
# has it (Priority: required). No root, no network; seconds.
# Prints "deps: N passed, N failed, N skipped" (one check per script).
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build check

stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
printf '#!/bin/sh\nexit 1\n' >"$stub/dpkg-query"
printf '#!/bin/sh\necho "$*" >>"%s/apt.log"\n' "$stub" >"$stub/apt-get"
printf '#!/bin/sh\nexec "$@"\n' >"$stub/sudo"
chmod +x "$stub"/*

recorded() {	# recorded GROUP,...: the packages deps.sh asks apt-get for
	local groups
	IFS=, read -r -a groups <<<"$1"
	rm -f "$stub/apt.log"
	PATH=$stub:$PATH TMPDIR=$stub "$TOP/scripts/setup/deps.sh" "${groups[@]}" >/dev/null 2>&1 ||
		die "scripts/setup/deps.sh ${groups[*]} failed with the stand-ins"
	[ -f "$stub/apt.log" ] || return 0
	sed -n 's/^install //p' "$stub/apt.log" | tr ' ' '\n' | grep -v -e '^-' -e '^$' | sort -u
}
closure() {	# packages $@ and, recursively, what they depend on (installed)
	[ $# -gt 0 ] || return 0
	apt-cache depends --recurse --installed --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances "$@" 2>/dev/null |
		grep -v '^ ' | sort -u
}
installed() { dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null | grep -c 'ok installed' || true; }

mapfile -t scripts < <(host_scripts)
uses=$(python3 "$TOP/scripts/check/commands.py" "${scripts[@]}")
# The package of each command and file, found in one dpkg-query call: the
# scripts run Debian's programs (a python3 of pyenv in PATH is not one).
declare -A path_of owner prio
while read -r c; do
	case $(type -t -- "$c") in builtin|keyword) continue ;; esac
	f=$c
	[ "${f#/}" != "$f" ] || f=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P -- "$c") || continue
	path_of[$c]="$f $(readlink -f "$f")"
done < <(awk '{print $3}' <<<"$uses" | sort -u)
paths=()
for c in "${!path_of[@]}"; do
	for f in ${path_of[$c]}; do paths+=("$f" "/usr${f#/usr}" "${f#/usr}"); done
done
while IFS=: read -r pkg f; do
	owner[${f# }]=${pkg%%,*}
done < <(dpkg-query -S "${paths[@]}" 2>/dev/null | grep -v '^diversion by')
while read -r pkg p; do prio[$pkg]=$p; done < <(dpkg-query -W -f='${Package} ${Priority}\n' "${owner[@]}")
owner_of() {	# the package of command or file $1, or nothing
	local f g
	for f in ${path_of[$1]:-}; do
		for g in "$f" "/usr${f#/usr}" "${f#/usr}"; do
			[ -z "${owner[$g]:-}" ] || { echo "${owner[$g]}"; return; }
		done
	done
}

all_groups=$(sed -n 's/^\t\[\([a-z]*\)\]=.*/\1/p' "$TOP/scripts/setup/deps.sh" | paste -sd,)
[ -n "$all_groups" ] || die "cannot read the package groups of scripts/setup/deps.sh"
unnamed=()
declare -A cache
while read -r script groups cmds; do
	name=${script#"$TOP"/}
	[ "$name" != scripts/setup/deps.sh ] || continue
	if [ "$groups" = - ]; then groups=$all_groups; fi
	if [ -z "${cache[$groups]+x}" ]; then
		pkgs=$(recorded "$groups")
		# shellcheck disable=SC2086 # one package a word
		cache[$groups]="$pkgs"$'\n'"$(closure $pkgs)"
		# shellcheck disable=SC2086
		cache[$groups.installed]=$(( $(installed $pkgs) == $(wc -w <<<"$pkgs") ))
	fi
	bad=() unknown=() uses=0
	for c in ${cmds//,/ }; do
		case $(type -t -- "$c") in builtin|keyword) continue ;; esac
		p=$(owner_of "$c")
		if [ -z "$p" ]; then
			unknown+=("$c")
			continue
		fi
		[ "${prio[$p]}" != required ] || continue
		uses=$((uses + 1))
		grep -qxF "$p" <<<"${cache[$groups]}" || bad+=("$c ($p)")
	done
	if [ ${#unknown[@]} -gt 0 ] && [ "${cache[$groups.installed]}" = 1 ]; then
		bad+=("${unknown[@]/%/ (not installed by its groups)}")
		unknown=()
	fi
	if [ "$uses" -gt 0 ] && [ "$groups" = "$all_groups" ] && ! grep -q 'need_deps\|deps\.sh [a-z]' "$script"; then
		unnamed+=("$name")
	fi
	if [ ${#bad[@]} -gt 0 ]; then
		tally fail "$name (deps.sh ${groups//,/ }) lacks: ${bad[*]}"
	elif [ ${#unknown[@]} -gt 0 ]; then
		tally skip "$name: ${unknown[*]} not on this machine (deps.sh ${groups//,/ } is not installed)"
	else
		tally pass "$name (deps.sh ${groups//,/ })"
	fi
done < <(awk '{ k = $1 " " $2; if (!(k in c)) order[n++] = k; c[k] = c[k] "," $3 }
	     END { for (i = 0; i < n; i++) print order[i], substr(c[order[i]], 2) }' <<<"$uses")
[ ${#unnamed[@]} -eq 0 ] || warn "these scripts name no deps.sh group (checked against all groups): ${unnamed[*]}"
tally_end deps
