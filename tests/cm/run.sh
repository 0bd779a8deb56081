#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Inside the test VM: RDMA CM between dray0 (veth0, 10.0.0.1) and dray1
# (veth1, 10.0.0.2) on the routed veth pair. Every connection goes through
# the kernel's RDMA CM, whose CM MADs travel over the GSI QP (QP1) of both
# devices: rping (several sizes, data validated with -V), ucmatose (RC
# send/recv), udaddy (UD send/recv), mckey (UD multicast through
# rdma_cm's join), fi_pingpong (libfabric's verbs
# provider, FI_EP_MSG, and verbs;ofi_rxm, FI_EP_RDM), perftest with -R
# (rdma_cm connection) for write, send and read. Every program must exit 0.
# Prints TAP lines and "cm: N passed, N failed".
#
# Usage: run.sh
# DRAY_RDMA_ENV names another rdma-env.sh (another tree's rdma-core build);
# DRAY_CM_PERFTEST=0 leaves the perftest pairs out.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$repo/tests/lib.sh"
eval "$("${DRAY_RDMA_ENV:-$repo/scripts/rdma-env.sh}")" || {
	echo "not ok 1 - cm.setup # no rdma-core build"
	echo "cm: 0 passed, 1 failed"
	exit 1
}

out=/tmp/cm
port=7470

# No TCP socket to wait for (rdma_cm listens in the kernel): give the
# server time to bind and listen; the client retries its connection.
SERVER_WAIT=${SERVER_WAIT:-3}

# cm_report NAME: a failed pair, with the ends of both logs.
cm_report() {
	tap_fail "cm.$1" "$(tail -1 "$out.cli")"
	echo "#   client:"
	tail -12 "$out.cli" | sed 's/^/#   /'
	echo "#   server:"
	tail -6 "$out.srv" | sed 's/^/#   /'
	dmesg | grep -iE 'dray|rdma_cm|ib_cm|mad' | tail -6 | sed 's/^/#   /'
}

# cm_pair NAME TIMEOUT "SERVER CMD" "CLIENT CMD" [quiet|judge]: both must
# exit 0; with quiet a failure, with judge the result either way, is left
# to the caller to report.
cm_pair() {
	local name=$1 quiet=${5:-}
	if PAIR_SLEEP=$SERVER_WAIT pair_run "$out" "$2" "$3" "$4"; then
		[[ $quiet == judge ]] || tap_ok "cm.$name"
		return 0
	fi
	[[ -n $quiet ]] || cm_report "$name"
	return 1
}

# rping -V fails on the first byte that differs; -v prints what arrived.
# It must also have printed every ping: count the lines.
rping_run() {
	local size=$1 count=10 lines
	port=$((port + 1))
	cm_pair "rping_S$size" 120 \
		"rping -s -a 10.0.0.2 -p $port -v -V -C $count -S $size" \
		"rping -c -a 10.0.0.2 -I 10.0.0.1 -p $port -v -V -C $count -S $size" \
		judge || { cm_report "rping_S$size"; return; }
	lines=$(grep -c '^ping data: rdma-ping-' "$out.cli")
	if [[ $lines -eq $count ]]; then
		tap_ok "cm.rping_S$size"
	else
		echo "client printed $lines of $count pings" >>"$out.cli"
		cm_report "rping_S$size"
	fi
}

if ! veth_up || ! rdma_up dray; then
	tap_fail cm.setup "veth pair or dray0/dray1"
	echo "cm: $TAP_PASS passed, $TAP_FAIL failed"
	exit 1
fi
modprobe rdma_ucm 2>/dev/null
dmesg -C

# rping takes 23 to 65535 bytes.
for size in 23 64 1000 4096 65535; do
	rping_run "$size"
done

port=$((port + 1))
cm_pair ucmatose 120 "ucmatose -b 10.0.0.2 -p $port -C 20 -S 1024" \
	"ucmatose -s 10.0.0.2 -b 10.0.0.1 -p $port -C 20 -S 1024"
port=$((port + 1))
cm_pair ucmatose_c4 120 "ucmatose -b 10.0.0.2 -p $port -c 4 -C 10" \
	"ucmatose -s 10.0.0.2 -b 10.0.0.1 -p $port -c 4 -C 10"
# udaddy's -p is the port space; it always uses port 7174.
cm_pair udaddy 120 "udaddy -b 10.0.0.2 -C 20" \
	"udaddy -s 10.0.0.2 -b 10.0.0.1 -C 20"
cm_pair udaddy_c4 120 "udaddy -b 10.0.0.2 -c 4 -C 10 -S 512" \
	"udaddy -s 10.0.0.2 -b 10.0.0.1 -c 4 -C 10 -S 512"

# UD multicast through rdma_cm's join: the receiver on dray1 joins the
# group and waits for its messages, the sender on dray0 joins and sends
# (mckey checks the count). IPv4 group 239.7.7.7.
cm_pair mckey 120 "mckey -m 239.7.7.7 -b 10.0.0.2 -C 20 -S 512" \
	"mckey -m 239.7.7.7 -b 10.0.0.1 -s -C 20 -S 512"

# libfabric's verbs provider over rdma_cm (FI_EP_MSG): fi_pingpong with
# data checks (-c). It exchanges addresses over a TCP socket of its own
# (-B/-P) and connects the endpoints through RDMA CM. Then reliable
# datagrams (FI_EP_RDM) through the rxm utility provider over verbs, as MPI
# and other libfabric users take them (rxm sizes its CQs for a universe of
# 256 peers: 65536 CQEs).
if command -v fi_pingpong >/dev/null; then
	for ep in "verbs msg" "verbs;ofi_rxm rdm"; do
		read -r prov type <<<"$ep"
		for size in 64 65536; do
			port=$((port + 1))
			name=fi_pingpong_S$size
			[[ $type == msg ]] || name=fi_pingpong_${type}_S$size
			cm_pair "$name" 180 \
				"fi_pingpong -p $prov -e $type -d dray1 -B $port -I 20 -S $size -c" \
				"fi_pingpong -p $prov -e $type -d dray0 -P $port -I 20 -S $size -c 10.0.0.2"
		done
	done
else
	tap_skip cm.fi_pingpong "fi_pingpong not installed (Debian package libfabric-bin)"
fi

# perftest NAME PROG ARGS: server on dray1, client on dray0. perftest
# gives up after a complete run when it cannot calibrate its clock under
# TCG ("Can't produce a report"): only such a pair runs again (3 in all).
perftest() {
	local name=$1 prog=$2 attempt
	shift 2
	for attempt in 1 2 3; do
		port=$((port + 1))
		cm_pair "$name" 180 "$prog -R -d dray1 -p $port $*" \
			"$prog -R -d dray0 -p $port $* 10.0.0.2" quiet && break
		grep -q "Can't produce a report" "$out.cli" "$out.srv" &&
			[[ $attempt -lt 3 ]] || { cm_report "$name"; break; }
		echo "# $name: perftest could not calibrate its clock, again"
	done
}

# DRAY_CM_PERFTEST=0 leaves perftest out (the debug kernel under TCG:
# perftest cannot calibrate its clock there and gives up in three tries).
if [[ ${DRAY_CM_PERFTEST:-1} == 0 ]]; then
	echo "# perftest -R pairs left out (DRAY_CM_PERFTEST=0)"
else
	for t in write send read; do
		perftest "ib_${t}_bw_R" "ib_${t}_bw" -n 200 -s 65536
	done
	perftest ib_send_lat_R ib_send_lat -n 200
fi

echo "cm: $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
[[ $TAP_FAIL -eq 0 ]]
