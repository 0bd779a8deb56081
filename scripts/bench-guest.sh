#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Inside the test VM (see scripts/bench.sh): perftest for Soft-RoCE, then
# for dray, on the same routed veth pair, one kind at a time; prints a
# table of medians with dray/rxe ratios and the system calls per posted
# WR of a bandwidth run. A benchmark, not a test: it judges nothing, and
# fails only when a measurement could not be taken.
#
#   scripts/bench-guest.sh [--reps N] [--kinds "rxe dray"]
#
#   bandwidth   ib_write_bw, ib_send_bw, ib_read_bw at 64 KiB and 1 MiB
#               (BW average, MB/s as perftest prints it)
#   msg rate    ib_write_bw -s 8 (MsgRate, Mpps)
#   latency     ib_write_lat, ib_send_lat, ib_read_lat -s 2 (t_typical, us)
#   syscalls    dray: the provider's counters (DRAY_STATS=1: wake-up calls
#               per posted WR) during ib_write_bw -s 64 KiB; both kinds:
#               strace -f -c of the client's ioctl and write calls per WR
#               (strace must be installed; it is not in install-deps.sh)

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/.." && pwd -P)
# shellcheck source=tests/rdma/lib.sh
. "$ROOT/tests/rdma/lib.sh"

reps=3
kinds="rxe dray"
while [[ $# -gt 0 ]]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--kinds) kinds=$2; shift 2 ;;
	*) echo "bench-guest: unknown argument $1" >&2; exit 2 ;;
	esac
done

if [[ ${LD_LIBRARY_PATH:-} != *rdma-core/build/lib* ]]; then
	env_out=$("$ROOT/scripts/rdma-env.sh" 2>/dev/null) && eval "$env_out"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The measurements: name, program, size, iterations, figure kind, unit
MEAS=(
	"write_bw_64k ib_write_bw 65536 400 bw MB/s"
	"send_bw_64k ib_send_bw 65536 400 bw MB/s"
	"read_bw_64k ib_read_bw 65536 400 bw MB/s"
	"write_bw_1m ib_write_bw 1048576 40 bw MB/s"
	"send_bw_1m ib_send_bw 1048576 40 bw MB/s"
	"read_bw_1m ib_read_bw 1048576 40 bw MB/s"
	"write_rate_8 ib_write_bw 8 20000 rate Mpps"
	"write_lat_2 ib_write_lat 2 2000 lat us"
	"send_lat_2 ib_send_lat 2 2000 lat us"
	"read_lat_2 ib_read_lat 2 2000 lat us"
)

declare -A RES

median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "fail"; exit }
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# one KIND MEAS-LINE: one run; prints the figure, or nothing when the run
# failed or perftest's figures are not sane (its cycle counter calibration
# sometimes fails under TCG: every figure is then inf or 0)
one() {
	local kind=$1 name prog size iters fig unit a b col
	read -r name prog size iters fig unit <<<"$2"
	read -r a b <<<"$(rdma_devs "$kind")"
	if ! pair_run "$TMP/run" 120 \
		"$prog -d $b -x $(gid_v4 "$b") -F -s $size -n $iters -p $PAIR_PORT" \
		"$prog -d $a -x $(gid_v4 "$a") -F -s $size -n $iters -p $PAIR_PORT $ADDR_B"; then
		sed 's/^/# /' "$TMP/run.cli" | tail -n 5 >&2
		return 1
	fi
	col=bw
	[[ $fig != bw ]] && col=lat	# MsgRate and t_typical: column 5
	perf_sane "$TMP/run.cli" "$col" >/dev/null || return 1
	perf_figures "$TMP/run.cli" "$col" | tail -n 1
}

measure() {
	local kind=$1 m name r v vals got
	for m in "${MEAS[@]}"; do
		read -r name _ <<<"$m"
		vals='' got=0
		# reps good runs, with a few spare attempts for bad ones
		for ((r = 0; r < reps + 3 && got < reps; r++)); do
			next_port	# here: one() runs in a subshell
			if v=$(one "$kind" "$m") && [[ -n $v ]]; then
				vals+="$v"$'\n'
				got=$((got + 1))
			fi
		done
		RES[$kind.$name]=$(printf '%s' "$vals" | median)
		echo "# bench: $kind $name: $(printf '%s' "$vals" | tr '\n' ' ')-> ${RES[$kind.$name]}"
	done
}

