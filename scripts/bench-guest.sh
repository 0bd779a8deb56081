#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Inside the test VM (see scripts/bench.sh): perftest for Soft-RoCE (rxe)
# and for dray on the same routed veth pair (tests/lib.sh), one kind
# at a time and alternating: every repetition runs the whole set for rxe,
# then for dray, so that both see the same host load. Prints a table of
# medians with dray/rxe ratios and the issue's targets, then the system
# calls per posted WR of a bandwidth run. A benchmark, not a test: it
# judges nothing, and fails only when a measurement could not be taken.
#
#   scripts/bench-guest.sh [--reps N] [--kinds "rxe dray"] [--only REGEX]
#                          [--poll US]
#
# --only: the measurements whose name matches REGEX (extended, e.g.
# "ucx_|mpi_"), and the system-call runs only if "syscalls" matches it.
# --poll US: dray's devices with poll_idle_us US (the polling engine,
# Documentation/hw-interface.md) instead of their default.
#
#   bandwidth  ib_write_bw, ib_send_bw, ib_read_bw -s 64 KiB and 1 MiB
#              (BW average, MB/s as perftest prints it: 10^6 B/s)
#   msg rate   ib_write_bw -s 8 (MsgRate, Mpps)
#   latency    ib_write_lat, ib_send_lat, ib_read_lat -s 2 (t_typical, us)
#   many QPs   ib_write_bw -q 4 and -q 16: bandwidth at 64 KiB, message
#              rate at 8 B (the same bytes as one QP: -n is per QP)
#   events     ib_send_bw -e -s 64 KiB: both ends sleep on CQ events
#              (perftest takes -e for SEND only)
#   under load ib_send_lat -s 2 while another pair of processes streams
#              1 MiB ib_write_bw between the same devices (send_lat_2_load)
#   MTU 4096   bandwidth at 64 KiB and 1 MiB, latency at 2 B with the
#              veths at MTU 9000 (rows *_j; every other row at 1500)
#   CPU/GB     every perftest and fio bandwidth row: guest CPU seconds (all
#              vCPUs, /proc/stat) per 10^9 B of frames on the pair,
#              counted over the 0.1 s intervals that carried data
#   UCX        Debian's ucx_perftest over rc_verbs (ud_verbs for the
#              wire-up): tag-matched latency at 8 B (the 50th percentile
#              of UCX's one-way figure, us) and PUT bandwidth at 64 KiB
#              and 1 MiB (overall, MB/s as UCX prints it: 2^20 B/s)
#   NVMe-oF    the kernel's nvme-rdma host on device A connected to an
#              nvmet-rdma target on device B exporting a null_blk device
#              (tests/storage/nvmeof.sh), fio with libaio and O_DIRECT for
#              10 s: 4 KiB random reads at queue depth 32 (IOPS, in
#              thousands), 128 KiB sequential reads and writes at queue
#              depth 32 (MB/s: 10^6 B/s); "per iteration" figures of these
#              rows are per second
#   MPI        Open MPI over UCX (pml ucx, no shared memory), two ranks,
#              one on each device: MPI_Allreduce of 1 MiB (int64 sum),
#              median time per call (tests/rdma/mpi_bench, us)
#              UCX's UD transport drops rxe's datagrams unless
#              UCX_UD_ETH_DGID_CHECK=n (rxe leaves the completion's SL 0);
#              the UCX and MPI rows set it for both kinds
#   wake-ups   dray: the provider's counters (DRAY_STATS=1 in every dray
#              run; the provider prints them at exit): wake-up calls
#              (DRAY_IB_METHOD_KICK) per posted WR
#   syscalls   strace -f -c of the client's ioctl and write calls during
#              ib_write_bw -s 64 KiB, counted for -n 100 and -n 500: the
#              difference per WR leaves out the set-up calls (contexts,
#              MRs, QPs, the TCP exchange); the whole -n 500 run per WR
#              keeps them. Both kinds.
#   per run    frames each end of the pair sent per iteration (veth0:
#              the client's requests, veth1: the server's ACKs and
#              responses), the share of guest CPU time left idle, and for
#              dray the engine threads' voluntary context switches
#              (sleeps) per iteration, their CPU time and the time they
#              were runnable but waiting for a CPU (/proc/PID/schedstat)
#
# A failed or insane run (perftest's cycle calibration sometimes fails
# under TCG: every figure is then inf or 0) is tried again, twice at most
# per repetition.

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"
# shellcheck source=tests/storage/nvmeof.sh
. "$ROOT/tests/storage/nvmeof.sh"

