#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Benchmark dray against Soft-RoCE (rxe) between two VMs: the two-vm
# lane's QEMU network (a UDP socket pair on the host, virtio-net, one vCPU
# per VM; tests/rdma/two-vm.sh), not one VM's veth pair. Builds nothing:
# run `make module provider` first.
#
#   scripts/bench-two-vm.sh [--reps N] [--module DRAY.KO] [--kinds "rxe dray"]
#
# Each repetition boots a pair of VMs for each kind in turn: VM 1
# (10.1.0.1) serves, VM 2 (10.1.0.2) is the client. In every pair, first
# the link's own capacity, iperf3 over TCP and over UDP (3 s each, the
# receiver's figure, MB/s: 10^6 B/s; UDP sends as fast as it can, 1400 B
# datagrams, and the loss is printed), then perftest as scripts/bench.sh
# runs it: ib_write_bw and ib_send_bw at 64 KiB (ib_send_bw also with -e:
# both ends sleep on completion events), ib_write_bw at 1 MiB
# (BW average), ib_write_bw at 8 B (MsgRate), ib_send_lat and
# ib_write_lat at 2 B (t_typical). Prints the medians with dray/rxe
# ratios, the issue's targets and each RDMA bandwidth as a share of the
# TCP figure; kept in build/bench/two-vm-DATE.txt. Where the time went:
# per measurement and VM, the counters that moved ("# bench2c:" lines:
# the RDMA port's retransmissions, NAKs, drops and packets, eth0's drops
# and virtio-net queues, the guest's CPU ticks), and per pair the host's
# UDP counters (QEMU's socket network; RcvbufErrors: datagrams a full
# socket buffer dropped, iperf3's UDP flood included). A benchmark, not a
# test: no figure is asserted; it exits non-zero only when a measurement
# could not be taken. Each pair's output and consoles stay in
# build/bench/two-vm/repN-KIND/; a guest's "TX timeout" (virtio-net's
# transmit queue stalled) and QEMU's own messages are printed. DRAY_VM_RUN
# overrides scripts/vm-run.sh.
#
#   bench-two-vm.sh --guest KIND server|client      (in a VM)

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/.." && pwd -P)
SRV_IP=10.1.0.1
CLI_IP=10.1.0.2
PORT0=18600

# name, program, size, iterations (iperf3: seconds), figure kind, unit,
# perftest's further options
MEAS=(
	"tcp iperf3:tcp 0 3 bw MB/s"
	"udp iperf3:udp 1400 3 bw MB/s"
	"write_bw_64k ib_write_bw 65536 300 bw MB/s"
	"send_bw_64k ib_send_bw 65536 300 bw MB/s"
	"send_bw_64k_ev ib_send_bw 65536 300 bw MB/s -e"
	"write_bw_1m ib_write_bw 1048576 30 bw MB/s"
	"write_rate_8 ib_write_bw 8 5000 rate Mpps"
	"send_lat_2 ib_send_lat 2 500 lat us"
	"write_lat_2 ib_write_lat 2 500 lat us"
)

# ----------------------------------------------------------------- guest --
# iperf3 -f m prints "... 14.0 Mbits/sec ... receiver": the receiver's
# rate in MB/s (10^6 B/s), and the loss of a UDP run ("12/3000 (0.4%)")
iperf_figure() {
	awk '/receiver$/ {
		for (i = 2; i <= NF; i++) if ($i == "Mbits/sec") v = $(i - 1) / 8
		for (i = 1; i <= NF; i++) if ($i ~ /^\([0-9.]+%\)$/) l = $i
	}
	END { if (v != "") printf "%.2f%s\n", v, (l != "" ? " loss " l : "") }' "$1"
}

