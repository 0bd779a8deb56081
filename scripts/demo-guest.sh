#!/bin/bash
# Inside the test VM: a veth pair, dray0 on veth0, and what it looks like.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
eval "$("$repo/scripts/rdma-env.sh")"

run() {
	echo "# $*"
	"$@"
}

run modprobe veth
run ip link add veth0 type veth peer name veth1
run ip addr add 10.0.0.1/24 dev veth0
run ip addr add 10.0.0.2/24 dev veth1
run ip link set veth0 up
run ip link set veth1 up
run modprobe dray
run rdma link add dray0 type dray netdev veth0
run rdma link add dray1 type dray netdev veth1
run rdma link show
run ibv_devices
run ibv_devinfo -v -d dray0
