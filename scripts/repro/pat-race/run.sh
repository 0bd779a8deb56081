#!/bin/bash
# Reproduce x86 PAT's untrack_pfn() WARN at device removal (a kernel race,
# not dray's; Documentation/testing.md, "The PAT warning at device
# removal"):
#
#   scripts/repro/pat-race/run.sh [--kernel 6.1|6.12] [--no-window] [CYCLES]
#
# In the test VM, CYCLES times (default 3): dray0 and dray1 made, 16
# processes with 8 contexts each on dray0 (closer.c), then `modprobe -r
# dray`; each process closes its contexts (munmap of the doorbell pages)
# at a random moment up to 3 s after IBV_EVENT_DEVICE_FATAL, while uverbs
# disassociates their mappings. patwin.ko (kprobes) widens the window;
# --no-window leaves it out, and then the race is rare. Prints each
# cycle's WARN count; exit 0 once a WARN was seen, 1 if none.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
here=$repo/scripts/repro/pat-race
out=$repo/build/repro/pat-race
kernel=6.1 window=1 cycles=3

if [[ ${1:-} == --guest ]]; then
	shift
	eval "$("$repo/scripts/rdma-env.sh")"
	[[ $1 == - ]] || insmod "$1" walk_ms=100 own_ms=30
	"$repo/scripts/vm/veth-pair.sh" >/dev/null
	for ((c = 1; c <= $2; c++)); do
		modprobe dray
		rdma link add dray0 type dray netdev veth0
		rdma link add dray1 type dray netdev veth1
		"$3" 16 3000000 >"/tmp/closer.out" 2>&1 &
		pid=$!
		for ((i = 0; i < 300; i++)); do
			[[ $(grep -c ready /tmp/closer.out) -ge 16 ]] && break
			sleep 0.1
		done
		modprobe -r dray
		wait "$pid" || echo "cycle $c: closer failed"
		n=$(dmesg | grep -c 'WARNING: .* untrack_pfn' || true)
		echo "cycle $c: untrack_pfn WARNs so far: $n"
		((n == 0)) || break
	done
	[[ $1 == - ]] || rmmod patwin
	dmesg | grep -E 'patwin:|WARNING:' || true
	dmesg | grep -A 28 'WARNING: .* untrack_pfn' | grep -E 'RCX|untrack_pfn|disassociate|zap_page|dray_exit' || true
	((n > 0))
	exit
fi

while [[ $# -gt 0 ]]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--no-window) window=''; shift ;;
	*) cycles=$1; shift ;;
	esac
done
mkdir -p "$out"
rc=$repo/build/rdma-core/build
gcc -O1 -Wall -o "$out/closer" "$here/closer.c" -I"$rc/include" -L"$rc/lib" -libverbs
if [[ $kernel == 6.12 ]]; then
	kdir=$("$repo/scripts/vm-kernel.sh" --kernel 6.12 | sed -n 's/^KDIR=//p')
	export DRAY_VM_KERNEL=6.12
else
	kdir=/usr/src/linux-headers-$("$repo/scripts/kver.sh")
fi
kmod=$out/kmod-$kernel
make -s -C "$repo" kmod KDIR="$kdir" KMOD="$kmod"
win=-
if [[ -n $window ]]; then
	mkdir -p "$out/patwin-$kernel"
	cp "$here/patwin.c" "$here/Kbuild" "$out/patwin-$kernel/"
	make -s -C "$kdir" M="$out/patwin-$kernel" modules
	win=$out/patwin-$kernel/patwin.ko
fi
exec "$repo/scripts/vm-run.sh" --timeout 1800 --module "$kmod/dray.ko" -- \
	"$here/run.sh" --guest "$win" "$cycles" "$out/closer"
