#!/bin/bash
# Show that QEMU 7.2's TCG drops a one-vCPU guest's memory barriers
# (Documentation/benchmark.md, "The transmit stall between two VMs"):
#
#   scripts/repro/tcg-barrier/run.sh [ROUNDS]
#
# Runs litmus.c's store-buffering test between a host thread and the test
# VM's vCPU over an ivshmem-plain device, ROUNDS rounds (default 900000),
# twice: with maxcpus 1 (QEMU's uniprocessor translation, how vm-run.sh
# booted single-vCPU guests before) and with maxcpus 2 (one vCPU online,
# how it boots them now). Prints the outcomes of each; "both read 0" is
# the result the guest's barrier forbids. Exit 0 if maxcpus 2 never showed
# it, 1 if it did.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
here=$repo/scripts/repro/tcg-barrier
out=$repo/build/repro/tcg-barrier
rounds=${1:-900000}
mkdir -p "$out"
gcc -O2 -Wall -o "$out/litmus" "$here/litmus.c"
shm=/dev/shm/dray-litmus.$$
trap 'rm -f "$shm"' EXIT
fail=0
for maxcpus in 1 2; do
	"$out/litmus" host "$shm" "$rounds" >"$out/host-$maxcpus.txt" &
	hpid=$!
	while [[ ! -s $shm ]]; do
		kill -0 "$hpid" 2>/dev/null || exit 2	# the host side failed
		sleep 0.1
	done
	DRAY_VM_MAXCPUS=$maxcpus DRAY_VM_ACCEL=tcg \
		DRAY_VM_QEMU_ARGS="-object memory-backend-file,id=lit,share=on,mem-path=$shm,size=1M -device ivshmem-plain,memdev=lit" \
		"$repo/scripts/vm-run.sh" --smp 1 --quiet --timeout 600 -- \
		"$out/litmus" guest "$rounds" || { kill "$hpid"; exit 2; }
	wait "$hpid"
	echo "maxcpus $maxcpus: $(cat "$out/host-$maxcpus.txt")"
	if [[ $maxcpus == 2 ]] && ! grep -q 'both read 0 (the barriers failed) 0,' "$out/host-$maxcpus.txt"; then
		fail=1
	fi
	rm -f "$shm"
done
exit "$fail"
