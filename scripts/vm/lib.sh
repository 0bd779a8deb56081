# shellcheck shell=bash
# Shared helpers for the dray scripts; sourced, never run.
# shellcheck disable=SC2034 # the variables are used by the sourcing scripts

# Repository root, from the location of this file (scripts/vm/lib.sh).
DRAY_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# Downloads and derived artifacts, shared by every checkout.
DRAY_CACHE=${DRAY_CACHE:-${HOME:?HOME is not set}/.cache/dray}
# Pinned kernel ABI (scripts/kver.sh may fall back to another one).
DRAY_KVER_PINNED=6.1.0-57-amd64

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

note() {
	echo "${0##*/}: $*" >&2
}