# ctr_snap FILE: the counters a measurement's deltas come from, "KEY VALUE"
# per line: the RDMA port's (rdma statistic; dray's and rxe's names
# differ), eth0's drops and virtio-net's per-queue statistics, the guest's
# CPU time (/proc/stat, USER_HZ ticks) and dray's engine threads' CPU time
ctr_snap() {
	local p
	{
		rdma statistic show link "$LINK_DEV/1" 2>/dev/null |
			awk '{ for (i = 3; i < NF; i += 2) print "port." $i, $(i + 1) }'
		for p in rx_dropped tx_dropped rx_missed_errors; do
			echo "eth0.$p $(cat "/sys/class/net/eth0/statistics/$p")"
		done
		ethtool -S eth0 2>/dev/null |
			awk -F: 'NR > 1 { gsub(/ /, "", $1); gsub(/ /, "", $2); print "eth0." $1, $2 }'
		awk '$1 == "cpu" { print "cpu.busy", $2 + $3 + $4 + $7 + $8; print "cpu.all", $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
		for p in $(pgrep dray-eng); do
			awk '{ print $14 + $15 }' "/proc/$p/stat"
		done | awk '{ t += $1 } END { if (NR) print "eng.cpu", t }'
	} >"$1" 2>/dev/null
}

# ctr_delta ROLE NAME BEFORE AFTER: "bench2c: ROLE NAME KEY +N ..." with
# the counters that moved and say where time and frames went: losses,
# retransmissions, timeouts, NAKs, drops, kicks, packets, CPU
ctr_delta() {
	awk -v role="$1" -v name="$2" '
		FNR == NR { a[$1] = $2; next }
		{
			d = $2 - a[$1]
			if (d == 0 || $1 !~ /drop|err|retr|timeout|probe|nak|seq|dup|late|lost|retry|rnr|kicks|packets|pkts|cpu/)
				next
			if ($1 ~ /^eth0\.(rx|tx)_queue_0_xdp/)
				next
			out = out " " $1 " +" d
		}
		END { print "bench2c: " role " " name out }' "$3" "$4"
}

guest() {
	local kind=$1 role=$2 m name prog size iters fig unit more port=$PORT0 opts
	local tries rc out=/tmp/bench2 v s

	if [[ ${LD_LIBRARY_PATH:-} != *rdma-core/build/lib* ]]; then
		s=$("$ROOT/scripts/rdma-env.sh" 2>/dev/null) && eval "$s"
	fi
	# shellcheck source=tests/lib.sh
	. "$ROOT/tests/lib.sh"
	if [[ $role == server ]]; then
		eth_link_up "$kind" "$SRV_IP" || return 1
	else
		eth_link_up "$kind" "$CLI_IP" || return 1
	fi
	echo "# $role: $LINK_DEV on eth0, GID index $LINK_GID"
	# an experiment: the engine thread's nice value
	if [[ $kind == dray && -n ${DRAY_BENCH_ENGINE_NICE:-} ]]; then
		renice -n "$DRAY_BENCH_ENGINE_NICE" -p "$(pgrep dray-eng)" | sed 's/^/# /'
	fi
	for m in "${MEAS[@]}"; do
		read -r name prog size iters fig unit more <<<"$m"
		port=$((port + 1))
		ctr_snap "$out.c0"
		if [[ $role == server ]]; then
			# shellcheck disable=SC2086 # more: options
			case $prog in
			iperf3:*) timeout 120 iperf3 -s -1 -p "$port" >"$out" 2>&1 ;;
			*) timeout 300 "$prog" -d "$LINK_DEV" -x "$LINK_GID" -F \
				-s "$size" -n "$iters" -p "$port" $more >"$out" 2>&1 ;;
			esac || echo "# server $name: exit $?"
			ctr_snap "$out.c1"
			ctr_delta server "$name" "$out.c0" "$out.c1"
			continue
		fi
		opts=()
		# shellcheck disable=SC2206 # more: options
		case $prog in
		iperf3:tcp) opts=(iperf3 -c "$SRV_IP" -p "$port" -t "$iters" -f m) ;;
		iperf3:udp) opts=(iperf3 -c "$SRV_IP" -p "$port" -t "$iters" -f m
			-u -b 0 -l "$size") ;;
		*) opts=("$prog" -d "$LINK_DEV" -x "$LINK_GID" -F -s "$size"
			-n "$iters" -p "$port" $more "$SRV_IP") ;;
		esac
		# the server may not listen yet (the other VM boots, or its
		# last run is ending): connect again, 60 tries
		for ((tries = 0; tries < 60; tries++)); do
			timeout 300 "${opts[@]}" >"$out" 2>&1
			rc=$?
			[[ $rc -eq 0 ]] && break
			grep -qiE "couldn't connect|unable to connect|connection refused" "$out" || break
			sleep 1
		done
		ctr_snap "$out.c1"
		ctr_delta client "$name" "$out.c0" "$out.c1"
		v=''
		if [[ $rc -eq 0 ]]; then
			case $prog in
			iperf3:*) v=$(iperf_figure "$out") ;;
			*)
				s=bw
				[[ $fig != bw ]] && s=lat
				perf_sane "$out" "$s" >/dev/null &&
					v=$(perf_figures "$out" "$s" | tail -n 1)
				;;
			esac
		fi
		if [[ -n $v ]] && awk -v v="${v%% *}" 'BEGIN { exit !(v + 0 > 0) }'; then
			echo "bench2: $name $v"
		else
			echo "bench2: $name fail (exit $rc)"
			tail -n 5 "$out" | sed 's/^/# /'
			# the NIC as the guest sees it (a stalled transmit queue:
			# issue 13)
			ethtool -S eth0 2>/dev/null |
				grep -E "tx_queue_0_(packets|kicks|tx_timeouts):" |
				tr -s ' ' | sed 's/^/# client eth0:/'
			grep -E "virtio[0-9]+-(input|output)" /proc/interrupts |
				tr -s ' ' | sed 's/^/# client irq:/'
		fi
	done
}

