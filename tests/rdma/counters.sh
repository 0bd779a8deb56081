# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# shellcheck disable=SC2154 # kind, BIN, LOG, DEV_A, DEV_B: from run.sh
#
# The counters group of tests/rdma/run.sh (sourced: DEV_A, DEV_B, BIN,
# LOG, kind and the TAP helpers come from there). dray's hardware
# counters (Documentation/counters.md) through `rdma statistic`, checked
# against traffic of a known size made by $BIN/traffic:
#
#  - the port counters: every counter listed; N SENDs of S bytes move
#    tx_packets/tx_bytes of the sender by exactly N (+ the packets sent
#    again) and N * S, the receiver's rx side by at least that; the
#    values stay after the QPs are destroyed;
#  - automatic binding (auto type on): the QP's counter shows exactly its
#    traffic, and when the QP is destroyed the counter goes and the port
#    counters still hold its traffic (nothing lost, nothing twice);
#  - manual binding: a new counter starts at zero, counts what the QP
#    does while bound, not what it did before or after; a QP bound again
#    gets a fresh counter; binding errors (no such QP, no such counter,
#    manual bind in auto mode, a port that does not exist, unbind of a
#    QP not bound) fail with an error;
#  - RNR NAKs both ways and an error completion, counted and traced;
#  - tracepoints: QP state changes, NAKs, RNR waits, error completions,
#    and under netem loss 20 % retransmissions (also counted).
#
# Every value is compared once the traffic it depends on completed: no
# timing enters an assertion.

# cnt_link DEV: the port counters of DEV as "NAME VALUE" lines
cnt_link() {
	rdma -j statistic show link "$1/1" | cnt_flatten
}

# cnt_qp DEV: "CNTN NAME VALUE" lines for every bound counter of DEV,
# and "CNTN lqpn QPN" for each of its QPs
cnt_qp() {
	rdma -j statistic qp show link "$1/1" | cnt_flatten qp
}

# cnt_flatten [qp]: rdma's JSON on stdin, as name/value lines
cnt_flatten() {
	python3 -c '
import json, sys
qp = len(sys.argv) > 1
try:
    data = json.load(sys.stdin)
except ValueError:
    sys.exit(1)
objs = data if isinstance(data, list) else [data]
skip = {"ifindex", "ifname", "port", "cntn", "qp-type", "pid", "comm"}
def walk(o, pre, out):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("qp", "lqpn", "qps") or k.lower() == "lqpn":
                for q in (v if isinstance(v, list) else [v]):
                    if isinstance(q, dict):
                        q = q.get("lqpn", next(iter(q.values())))
                    out.append((pre, "lqpn", q))
            elif isinstance(v, (dict, list)):
                walk(v, pre, out)
            elif k not in skip:
                out.append((pre, k, v))
    elif isinstance(o, list):
        for x in o:
            walk(x, pre, out)
for o in objs:
    out = []
    pre = str(o.get("cntn", "")) + " " if qp else ""
    walk(o, pre, out)
    for p, k, v in out:
        print("%s%s %s" % (p, k, v))
' "$@"
}

# cnt_val FILE NAME: a value of cnt_link's output (empty if none)
cnt_val() {
	awk -v n="$2" '$1 == n { print $2; exit }' "$1"
}

# cnt_cval FILE CNTN NAME: a value of counter CNTN in cnt_qp's output
cnt_cval() {
	awk -v c="$2" -v n="$3" '$1 == c && $2 == n { print $3; exit }' "$1"
}

# cnt_of_qp FILE QPN: the counter QPN is bound to (empty if none)
cnt_of_qp() {
	awk -v q="$2" '$2 == "lqpn" && $3 == q { print $1; exit }' "$1"
}

# cnt_delta BEFORE AFTER NAME: how much NAME moved
cnt_delta() {
	local a b
	a=$(cnt_val "$1" "$3")
	b=$(cnt_val "$2" "$3")
	echo $((${b:-0} - ${a:-0}))
}

# cnt_expect BEFORE AFTER NAME OP VALUE [LABEL]: NAME moved by OP VALUE
# (an operator of [[ ]]: -eq, -ge, -gt) between two cnt_link snapshots
cnt_expect() {
	local d how
	d=$(cnt_delta "$1" "$2" "$3")
	case $4 in
	-ge) how="at least " ;;
	-gt) how="more than " ;;
	*) how="" ;;
	esac
	cnt_check "${6:-$(cnt_dev "$1")} $3 moved by $how$5 ($d)" "$d $4 $5"
}

