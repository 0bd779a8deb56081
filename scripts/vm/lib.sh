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
# vCPU each (maxcpus 2, see vm-run.sh), both running GUEST_CMD with
# "server" (VM 1) or "client" (VM 2) appended; their output in
# OUTDIR/vm1.out and vm2.out, their consoles in OUTDIR/vmN.console.log.
# MODS: the words before "--" go to vm-run.sh (e.g. --module FILE).
# Sets VM_PAIR_RC1 and VM_PAIR_RC2.
# Each QEMU has a QMP socket (OUTDIR/vmN.qmp, when OUTDIR's path leaves
# room for one); when a guest's console reports virtio-net's "TX timeout",
# both NICs' state as QEMU sees it (scripts/vm/qmp.py net) goes to
# OUTDIR/stall.txt, twice, 3 s apart, and the pair is stopped (such a queue has never restarted, and the guests
# would otherwise wait out every timeout left; Documentation/benchmark.md,
# "The transmit stall between two VMs").
vm_pair() {
	local out=$1 run=$2 base p1 p2 pid1 pid2 watch mods=() q1=() q2=()
	shift 2
	while [[ $# -gt 0 && $1 != -- ]]; do
		mods+=("$1")
		shift
	done
	shift
	mkdir -p "$out"
	rm -f "$out/stall.txt"
	# a UNIX socket's path has room for 107 bytes
	if [[ ${#out} -lt 96 ]]; then
		q1=(--qmp "$out/vm1.qmp") q2=(--qmp "$out/vm2.qmp")
	fi
	base=$((20000 + (RANDOM % 20000) * 2))
	p1=$base p2=$((base + 1))
	"$run" --smp 1 --timeout 900 --quiet --net-socket "$p1:$p2" "${q1[@]}" \
		--log "$out/vm1.console.log" "${mods[@]}" -- "$@" server >"$out/vm1.out" 2>&1 &
	pid1=$!
	"$run" --smp 1 --timeout 900 --quiet --net-socket "$p2:$p1" "${q2[@]}" \
		--log "$out/vm2.console.log" "${mods[@]}" -- "$@" client >"$out/vm2.out" 2>&1 &
	pid2=$!
	vm_pair_watch "$out" "$pid1" "$pid2" &
	watch=$!
	wait "$pid1"
	VM_PAIR_RC1=$?
	wait "$pid2"
	VM_PAIR_RC2=$?
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	rm -f "$out/vm1.qmp" "$out/vm2.qmp"
}

# vm_pair_watch OUTDIR PID1 PID2: vm_pair's watcher of the two consoles
vm_pair_watch() {
	local out=$1 t0=$SECONDS vm round
	while kill -0 "$2" 2>/dev/null || kill -0 "$3" 2>/dev/null; do
		sleep 1
		grep -q "TX timeout" "$out/vm1.console.log" "$out/vm2.console.log" \
			2>/dev/null || continue
		{
			for round in 1 2; do
				echo "# vm_pair: $((SECONDS - t0)) s after the start"
				grep -H "TX timeout" "$out"/vm[12].console.log
				for vm in 1 2; do
					echo "# VM $vm"
					python3 "$DRAY_REPO/scripts/vm/qmp.py" "$out/vm$vm.qmp" net 2>&1
				done
				[[ $round == 2 ]] || sleep 3
			done
		} >"$out/stall.txt"
		kill "$2" "$3" 2>/dev/null
		return 0
	done
}
