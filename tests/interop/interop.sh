#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Wire interop between dray and Soft-RoCE (issue 4, section 3), inside the
# test VM as root:
#
#   tests/interop/interop.sh [GROUP...]
#
# dray0 on veth0 (10.0.0.1) and rxe0 (rdma_rxe) on veth1 (10.0.0.2), on
# the routed veth pair of scripts/vm/veth-pair.sh. Every test runs in both
# directions: "dray0->rxe0" has dray0 as the client (the requester of
# perftest and integrity), "rxe0->dray0" has rxe0 as the client.
#
#   pingpong   ibv_rc_pingpong, several sizes, one run with -e
#   perftest   ib_{write,read,send}_{bw,lat} (a fixed size and -a),
#              ib_atomic_{bw,lat} (FETCH_AND_ADD, CMP_AND_SWAP): exit 0,
#              sane figures
#   integrity  tests/rdma/integrity across dray0 and rxe0: random payloads,
#              every opcode, every byte checked, each side the requester
#   capture    tcpdump on veth0 during a short integrity run with every
#              opcode both ways; tshark's InfiniBand dissector decodes every
#              frame without malformed or error expert items; the headers
#              each opcode calls for (BTH, RETH, AETH, AtomicETH,
#              AtomicAckETH, ImmDt) are there, every other one absent;
#              payload and pad lengths fit the path MTU; dray sent every RC
#              opcode it implements; the ICRC of every frame is correct
#              (icrc_check: tshark 4.0 displays the ICRC, does not check it)
#
#   rping      rping client and server (-v -V, three sizes): RDMA CM between
#              the two, its MADs over both GSI QPs (QP1)
#   ibta15     tests/rdma/ibta15 (two_dev) each way: IBTA 1.5 ATOMIC WRITE
#              and FLUSH on the wire between dray and rxe where the kernel
#              has them (6.12; on 6.1 only caps_agree runs, the rest skip),
#              every frame of dray's with a correct ICRC (icrc_check)
#
# Prints TAP lines and ends with "interop: N passed, N failed, N skipped";
# exits non-zero if anything failed. Needs build/rdma/integrity
# (make -C tests/rdma) and build/interop/icrc_check (make -C
# tests/interop); DRAY_RDMA_BIN and DRAY_INTEROP_BIN override the
# directories. DRAY_INTEROP_SCALE=N multiplies the iteration counts.
# DRAY_INTEROP_PERFTEST="PROG..." limits the perftest group to those
# programs, with their first variant only (the default size, or
# FETCH_AND_ADD).

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"

groups=${*:-pingpong perftest integrity capture rping}
RDMA_BIN=${DRAY_RDMA_BIN:-$ROOT/build/rdma}
IOP_BIN=${DRAY_INTEROP_BIN:-$ROOT/build/interop}
SCALE=${DRAY_INTEROP_SCALE:-1}
PT_ONLY=${DRAY_INTEROP_PERFTEST:-}
DRAY=dray0
RXE=rxe0

if [[ $(id -u) -ne 0 ]]; then
	echo "interop.sh: must run as root, inside the test VM" >&2
	exit 2
fi
if [[ ${LD_LIBRARY_PATH:-} != *rdma-core/build/lib* ]]; then
	env_out=$("$ROOT/scripts/rdma-env.sh" 2>/dev/null) && eval "$env_out"
fi

read -r TAINT0 </proc/sys/kernel/tainted
LOG=$(mktemp -d)
trap 'rm -rf "$LOG"' EXIT
start=$SECONDS

summary() {
	echo "# interop: $((SECONDS - start)) s"
	echo "interop: $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
}

# --- diagnostics -------------------------------------------------------------
# rxe's error and retry counters: a snapshot at the start of each test,
# the changes after it (builtins only). dray has no counters to read yet.
RXE_CNT="duplicate_request out_of_seq_request rcvd_seq_err rcvd_rnr_err
send_rnr_err retry_exceeded_err retry_rnr_exceeded_err completer_retry_err
send_err link_downed"
declare -A CNT0=()
T0=0

# mark: remember the counters and the kernel time at the start of a test
mark() {
	local c v=0
	for c in $RXE_CNT; do
		v=0
		read -r v <"/sys/class/infiniband/$RXE/ports/1/hw_counters/$c" 2>/dev/null
		CNT0[$c]=$v
	done
	read -r T0 _ </proc/uptime
}

# counters: one comment line with the rxe counters that moved since mark
counters() {
	local c v out=''
	for c in $RXE_CNT; do
		v=0
		read -r v <"/sys/class/infiniband/$RXE/ports/1/hw_counters/$c" 2>/dev/null
		((v != ${CNT0[$c]:-0})) && out+=" $c +$((v - ${CNT0[$c]:-0}))"
	done
	[[ -n $out ]] && echo "# $RXE counters:$out"
	return 0
}

# kernel_log: kernel messages since mark, as comments
kernel_log() {
	dmesg 2>/dev/null | awk -v t0="${T0%.*}" '
	{
		s = $0
		if (match(s, /^\[ *[0-9]+\.[0-9]+\]/)) {
			ts = substr(s, 2, RLENGTH - 2) + 0
			if (ts >= t0) print "# dmesg: " s
		}
	}' | tail -n 20
}

