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

# vm_pair OUTDIR VM_RUN MODS -- GUEST_CMD...: two VMs joined by a QEMU
# network (a UDP socket pair on the host's loopback, eth0 in each), one
# vCPU each, both running GUEST_CMD with "server" (VM 1) or "client"
# (VM 2) appended; their output in OUTDIR/vm1.out and vm2.out, their
# consoles in OUTDIR/vmN.console.log. MODS: the words before "--" go to
# vm-run.sh (e.g. --module FILE). Sets VM_PAIR_RC1 and VM_PAIR_RC2.
vm_pair() {
	local out=$1 run=$2 base p1 p2 pid1 pid2 mods=()
	shift 2
	while [[ $# -gt 0 && $1 != -- ]]; do
		mods+=("$1")
		shift
	done
	shift
	mkdir -p "$out"
	base=$((20000 + (RANDOM % 20000) * 2))
	p1=$base p2=$((base + 1))
	"$run" --smp 1 --timeout 900 --quiet --net-socket "$p1:$p2" \
		--log "$out/vm1.console.log" "${mods[@]}" -- "$@" server >"$out/vm1.out" 2>&1 &
	pid1=$!
	"$run" --smp 1 --timeout 900 --quiet --net-socket "$p2:$p1" \
		--log "$out/vm2.console.log" "${mods[@]}" -- "$@" client >"$out/vm2.out" 2>&1 &
	pid2=$!
	wait "$pid1"
	VM_PAIR_RC1=$?
	wait "$pid2"
	VM_PAIR_RC2=$?
}