reps=3
kinds="rxe dray"
only='' poll=''
while [[ $# -gt 0 ]]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--kinds) kinds=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--poll) poll=$2; shift 2 ;;
	*) echo "bench-guest: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "bench-guest: bad --reps $reps" >&2; exit 2; }

if [[ ${LD_LIBRARY_PATH:-} != *rdma-core/build/lib* ]]; then
	env_out=$("$ROOT/scripts/rdma-env.sh" 2>/dev/null) && eval "$env_out"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The measurements: name, program, size, iterations, figure kind, unit
MEAS=(
	"write_bw_64k ib_write_bw 65536 300 bw MB/s"
	"send_bw_64k ib_send_bw 65536 300 bw MB/s"
	"read_bw_64k ib_read_bw 65536 300 bw MB/s"
	"write_bw_1m ib_write_bw 1048576 30 bw MB/s"
	"send_bw_1m ib_send_bw 1048576 30 bw MB/s"
	"read_bw_1m ib_read_bw 1048576 30 bw MB/s"
	"write_rate_8 ib_write_bw 8 5000 rate Mpps"
	"write_lat_2 ib_write_lat 2 500 lat us"
	"send_lat_2 ib_send_lat 2 500 lat us"
	"read_lat_2 ib_read_lat 2 500 lat us"
	"ucx_tag_lat_8 ucx:tag_lat 8 1000 lat us"
	"ucx_put_bw_64k ucx:ucp_put_bw 65536 500 bw MB/s"
	"ucx_put_bw_1m ucx:ucp_put_bw 1048576 50 bw MB/s"
	"mpi_allreduce_1m mpi:allreduce 1048576 30 lat us"
	"nvme_randread_4k fio:randread 4096 10 rate kIOPS"
	"nvme_read_128k fio:read 131072 10 bw MB/s"
	"nvme_write_128k fio:write 131072 10 bw MB/s"
	"write_bw_64k_q4 ib_write_bw 65536 100 bw MB/s q=4"
	"write_bw_64k_q16 ib_write_bw 65536 25 bw MB/s q=16"
	"write_rate_8_q4 ib_write_bw 8 1250 rate Mpps q=4"
	"write_rate_8_q16 ib_write_bw 8 320 rate Mpps q=16"
	"send_bw_64k_ev ib_send_bw 65536 300 bw MB/s ev"
	"write_bw_64k_j ib_write_bw 65536 300 bw MB/s mtu=4096"
	"send_bw_64k_j ib_send_bw 65536 300 bw MB/s mtu=4096"
	"write_bw_1m_j ib_write_bw 1048576 30 bw MB/s mtu=4096"
	"read_bw_1m_j ib_read_bw 1048576 30 bw MB/s mtu=4096"
	"send_lat_2_j ib_send_lat 2 500 lat us mtu=4096"
	"send_lat_2_load ib_send_lat 2 500 lat us load"
)
if [[ -n $only ]]; then
	sel=()
	for m in "${MEAS[@]}"; do
		[[ ${m%% *} =~ $only ]] && sel+=("$m")
	done
	[[ ${#sel[@]} -gt 0 ]] || { echo "bench-guest: --only $only matches no measurement" >&2; exit 2; }
	MEAS=("${sel[@]}")
fi
RDMA_BIN=${DRAY_RDMA_BIN:-$ROOT/build/rdma}
UCX_ENV="UCX_TLS=rc_verbs,ud_verbs UCX_UD_ETH_DGID_CHECK=n"
# syscall runs: ib_write_bw of this size, a short and a long run
SC_SIZE=65536 SC_N0=100 SC_N1=500

declare -A VALS WAKE RES CPU
HZ=$(getconf CLK_TCK)

say() {
	echo "# bench: $*"
}

# elapsed T0: seconds since EPOCHREALTIME was T0, one decimal
elapsed() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

kind_up() {
	local d
	if veth_up >"$TMP/setup" 2>&1 && rdma_up "$1" >>"$TMP/setup" 2>&1; then
		[[ $1 == dray && -n $poll ]] || return 0
		for d in $(rdma_devs dray); do
			echo "$poll" >"/sys/class/infiniband/$d/device/poll_idle_us" ||
				{ echo "bench: cannot set poll_idle_us of $d"; return 1; }
		done
		return 0
	fi
	sed 's/^/# /' "$TMP/setup"
	echo "bench: cannot set up $1"
	return 1
}

# One kind at a time: no two devices may answer for the same GIDs (dray's
# rx_handler takes RoCEv2 frames for its GIDs before rxe's UDP socket).
kind_down() {
	nvme_down
	rdma_down "$1"
	case $1 in
	rxe) modprobe -r rdma_rxe 2>/dev/null ;;
	dray) modprobe -r dray 2>/dev/null ;;
	esac
	return 0
}

# perftest_pair OUT TIMEOUT KIND PROG SIZE ITERS [CLIENT PREFIX...]: one
# perftest run, the server on device B, the client on A, on $PAIR_PORT
# (the caller moves it on with next_port: this may run in a subshell).
perftest_pair() {
	local out=$1 t=$2 kind=$3 prog=$4 size=$5 iters=$6 a b opts
	shift 6
	read -r a b <<<"$(rdma_devs "$kind")"
	opts="-F -s $size -n $iters -p $PAIR_PORT${PT_OPTS:+ $PT_OPTS}"
	pair_run "$out" "$t" "$prog -d $b -x $(gid_v4 "$b") $opts" \
		"$* $prog -d $a -x $(gid_v4 "$a") $opts $ADDR_B"
}

# show_fail OUT: why a pair_run failed. perftest's error messages go to
# stderr, unbuffered, and so land before its buffered stdout: show the
# lines that look like errors, then the end.
show_fail() {
	local f
	for f in "$1.cli" "$1.srv"; do
		[[ -f $f ]] || continue
		grep -iE "error|fail|unable|couldn|cannot|exceed|timed? ?out|problem" "$f" |
			grep -v "^ *#bytes" | sed "s|^|# ${f##*.}: |" | head -n 6
	done
	tail -n 1 "$1.cli" | sed 's/^/# /'
}

# ucx_run KIND TEST SIZE ITERS [CLIENT PREFIX...]: one ucx_perftest run,
# the server on device B, the client on A (both over rc_verbs)
ucx_run() {
	local kind=$1 t=$2 size=$3 iters=$4 a b
	shift 4
	read -r a b <<<"$(rdma_devs "$kind")"
	pair_run "$TMP/run" 120 \
		"env $UCX_ENV UCX_NET_DEVICES=$b:1 ucx_perftest -p $PAIR_PORT" \
		"$* env $UCX_ENV UCX_NET_DEVICES=$a:1 ucx_perftest $ADDR_B -t $t -s $size -n $iters -p $PAIR_PORT"
}

# mpi_run KIND SIZE ITERS: mpi_bench as two ranks, rank N on device N
# (its output, both ranks', in $TMP/run.cli); dray's ranks print the
# provider's counters (DRAY_STATS=1)
mpi_run() {
	local kind=$1 size=$2 iters=$3 a b stats=()
	read -r a b <<<"$(rdma_devs "$kind")"
	[[ $kind == dray ]] && stats=(-x DRAY_STATS=1)
	# shellcheck disable=SC2016 # expanded by each rank's shell
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		DEV_A=$a DEV_B=$b timeout 300 mpirun -np 2 --oversubscribe \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_UD_ETH_DGID_CHECK=n \
		"${stats[@]}" -x LD_LIBRARY_PATH -x DEV_A -x DEV_B \
		bash -c 'if [[ $OMPI_COMM_WORLD_RANK == 0 ]]; then d=$DEV_A; else d=$DEV_B; fi
			UCX_NET_DEVICES=$d:1 exec "$0" "$@"' \
		"$RDMA_BIN/mpi_bench" "$size" "$iters" >"$TMP/run.cli" 2>&1 ||
		{ echo "# mpirun exit $?" >>"$TMP/run.cli"; return 1; }
}

# nvme_up KIND: the NVMe-oF host on device A connected to the target on
# device B (a null_blk namespace), once per kind_up; sets NVME_BLK (so
# not in a subshell: measure() calls it before a fio row)
NVME_BLK=''
nvme_up() {
	local ctrl blk
	[[ -n $NVME_BLK ]] && return 0
	mkdir -p "$nvmeof_out"
	if ! { nvmeof_modules && modprobe null_blk nr_devices=1 &&
		nvmeof_target_up "$ADDR_B" /dev/nullb0 && nvmeof_connect "$ADDR_B" "$ADDR_A"; } >"$TMP/nvme" 2>&1; then
		sed 's/^/# /' "$TMP/nvme"
		echo "bench: $1: no NVMe-oF connection"
		nvme_down
		return 1
	fi
	NVME_BLK=$blk
	say "$1 NVMe-oF: $ctrl $(<"/sys/class/nvme/$ctrl/address"), /dev/$blk on /dev/nullb0"
}

# nvme_down: disconnected, the target and its modules gone
nvme_down() {
	[[ -n $NVME_BLK ]] || return 0
	timeout 60 nvme disconnect -n "$nqn" >/dev/null 2>&1
	nvmeof_target_down
	modprobe -r nvme-rdma nvmet-rdma null_blk 2>/dev/null
	NVME_BLK=''
}

# nvme_run KIND RW SIZE SECONDS: fio on the NVMe-oF namespace (nvme_up),
# queue depth 32; its terse output (version 3) in $TMP/run.cli
nvme_run() {
	[[ -n $NVME_BLK ]] || return 1
	timeout $(($4 + 60)) fio --name=bench --filename="/dev/$NVME_BLK" \
		--direct=1 --ioengine=libaio --rw="$2" --bs="$3" --iodepth=32 \
		--size=1g --runtime="$4" --time_based --output-format=terse \
		--terse-version=3 >"$TMP/run.cli" 2>&1
}

# pt_opts OPTS: perftest's options for a measurement's options (q=N: -q N,
# N QPs; ev: -e, completion events instead of busy polling (perftest
# refuses it for WRITE); mtu=M: -m M)
pt_opts() {
	local o out=''
	for o in $1; do
		case $o in
		q=*) out+=" -q ${o#q=}" ;;
		ev) out+=" -e" ;;
		mtu=*) out+=" -m ${o#mtu=}" ;;
		esac
	done
	printf '%s\n' "${out# }"	# echo would take "-e" for its own option
}