# report NAME RC LOGPREFIX: a TAP line; on failure the logs, counters and
# kernel messages
report() {
	local name=$1 rc=$2
	if [[ $rc -eq 0 ]]; then
		tap_ok "$name"
		counters
		return
	fi
	tap_fail "$name"
	show_logs "$LOG/$3" 30
	counters
	kernel_log
}

# --- setup -------------------------------------------------------------------
setup() {
	local i
	veth_up || return 1
	modprobe dray || return 1
	modprobe rdma_rxe || return 1
	modprobe ib_uverbs || return 1
	[[ -e /sys/class/infiniband/$DRAY ]] ||
		rdma link add "$DRAY" type dray netdev veth0 || return 1
	[[ -e /sys/class/infiniband/$RXE ]] ||
		rdma link add "$RXE" type rxe netdev veth1 || return 1
	for ((i = 0; i < 100; i++)); do
		if port_active "$DRAY" && port_active "$RXE" &&
			gid_v4 "$DRAY" >/dev/null && gid_v4 "$RXE" >/dev/null; then
			break
		fi
		sleep 0.1
	done
	# the link-local addresses come after duplicate address detection
	for (( ; i < 100; i++)); do
		gid_ll "$DRAY" >/dev/null && gid_ll "$RXE" >/dev/null && return 0
		sleep 0.1
	done
	gid_v4 "$DRAY" >/dev/null && gid_v4 "$RXE" >/dev/null && return 0
	echo "setup: $DRAY/$RXE did not become ACTIVE with IPv4 GIDs" >&2
	return 1
}

echo "# interop: $DRAY (dray, veth0 $ADDR_A) <-> $RXE (rdma_rxe, veth1 $ADDR_B)"
if ! setup >"$LOG/setup" 2>&1; then
	tap_fail "setup: veth pair, $DRAY and $RXE"
	show "$LOG/setup"
	summary
	exit 1
fi
GID_D=$(gid_v4 "$DRAY")
GID_R=$(gid_v4 "$RXE")
LL_D=$(gid_ll "$DRAY")
LL_R=$(gid_ll "$RXE")
echo "# interop: RoCEv2 GID index: IPv4 $GID_D on $DRAY, $GID_R on $RXE; IPv6 link-local ${LL_D:-none} on $DRAY, ${LL_R:-none} on $RXE; kernel $(uname -r)"

# direction D: the client (requester) side and the server side.
# Sets CLI CLI_GID CLI_LL SRV SRV_GID SRV_LL SRV_ADDR.
direction() {
	case $1 in
	"$DRAY->$RXE")
		CLI=$DRAY CLI_GID=$GID_D CLI_LL=$LL_D
		SRV=$RXE SRV_GID=$GID_R SRV_LL=$LL_R SRV_ADDR=$ADDR_B ;;
	"$RXE->$DRAY")
		CLI=$RXE CLI_GID=$GID_R CLI_LL=$LL_R
		SRV=$DRAY SRV_GID=$GID_D SRV_LL=$LL_D SRV_ADDR=$ADDR_A ;;
	esac
}
DIRS=("$DRAY->$RXE" "$RXE->$DRAY")

# tshark without the heuristic payload dissectors: the payloads are random
# bytes, and RPC-over-RDMA, Ethernet-over-IB, SMC-R, ... would take some of
# them for their own and report those frames malformed. (4.0 names; the
# protocols come from tshark itself, eth_over_ib has no protocol of its own.)
TSHARK=(tshark -n --disable-heuristic eth_over_ib)
if want integrity || want capture; then
	while read -r table proto _; do
		[[ $table == infiniband.payload && $proto != ethertype ]] &&
			TSHARK+=(--disable-protocol "$proto")
	done < <(tshark -G heuristic-decodes 2>/dev/null)
fi

# --- ibverbs-utils pingpong ---------------------------------------------
# pingpong_run PROG GIDKIND ARGS: PROG (ibv_rc_pingpong, ibv_ud_pingpong)
# between the direction's server and client over the IPv4 GIDs (GIDKIND
# v4) or the IPv6 link-local ones (ll); -c: the receiver checks every
# byte. Output in $LOG/pp.srv and pp.cli; status 2 if there is no
# link-local GID.
pingpong_run() {
	local prog=$1 kind=$2 sg cg rc n=$((100 * SCALE))
	shift 2
	if [[ $kind == ll ]]; then
		[[ -n $SRV_LL && -n $CLI_LL ]] || return 2
		sg=$SRV_LL cg=$CLI_LL
	else
		sg=$SRV_GID cg=$CLI_GID
	fi
	next_port
	pair_run "$LOG/pp" 120 \
		"$prog -d $SRV -g $sg -n $n -c -p $PAIR_PORT $*" \
		"$prog -d $CLI -g $cg -n $n -c -p $PAIR_PORT $* $SRV_ADDR"
	rc=$?
	[[ $rc -eq 0 ]] && ! grep -q "bytes in" "$LOG/pp.cli" && rc=1
	return "$rc"
}

