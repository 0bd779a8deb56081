# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The shell library of the tests and benchmarks: sourced by the lanes
# under tests/ (rdma, cm, kverbs, pyverbs, interop) and by
# scripts/bench-guest.sh, for use inside the test VM as root: the veth
# pair with two RoCE devices on it, the RoCEv2 IPv4 GID index of a device,
# waiting for a server to listen, perftest pairs and their figures, TAP
# output.
#
# Every program started under TCG costs 0.1-0.5 s: these functions use
# shell builtins wherever they can.

RDMA_LIB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

# Devices are dev_a on veth0 (10.0.0.1) and dev_b on veth1 (10.0.0.2).
# shellcheck disable=SC2034 # for the scripts that source this file
ADDR_A=10.0.0.1
# shellcheck disable=SC2034
ADDR_B=10.0.0.2

# rdma_devs KIND: the names of the two devices of a kind (dray|rxe).
rdma_devs() {
	case $1 in
	dray) echo "dray0 dray1" ;;
	rxe) echo "rxe0 rxe1" ;;
	*) return 1 ;;
	esac
}

# veth_up: the routed veth pair (idempotent). A veth has no queue: a
# frame sent on one end is put on the receiving CPU's backlog, which holds
# netdev_max_backlog (1000) frames. A 1 MiB RDMA READ answered in one burst
# is 1024 frames at MTU 1024: the default drops the tail of the burst and
# every large READ then crawls through retransmissions (rxe logs "Failed
# sending ACK"; under TCG ib_read_bw -a stalls at 1 MiB). A NIC has a ring
# for that; give the pair a deep backlog instead.
veth_up() {
	sysctl -qw net.core.netdev_max_backlog=20000
	[[ -e /sys/class/net/veth0 ]] && return 0
	"$RDMA_LIB_ROOT/scripts/vm/veth-pair.sh"
}

# rdma_up KIND: load the module and create the two devices of KIND on
# veth0/veth1; wait until both ports are ACTIVE and have their IPv4 GID.
rdma_up() {
	local kind=$1 a b i
	read -r a b <<<"$(rdma_devs "$kind")" || return 1
	case $kind in
	dray) modprobe dray || return 1 ;;
	rxe) modprobe rdma_rxe || return 1 ;;
	esac
	modprobe ib_uverbs || return 1
	[[ -e /sys/class/infiniband/$a ]] ||
		rdma link add "$a" type "$kind" netdev veth0 || return 1
	[[ -e /sys/class/infiniband/$b ]] ||
		rdma link add "$b" type "$kind" netdev veth1 || return 1
	for ((i = 0; i < 100; i++)); do
		if port_active "$a" && port_active "$b" &&
			gid_v4 "$a" >/dev/null && gid_v4 "$b" >/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "rdma_up: $a/$b did not become ACTIVE with IPv4 GIDs" >&2
	return 1
}

# rdma_down KIND: remove the two devices (the module stays loaded).
rdma_down() {
	local d
	for d in $(rdma_devs "$1"); do
		[[ -e /sys/class/infiniband/$d ]] && rdma link delete "$d"
	done
	return 0
}

# eth_link_up KIND MY_IP: in a VM of a two-VM run (the QEMU network on
# eth0): eth0 up with MY_IP/24, the module of KIND loaded and its device
# on eth0 until it has an IPv4 RoCEv2 GID. Sets LINK_DEV and LINK_GID; on
# failure prints why and returns 1. The peer's VM boots at the same time:
# its clients retry until a server listens.
eth_link_up() {
	local kind=$1 i
	case $kind in
	dray) LINK_DEV=dray0; modprobe dray || return 1 ;;
	rxe) LINK_DEV=rxe0; modprobe rdma_rxe || return 1 ;;
	*) echo "eth_link_up: unknown kind $kind"; return 1 ;;
	esac
	modprobe ib_uverbs || return 1
	ip link set eth0 up || return 1
	ip addr add "$2/24" dev eth0 || return 1
	rdma link add "$LINK_DEV" type "$kind" netdev eth0 || return 1
	LINK_GID=''
	for ((i = 0; i < 100; i++)); do
		LINK_GID=$(gid_v4 "$LINK_DEV") && port_active "$LINK_DEV" && break
		LINK_GID=''
		sleep 0.1
	done
	[[ -n $LINK_GID ]] && return 0
	echo "eth_link_up: $LINK_DEV has no IPv4 RoCEv2 GID"
	return 1
}