# syscalls KIND: ib_write_bw 64 KiB, -n N; the provider's counters (dray)
# and strace's count of the client's ioctl/write calls.
syscalls() {
	local kind=$1 a b n=2000 line
	read -r a b <<<"$(rdma_devs "$kind")"
	if [[ $kind == dray ]]; then
		next_port
		if DRAY_STATS=1 pair_run "$TMP/st" 120 \
			"ib_write_bw -d $b -x $(gid_v4 "$b") -F -s 65536 -n $n -p $PAIR_PORT" \
			"ib_write_bw -d $a -x $(gid_v4 "$a") -F -s 65536 -n $n -p $PAIR_PORT $ADDR_B"; then
			line=$(grep -h "^dray stats: device $a " "$TMP/st.cli" | tail -n 1)
			echo "# bench: client: ${line:-no DRAY_STATS line}"
			echo "# bench: server: $(grep -h '^dray stats:' "$TMP/st.srv" | tail -n 1)"
			RES[$kind.stats]=$(sed -n 's/.*wakeups_per_wr \([0-9.e+-]*\).*/\1/p' <<<"$line")
		fi
		RES[$kind.stats]=${RES[$kind.stats]:-fail}
	fi
	if ! command -v strace >/dev/null; then
		RES[$kind.strace]="n/a"
		return
	fi
	next_port
	if pair_run "$TMP/sc" 300 \
		"ib_write_bw -d $b -x $(gid_v4 "$b") -F -s 65536 -n $n -p $PAIR_PORT" \
		"strace -f -c -e trace=ioctl,write -o $TMP/strace ib_write_bw -d $a -x $(gid_v4 "$a") -F -s 65536 -n $n -p $PAIR_PORT $ADDR_B"; then
		# "% time seconds usecs/call calls errors syscall": calls of both
		RES[$kind.strace]=$(awk -v n=$n '
			$NF == "ioctl" || $NF == "write" { c += $4 }
			END { printf "%.4f\n", c / n }' "$TMP/strace")
		sed 's/^/# bench: strace: /' "$TMP/strace" | grep -E "ioctl|write|calls"
	else
		RES[$kind.strace]=fail
	fi
}

for kind in $kinds; do
	echo "# bench: === $kind"
	if ! veth_up >"$TMP/setup" 2>&1 || ! rdma_up "$kind" >>"$TMP/setup" 2>&1; then
		cat "$TMP/setup"
		echo "bench: cannot set up $kind"
		exit 1
	fi
	measure "$kind"
	syscalls "$kind"
	rdma_down "$kind"
	# one kind at a time: no two devices answer for the same GIDs
	[[ $kind == rxe ]] && modprobe -r rdma_rxe 2>/dev/null
done

# The table: median of $reps runs each, ratio dray/rxe, the issue's target
ratio() {
	awk -v d="$1" -v r="$2" 'BEGIN {
		if (d + 0 > 0 && r + 0 > 0) printf "%.2fx", d / r; else print "-" }'
}
target() {
	case $1 in
	*_bw_*) echo ">= 3x" ;;
	*_rate_*) echo ">= 3x" ;;
	*_lat_*) echo "<= 0.5x" ;;
	esac
}

missing=0
printf 'bench: %-14s %-6s %12s %12s %9s  %s\n' measurement unit rxe dray dray/rxe target
for m in "${MEAS[@]}"; do
	read -r name prog size iters fig unit <<<"$m"
	r=${RES[rxe.$name]:-n/a} d=${RES[dray.$name]:-n/a}
	[[ $r == fail || $d == fail ]] && missing=1
	printf 'bench: %-14s %-6s %12s %12s %9s  %s\n' "$name" "$unit" "$r" "$d" \
		"$(ratio "$d" "$r")" "$(target "$name")"
done
printf 'bench: %-21s %12s %12s %9s  %s\n' "wake-ups/WR (DRAY_STATS)" "-" \
	"${RES[dray.stats]:-n/a}" "" "< 0.01"
printf 'bench: %-21s %12s %12s %9s  %s\n' "ioctl+write/WR (strace)" \
	"${RES[rxe.strace]:-n/a}" "${RES[dray.strace]:-n/a}" "" "(whole client run)"
echo "bench: medians of $reps runs; bandwidth BW average, rate MsgRate, latency t_typical"
exit $missing
