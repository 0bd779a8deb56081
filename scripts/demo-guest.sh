#!/bin/bash
# Inside the test VM: a routed veth pair, dray0 on veth0 and dray1 on
# veth1, what they look like, and one perftest run between them.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
eval "$("$repo/scripts/rdma-env.sh")"

run() {
	echo "# $*"
	"$@"
}

run "$repo/scripts/vm/veth-pair.sh"
run modprobe dray
run rdma link add dray0 type dray netdev veth0
run rdma link add dray1 type dray netdev veth1
run rdma link show
run ibv_devices
run ibv_devinfo -v -d dray0

# perftest: RDMA WRITE bandwidth from dray0 to dray1 over RoCEv2 (GID 1 is
# the IPv4 GID; it appears asynchronously after the address).
for _ in $(seq 100); do
	[[ -e /sys/class/infiniband/dray1/ports/1/gids/1 &&
	   $(cat /sys/class/infiniband/dray1/ports/1/gids/1) == *ffff:0a00:0002 ]] && break
	sleep 0.1
done
timeout 120 ib_write_bw -d dray1 -x 1 -s 65536 -n 200 >/tmp/demo-server.log 2>&1 &
for _ in $(seq 150); do
	ss -ltn | grep -q ':18515 ' && break
	sleep 0.1
done
run timeout 120 ib_write_bw -d dray0 -x 1 -s 65536 -n 200 10.0.0.2
wait