# active_mtu DEV: the port's active MTU in bytes
active_mtu() {
	ibv_devinfo -d "$1" | awk '$1 == "active_mtu:" { print $2; exit }'
}

# veth_mtu KIND ETH_MTU IB_MTU: both veths at ETH_MTU, until both devices
# of KIND show the active MTU IB_MTU (5 s at most). rxe of 6.1 follows a
# netdev's new MTU in its port attributes, but the QPs it creates
# afterwards at MTU 4096 never complete a WR (seen here); its devices made
# after the change work: rxe's are made again.
veth_mtu() {
	local kind=$1 a b i v
	for v in veth0 veth1; do
		ip link set "$v" mtu "$2" || return 1
	done
	if [[ $kind == rxe ]]; then
		rdma_down rxe
		rdma_up rxe >&2 || return 1
	fi
	read -r a b <<<"$(rdma_devs "$kind")"
	for ((i = 0; i < 50; i++)); do
		[[ $(active_mtu "$a") == "$3" && $(active_mtu "$b") == "$3" ]] &&
			return 0
		sleep 0.1
	done
	echo "# veth_mtu: active_mtu $a $(active_mtu "$a"), $b $(active_mtu "$b"), not $3"
	return 1
}

port_active() {
	local s=''
	read -r s _ <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null
	[[ $s == 4: ]]
}

# port_counter DEV NAME: DEV's port 1 counter NAME (rdma statistic)
port_counter() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }'
}

# port_tx_bytes DEV: the bytes DEV's port 1 has sent, by the device's own
# counter
port_tx_bytes() {
	port_counter "$1" tx_bytes
}

