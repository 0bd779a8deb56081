#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Inside the test VM: capture real RoCEv2 traffic between dray0 and dray1
# for the fuzz seed corpus (pcap2seeds.py turns it into seeds):
#
#   make module provider && make -C tests/rdma
#   scripts/vm-run.sh --timeout 600 --module build/dray.ko -- \
#       tests/fuzz/capture.sh >build/fuzz/capture.log
#   tests/fuzz/pcap2seeds.py build/fuzz/capture.log tests/fuzz/corpus
#
# tcpdump on veth0 sees both directions: tests/rdma/integrity --cover
# (every RC opcode in every packet shape, first from dray0 then from
# dray1, data checked), then ibv_ud_pingpong over the IPv6 link-local
# GID. The guest's writes to the host tree are lost, so the capture goes
# to stdout, base64 between "BEGIN PCAP" and "END PCAP" lines.
set -uo pipefail

out=/tmp/capture.pcap
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$repo/tests/lib.sh"
eval "$("$repo/scripts/rdma-env.sh")"

veth_up && rdma_up dray || exit 1
ll=$(gid_ll dray0) || ll=0

tcpdump -i veth0 -s 0 -U -w "$out.tmp" udp dst port 4791 >/tmp/tcpdump.log 2>&1 &
tpid=$!
for _ in $(seq 100); do
	grep -q "listening on" /tmp/tcpdump.log && break
	sleep 0.1
done

rc=0
timeout 300 "$repo/build/rdma/integrity" --quiet --dev-a dray0 --dev-b dray1 \
	--cover --iters 60 --max-size 6k --max-sge 2 || rc=1
timeout 60 ibv_ud_pingpong -d dray1 -g "$ll" -n 3 -s 512 >/tmp/pp.srv 2>&1 &
spid=$!
sleep 1
timeout 60 ibv_ud_pingpong -d dray0 -g "$ll" -n 3 -s 512 10.0.0.2 >/tmp/pp.cli 2>&1 || rc=1
wait "$spid" || rc=1

sleep 1
kill "$tpid"
wait "$tpid"
sed 's/^/# /' /tmp/tcpdump.log
mv "$out.tmp" "$out"
echo "capture: rc $rc, $(stat -c %s "$out") bytes"
echo "BEGIN PCAP"
base64 "$out"
echo "END PCAP"
exit "$rc"