if [[ ${1:-} == --guest ]]; then
	guest "$2" "$3"
	exit $?
fi

# ------------------------------------------------------------------ host --
# shellcheck source=scripts/vm/lib.sh
. "$ROOT/scripts/vm/lib.sh"
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"	# median, ratio

reps=3 module=$ROOT/build/dray.ko kinds="rxe dray"
while [[ $# -gt 0 ]]; do
	case $1 in
	--reps) reps=${2:-}; shift 2 || exit 2 ;;
	--module) module=${2:-}; shift 2 || exit 2 ;;
	--kinds) kinds=${2:-}; shift 2 || exit 2 ;;
	-h | --help) sed -n '4,28s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "bench-two-vm: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "bench-two-vm: bad --reps $reps" >&2; exit 2; }
[[ " $kinds " != *" dray "* || -r $module ]] ||
	{ echo "bench-two-vm: no $module (make module)" >&2; exit 2; }
command -v iperf3 >/dev/null ||
	{ echo "bench-two-vm: no iperf3 (scripts/install-deps.sh)" >&2; exit 2; }
VM_RUN=${DRAY_VM_RUN:-$ROOT/scripts/vm-run.sh}

mkdir -p "$ROOT/build/bench"
log=$ROOT/build/bench/two-vm-$(date +%Y%m%d-%H%M%S).txt
exec > >(tee "$log") 2>&1
cd "$ROOT" || exit 2
read -r load1 load5 load15 _ </proc/loadavg
echo "# bench2: $(date -u +%FT%TZ) $(git describe --always --dirty 2>/dev/null)"
echo "# bench2: scripts/bench-two-vm.sh --reps $reps --kinds \"$kinds\"; host load average $load1 $load5 $load15"

# host_udp: the host's UDP counters (/proc/net/snmp): the QEMUs' socket
# network is UDP on the loopback, where a full socket buffer drops
host_udp() {
	awk '$1 == "Udp:" { if (h) { print; exit } h = 1 }' /proc/net/snmp
}
host_udp_delta() {	# BEFORE AFTER
	awk -v a="$1" -v b="$2" -v h="$(awk '$1 == "Udp:" { print; exit }' /proc/net/snmp)" 'BEGIN {
		n = split(h, k); split(a, x); split(b, y)
		for (i = 2; i <= n; i++)
			if (y[i] - x[i]) out = out " " k[i] " +" (y[i] - x[i])
		print (out == "" ? " none moved" : out)
	}'
}

