# SPDX-License-Identifier: GPL-2.0
# The helpers of the project's scripts, one file per concern; every script
# sources this one. Sourced, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib/core.sh
. "$TOP/scripts/lib/core.sh"
# shellcheck source=scripts/lib/guest.sh
. "$TOP/scripts/lib/guest.sh"
# shellcheck source=scripts/lib/kernels.sh
. "$TOP/scripts/lib/kernels.sh"
# shellcheck source=scripts/lib/bench.sh
. "$TOP/scripts/lib/bench.sh"
# shellcheck source=scripts/lib/series.sh
. "$TOP/scripts/lib/series.sh"
# shellcheck source=scripts/lib/tally.sh
. "$TOP/scripts/lib/tally.sh"
