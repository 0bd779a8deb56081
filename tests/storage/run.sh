#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Inside the test VM: kernel storage over RDMA on two devices of one kind
# (dray0/dray1, or rxe0/rxe1 for reference) on the routed veth pair, with
# the kernel's own ULPs and the distribution's tools. Groups:
#   nvmeof  NVMe over Fabrics: nvmet-rdma target, nvme-rdma host, fio
#           with verification (nvmeof.sh)
#   nfs     NFS over RDMA: nfsd with svcrdma, the NFS client with
#           proto=rdma (nfs.sh)
# Both rest on fast registration (REG_MR, LOCAL_INV) and remote
# invalidation (SEND_WITH_INV). Ends with a check that the kernel logged
# no warning. Prints TAP lines and "storage: N passed, N failed, N skipped".
#
# Usage: run.sh [dray|rxe] [GROUP...]
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$repo/tests/lib.sh"
# shellcheck source=tests/storage/nvmeof.sh
. "$repo/tests/storage/nvmeof.sh"
# shellcheck source=tests/storage/nfs.sh
. "$repo/tests/storage/nfs.sh"

kind=${1:-dray}
shift || true
groups=${*:-nvmeof nfs}
read -r dev_a dev_b <<<"$(rdma_devs "$kind")" || {
	echo "usage: ${0##*/} [dray|rxe] [nvmeof] [nfs]" >&2
	exit 2
}
read -r taint0 </proc/sys/kernel/tainted

finish() {
	echo "storage: $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
	[[ $TAP_FAIL -eq 0 ]]
	exit
}

if ! veth_up || ! rdma_up "$kind"; then
	tap_fail "storage.setup" "$dev_a/$dev_b not up on the veth pair"
	finish
fi
want nvmeof && nvmeof_lane
want nfs && nfs_lane
kernel_clean "$taint0"
finish