# pingpong PROG NAME GIDKIND ARGS: pingpong_run as a test
pingpong() {
	local prog=$1 name=$2 rc
	shift 2
	mark
	pingpong_run "$prog" "$@"
	rc=$?
	if [[ $rc -eq 2 ]]; then
		tap_skip "$name" "no IPv6 link-local RoCEv2 GID"
		return 0
	fi
	report "$name (-n $((100 * SCALE)))" "$rc" pp
	[[ $rc -eq 0 ]] && grep -h "bytes in" "$LOG/pp.cli" | sed 's/^/# /'
	return "$rc"
}

if want pingpong; then
	for d in "${DIRS[@]}"; do
		direction "$d"
		for v in "1" "4096" "65536" "4096 -e"; do
			read -r size ev <<<"$v"
			pingpong ibv_rc_pingpong \
				"rc_pingpong $d size $size${ev:+ events}" v4 -s "$size" ${ev:+"$ev"}
		done
		pingpong ibv_rc_pingpong "rc_pingpong $d size 4096, IPv6 link-local GID" \
			ll -s 4096
		# UD messages fit the path MTU (1024 on the 1500-byte veth)
		for v in "1" "1024" "64 -e"; do
			read -r size ev <<<"$v"
			pingpong ibv_ud_pingpong \
				"ud_pingpong $d size $size${ev:+ events}" v4 -s "$size" ${ev:+"$ev"}
		done
		pingpong ibv_ud_pingpong "ud_pingpong $d size 512, IPv6 link-local GID" \
			ll -s 512
	done
fi

# --- perftest --------------------------------------------------------------
# rd_atom DEV: the outstanding READ/atomic requests DEV takes as requester
# and as responder (the smaller of max_qp_init_rd_atom and max_qp_rd_atom)
rd_atom() {
	ibv_devinfo -v -d "$1" | awk '
	/max_qp_(init_)?rd_atom:/ { v = $2 + 0; if (m == "" || v < m) m = v }
	END { print m + 0 }'
}

if want perftest; then
	# perftest makes each side's max_rd_atomic the other side's count of
	# outstanding reads, by default its own device's max_qp_rd_atom: the
	# runs use perftest's defaults, as a user would, so each device must
	# take as requester what the other offers as responder (both 128).
	echo "# perftest defaults (outstanding READ/atomic requests: $DRAY $(rd_atom "$DRAY"), $RXE $(rd_atom "$RXE"))"
	for d in "${DIRS[@]}"; do
		direction "$d"
		for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw \
			ib_write_lat ib_read_lat ib_send_lat ib_atomic_lat; do
			[[ -n $PT_ONLY && " $PT_ONLY " != *" $t "* ]] && continue
			# every size from 2 B to 8 MiB (-a) too, but atomics
			variants=("" "-a")
			[[ $t == ib_atomic_* ]] &&
				variants=("-A FETCH_AND_ADD" "-A CMP_AND_SWAP")
			[[ -n $PT_ONLY ]] && variants=("${variants[0]}")
			for v in "${variants[@]}"; do
				iters=$((200 * SCALE))
				[[ $v == -a ]] && iters=$((5 * SCALE))
				# up to 3 attempts when perftest cannot calibrate
				# its clock (perf_pair)
				mark
				perf_pair "$LOG/pt" "$t" "$v" "$iters" "$SRV" "$SRV_GID" \
					"$CLI" "$CLI_GID" "$SRV_ADDR"
				rc=$?
				report "$t $d ${v:-default size} (-n $iters)" "$rc" pt
				if [[ $rc -eq 0 ]]; then
					grep "uncalibrated" "$LOG/pt.sane"
					grep -E "^[ \t]*#bytes" "$LOG/pt.cli" | head -n 1 | sed "s/^/# /"
					awk '/^[ \t]*[0-9]+[ \t]+[0-9]+[ \t]+[0-9.]+/' "$LOG/pt.cli" |
						tail -n 3 | sed "s/^/# /"
				fi
			done
		done
	done
fi

# --- integrity -------------------------------------------------------------

# flow_fields PCAP: per frame: number, time, source, dest QP, opcode, PSN,
# AckReq, AETH syndrome, AETH MSN, RETH DMA length (tab separated)
flow_fields() {
	"${TSHARK[@]}" -r "$1" -T fields -E separator=/t -e frame.number \
		-e frame.time_relative -e ip.src -e infiniband.bth.destqp \
		-e infiniband.bth.opcode -e infiniband.bth.psn -e infiniband.bth.a \
		-e infiniband.aeth.syndrome -e infiniband.aeth.msn \
		-e infiniband.reth.dmalen 2>/dev/null
}

# flow_tail FIELDS: the last frames of a flow, as comments
flow_tail() {
	echo "# last frames (no, time, src, destqp, opcode, PSN, AckReq, syndrome, MSN, RETH len):"
	tail -n 40 "$1" | sed 's/^/#   /'
}