# meas_mtu OPTS: the IB MTU a measurement runs at (1024 unless mtu=M)
meas_mtu() {
	local o m=1024
	for o in $1; do
		[[ $o == mtu=* ]] && m=${o#mtu=}
	done
	echo "$m"
}

# link_mtu KIND IB_MTU: the veth pair at the Ethernet MTU that gives the
# devices of KIND the active MTU IB_MTU (1024: 1500, 4096: 9000; veth_mtu)
link_mtu() {
	local eth=1500 cur
	[[ $2 == 4096 ]] && eth=9000
	read -r cur </sys/class/net/veth0/mtu
	[[ $cur == "$eth" ]] || veth_mtu "$1" "$eth" "$2"
}

# loaded_pair KIND PROG SIZE ITERS [CLIENT PREFIX...]: perftest_pair while
# another pair of processes streams 1 MiB RDMA WRITEs (ib_write_bw,
# perftest's 128 deep) between the same two devices (stream_start); fails
# if the stream did not run through the whole measurement
loaded_pair() {
	local kind=$1 a b rc
	read -r a b <<<"$(rdma_devs "$kind")"
	if ! stream_start "$TMP/stream" ib_write_bw "$b" "$(gid_v4 "$b")" \
		"$a" "$(gid_v4 "$a")" "$ADDR_B"; then
		stream_stop
		echo "# the 1 MiB stream did not start" >"$TMP/run.cli"
		return 1
	fi
	perftest_pair "$TMP/run" 120 "$@"
	rc=$?
	stream_alive || { echo "# the stream ended first" >>"$TMP/run.cli"; rc=1; }
	stream_stop
	return "$rc"
}

# one KIND MEAS-LINE: one run; prints the figure and, for dray, the
# provider's wake-up calls per posted WR (DRAY_STATS=1), or nothing when
# the run failed or perftest's figures are not sane
one() {
	local kind=$1 name prog size iters fig unit opts col pre=() a k=- v
	local PT_OPTS
	read -r name prog size iters fig unit opts <<<"$2"
	PT_OPTS=$(pt_opts "$opts")
	[[ $kind == dray ]] && pre=(env DRAY_STATS=1)
	case $prog in
	ucx:*) ucx_run "$kind" "${prog#ucx:}" "$size" "$iters" "${pre[@]}" ;;
	mpi:*) mpi_run "$kind" "$size" "$iters" ;;
	fio:*) nvme_run "$kind" "${prog#fio:}" "$size" "$iters" ;;
	*)
		if [[ " $opts " == *" load "* ]]; then
			loaded_pair "$kind" "$prog" "$size" "$iters" "${pre[@]}"
		else
			perftest_pair "$TMP/run" 120 "$kind" "$prog" "$size" "$iters" "${pre[@]}"
		fi
		;;
	esac || {
		show_fail "$TMP/run" >&2
		return 1
	}
	if [[ $kind == dray ]]; then
		read -r a _ <<<"$(rdma_devs "$kind")"
		# perftest's stdout and the provider's stderr may share a line
		k=$(grep -ho "dray stats: device $a .*" "$TMP/run.cli" |
			sed -n 's/.*wakeups_per_wr \([0-9.e+-]*\).*/\1/p' | tail -n 1)
		sed -i 's/dray stats: .*//' "$TMP/run.cli"
	fi
	case $prog in
	ucx:*)
		# "Final: iters 50%ile average overall avg-MB/s overall-MB/s ..."
		v=$(awk -v f="$fig" '/^Final:/ { print (f == "lat") ? $3 : $7 }' "$TMP/run.cli" | tail -n 1)
		;;
	mpi:*)
		v=$(sed -n 's/^mpi_bench: allreduce .*: median \([0-9.]*\) us.*result checked$/\1/p' \
			"$TMP/run.cli" | tail -n 1)
		;;
	fio:*)
		# terse v3: 5 error; read 7 KiB/s, 8 IOPS; write 48 KiB/s, 49 IOPS
		v=$(awk -F';' -v f="$fig" '$1 == 3 && $5 == 0 {
			bw = $7 + $48; iops = $8 + $49
			printf "%.2f\n", (f == "bw") ? bw * 1024 / 1e6 : iops / 1000 }' \
			"$TMP/run.cli" | tail -n 1)
		;;
	esac
	if [[ $prog == *:* ]]; then
		if ! awk -v v="$v" 'BEGIN { exit !(v + 0 > 0 && v !~ /nan|inf/) }'; then
			echo "bench: $kind $name: no figure ('$v')" >&2
			tail -n 5 "$TMP/run.cli" | sed 's/^/# /' >&2
			return 1
		fi
		echo "$v ${k:--}"
		return 0
	fi
	col=bw
	[[ $fig != bw ]] && col=lat	# MsgRate and t_typical: column 5
	perf_sane "$TMP/run.cli" "$col" >&2 || return 1
	v=$(perf_figures "$TMP/run.cli" "$col" | tail -n 1)
	# perf_sane() excuses a figure perftest printed after its clock
	# calibration warning; a measurement needs a real one
	if ! awk -v v="$v" 'BEGIN { exit !(v + 0 > 0 && v !~ /nan|inf/) }'; then
		echo "bench: $kind $name: figure '$v' (clock calibration?), run again" >&2
		return 1
	fi
	echo "$v ${k:--}"
}