# gid_find DEV PREFIX: print the index of the first RoCEv2 GID of DEV
# whose sysfs text starts with PREFIX. Reads sysfs with builtins only;
# scans the first 16 entries (rxe's table has hundreds of empty ones).
gid_find() {
	local dev=$1 i t g
	for ((i = 0; i < 16; i++)); do
		t='' g=''
		read -r t <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null
		read -r g <"/sys/class/infiniband/$dev/ports/1/gids/$i" 2>/dev/null
		if [[ $t == "RoCE v2" && $g == "$2"* ]]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# gid_v4 DEV: the GID holding an IPv4-mapped address (::ffff:a.b.c.d)
gid_v4() {
	gid_find "$1" 0000:0000:0000:0000:0000:ffff:
}

# gid_ll DEV: the GID holding the IPv6 link-local address (fe80::/64)
gid_ll() {
	gid_find "$1" fe80:0000:0000:0000:
}

# kernel_clean TAINT0: a TAP line; fails if the kernel got tainted by a
# bad page, an oops, a WARN or a soft lockup since TAINT0 was read from
# /proc/sys/kernel/tainted (vm-run.sh fails the whole run then; this says
# which part of it did). A WARN that scripts/vm/kernel-known.awk knows as
# a kernel bug not dray's, with no other, is a TODO line naming it.
kernel_clean() {
	local taint new known
	read -r taint </proc/sys/kernel/tainted
	new=$(((taint & ~$1) & ((1 << 5) | (1 << 7) | (1 << 9) | (1 << 14))))
	if ((new == 1 << 9)); then
		known=$(dmesg | awk -f "$RDMA_LIB_ROOT/scripts/vm/kernel-known.awk" |
			awk '/WARNING:/ { other = 1 } sub(/^dray-known: /, "") { k = k " " $0 }
			END { if (!other) print substr(k, 2) }')
		if [[ -n $known ]]; then
			tap_todo "kernel: no WARN, oops or soft lockup during the run" \
				"a known kernel bug, not dray's: $known (scripts/vm/kernel-known.awk)"
			return
		fi
	fi
	if ((new)); then
		tap_fail "kernel: no WARN, oops or soft lockup during the run" \
			"taint $1 -> $taint"
		dmesg | grep -E -A 12 "WARNING:|BUG:|Oops|soft lockup" |
			head -n 60 | sed 's/^/# /'
	else
		tap_ok "kernel: no WARN, oops or soft lockup during the run"
	fi
}

# want GROUP: was GROUP asked for ($groups: the groups to run)? The first
# yes for a group prints when it starts ("# group NAME at N s", seconds
# since the script started), so a log shows what each group costs.
want() {
	[[ " $groups " == *" $1 "* ]] || return 1
	[[ " ${WANT_SEEN:-} " == *" $1 "* ]] && return 0
	WANT_SEEN="${WANT_SEEN:-} $1"
	echo "# group $1 at $SECONDS s"
}

# show FILE: a program's output as TAP comments
show() {
	sed 's/^/# /' "$1"
}

# show_logs PREFIX LINES: the last LINES lines of every PREFIX.* file (a
# failed pair's .srv and .cli), each under a "--- NAME" header
show_logs() {
	local f
	for f in "$1".*; do
		[[ -e $f ]] || continue
		echo "# --- ${f##*/}"
		show "$f" | tail -n "$2"
	done
}

# netem_on SPEC / netem_off: a netem qdisc (SPEC: netem's arguments) on
# both veths of the pair, tc's output in $LOG/tc
netem_on() {
	local v
	for v in veth0 veth1; do
		# shellcheck disable=SC2086 # SPEC is netem's arguments
		tc qdisc add dev "$v" root netem $1 >>"$LOG/tc" 2>&1 || return 1
	done
}
netem_off() {
	local v
	for v in veth0 veth1; do
		tc qdisc del dev "$v" root 2>/dev/null
	done
	return 0
}

# wait_listen PORT [TIMEOUT_S]: until a TCP socket listens on PORT.
wait_listen() {
	local port=$1 t=${2:-20} i hex line f
	printf -v hex '%04X' "$port"
	for ((i = 0; i < t * 20; i++)); do
		for f in /proc/net/tcp /proc/net/tcp6; do
			[[ -r $f ]] || continue
			while read -r line; do
				# sl local rem st ...: st 0A is LISTEN
				[[ $line == *:$hex\ *:0000\ 0A\ * ]] && return 0
			done <"$f"
		done
		sleep 0.05
	done
	return 1
}

# TAP helpers: tap_ok NAME, tap_fail NAME [DETAIL], tap_skip NAME REASON,
# tap_todo NAME REASON
TAP_N=0 TAP_PASS=0 TAP_FAIL=0 TAP_SKIP=0
tap_ok() {
	TAP_N=$((TAP_N + 1)) TAP_PASS=$((TAP_PASS + 1))
	echo "ok $TAP_N - $1"
}
tap_fail() {
	TAP_N=$((TAP_N + 1)) TAP_FAIL=$((TAP_FAIL + 1))
	echo "not ok $TAP_N - $1${2:+ # $2}"
}
tap_skip() {
	TAP_N=$((TAP_N + 1)) TAP_SKIP=$((TAP_SKIP + 1))
	echo "ok $TAP_N - $1 # SKIP $2"
}
# tap_todo NAME REASON: a known failure (a bug of the reference, not of
# dray), "not ok ... # TODO REASON", counted as skipped
tap_todo() {
	TAP_N=$((TAP_N + 1)) TAP_SKIP=$((TAP_SKIP + 1))
	echo "not ok $TAP_N - $1 # TODO $2"
}

# A fresh TCP port for each client/server pair (no TIME_WAIT clashes).
PAIR_PORT=${PAIR_PORT:-18515}
next_port() {
	PAIR_PORT=$((PAIR_PORT + 1))
}

# pair_run OUT TIMEOUT "SERVER CMD" "CLIENT CMD": start the server (its
# output in OUT.srv), wait until it listens on $PAIR_PORT, run the client
# (OUT.cli). Both must exit 0. The commands are split on blanks. With
# PAIR_SLEEP=N (a server that listens through rdma_cm, in the kernel,
# where no socket shows it) it waits N seconds instead.
pair_run() {
	local out=$1 t=$2 srv=$3 cli=$4 spid rc_s rc_c
	# shellcheck disable=SC2086
	timeout "$t" $srv >"$out.srv" 2>&1 &
	spid=$!
	if [[ -n ${PAIR_SLEEP:-} ]]; then
		sleep "$PAIR_SLEEP"
	elif ! wait_listen "$PAIR_PORT" 30; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		echo "server did not listen on port $PAIR_PORT" >"$out.cli"
		return 1
	fi
	# shellcheck disable=SC2086
	timeout "$t" $cli >"$out.cli" 2>&1
	rc_c=$?
	if [[ $rc_c -ne 0 ]]; then
		# the server would wait for a client that gave up
		sleep 1
		kill "$spid" 2>/dev/null
	fi
	wait "$spid"
	rc_s=$?
	[[ $rc_c -eq 0 && $rc_s -eq 0 ]] && return 0
	echo "# client exit $rc_c, server exit $rc_s" >>"$out.cli"
	return 1
}

# median: the median of the numbers on stdin, one a line ("fail" if none)
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "fail"; exit }
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A/B as "1.23x", "-" unless both are positive numbers
ratio() {
	awk -v d="$1" -v r="$2" 'BEGIN {
		if (d + 0 > 0 && r + 0 > 0) printf "%.2fx", d / r; else print "-" }'
}