# rxe_requester_hang OUT FIELDS TAG FRAMES_RECEIVED: the evidence that an
# integrity run failed because rxe's requester stopped, not because of
# dray. Always: only completions timed out; every missing operation is
# one rxe requested (TAG: "A->B" or "B->A"); rxe started a retry (its
# completer_retry_err moved); rxe received every frame dray sent (its
# rcvd_pkts counter, counted after rxe's header and ICRC checks); dray
# sent no NAK but PSN sequence errors (which ask for a resend). And one
# of: (a) dray answered every request rxe sent (its highest ACK/response
# PSN is at least rxe's highest request PSN), or (b) rxe counted more
# retries than the capture shows it starting to send again: it decided
# to retransmit and did not (with netem dropping dray's answer, (a) cannot
# hold, and a requester must then send again), or (c) rxe's last
# retransmission stopped short of the highest PSN it had sent before, and
# dray answered every request of it: rxe had more to send again and did
# not.
# This is the rxe 6.1 bug of tests/interop/README.md: after a retry,
# req_retry() puts the unacknowledged WQEs back to "posted"; a fenced
# READ/atomic among them still holds its rd_atomic credit
# (has_rd_atomic), so rxe_wqe_is_fenced() keeps it waiting for itself;
# the completer drops the responses of WQEs that are "posted", and the
# retransmission timer is not re-armed.
rxe_requester_hang() {
	local out=$1 fields=$2 tag=$3 rcvd=$4 retry
	grep -q "ERROR: timeout after" "$out" || return 1
	grep "ERROR:" "$out" | grep -vq "ERROR: timeout after" && return 1
	grep "missing:" "$out" | grep -vq " $tag " && return 1
	retry=$(($(rxe_counter completer_retry_err) - ${CNT0[completer_retry_err]:-0}))
	((retry > 0)) || return 1
	awk -F'\t' -v dray="$ADDR_A" -v rxe="$ADDR_B" -v rcvd="$rcvd" \
		-v retries="$retry" '
	function after(a, b) {		# PSN a later than PSN b (24-bit serial)
		return ((a - b + 16777216) % 16777216) < 8388608 && a != b
	}
	{
		op = $5 + 0
		if ($3 == dray) {
			sent++
			if (op < 13 || op > 18) next
			if (op == 17 && int($8 / 32) % 4 != 0) {
				if ($8 + 0 != 96) nak++
				else seqnak++
				next
			}
			if (!have_ack || after($6, ack)) { ack = $6 + 0; have_ack = 1 }
		} else if ($3 == rxe && (op <= 12 || op == 19 || op == 20)) {
			# a request at or before the highest one sent starts
			# a retransmission (the frames after it continue it)
			if (have_req && !after($6, req)) {
				if (!back) { resends++; back = 1; have_lb = 0 }
				if (!have_lb || after($6, lb)) { lb = $6 + 0; have_lb = 1 }
			} else {
				req = $6 + 0; have_req = 1; back = 0
			}
		}
	}
	END {
		if (!have_req || nak || rcvd < sent)
			exit 1
		answered = have_ack && !after(req, ack)
		stalled = retries > resends
		short = back && have_lb && have_ack && !after(lb, ack)
		if (!answered && !stalled && !short)
			exit 1
		printf "# evidence: rxe received %d frames, dray sent %d; no NAK from dray but %d for PSN sequence errors; ", rcvd, sent, seqnak
		if (answered)
			printf "rxe last request PSN %d, dray answered up to PSN %d; ", req, ack
		if (short)
			printf "rxe went back and stopped at PSN %d, below its highest request PSN %d, dray answered up to PSN %d; ", lb, req, ack
		printf "rxe counted %d retries, the capture shows it sending again %d times\n", retries, resends + 0
	}' "$fields"
}

# rxe_hang_todo NAME OUT EVIDENCE KERNEL: a failed integrity run that
# rxe_requester_hang explained, reported as TODO with the run's errors,
# the evidence and rxe's counters (KERNEL: " 6.1" or "" in the reason)
rxe_hang_todo() {
	tap_todo "$1" "rxe$4: after a retransmission rxe's requester never sends or completes a fenced READ/atomic (tests/interop/README.md)"
	grep -E "ERROR|missing|seed" "$2" | head -n 8 | sed 's/^/# /'
	cat "$3"
	counters
}

rxe_counter() {
	local v=0
	read -r v <"/sys/class/infiniband/$RXE/ports/1/hw_counters/$1" 2>/dev/null
	echo "$v"
}

# capture_start PCAP SNAPLEN / capture_stop: tcpdump of the RoCEv2 frames
# on veth0 (both directions)
capture_start() {
	local i
	tcpdump -i veth0 -s "$2" -B 16384 -U -w "$1" udp dst port 4791 \
		>"$LOG/tcpdump.log" 2>&1 &
	CAP_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q "listening on" "$LOG/tcpdump.log" && return 0
		sleep 0.1
	done
	return 1
}
capture_stop() {
	sleep 0.3
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID"
}