# snap: "veth0_tx veth1_tx cpu_idle cpu_total eng_vcsw eng_run_ns
# eng_wait_ns" of the moment: frames sent by each end of the pair; guest
# CPU time in USER_HZ ticks (/proc/stat); dray's engine threads
# (dray-eng/*): voluntary context switches, time on a CPU and time
# runnable but waiting for one (/proc/PID/schedstat), 0 for rxe
snap() {
	local a b line t=0 i f p c vcsw=0 ns=0 wns=0 run wait
	read -r a </sys/class/net/veth0/statistics/tx_packets
	read -r b </sys/class/net/veth1/statistics/tx_packets
	read -r line </proc/stat
	read -ra f <<<"${line#cpu}"
	# user nice system idle iowait irq softirq steal
	for ((i = 0; i < 8 && i < ${#f[@]}; i++)); do
		t=$((t + f[i]))
	done
	for p in /proc/[0-9]*; do
		read -r c 2>/dev/null <"$p/comm" || continue
		[[ $c == dray-eng/* ]] || continue
		read -r run wait _ 2>/dev/null <"$p/schedstat" &&
			ns=$((ns + run)) wns=$((wns + wait))
		while read -r line; do
			[[ $line == voluntary_ctxt_switches:* ]] &&
				vcsw=$((vcsw + ${line##*[[:space:]]}))
		done 2>/dev/null <"$p/status"
	done
	echo "$a $b $((f[3] + f[4])) $t $vcsw $ns $wns"
}

# per_run KIND BEFORE AFTER ITERS: frames each end sent per iteration,
# the share of guest CPU time that was idle, dray's engine figures
per_run() {
	local kind=$1 a0 b0 i0 t0 v0 r0 w0 a1 b1 i1 t1 v1 r1 w1
	read -r a0 b0 i0 t0 v0 r0 w0 <<<"$2"
	read -r a1 b1 i1 t1 v1 r1 w1 <<<"$3"
	awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v i=$((i1 - i0)) -v t=$((t1 - t0)) \
		-v v=$((v1 - v0)) -v r=$((r1 - r0)) -v w=$((w1 - w0)) \
		-v n="$4" -v k="$kind" 'BEGIN {
		printf "frames/iteration %.2f + %.2f, guest CPU idle %d%%",
			a / n, b / n, (t > 0 ? 100 * i / t : 0)
		if (k == "dray")
			printf ", engine sleeps/iteration %.2f, engine CPU %d ms, waiting for a CPU %d ms",
				v / n, r / 1e6, w / 1e6
	}'
}

# cpu_row PROG FIG: does the measurement get a CPU-per-GB figure (the
# perftest and fio bandwidth rows)?
cpu_row() {
	[[ $2 == bw && ($1 == ib_* || $1 == fio:*) ]]
}

# sampler OUT: until killed, every 0.1 s a line "BUSY TX0 TX1": guest CPU
# ticks spent so far (all CPUs, idle and iowait left out) and the bytes
# veth0 and veth1 have sent (builtins only: read -t on an empty pipe is
# the sleep)
sampler() {
	local fd line f i t b0 b1
	exec {fd}<> <(:)
	while :; do
		read -r line </proc/stat
		read -ra f <<<"${line#cpu}"
		t=0
		for ((i = 0; i < 8 && i < ${#f[@]}; i++)); do
			t=$((t + f[i]))
		done
		read -r b0 </sys/class/net/veth0/statistics/tx_bytes
		read -r b1 </sys/class/net/veth1/statistics/tx_bytes
		echo "$((t - f[3] - f[4])) $b0 $b1"
		read -r -t 0.1 -u "$fd" _
	done >"$1"
}

# cpu_gb SAMPLES: guest CPU seconds per GB (10^9 B) of frames on the pair
# while data flowed: only the sampler's intervals that carried at least a
# tenth of the busiest one's bytes count, so that the set-up (process
# start, the TCP exchange, QPs and MRs) stays out. Prints nothing when
# fewer than 3 intervals qualify.
cpu_gb() {
	awk -v hz="$HZ" '
	{ c[NR] = $1; b[NR] = $2 + $3 }
	END {
		for (i = 2; i <= NR; i++)
			if (b[i] - b[i - 1] > peak) peak = b[i] - b[i - 1]
		for (i = 2; i <= NR; i++) {
			d = b[i] - b[i - 1]
			if (peak == 0 || d < peak / 10) continue
			n++; bytes += d; busy += c[i] - c[i - 1]
		}
		if (n >= 3 && bytes > 0) printf "%.3g\n", busy / hz / (bytes / 1e9)
	}' "$1"
}

# measure KIND REP: every measurement once (a bad run is tried again)
measure() {
	local kind=$1 rep=$2 m name prog iters fig opts t0 try v k s0 s1 c spid rc
	for m in "${MEAS[@]}"; do
		read -r name prog _ iters fig _ opts <<<"$m"
		t0=$EPOCHREALTIME v=''
		link_mtu "$kind" "$(meas_mtu "$opts")" || {
			say "rep $rep $kind $name failed (MTU)"
			continue
		}
		if [[ $prog == fio:* ]] && ! nvme_up "$kind"; then
			say "rep $rep $kind $name failed (NVMe-oF set-up)"
			continue
		fi
		for ((try = 0; try < 3; try++)); do
			next_port
			spid=''
			if cpu_row "$prog" "$fig"; then
				sampler "$TMP/samples" &
				spid=$!
			fi
			s0=$(snap)
			v=$(one "$kind" "$m")
			rc=$?
			s1=$(snap)
			[[ -n $spid ]] && { kill "$spid"; wait "$spid"; } 2>/dev/null
			[[ $rc -eq 0 && -n $v ]] && break
			v=''
		done
		if [[ -n $v ]]; then
			read -r v k <<<"$v"
			VALS[$kind.$name]+="$v"$'\n'
			if [[ $k == - ]]; then
				k=''
			else
				WAKE[$kind.$name]+="$k"$'\n'
				k=", wake-up calls/WR $k"
			fi
			c=''
			if cpu_row "$prog" "$fig"; then
				c=$(cpu_gb "$TMP/samples")
				[[ -n $c ]] && CPU[$kind.$name]+="$c"$'\n'
				c=", CPU ${c:-?} s/GB"
			fi
			say "rep $rep $kind $name $v ($(elapsed "$t0") s, $((try + 1)) runs;" \
				"$(per_run "$kind" "$s0" "$s1" "$iters")$k$c)"
		else
			say "rep $rep $kind $name failed ($(elapsed "$t0") s)"
		fi
	done
}

# strace_calls KIND N: the client's ioctl + write calls in a run of N WRs
# (perftest's own figures do not matter here; two tries)
strace_calls() {
	local kind=$1 n=$2 try
	for ((try = 0; try < 2; try++)); do
		next_port
		perftest_pair "$TMP/sc" 300 "$kind" ib_write_bw "$SC_SIZE" "$n" \
			strace -f -c -e trace=ioctl,write -o "$TMP/strace" && break
		show_fail "$TMP/sc" >&2
	done
	[[ $try -lt 2 ]] || return 1
	sed 's/^/# bench: strace -n '"$n"': /' "$TMP/strace" | grep -E "ioctl|write|calls" >&2
	# "% time seconds usecs/call calls [errors] syscall"
	awk '$NF == "ioctl" || $NF == "write" { c += $4 } END { print c + 0 }' "$TMP/strace"
}

# syscalls KIND: system calls per posted WR during a bandwidth run
syscalls() {
	local kind=$1 c0 c1=fail
	if ! command -v strace >/dev/null; then
		say "no strace (scripts/install-deps.sh installs it)"
		RES[$kind.strace]=n/a RES[$kind.strace_all]=n/a
		return
	fi
	PAIR_PORT=$((PAIR_PORT + 10))
	c0=$(strace_calls "$kind" "$SC_N0") || c0=fail
	PAIR_PORT=$((PAIR_PORT + 10))
	[[ $c0 != fail ]] && { c1=$(strace_calls "$kind" "$SC_N1") || c1=fail; }
	if [[ $c0 != fail && $c1 != fail ]]; then
		say "$kind strace: ioctl+write calls: $c0 for -n $SC_N0, $c1 for -n $SC_N1"
		RES[$kind.strace]=$(awk -v a="$c0" -v b="$c1" -v n=$((SC_N1 - SC_N0)) \
			'BEGIN { d = (b - a) / n; printf "%.4f\n", d < 0 ? 0 : d }')
		RES[$kind.strace_all]=$(awk -v b="$c1" -v n="$SC_N1" 'BEGIN { printf "%.4f\n", b / n }')
	else
		RES[$kind.strace]=fail RES[$kind.strace_all]=fail
	fi
}

say "guest: $(uname -r), $(nproc) vCPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
say "perftest: $(command -v ib_write_bw), libibverbs from ${LD_LIBRARY_PATH%%:*}"
[[ -z $poll ]] || say "dray: poll_idle_us $poll on both devices"
t_all=$EPOCHREALTIME
for ((rep = 1; rep <= reps; rep++)); do
	for kind in $kinds; do
		kind_up "$kind" || exit 1
		measure "$kind" "$rep"
		kind_down "$kind"
	done
done
for kind in $kinds; do
	if [[ -n $only && ! syscalls =~ $only ]]; then
		RES[$kind.strace]=skipped RES[$kind.strace_all]=skipped
		continue
	fi
	t0=$EPOCHREALTIME
	kind_up "$kind" || exit 1
	link_mtu "$kind" 1024 || exit 1
	syscalls "$kind"
	kind_down "$kind"
	say "$kind syscall runs: $(elapsed "$t0") s"
done

# The table: median of the repetitions, ratio dray/rxe, the issue's target
target() {
	case $1 in
	ucx_*_lat_* | mpi_*) echo "<= 0.5x" ;;
	ucx_* | nvme_*) echo ">= 2x" ;;
	*_bw_*) echo ">= 3x" ;;
	*_rate_*) echo ">= 3x" ;;
	*_lat_*) echo "<= 0.5x" ;;
	esac
}

missing=0
for m in "${MEAS[@]}"; do
	read -r name _ <<<"$m"
	for kind in $kinds; do
		v=${VALS[$kind.$name]:-}
		RES[$kind.$name]=$(printf '%s' "$v" | median)
		n=$(printf '%s' "$v" | grep -c .)
		[[ $n -lt $reps ]] && missing=1
		say "$kind $name: $(printf '%s' "$v" | tr '\n' ' ')-> ${RES[$kind.$name]} ($n of $reps)"
	done
	v=${WAKE[dray.$name]:-}
	[[ -n $v ]] && RES[wake.$name]=$(printf '%s' "$v" | median)
	for kind in $kinds; do
		v=${CPU[$kind.$name]:-}
		[[ -z $v ]] && continue
		RES[cpu.$kind.$name]=$(printf '%s' "$v" | median)
		say "$kind $name CPU s/GB: $(printf '%s' "$v" | tr '\n' ' ')-> ${RES[cpu.$kind.$name]}"
	done
done
for kind in $kinds; do
	[[ ${RES[$kind.strace]:-fail} == fail ]] && missing=1
done

echo
printf 'bench: %-16s %-5s %9s %9s %9s %-8s %s\n' measurement unit rxe dray dray/rxe target \
	"wake-up calls/WR (dray)"
for m in "${MEAS[@]}"; do
	read -r name prog size iters fig unit _ <<<"$m"
	r=${RES[rxe.$name]:-n/a} d=${RES[dray.$name]:-n/a}
	printf 'bench: %-16s %-5s %9s %9s %9s %-8s %s\n' "$name" "$unit" "$r" "$d" \
		"$(ratio "$d" "$r")" "$(target "$name")" "${RES[wake.$name]:-n/a}"
done
printf 'bench: %-16s %-5s %9s %9s %9s %s\n' "CPU per GB" unit rxe dray dray/rxe target
for m in "${MEAS[@]}"; do
	read -r name prog _ _ fig _ <<<"$m"
	cpu_row "$prog" "$fig" || continue
	r=${RES[cpu.rxe.$name]:-n/a} d=${RES[cpu.dray.$name]:-n/a}
	printf 'bench: %-16s %-5s %9s %9s %9s %s\n' "$name" "s/GB" "$r" "$d" \
		"$(ratio "$d" "$r")" "<= 0.5x"
done
printf 'bench: %-32s %9s %9s  %s\n' "ioctl+write/WR (strace)" \
	"${RES[rxe.strace]:-n/a}" "${RES[dray.strace]:-n/a}" "target < 0.01 (set-up left out)"
printf 'bench: %-32s %9s %9s\n' "ioctl+write/WR incl. set-up" \
	"${RES[rxe.strace_all]:-n/a}" "${RES[dray.strace_all]:-n/a}"
echo "bench: wake-up calls/WR: the dray provider's DRAY_STATS counters, target < 0.01 in bandwidth runs"
echo "bench: medians of $reps repetitions; bandwidth: BW average; rate: MsgRate; latency: t_typical"
echo "bench: _qN: N QPs (perftest -q N, -n per QP); _ev: completion events (-e); _j: MTU 4096 (veth MTU 9000); _load: beside another pair streaming 1 MiB ib_write_bw; others one QP, MTU 1024"
echo "bench: CPU per GB: guest CPU seconds (all vCPUs, /proc/stat) per 10^9 B of frames on the pair, in the 0.1 s intervals that carried data"
echo "bench: nvme_*: fio on an NVMe-oF namespace (nvme-rdma host on veth0, nvmet-rdma target on veth1, null_blk), queue depth 32, 10 s"
echo "bench: ucx_*: ucx_perftest over rc_verbs (latency: 50th percentile, one way; bandwidth: overall, 2^20 B/s); mpi_*: median time of one MPI_Allreduce (2 ranks, pml ucx)"
echo "bench: system calls: ib_write_bw -s $SC_SIZE, client on veth0; strace: (calls(-n $SC_N1) - calls(-n $SC_N0)) / $((SC_N1 - SC_N0))"
echo "bench: guest time $(elapsed "$t_all") s"
exit $missing
