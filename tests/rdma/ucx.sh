# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# shellcheck disable=SC2154 # kind, LOG, DEV_A, DEV_B, ADDR_B: from run.sh
#
# The ucx and mpi groups of tests/rdma/run.sh (sourced by it): UCX, the
# communication layer under Open MPI, NCCL's net plugins and many
# distributed-training stacks, on the devices of the run. Debian's UCX
# 1.13 (ucx-utils), with no knowledge of dray:
#
#   - ucx_info lists the rc_verbs transport on the device (UCX offers it
#     only on a device with shared receive queues) and ud_verbs;
#   - ucx_perftest over rc_verbs (with ud_verbs for the wire-up, as UCX's
#     "rc" alias does): tag-matched latency and bandwidth, PUT and GET;
#     the client's log must show the rc_verbs lane on the device;
#   - ucx_perftest over ud_verbs only (UCX's own reliability over UD:
#     connection requests, ACKs, fragmentation of 64 KiB messages);
#   - io_demo -q: reads and writes of 4 to 64 KiB with UCX's data
#     integrity and transaction check, the connection made through UCX's
#     sockaddr path.
#
# ucx_perftest and io_demo check no figure here; the figures are shown.

# ucx_pair NAME TLS "SERVER ARGS" "CLIENT ARGS": run a UCX server on the
# second device and its client on the first, both with UCX_TLS=TLS.
ucx_pair() {
	local name=$1 tls=$2 srv=$3 cli=$4
	next_port
	pair_run "$LOG/$name" 180 \
		"env UCX_TLS=$tls UCX_LOG_LEVEL=info UCX_NET_DEVICES=$DEV_B:1 $srv -p $PAIR_PORT" \
		"env UCX_TLS=$tls UCX_LOG_LEVEL=info UCX_NET_DEVICES=$DEV_A:1 $cli -p $PAIR_PORT"
}

# ucx_lane FILE TRANSPORT: the client's log names an endpoint lane of
# TRANSPORT on the first device ("ep_cfg[0]: tag(rc_verbs/dray0:1 ...)").
ucx_lane() {
	grep -q "ep_cfg\[[0-9]*\]:.*$2/$DEV_A:1" "$1"
}

ucx_group() {
	local tls t name rc info
	if ! command -v ucx_perftest >/dev/null; then
		tap_skip "ucx" "ucx_perftest not installed (Debian package ucx-utils)"
		return 0
	fi
	if [[ $kind == rxe ]]; then
		# UCX's UD transport takes an IPv4 or IPv6 GRH by the receive
		# completion's SL, which rxe leaves 0: it drops every datagram
		tap_skip "ucx" "rxe: UCX's UD transport drops rxe's datagrams (SL 0)"
		return 0
	fi

	info=$(ucx_info -d 2>&1)
	for t in rc_verbs ud_verbs; do
		if awk -v t="$t" -v d="$DEV_A:1" '
			/Transport:/ { tr = $3 }
			/Device:/ && tr == t && $3 == d { found = 1 }
			END { exit !found }' <<<"$info"; then
			tap_ok "ucx: ucx_info lists $t on $DEV_A:1"
		else
			tap_fail "ucx: ucx_info lists $t on $DEV_A:1"
			grep -E "Transport|Device" <<<"$info" | sed 's/^/# /'
		fi
	done

	for tls in rc_verbs,ud_verbs ud_verbs; do
		for t in "tag_lat -s 8" "tag_bw -s 65536" "ucp_put_bw -s 1048576" \
			"ucp_get -s 65536"; do
			[[ $tls == ud_verbs && $t == ucp_put_bw* ]] && continue
			name="ucx: ucx_perftest -t $t over $tls"
			ucx_pair ux "$tls" "ucx_perftest -n 200" \
				"ucx_perftest $ADDR_B -t $t -n 200"
			rc=$?
			if [[ $rc -eq 0 ]] && ! grep -q "^Final:" "$LOG/ux.cli"; then
				echo "# no Final: line" >>"$LOG/ux.cli"
				rc=1
			fi
			if [[ $rc -eq 0 ]] && ! ucx_lane "$LOG/ux.cli" "${tls%%,*}"; then
				echo "# no ${tls%%,*} lane on $DEV_A:1 in the client's log" \
					>>"$LOG/ux.cli"
				rc=1
			fi
			report "$name" "$rc" ux
			if [[ $rc -eq 0 ]]; then
				grep "^Final:" "$LOG/ux.cli" | sed "s/^/# ucx_perftest $t: /"
			fi
		done
	done

	# io_demo's server runs until killed: the client's exit decides, and
	# the server must still be running then (no crash on its side)
	next_port
	UCX_TLS=rc_verbs,ud_verbs UCX_NET_DEVICES=$DEV_B:1 \
		timeout 300 io_demo -q -d 4096:65536 -o read,write \
		-p "$PAIR_PORT" >"$LOG/io.srv" 2>&1 &
	local spid=$!
	rc=1
	if wait_listen "$PAIR_PORT" 30; then
		UCX_TLS=rc_verbs,ud_verbs UCX_NET_DEVICES=$DEV_A:1 \
			timeout 240 io_demo -q -d 4096:65536 -o read,write \
			-i $((2000 * SCALE)) -p "$PAIR_PORT" "$ADDR_B" \
			>"$LOG/io.cli" 2>&1
		rc=$?
		if [[ $rc -eq 0 ]] && ! grep -q "Client exit with status 'OK'" "$LOG/io.cli"; then
			rc=1
		fi
		if ! kill -0 "$spid" 2>/dev/null; then
			echo "# the io_demo server exited before the client was done" \
				>>"$LOG/io.cli"
			rc=1
		fi
	else
		echo "# io_demo did not listen on port $PAIR_PORT" >"$LOG/io.cli"
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	report "ucx: io_demo -q, $((2000 * SCALE)) checked reads and writes of 4-64 KiB over rc_verbs" \
		"$rc" io
	if [[ $rc -eq 0 ]]; then
		grep "\[DEMO\] total" "$LOG/io.cli" | tail -n 1 | cut -c1-160 |
			sed 's/^/# io_demo: /'
	fi
}