# integ NAME RXE_TAG ARGS...: tests/rdma/integrity must pass. RXE_TAG
# names rxe's requests in its output ("A->B" when --dev-a is rxe0). A
# headers-only capture runs along; on a failure it shows the last frames,
# and decides whether the failure is the rxe bug above (reported as TODO,
# counted as skipped) or not (failed).
integ() {
	local name=$1 tag=$2 rc r0
	shift 2
	mark
	r0=$(rxe_counter rcvd_pkts)
	capture_start "$LOG/integ.pcap" 128
	timeout 900 "$RDMA_BIN/integrity" --quiet "$@" >"$LOG/integ.out" 2>&1
	rc=$?
	capture_stop
	if [[ $rc -eq 0 ]]; then
		tap_ok "$name"
		counters
		grep -E "ops in|PASS" "$LOG/integ.out" | sed 's/^/# /'
		return 0
	fi
	flow_fields "$LOG/integ.pcap" >"$LOG/integ.fields"
	if rxe_requester_hang "$LOG/integ.out" "$LOG/integ.fields" "$tag" \
		$(($(rxe_counter rcvd_pkts) - r0)) >"$LOG/integ.evidence"; then
		rxe_hang_todo "$name" "$LOG/integ.out" "$LOG/integ.evidence" " 6.1"
	else
		tap_fail "$name" "exit $rc"
		show "$LOG/integ.out" | grep -v "^# integrity: [A-Z_]* *[0-9]* *[0-9]*$" | tail -n 30
		counters
		flow_tail "$LOG/integ.fields"
		kernel_log
	fi
}

if want integrity; then
	it=$((600 * SCALE))
	# The local ACK timeout: 2^18 * 4.096 us = 1.07 s. No frame is lost
	# on the veth, and under TCG either side sometimes answers only after
	# 50-200 ms: with integrity's default (2^14: 67 ms) rxe retransmits
	# for nothing, and then hangs on its own bug (above). The last two
	# runs lose frames on purpose.
	tmo=(--timeout-exp 18)
	integ "integrity $DRAY->$RXE every opcode" "B->A" \
		--dev-a "$DRAY" --dev-b "$RXE" --one-way --iters "$it" \
		--max-size 1m "${tmo[@]}"
	integ "integrity $RXE->$DRAY every opcode" "A->B" \
		--dev-a "$RXE" --dev-b "$DRAY" --one-way --iters "$it" \
		--max-size 1m "${tmo[@]}"
	integ "integrity both directions, 16 SGEs, batches of 32" "B->A" \
		--dev-a "$DRAY" --dev-b "$RXE" --iters "$it" --max-size 256k \
		--max-sge 16 --max-batch 32 "${tmo[@]}"
	integ "integrity MRs at odd offsets and random IOVAs, both directions" "A->B" \
		--dev-a "$RXE" --dev-b "$DRAY" --iters "$it" --max-size 1m \
		--mr-offset --iova "${tmo[@]}"
	integ "integrity big messages (up to rxe's max_msg_sz 8 MiB), both directions" "B->A" \
		--dev-a "$DRAY" --dev-b "$RXE" --iters $((40 * SCALE)) \
		--max-size 4m --big --big-size 64m "${tmo[@]}"
	# Retransmission both ways: netem drops 1% of the frames each side
	# sends (a short ACK timeout, 2^12 * 4.096 us = 17 ms, so that a lost
	# tail is sent again soon).
	if netem_on "loss 1%"; then
		integ "integrity $DRAY->$RXE, 1% of the frames lost (dray retransmits)" "B->A" \
			--dev-a "$DRAY" --dev-b "$RXE" --one-way --iters $((300 * SCALE)) \
			--max-size 64k --timeout-exp 12 --wait-ms 120000
		integ "integrity $RXE->$DRAY, 1% of the frames lost (rxe retransmits)" "A->B" \
			--dev-a "$RXE" --dev-b "$DRAY" --one-way --iters $((300 * SCALE)) \
			--max-size 64k --timeout-exp 12 --wait-ms 30000
		tc -s qdisc show dev veth0 | grep -E "dropped" | sed 's/^ */# veth0 netem: /'
		tc -s qdisc show dev veth1 | grep -E "dropped" | sed 's/^ */# veth1 netem: /'
	else
		tap_fail "netem on veth0 and veth1"
		show "$LOG/tc"
	fi
	netem_off
fi

# --- capture ---------------------------------------------------------------
# The BTH opcodes of RC and UD (IBTA vol. 1 9.2, table 38) and the
# extended headers each carries: R RETH, A AETH, T AtomicETH, K
# AtomicAckETH, I ImmDt, V IETH, D DETH; the payload rule: - none, F the
# whole path MTU (FIRST, MIDDLE), L 1 .. path MTU (LAST), O 0 .. path MTU
# (ONLY).
OPS="0 - F SEND_FIRST
1 - F SEND_MIDDLE
2 - L SEND_LAST
3 I L SEND_LAST_IMM
4 - O SEND_ONLY
5 I O SEND_ONLY_IMM
6 R F WRITE_FIRST
7 - F WRITE_MIDDLE
8 - L WRITE_LAST
9 I L WRITE_LAST_IMM
10 R O WRITE_ONLY
11 RI O WRITE_ONLY_IMM
12 R - READ_REQUEST
13 A F READ_RESP_FIRST
14 - F READ_RESP_MIDDLE
15 A L READ_RESP_LAST
16 A O READ_RESP_ONLY
17 A - ACK
18 AK - ATOMIC_ACK
19 T - CMP_SWAP
20 T - FETCH_ADD
22 V L SEND_LAST_INV
23 V O SEND_ONLY_INV
100 D O UD_SEND_ONLY
101 ID O UD_SEND_ONLY_IMM"
# What dray must have sent in the capture run: every RC opcode but the
# invalidates (dray has no memory windows), and UD SEND Only.
DRAY_OPS="0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 100"

