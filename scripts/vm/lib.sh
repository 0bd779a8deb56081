# shellcheck shell=bash
# Shared helpers for the dray scripts; sourced, never run.
# shellcheck disable=SC2034 # the variables are used by the sourcing scripts

# Repository root, from the location of this file (scripts/vm/lib.sh).
DRAY_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# Downloads and derived artifacts, shared by every checkout.
DRAY_CACHE=${DRAY_CACHE:-${HOME:?HOME is not set}/.cache/dray}
# Pinned kernel ABIs of the two LTS series tested (scripts/kver.sh may fall
# back to another one of the same series): Debian 12's own 6.1, and the 6.12
# that Debian 12 carries (built with its gcc 12).
DRAY_KVER_PINNED=6.1.0-57-amd64
DRAY_KVER_PINNED_6_12=6.12.117+deb12-amd64

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

note() {
	echo "${0##*/}: $*" >&2
}