# cnt_dev FILE: the device a snapshot file is of ($LOG/a* DEV_A, else B)
cnt_dev() {
	[[ ${1##*/} == a* ]] && echo "$DEV_A" || echo "$DEV_B"
}

# check NAME CONDITION...: one TAP line; CONDITION is evaluated by [[ ]]
cnt_check() {
	local name=$1
	shift
	if eval "[[ $* ]]"; then
		tap_ok "counters: $name"
	else
		tap_fail "counters: $name" "$(eval "echo \"$*\"")"
	fi
}

# traffic_start [ARGS]: $BIN/traffic as a coprocess; QPN_A and QPN_B set
traffic_start() {
	coproc TRAFFIC { DRAY_TEST_DEV_A=$DEV_A DRAY_TEST_DEV_B=$DEV_B \
		timeout 600 "$BIN/traffic" "$@" 2>&1; }
	local line
	QPN_A='' QPN_B=''
	if read -r -t 120 line <&"${TRAFFIC[0]}" && [[ $line == "qpn "* ]]; then
		read -r _ QPN_A QPN_B <<<"$line"
		return 0
	fi
	echo "# traffic did not start: $line"
	return 1
}

# traffic CMD: one command; its answer line in TRAFFIC_OUT, 0 if "ok"
traffic() {
	TRAFFIC_OUT=''
	echo "$1" >&"${TRAFFIC[1]}" || return 1
	read -r -t 300 TRAFFIC_OUT <&"${TRAFFIC[0]}" || return 1
	[[ $TRAFFIC_OUT == ok* ]]
}

traffic_stop() {
	local pid=$TRAFFIC_PID
	traffic quit
	wait "$pid"
}

# trace_on / trace_off: the dray events into $LOG/trace
TRACE=/sys/kernel/tracing
trace_on() {
	[[ -e $TRACE/trace ]] || mount -t tracefs nodev $TRACE 2>/dev/null
	[[ -d $TRACE/events/dray ]] || return 1
	echo 0 >$TRACE/tracing_on
	echo >$TRACE/trace
	echo 16384 >$TRACE/buffer_size_kb
	echo 1 >$TRACE/events/dray/enable
	echo 1 >$TRACE/tracing_on
}
trace_off() {
	echo 0 >$TRACE/tracing_on
	echo 0 >$TRACE/events/dray/enable
	cat $TRACE/trace >"$LOG/trace"
}
# trace_check EVENT PATTERN: one TAP line, the first matching event shown
trace_check() {
	if grep -qE "$1: .*$2" "$LOG/trace"; then
		tap_ok "counters: trace: $1 $2"
		grep -E "$1: .*$2" "$LOG/trace" | head -n 1 | sed 's/^ */# /'
	else
		tap_fail "counters: trace: $1 $2" "$(grep -c "$1:" "$LOG/trace") $1 events"
	fi
}

# res_has WHAT PATTERN...: `rdma -dd resource show WHAT` of DEV_A has a
# line matching every PATTERN (ERE, in order)
res_has() {
	local what=$1 re
	shift
	re=$(printf '%s.*' "$@")
	local by=dev
	[[ $what == qp ]] && by="link"
	rdma -dd resource show "$what" "$by" "$DEV_A" >"$LOG/res" 2>&1
	grep -qE "${re%.\*}" "$LOG/res"
}

# res_group: dray's details in `rdma resource show`, QP_A having sent
# exactly 20 SENDs (traffic's first PSN is 0x1000, its buffer 64 KiB)
res_group() {
	local name
	name="resource: QP $QPN_A: 20 SQ WQEs posted, fetched, completed; PSNs"
	if res_has qp "lqpn $QPN_A " "sq_posted 20 " "sq_fetched 20 " \
		"sq_completed 20 " "next_psn $((0x1000 + 20)) " \
		"una_psn $((0x1000 + 20)) " "max_psn $((0x1000 + 20)) "; then
		tap_ok "counters: $name"
	else
		tap_fail "counters: $name"
		show "$LOG/res" | tail -n 8
	fi
	grep -E "lqpn $QPN_A " "$LOG/res" | sed 's/^/# /'
	# the QP's own counters in its details: 20 requests and those sent again
	local line tx retx
	line=$(grep -E "lqpn $QPN_A " "$LOG/res" | head -n 1)
	tx=$(awk '{ for (i = 1; i < NF; i++) if ($i ~ /^(drv_)?tx_packets$/) print $(i + 1) }' <<<"$line")
	retx=$(awk '{ for (i = 1; i < NF; i++) if ($i ~ /^(drv_)?retransmitted_packets$/) print $(i + 1) }' <<<"$line")
	cnt_check "resource: QP $QPN_A's own tx_packets = 20 + ${retx:-?} sent again" "-n '$retx' && '$tx' == $((20 + ${retx:-0}))"
	rdma -dd resource show cq dev "$DEV_A" | sed 's/^/# /'
	rdma -dd resource show mr dev "$DEV_A" | sed 's/^/# /'
	name="resource: CQs with depth, pi, ci, armed"
	if res_has cq "depth [0-9]+ " "pi [0-9]+ " "ci [0-9]+ " "armed [01] "; then
		tap_ok "counters: $name"
	else
		tap_fail "counters: $name"
		show "$LOG/res" | tail -n 8
	fi
	name="resource: the 64 KiB MR: 16 pages, valid"
	if res_has mr "n_pages 16 " "length 65536 " "state valid"; then
		tap_ok "counters: $name"
	else
		tap_fail "counters: $name"
		show "$LOG/res" | tail -n 8
	fi
}

counters_group() {
	local a0=$LOG/a0 a1=$LOG/a1 b0=$LOG/b0 b1=$LOG/b1 q=$LOG/q
	local n s tx retx c c2 name rc
	if [[ $kind != dray ]]; then
		tap_skip "counters" "dray's counters and tracepoints: dray only"
		return
	fi

	# --- the port counters --------------------------------------------
	cnt_link "$DEV_A" >"$a0"
	rdma statistic show link "$DEV_A/1" | sed 's/^/# /'
	n=$(grep -cE '^(tx_packets|tx_bytes|rx_packets|rx_bytes|tx_drops|rx_drops|rx_icrc_errors|rx_malformed|rx_no_qp|pkey_violations|qkey_violations|rx_no_wqe|local_ack_timeouts|late_timers|tail_probes|retransmitted_packets|out_of_sequence|duplicate_requests|bad_responses|(seq|rnr|inv_req|access|op)_naks_(sent|received)|(req|resp)_cqe_(errors|flushes)) [0-9]+$' "$a0")
	cnt_check "rdma statistic show link $DEV_A/1 lists the 33 counters" "$n -eq 33"

	cnt_link "$DEV_A" >"$a0"
	cnt_link "$DEV_B" >"$b0"
	n=100 s=512
	if traffic_start && traffic "send $n $s" && traffic_stop; then
		tap_ok "counters: traffic $n SENDs of $s bytes $DEV_A->$DEV_B"
	else
		tap_fail "counters: traffic $n SENDs of $s bytes $DEV_A->$DEV_B" "$TRAFFIC_OUT"
	fi
	# read after the QPs are gone: the port keeps what they counted
	cnt_link "$DEV_A" >"$a1"
	cnt_link "$DEV_B" >"$b1"
	# every packet of A is a request: N, and those sent again
	retx=$(cnt_delta "$a0" "$a1" retransmitted_packets)
	cnt_expect "$a0" "$a1" tx_packets -eq $((n + retx))
	cnt_expect "$a0" "$a1" tx_bytes -eq $(((n + retx) * s))
	# ACKs only: packets without payload
	cnt_expect "$a0" "$a1" rx_bytes -eq 0
	cnt_expect "$a0" "$a1" rx_packets -ge 1
	cnt_expect "$b0" "$b1" rx_packets -ge $n
	cnt_expect "$b0" "$b1" rx_bytes -ge $((n * s))
	cnt_expect "$b0" "$b1" tx_bytes -eq 0
	cnt_expect "$b0" "$b1" tx_packets -ge 1
	tx=$(cat "/sys/class/infiniband/$DEV_A/ports/1/hw_counters/tx_bytes")
	cnt_check "sysfs hw_counters/tx_bytes = rdma statistic's" "$tx -eq $(cnt_val "$a1" tx_bytes)"
	for name in req_cqe_errors resp_cqe_errors rx_icrc_errors rx_malformed; do
		cnt_expect "$a0" "$a1" $name -eq 0
	done

	# --- automatic binding ----------------------------------------------
	rdma statistic qp set link "$DEV_A/1" auto type on
	rdma statistic qp mode link "$DEV_A/1" | sed 's/^/# /'
	cnt_link "$DEV_A" >"$a0"
	n=50 s=256
	if traffic_start && traffic "send $n $s"; then
		cnt_qp "$DEV_A" >"$q"
		rdma statistic qp show link "$DEV_A/1" | sed 's/^/# /'
		c=$(cnt_of_qp "$q" "$QPN_A")
		cnt_check "auto: QP $QPN_A is bound to a counter" "-n '$c'"
		retx=$(cnt_cval "$q" "$c" retransmitted_packets)
		tx=$(cnt_cval "$q" "$c" tx_packets)
		cnt_check "auto: counter $c tx_packets = $n + ${retx:-?}" "'$tx' == $((n + ${retx:-0}))"
		tx=$(cnt_cval "$q" "$c" tx_bytes)
		cnt_check "auto: counter $c tx_bytes = ($n + ${retx:-?}) * $s" "'$tx' == $(((n + ${retx:-0}) * s))"
		traffic_stop
	else
		tap_fail "counters: auto: traffic" "$TRAFFIC_OUT"
	fi
	cnt_qp "$DEV_A" >"$q"
	cnt_check "auto: the counter went with its QP" "! -s '$q'"
	cnt_link "$DEV_A" >"$a1"
	tx=$(cnt_delta "$a0" "$a1" tx_bytes)
	cnt_check "auto: the port counters kept the QP's $((n * s)) bytes (once)" "$tx -eq $(((n + ${retx:-0}) * s))"
	rdma statistic qp set link "$DEV_A/1" auto off

	# --- manual binding ---------------------------------------------------
	cnt_link "$DEV_A" >"$a0"
	if ! traffic_start; then
		tap_fail "counters: manual: traffic" "$TRAFFIC_OUT"
		return
	fi
	traffic "send 20 256"
	res_group
	rdma statistic qp bind link "$DEV_A/1" lqpn "$QPN_A"
	cnt_check "manual: rdma statistic qp bind lqpn $QPN_A" "$? -eq 0"
	cnt_qp "$DEV_A" >"$q"
	c=$(cnt_of_qp "$q" "$QPN_A")
	cnt_check "manual: QP $QPN_A is bound to a counter" "-n '$c'"
	tx=$(cnt_cval "$q" "$c" tx_bytes)
	cnt_check "manual: the new counter $c starts at zero" "'$tx' == 0"
	cnt_link "$DEV_A" >"$b0"
	traffic "send 30 256"
	cnt_qp "$DEV_A" >"$q"
	cnt_link "$DEV_A" >"$b1"
	retx=$(cnt_cval "$q" "$c" retransmitted_packets)
	tx=$(cnt_cval "$q" "$c" tx_bytes)
	cnt_check "manual: counter $c counted the 30 SENDs while bound" "'$tx' == $(((30 + ${retx:-0}) * 256))"
	tx=$(cnt_delta "$b0" "$b1" tx_bytes)
	cnt_check "manual: the port counters moved by the same (not twice)" "$tx -eq $(((30 + ${retx:-0}) * 256))"

	# errors
	rdma statistic qp bind link "$DEV_A/1" lqpn 999999 2>"$LOG/err"
	rc=$?
	cnt_check "manual: bind of a QP that does not exist fails ($(head -n1 "$LOG/err"))" "$rc -ne 0"
	rdma statistic qp bind link "$DEV_A/1" lqpn "$QPN_A" cntn 4242 2>"$LOG/err"
	rc=$?
	cnt_check "manual: bind to a counter that does not exist fails ($(head -n1 "$LOG/err"))" "$rc -ne 0"
	rdma statistic qp bind link "$DEV_A/2" lqpn "$QPN_A" 2>"$LOG/err"
	rc=$?
	cnt_check "manual: bind on port 2 fails ($(head -n1 "$LOG/err"))" "$rc -ne 0"
	rdma statistic qp unbind link "$DEV_B/1" cntn "$c" lqpn "$QPN_B" 2>"$LOG/err"
	rc=$?
	cnt_check "manual: unbind of a QP that is not bound fails ($(head -n1 "$LOG/err"))" "$rc -ne 0"
	rdma statistic qp set link "$DEV_B/1" auto type on
	rdma statistic qp bind link "$DEV_B/1" lqpn "$QPN_B" 2>"$LOG/err"
	rc=$?
	cnt_check "manual: bind in auto mode fails ($(head -n1 "$LOG/err"))" "$rc -ne 0"
	rdma statistic qp set link "$DEV_B/1" auto off

	rdma statistic qp unbind link "$DEV_A/1" cntn "$c" lqpn "$QPN_A"
	cnt_check "manual: unbind cntn $c lqpn $QPN_A" "$? -eq 0"
	cnt_qp "$DEV_A" >"$q"
	cnt_check "manual: the counter is freed with its last QP" "! -s '$q'"
	traffic "send 10 256"
	rdma statistic qp bind link "$DEV_A/1" lqpn "$QPN_A"
	cnt_qp "$DEV_A" >"$q"
	c2=$(cnt_of_qp "$q" "$QPN_A")
	tx=$(cnt_cval "$q" "$c2" tx_bytes)
	cnt_check "manual: bound again, a fresh counter $c2 at zero" "-n '$c2' && '$tx' == 0"
	traffic_stop
	cnt_qp "$DEV_A" >"$q"
	cnt_check "manual: destroying the QP freed counter $c2" "! -s '$q'"
	cnt_link "$DEV_A" >"$a1"
	retx=$(cnt_delta "$a0" "$a1" retransmitted_packets)
	tx=$(cnt_delta "$a0" "$a1" tx_bytes)
	cnt_check "manual: the port counters hold all 60 SENDs, once" "$tx -eq $(((60 + retx) * 256))"

	# --- RNR, error completions and the tracepoints ----------------------
	if ! trace_on; then
		tap_fail "counters: tracing: no $TRACE/events/dray"
		return
	fi
	cnt_link "$DEV_A" >"$a0"
	cnt_link "$DEV_B" >"$b0"
	if traffic_start --rnr-retry 1 && traffic rnr && traffic_stop; then
		tap_ok "counters: a SEND without a receive WQE ends in RNR retry exceeded"
	else
		tap_fail "counters: a SEND without a receive WQE ends in RNR retry exceeded" "$TRAFFIC_OUT"
	fi
	cnt_link "$DEV_A" >"$a1"
	cnt_link "$DEV_B" >"$b1"
	# the first try and one retry
	cnt_expect "$b0" "$b1" rnr_naks_sent -eq 2 "rnr: $DEV_B"
	cnt_expect "$a0" "$a1" rnr_naks_received -eq 2 "rnr: $DEV_A"
	cnt_expect "$a0" "$a1" req_cqe_errors -eq 1 "rnr: $DEV_A"
	trace_off
	trace_check dray_qp_state "RESET -> INIT"
	trace_check dray_qp_state "RTR -> RTS"
	trace_check dray_qp_state "qpn=$QPN_A .*-> ERR"
	trace_check dray_nak_tx "qpn=$QPN_B .*RNR"
	trace_check dray_nak_rx "qpn=$QPN_A .*RNR"
	trace_check dray_rnr_wait "qpn=$QPN_A "
	trace_check dray_cqe_err "qpn=$QPN_A .*status=13"

	# --- netem loss: retransmissions ---------------------------------------
	trace_on
	cnt_link "$DEV_A" >"$a0"
	cnt_link "$DEV_B" >"$b0"
	n=200 s=512
	if netem_on "loss 20%"; then
		# 2^12 * 4.096 us = 17 ms per timeout
		if traffic_start --timeout-exp 12 && traffic "send $n $s" && traffic_stop; then
			tap_ok "counters: $n SENDs under netem loss 20%"
		else
			tap_fail "counters: $n SENDs under netem loss 20%" "$TRAFFIC_OUT"
		fi
		tc -s qdisc show dev veth0 | grep -E "dropped" | sed 's/^/# veth0: /'
	else
		tap_fail "counters: netem loss 20% on veth0/veth1"
	fi
	netem_off
	trace_off
	cnt_link "$DEV_A" >"$a1"
	cnt_link "$DEV_B" >"$b1"
	retx=$(cnt_delta "$a0" "$a1" retransmitted_packets)
	cnt_expect "$a0" "$a1" retransmitted_packets -gt 0 "loss: $DEV_A"
	tx=$(( $(cnt_delta "$a0" "$a1" local_ack_timeouts) + $(cnt_delta "$a0" "$a1" seq_naks_received) ))
	cnt_check "loss: $DEV_A went back on timeouts or sequence NAKs ($tx)" "$tx -gt 0"
	cnt_expect "$a0" "$a1" tx_packets -eq $((n + retx)) "loss: $DEV_A"
	cnt_expect "$b0" "$b1" rx_bytes -ge $((n * s)) "loss: $DEV_B"
	trace_check dray_retransmit "qpn=$QPN_A "
}