# The mpi group: Debian's Open MPI 4.1 (pml ucx, osc ucx) runs
# tests/rdma/mpi_check as two ranks, rank N on device N's port (UCX over
# rc_verbs, ud_verbs for the wire-up, self for a rank's own messages: no
# shared memory, so every byte between the ranks crosses the RDMA devices).
# mpi_check counts its checks; all 136 must run and pass, both ranks'
# tag-matching and RMA lanes must be rc_verbs on their device, and the
# first device's own tx_bytes counter must have grown by 32 MiB or more.
mpi_group() {
	local rc n d l tx0 tx1 out=$LOG/mpi.out
	if ! command -v mpirun >/dev/null || [[ ! -x $BIN/mpi_check ]]; then
		tap_skip "mpi" "no mpirun or $BIN/mpi_check (Debian packages openmpi-bin, libopenmpi-dev)"
		return 0
	fi
	if [[ $kind == rxe ]]; then
		tap_skip "mpi" "rxe: UCX's UD wire-up drops rxe's datagrams (SL 0)"
		return 0
	fi
	tx0=$(port_tx_bytes "$DEV_A")
	# shellcheck disable=SC2016 # expanded by each rank's shell
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		DEV_A=$DEV_A DEV_B=$DEV_B timeout 300 mpirun -np 2 --oversubscribe \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_LOG_LEVEL=info \
		-x LD_LIBRARY_PATH -x DEV_A -x DEV_B \
		bash -c 'if [[ $OMPI_COMM_WORLD_RANK == 0 ]]; then d=$DEV_A; else d=$DEV_B; fi
			UCX_NET_DEVICES=$d:1 exec "$0"' "$BIN/mpi_check" >"$out" 2>&1
	rc=$?
	tx1=$(port_tx_bytes "$DEV_A")
	# rank 0 alone sends more than 40 MB of payload
	if [[ $rc -eq 0 ]] && ! (( ${tx1:-0} - ${tx0:-0} >= 32 << 20 )); then
		echo "# $DEV_A's port sent $(( ${tx1:-0} - ${tx0:-0} )) bytes, not 32 MiB or more" >>"$out"
		rc=1
	fi
	n=$(sed -n 's/^mpi_check: \([0-9]*\) checks passed$/\1/p' "$out")
	if [[ $rc -eq 0 && $n != 136 ]]; then
		echo "# mpi_check ran ${n:-no} checks, not 136" >>"$out"
		rc=1
	fi
	for d in "$DEV_A" "$DEV_B"; do
		for l in tag rma; do
			if [[ $rc -eq 0 ]] && ! grep -q "ep_cfg\[[0-9]*\]: $l(.*rc_verbs/$d:1" "$out"; then
				echo "# no $l lane over rc_verbs/$d:1" >>"$out"
				rc=1
			fi
		done
	done
	report "mpi: Open MPI over UCX rc_verbs, 2 ranks: point to point 1 B-4 MiB, bcast, allreduce, allgather, alltoall up to 8 MiB, put, get, accumulate, every byte checked" \
		"$rc" mpi
	if [[ $rc -eq 0 ]]; then
		grep "^mpi_check:" "$out" | sed 's/^/# /'
		echo "# $DEV_A's port sent $(( (tx1 - tx0) >> 20 )) MiB (tx_bytes)"
	fi
	return 0
}