# check_frames FIELDS MTU DRAY_IPV4 DRAY_IPV6: every frame's headers
# against OPS; the opcodes seen per source; dray's IPv4 frames must
# include DRAY_OPS. A problem in a frame dray sent fails the check; one in
# a frame rxe sent is reported as rxe's (its IPv6 frames carry a zero UDP
# checksum, which tshark calls an error: rxe_net.c prepare_udp_hdr()).
check_frames() {
	awk -F'\t' -v mtu="$2" -v dray="$3" -v dray6="$4" -v ops="$OPS" \
		-v need="$DRAY_OPS" '
	BEGIN {
		n = split(ops, l, "\n")
		for (i = 1; i <= n; i++) {
			split(l[i], f, " ")
			hdr[f[1]] = f[2]; pay[f[1]] = f[3]; name[f[1]] = f[4]
			order[i] = f[1]
		}
		# header bytes: BTH 12; R 16, A 4, T 28, K 8, I 4, V 4, D 8
		len["R"] = 16; len["A"] = 4; len["T"] = 28; len["K"] = 8
		len["I"] = 4; len["V"] = 4; len["D"] = 8
		bad = 0
	}
	function err(msg) {
		if (from == dray || from == dray6) {
			bad++
			if (bad <= 10) print "# frame " $1 " from " from " (dray): " msg
		} else if (!(msg in other)) {
			other[msg] = $1
			print "# frame " $1 " from " from " (not dray, not counted; the first of its kind): " msg
		} else {
			other_n++
		}
	}
	{
		# 1 frame 2 ip.src 3 udp.length 4 opcode 5 padcnt 6 tver
		# 7 reth 8 aeth 9 atomiceth 10 atomicacketh 11 immdt 12 ieth
		# 13 deth 14 malformed 15 expert severities 16 messages
		# 17 aeth syndrome 18 ipv6.src
		frames++
		op = $4
		from = ($2 != "") ? $2 : $18
		src[from]++
		if ($14 != "")
			err("malformed: " $16)
		ns = split($15, sev, ",")
		for (i = 1; i <= ns; i++) {
			if (sev[i] + 0 >= 8388608) err("expert error: " $16)
			else if (sev[i] + 0 >= 6291456) warns++
		}
		if (!(op in hdr)) { err("opcode " op " is not an RC or UD opcode"); next }
		seen[from, op]++
		if ($6 != 0) err("BTH TVer " $6)
		h = hdr[op]; hl = 12; got = ""
		if ($7 != "") got = got "R"
		if ($8 != "") got = got "A"
		if ($9 != "") got = got "T"
		if ($10 != "") got = got "K"
		if ($11 != "") got = got "I"
		if ($12 != "") got = got "V"
		if ($13 != "") got = got "D"
		want = (h == "-") ? "" : h
		if (got != want)
			err(name[op] ": extended headers \"" got "\", expected \"" want "\"")
		for (i = 1; i <= length(want); i++)
			hl += len[substr(want, i, 1)]
		p = $3 - 8 - hl - $5 - 4
		r = pay[op]
		if (p < 0 || (p + $5) % 4 != 0 || (p == 0 && $5 != 0) ||
		    (r == "-" && p != 0) || (r == "F" && p != mtu) ||
		    (r == "L" && (p < 1 || p > mtu)) || (r == "O" && p > mtu))
			err(name[op] ": payload " p " bytes, pad " $5 ", path MTU " mtu)
		if (op == 17 || op == 18) {
			t = int($17 / 32) % 4
			if (t == 1) rnr[from]++
			else if (t == 3) nak[from]++
		}
	}
	END {
		for (s in src) {
			line = ""
			for (i = 1; i <= n; i++)
				if ((s, order[i]) in seen)
					line = line " " name[order[i]] "=" seen[s, order[i]]
			who = (s == dray || s == dray6) ? " (dray)" : ""
			print "# " s who ": " src[s] " frames:" line
			if (s in nak || s in rnr)
				print "# " s ": NAKs " nak[s] + 0 ", RNR NAKs " rnr[s] + 0
		}
		m = split(need, nd, " ")
		for (i = 1; i <= m; i++)
			if (!((dray, nd[i]) in seen)) {
				bad++
				print "# dray (" dray ") sent no " name[nd[i]]
			}
		if (warns) print "# expert warnings: " warns
		if (other_n) print "# " other_n " more such problems in frames dray did not send"
		if (!frames) { print "# no RoCEv2 frames decoded"; bad++ }
		exit bad ? 1 : 0
	}' "$1"
}

