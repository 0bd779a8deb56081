#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Inside the test VM: kernel storage over RDMA on two devices (dray0/dray1,
# rxe0/rxe1 for reference, or one of each) on the routed veth pair, with
# the kernel's own ULPs and the distribution's tools. Groups:
#   nvmeof  NVMe over Fabrics: nvmet-rdma target, nvme-rdma host, fio
#           with verification (nvmeof.sh)
#   nfs     NFS over RDMA: nfsd with svcrdma, the NFS client with
#           proto=rdma (nfs.sh)
# Both rest on fast registration (REG_MR, LOCAL_INV) and remote
# invalidation (SEND_WITH_INV). Ends with a check that the kernel logged
# no warning. Prints TAP lines and "storage: N passed, N failed, N skipped".
#
# Usage: run.sh [CONFIG[,CONFIG...]] [GROUP...]
#   CONFIG: dray (default) or rxe, both ends of that kind; or
#   HOSTKIND-TARGETKIND, e.g. dray-rxe: the host (client) side on veth0 of
#   one kind, the target (server) side on veth1 of the other: wire interop
#   with Soft-RoCE. Several configurations run one after the other.
# STORAGE_SMALL=1 runs fio over a quarter of the data, as the mixed
# configurations always do.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$repo/tests/lib.sh"
# shellcheck source=tests/storage/nvmeof.sh
. "$repo/tests/storage/nvmeof.sh"
# shellcheck source=tests/storage/nfs.sh
. "$repo/tests/storage/nfs.sh"

configs=${1:-dray}
shift || true
groups=${*:-nvmeof nfs}
read -r taint0 </proc/sys/kernel/tainted

finish() {
	echo "storage: $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
	[[ $TAP_FAIL -eq 0 ]]
	exit
}

# dev_a of kind_a on veth0, dev_b of kind_b on veth1, both ACTIVE with
# their IPv4 GIDs.
storage_up() {
	local k i
	veth_up || return 1
	for k in "$kind_a" "$kind_b"; do
		case $k in
		dray) modprobe dray || return 1 ;;
		rxe) modprobe rdma_rxe || return 1 ;;
		esac
	done
	modprobe ib_uverbs || return 1
	[[ -e /sys/class/infiniband/$dev_a ]] ||
		rdma link add "$dev_a" type "$kind_a" netdev veth0 || return 1
	[[ -e /sys/class/infiniband/$dev_b ]] ||
		rdma link add "$dev_b" type "$kind_b" netdev veth1 || return 1
	for ((i = 0; i < 100; i++)); do
		port_active "$dev_a" && port_active "$dev_b" &&
			gid_v4 "$dev_a" >/dev/null && gid_v4 "$dev_b" >/dev/null &&
			return 0
		sleep 0.1
	done
	return 1
}

# No two devices on one netdev: they would answer for the same GIDs.
storage_down() {
	local d
	for d in dray0 dray1 rxe0 rxe1; do
		[[ -e /sys/class/infiniband/$d ]] && rdma link delete "$d"
	done
	return 0
}

for kinds in ${configs//,/ }; do
	kind_a=${kinds%-*} kind_b=${kinds#*-}
	if ! read -r dev_a _ <<<"$(rdma_devs "$kind_a")" ||
		! read -r _ dev_b <<<"$(rdma_devs "$kind_b")"; then
		echo "usage: ${0##*/} [CONFIG[,CONFIG...]] [nvmeof] [nfs]" \
			"(CONFIG: dray, rxe, dray-rxe, rxe-dray)" >&2
		exit 2
	fi
	# TAP names: storage.GROUP..., storage.CONFIG.GROUP... for mixed ones.
	sp=storage
	[[ $kind_a != "$kind_b" ]] && sp=storage.$kinds
	echo "# storage: host $dev_a ($kind_a, veth0 $ADDR_A), target $dev_b ($kind_b, veth1 $ADDR_B)"
	if ! storage_up; then
		tap_fail "$sp.setup" "$dev_a/$dev_b not up on the veth pair"
		storage_down
		continue
	fi
	want nvmeof && nvmeof_lane
	want nfs && nfs_lane
	storage_down
done
kernel_clean "$taint0"
finish
