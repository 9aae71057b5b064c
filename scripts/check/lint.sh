#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make lint: shellcheck of every shell script of the project (shell_scripts
# in scripts/lib/core.sh), with the settings of .shellcheckrc.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps check
mapfile -t scripts < <(shell_scripts)
[ ${#scripts[@]} -gt 0 ] || die "no shell script found under scripts/"
cd "$TOP"	# .shellcheckrc and the source= paths are relative to it
shellcheck "${scripts[@]}"