declare -A VALS
missing=0
for ((rep = 1; rep <= reps; rep++)); do
	for kind in $kinds; do
		mods=()
		[[ $kind == dray ]] && mods=(--module "$module")
		t0=$SECONDS
		udp0=$(host_udp)
		pd=$ROOT/build/bench/two-vm/rep$rep-$kind
		rm -rf "$pd"
		vm_pair "$pd" "$VM_RUN" "${mods[@]}" -- \
			bash "$HERE/bench-two-vm.sh" --guest "$kind"
		# the link between the QEMUs: UDP datagrams the host dropped
		echo "# bench2: rep $rep $kind: host UDP during the pair: $(host_udp_delta "$udp0" "$(host_udp)")"
		# a transmit queue that stalled (issue 13), and what QEMU said
		for vm in 1 2; do
			grep -m 3 "TX timeout" "$pd/vm$vm.console.log" 2>/dev/null |
				sed "s/^/# bench2: rep $rep $kind VM $vm: /"
			grep -i "qemu-system" "$pd/vm$vm.out" | head -n 5 |
				sed "s/^/# bench2: rep $rep $kind VM $vm: /"
		done
		if [[ $VM_PAIR_RC1 -ne 0 || $VM_PAIR_RC2 -ne 0 ]]; then
			echo "# bench2: rep $rep $kind: VM exit status server $VM_PAIR_RC1, client $VM_PAIR_RC2"
			sed 's/^/# server: /' "$pd/vm1.out" | tail -n 10
			missing=1
		fi
		while read -r _ name v rest; do
			echo "# bench2: rep $rep $kind $name $v${rest:+ $rest}"
			[[ $v == fail ]] && { missing=1; continue; }
			VALS[$kind.$name]+="$v"$'\n'
		done < <(grep '^bench2: ' "$pd/vm2.out")
		grep '^# ' "$pd/vm2.out" | grep -v '^# client:' | head -n 20
		# what moved in each VM during each measurement
		cat "$pd/vm1.out" "$pd/vm2.out" | grep '^bench2c: ' |
			sed "s/^bench2c: /# bench2c: rep $rep $kind /"
		echo "# bench2: rep $rep $kind: $((SECONDS - t0)) s"
	done
done

declare -A RES
for m in "${MEAS[@]}"; do
	read -r name _ <<<"$m"
	for kind in $kinds; do
		RES[$kind.$name]=$(printf '%s' "${VALS[$kind.$name]:-}" | median)
		echo "# bench2: $kind $name: $(printf '%s' "${VALS[$kind.$name]:-}" | tr '\n' ' ')-> ${RES[$kind.$name]}"
	done
done
echo
printf 'bench2: %-13s %-5s %9s %9s %9s %-8s %s\n' measurement unit rxe dray dray/rxe target \
	"of TCP (rxe, dray)"
for m in "${MEAS[@]}"; do
	read -r name _ _ _ fig unit _ <<<"$m"
	r=${RES[rxe.$name]:-n/a} d=${RES[dray.$name]:-n/a}
	t='' share=''
	case $name in
	tcp | udp) t="(link)" ;;
	*_bw_*) t=">= 3x"
		share="$(ratio "$r" "${RES[rxe.tcp]:-}") $(ratio "$d" "${RES[dray.tcp]:-}")" ;;
	*_rate_*) t=">= 3x" ;;
	*_lat_*) t="<= 0.5x" ;;
	esac
	printf 'bench2: %-13s %-5s %9s %9s %9s %-8s %s\n' "$name" "$unit" "$r" "$d" \
		"$(ratio "$d" "$r")" "$t" "$share"
done
echo "bench2: medians of $reps repetitions, a pair of VMs (1 vCPU each) per kind and repetition"
echo "bench2: tcp, udp: iperf3's receiver between the same two VMs, before the RDMA runs (rxe's pairs and dray's measure the same link)"
echo "# bench2: kept in $log"
exit "$missing"