# stream_start OUT PROG SRV_DEV SRV_GID CLI_DEV CLI_GID ADDR [OPTS]: a
# perftest bandwidth pair in the background (pair_run, OUT.srv/OUT.cli)
# on a port of its own ($PAIR_PORT + 1000), 1 MiB messages, until
# stream_stop; returns once the client is past its exchanges over TCP
# (it prints its results header after the last one) and its frames flow
# (at least 2000 more on veth0 within 20 s), 1 if not. Frames alone are
# no proof: another program's traffic on the devices counts on veth0 as
# well, and a fault that removed the veth pair while perftest was still
# exchanging over it would strand both ends in a TCP read. STREAM_PID:
# the pair.
stream_start() {
	local out=$1 prog=$2 sd=$3 sg=$4 cd=$5 cg=$6 addr=$7 f0 f1 i o
	shift 7
	STREAM_PORT=$((PAIR_PORT + 1000))
	o="-F -p $STREAM_PORT -s 1048576 -n 1000000${*:+ $*}"
	rm -f "$out.cli"
	# line-buffered, so that the header shows while it runs
	PAIR_PORT=$STREAM_PORT pair_run "$out" 600 "$prog -d $sd -x $sg $o" \
		"stdbuf -oL $prog -d $cd -x $cg $o $addr" &
	STREAM_PID=$!
	for ((i = 0; i < 600; i++)); do
		grep -qs '#bytes' "$out.cli" && break
		kill -0 "$STREAM_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	((i < 600)) || return 1
	read -r f0 </sys/class/net/veth0/statistics/tx_packets
	for ((i = 0; i < 200; i++)); do
		read -r f1 </sys/class/net/veth0/statistics/tx_packets
		((f1 - f0 >= 2000)) && return 0
		kill -0 "$STREAM_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stream_alive: is the background stream still running?
stream_alive() {
	kill -0 "$STREAM_PID" 2>/dev/null
}

# stream_stop: end the background stream (both of its processes)
stream_stop() {
	pkill -f -- "-p $STREAM_PORT -s 1048576" 2>/dev/null
	wait "$STREAM_PID" 2>/dev/null
	return 0
}

# perf_figures FILE bw|lat: the figure of every perftest result line
# (bw: BW average, column 4; lat: t_typical, column 5; rate: MsgRate,
# column 5 of a bw line), one a line.
perf_figures() {
	awk -v k="$2" '
	/^[ \t]*[0-9]+[ \t]+[0-9]+[ \t]+[0-9.]+/ {
		c = (k == "bw") ? 4 : 5
		if (NF >= c) print $c
	}' "$1"
}

# perf_sane FILE bw|lat: at least one result line, no nan or inf in the
# figures that matter (lat: t_min, t_max, t_typical; bw: BW peak, BW
# average, MsgRate), and every line reports something: lat a positive
# t_typical; bw a positive BW average or message rate (perftest prints 2
# decimals of MB/s and 6 of Mpps: 10 bytes in -a's 5 x 2 B are 0.00 MB/s,
# 5 x 8 MiB at a few MB/s are 0.000000 Mpps). perftest exits 0 only once
# every iteration completed, so a zero can also mean its clock went
# wrong: under TCG its CPU frequency sample sometimes fails ("Correlation
# coefficient r^2 ... < 0.9", printed just before the next result line),
# and the line after such a warning is reported as uncalibrated, not bad.
perf_sane() {
	awk -v k="$2" '
	{ warn = ($0 ~ /Correlation coefficient/) }
	/^[ \t]*[0-9]+[ \t]+[0-9]+[ \t]+[0-9.]+/ {
		n++
		if (($3 " " $4 " " $5) ~ /nan|inf/) bad_line = 1
		else if (k == "lat") bad_line = !($5 + 0 > 0)
		else bad_line = !($4 + 0 > 0 || $5 + 0 > 0)
		if (bad_line && uncal) print "# uncalibrated: " $0
		else if (bad_line) { bad++; print "# bad figure: " $0 }
		uncal = warn
		next
	}
	warn { uncal = 1 }
	END { exit (n > 0 && !bad) ? 0 : 1 }' "$1"
}

# perf_pair OUT PROG VARIANT ITERS SRV_DEV SRV_GID CLI_DEV CLI_GID ADDR
# [OPTS]: one perftest pair through pair_run (OUT.srv, OUT.cli), "PROG -F
# -p PORT -n ITERS VARIANT OPTS" with a fresh port, the server on SRV_DEV
# (GID index SRV_GID), the client on CLI_DEV connecting to ADDR; the
# figures must pass perf_sane (bw for a *_bw PROG, else lat; its verdict
# in OUT.sane). perftest calibrates its cycle counter against the clock;
# under TCG that sometimes fails ("Correlation coefficient r^2 < 0.9"):
# figures come out inf or 0, or perftest gives up after the run ("Can't
# produce a report", exit 1): the pair runs again then, 3 attempts in all,
# each attempt that fails so with a comment line.
perf_pair() {
	local out=$1 prog=$2 v=$3 iters=$4 sd=$5 sg=$6 cd=$7 cg=$8 addr=$9
	local k=lat opts attempt rc
	shift 9
	[[ $prog == *_bw ]] && k=bw
	for attempt in 1 2 3; do
		next_port
		opts="-F -p $PAIR_PORT -n $iters $v${*:+ $*}"
		pair_run "$out" 300 "$prog -d $sd -x $sg $opts" \
			"$prog -d $cd -x $cg $opts $addr"
		rc=$?
		if [[ $rc -ne 0 ]]; then
			grep -qs "Can't produce a report" "$out.srv" "$out.cli" || break
			echo "# $prog $v: attempt $attempt: perftest could not calibrate its clock"
			continue
		fi
		perf_sane "$out.cli" "$k" >"$out.sane" && break
		rc=1
		echo "# $prog $v: attempt $attempt: $(head -n1 "$out.sane")$(grep -o 'Correlation coefficient.*' "$out.cli" | head -n1 | sed 's/^/ (/; s/$/)/')"
	done
	return "$rc"
}