if want capture; then
	pcap=$LOG/flow.pcap
	mark
	r0=$(rxe_counter rcvd_pkts)
	capture_start "$pcap" 0
	# RC: every opcode, both directions, IPv4 (integrity; --cover puts
	# every kind in every packet shape first, from each side); RC over the
	# IPv6 link-local GIDs and UD over both (pingpong, both directions).
	# The ACK timeout is 2^20 * 4.096 us = 4.3 s: tcpdump writing every
	# byte slows both sides, the veth loses nothing, and a retransmission
	# for nothing is what sets off rxe's hang (below).
	timeout 600 "$RDMA_BIN/integrity" --quiet --dev-a "$DRAY" --dev-b "$RXE" \
		--cover --iters $((300 * SCALE)) --max-size 12k --max-sge 3 \
		--timeout-exp 20 >"$LOG/cap.integrity" 2>&1
	rc=$?
	# An integrity failure that is rxe's requester hang (the evidence of
	# the integrity group, from the frames captured so far: rxe's
	# requests are integrity's B->A) is a TODO, not a failure; the
	# pingpongs and the frame checks below still count.
	hang=''
	if [[ $rc -ne 0 ]]; then
		flow_fields "$pcap" >"$LOG/cap.flow"
		rxe_requester_hang "$LOG/cap.integrity" "$LOG/cap.flow" "B->A" \
			$(($(rxe_counter rcvd_pkts) - r0)) >"$LOG/cap.evidence" && hang=1
	fi
	[[ -n $hang ]] && rc=0
	direction "$DRAY->$RXE"
	for v in "ibv_ud_pingpong v4 -s 1024" "ibv_rc_pingpong ll -s 2048" \
		"ibv_ud_pingpong ll -s 256"; do
		# shellcheck disable=SC2086 # PROG KIND ARGS
		pingpong_run $v || { rc=1; echo "# $v failed"; tail -n 5 "$LOG/pp.cli" "$LOG/pp.srv"; }
	done >"$LOG/cap.pingpong"
	name="capture: traffic: integrity $DRAY<->$RXE (every RC opcode, both directions), ud_pingpong, rc_pingpong and ud_pingpong over IPv6"
	if [[ -n $hang && $rc -eq 0 ]]; then
		rxe_hang_todo "$name" "$LOG/cap.integrity" "$LOG/cap.evidence" ""
	else
		# on a failure report shows cap.*, the last frames of
		# cap.flow among them
		report "$name" "$rc" cap
	fi
	grep -E "packets (captured|received|dropped)" "$LOG/tcpdump.log" | sed 's/^/# tcpdump: /'

	# The path MTU both sides use: the ports' active MTU (both veth 1500).
	mtu=$(ibv_devinfo -d "$DRAY" | awk '/active_mtu/ { print $2; exit }')
	"${TSHARK[@]}" -r "$pcap" -T fields -E separator=/t \
		-e frame.number -e ip.src -e udp.length -e infiniband.bth.opcode \
		-e infiniband.bth.padcnt -e infiniband.bth.tver \
		-e infiniband.reth -e infiniband.aeth -e infiniband.atomiceth \
		-e infiniband.atomicacketh -e infiniband.immdt -e infiniband.ieth \
		-e infiniband.deth -e _ws.malformed -e _ws.expert.severity \
		-e _ws.expert.message -e infiniband.aeth.syndrome -e ipv6.src \
		>"$LOG/cap.fields" 2>"$LOG/cap.tshark"
	trc=$?
	name="capture: tshark's InfiniBand dissector: no malformed frame or expert error; BTH, RETH, AETH, AtomicETH, AtomicAckETH, ImmDt, DETH as each opcode requires; payload and pad fit the path MTU; dray sent every RC opcode and UD SEND"
	if [[ $trc -ne 0 || ! -s $LOG/cap.fields ]]; then
		tap_fail "$name" "tshark exit $trc"
		show "$LOG/cap.tshark" | grep -v "Running as user" | tail -n 10
	else
		echo "# tshark: $(wc -l <"$LOG/cap.fields") frames decoded, path MTU ${mtu:-?}"
		ll=$(ip -6 -o addr show dev veth0 scope link | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
		check_frames "$LOG/cap.fields" "${mtu:-1024}" "$ADDR_A" "${ll:-none}" >"$LOG/cap.check"
		rc=$?
		cat "$LOG/cap.check"
		if [[ $rc -eq 0 ]]; then
			tap_ok "$name"
		else
			tap_fail "$name"
		fi
	fi
	"$IOP_BIN/icrc_check" "$pcap" >"$LOG/cap.icrc" 2>&1
	rc=$?
	show "$LOG/cap.icrc"
	if [[ $rc -eq 0 ]]; then
		tap_ok "capture: ICRC of every frame correct (both senders, IPv4 and IPv6)"
	else
		tap_fail "capture: ICRC of every frame correct (both senders, IPv4 and IPv6)" "icrc_check exit $rc"
	fi
fi

# --- rping: RDMA CM between dray and rxe ----------------------------------
# rping_pair NAME SIZE: the direction's server listens on its address, the
# client connects from its own (the CM MADs cross both GSI QPs); -V checks
# every byte of every ping, and the client must have printed them all.
# SIZE 23 to 65535 (rping refuses 65536 although its message names it).
rping_pair() {
	local name=$1 size=$2 count=$((10 * SCALE)) cli_addr rc
	cli_addr=$ADDR_A
	[[ $SRV_ADDR == "$ADDR_A" ]] && cli_addr=$ADDR_B
	next_port
	mark
	# rdma_cm listens in the kernel: no socket to wait for
	PAIR_SLEEP=3 pair_run "$LOG/rp" 120 \
		"rping -s -a $SRV_ADDR -p $PAIR_PORT -v -V -C $count -S $size" \
		"rping -c -a $SRV_ADDR -I $cli_addr -p $PAIR_PORT -v -V -C $count -S $size"
	rc=$?
	if [[ $rc -eq 0 ]] &&
		[[ $(grep -c '^ping data: rdma-ping-' "$LOG/rp.cli") -ne $count ]]; then
		echo "the client did not print all $count pings" >>"$LOG/rp.cli"
		rc=1
	fi
	report "$name" "$rc" rp
}

if want rping; then
	for d in "${DIRS[@]}"; do
		direction "$d"
		for size in 64 4096 65535; do
			rping_pair "rping $d size $size (-v -V, $((10 * SCALE)) pings)" "$size"
		done
	done
fi

# --- IBTA 1.5 ATOMIC WRITE and FLUSH ------------------------------------------
# tests/rdma/ibta15 between the two, each way, its two-device cases only,
# with a capture: every frame dray sent must carry a correct ICRC. rxe of
# 6.12 computes the ICRC of a FLUSH over its headers twice (its opcode table
# gives FLUSH no payload offset, so the headers count as payload again):
# each side drops the other's FLUSH as corrupt, the requester retries
# until RETRY_EXC_ERR. Those cases are TODO while icrc_check shows rxe's
# FLUSH frames wrong and dray's right (tests/interop/README.md).
ib15_case_tap() {	# DIRECTION OUT FLUSH_BROKEN
	local st name
	while IFS=$'\t' read -r st name; do
		case $st in
		ok) tap_ok "ibta15 $1 $name" ;;
		skip) tap_skip "ibta15 $1 $name" "skipped by the test" ;;
		*)
			if [[ $name == *flush* && $3 == 1 ]]; then
				tap_todo "ibta15 $1 $name" "rxe's FLUSH ICRC (above)"
			else
				tap_fail "ibta15 $1 $name"
				grep -E "^# .*$name" "$2" | tail -n 5
			fi
			;;
		esac
	done < <(awk '
		/^#  RUN / { name = $3 }
		name ~ /\.one_dev\./ { next }
		/^ok [0-9]+ .*# SKIP/ { print "skip\t" name; next }
		/^ok [0-9]+ / { print "ok\t" name; next }
		/^not ok [0-9]+ / { print "fail\t" name }' "$2")
}

