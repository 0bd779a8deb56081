#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Benchmark dray against Soft-RoCE (rxe) in one VM run, on the same routed
# veth pair, one kind after the other in every repetition
# (scripts/bench-guest.sh does the work inside the VM; see it for what is
# measured). Builds nothing: run `make module provider` first.
#
#   scripts/bench.sh [--reps N] [--smp N] [--module DRAY.KO] [--kinds "rxe dray"]
#                    [--only REGEX] [--poll US]
#
# Prints perftest medians (bandwidth at 64 KiB and 1 MiB, message rate at
# 8 B, typical latency at 2 B; 4 and 16 QPs; MTU 4096; the guest CPU time
# per GB of each bandwidth row), UCX's tag latency and PUT bandwidth, the
# time of a 1 MiB MPI allreduce over UCX, NVMe over Fabrics with fio (4 KiB
# random read IOPS, 128 KiB sequential MB/s), dray/rxe ratios next to the
# issues' targets, and the system calls per posted WR of a bandwidth run
# (--only REGEX: the measurements whose name matches, e.g. "ucx_|mpi_";
# the system-call runs only if "syscalls" matches; --poll US: dray with
# poll_idle_us US, the polling engine). The
# output is also kept in build/bench/bench-<date>.txt. A benchmark, not a
# test: no figure is asserted; the exit status is non-zero only if a
# measurement could not be taken. Documentation/benchmark.md has figures.
# The VM harness is scripts/vm-run.sh (DRAY_VM_RUN overrides); the
# rdma-core build is build/rdma-core (DRAY_RDMA_ENV names another
# scripts/rdma-env.sh).

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
reps=3 smp=2 module=$ROOT/build/dray.ko kinds="rxe dray" extra=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--reps) reps=${2:-}; shift 2 || exit 2 ;;
	--smp) smp=${2:-}; shift 2 || exit 2 ;;
	--module) module=${2:-}; shift 2 || exit 2 ;;
	--kinds) kinds=${2:-}; shift 2 || exit 2 ;;
	--only) extra+=(--only "${2:-}"); shift 2 || exit 2 ;;
	--poll) extra+=(--poll "${2:-}"); shift 2 || exit 2 ;;
	-h | --help) sed -n '4,25s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "bench: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "bench: bad --reps $reps" >&2; exit 2; }

VM_RUN=${DRAY_VM_RUN:-$ROOT/scripts/vm-run.sh}
RDMA_ENV=${DRAY_RDMA_ENV:-$ROOT/scripts/rdma-env.sh}
mods=()
if [[ " $kinds " == *" dray "* ]]; then
	[[ -r $module ]] || { echo "bench: no $module (make module)" >&2; exit 2; }
	mods=(--module "$module")
fi
"$RDMA_ENV" >/dev/null || { echo "bench: no rdma-core build (make provider)" >&2; exit 2; }
command -v ib_write_bw >/dev/null || { echo "bench: no perftest (scripts/install-deps.sh)" >&2; exit 2; }

out=$ROOT/build/bench
mkdir -p "$out"
log=$out/bench-$(date +%Y%m%d-%H%M%S).txt
cd "$ROOT" || exit 2
read -r load1 load5 load15 _ </proc/loadavg
{
	echo "# bench: $(date -u +%FT%TZ) $(git -C "$ROOT" describe --always --dirty 2>/dev/null)"
	echo "# bench: scripts/bench.sh --reps $reps --smp $smp --kinds \"$kinds\" ${extra[*]}"
	echo "# bench: host: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), load average $load1 $load5 $load15"
} | tee "$log"
start=$SECONDS
# DRAY_* variables reach the guest command
# shellcheck disable=SC2016 # expanded in the guest
DRAY_BENCH_ENV=$RDMA_ENV "$VM_RUN" --timeout 3600 --smp "$smp" "${mods[@]}" -- \
	bash -c 'eval "$("$DRAY_BENCH_ENV")" && exec "$0" "$@"' \
	"$ROOT/scripts/bench-guest.sh" --reps "$reps" --kinds "$kinds" "${extra[@]}" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
read -r load1 load5 load15 _ </proc/loadavg
{
	echo "# bench: host load average at the end $load1 $load5 $load15; $((SECONDS - start)) s in all"
	echo "# bench: kept in $log"
} | tee -a "$log"
exit "$rc"