if want ibta15; then
	declare -A IB15_OUT=()
	pcap=$LOG/ib15.pcap
	cap=0
	capture_start "$pcap" 0 && cap=1
	for d in "${DIRS[@]}"; do
		direction "$d"
		DRAY_TEST_DEV_A=$CLI DRAY_TEST_DEV_B=$SRV DRAY_TEST_TWO_DEV_ONLY=1 \
			timeout 600 "$RDMA_BIN/ibta15" >"$LOG/ib15-$CLI.out" 2>&1
		grep -E "^# .*offers" "$LOG/ib15-$CLI.out" | head -n 1
		IB15_OUT[$CLI]=$LOG/ib15-$CLI.out
	done
	[[ $cap -eq 1 ]] && capture_stop
	flush_broken=0
	if [[ $cap -eq 1 ]]; then
		"$IOP_BIN/icrc_check" --verbose "$pcap" >"$LOG/ib15.icrc" 2>&1
		grep -E "^icrc: from " "$LOG/ib15.icrc" | sed 's/^/# /'
		if grep -qE "^icrc: from $ADDR_A: .* wrong 0, truncated 0" "$LOG/ib15.icrc"; then
			tap_ok "ibta15: every frame dray sent has a correct ICRC"
		else
			tap_fail "ibta15: every frame dray sent has a correct ICRC"
			grep -E "from $ADDR_A: opcode .*computed" "$LOG/ib15.icrc" | head -n 5
		fi
		grep -qE "from $ADDR_B: opcode 0x1c .*computed" "$LOG/ib15.icrc" &&
			flush_broken=1
	else
		tap_fail "ibta15: capture" "tcpdump did not start"
	fi
	for d in "${DIRS[@]}"; do
		direction "$d"
		ib15_case_tap "$d" "${IB15_OUT[$CLI]}" "$flush_broken"
	done
fi

# --- the kernel --------------------------------------------------------------
kernel_clean "$TAINT0"

summary
[[ $TAP_FAIL -eq 0 ]]
