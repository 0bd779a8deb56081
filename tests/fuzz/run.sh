#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Replay and fuzz dray's libFuzzer targets (make -C tests/fuzz run):
#
#   run.sh OUT SECONDS TARGET...
#
# For each TARGET (OUT/TARGET, built by the Makefile):
#   1. replay every input of regress/TARGET/ (crashes found before, kept
#      as regression tests) and corpus/TARGET/ (the seed corpus) once:
#      "ok TARGET.replay" if none fails;
#   2. unless SECONDS is 0, fuzz it for SECONDS seconds (niced), starting
#      from the seed corpus and what earlier runs found
#      (OUT/work/TARGET/): "ok TARGET" with executions, executions per
#      second and coverage, or "not ok TARGET" with the crashing input,
#      saved as OUT/crashes/TARGET/crash-* (copy it to regress/TARGET/
#      once the bug is fixed).
# The targets fuzz at the same time (the test command's wall time is one
# SECONDS, not one per target; on 2 CPUs each of 3 gets 2/3 of one);
# FUZZ_SERIAL=1 runs them one after another.
# Ends with "fuzz: N passed, N failed"; exits 1 if anything failed.
# FUZZ_FLAGS adds libFuzzer options (e.g. -jobs=2 -workers=2).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
out=$1 secs=$2
shift 2
pass=0 fail=0
fuzzed=()

ok() { echo "ok $*"; pass=$((pass + 1)); }
not_ok() { echo "not ok $*"; fail=$((fail + 1)); }

# libFuzzer's last "#N DONE cov: C ft: F corp: ... exec/s: E" line.
stats() {
	sed -n 's/^#\([0-9]*\)[[:space:]]*DONE[[:space:]]*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\)\/[^ ]* .*exec\/s: \([0-9]*\).*/\1 execs, \5 exec\/s, cov \2, ft \3, corpus \4/p' "$1" | tail -n 1
}

for t in "$@"; do
	bin=$out/$t
	log=$out/log/$t
	mkdir -p "$out/log" "$out/work/$t" "$out/crashes/$t"
	if [[ ! -x $bin ]]; then
		not_ok "$t.replay # $bin not built"
		continue
	fi

	mapfile -t inputs < <(find "$here/regress/$t" "$here/corpus/$t" \
		-type f 2>/dev/null | sort)
	if [[ ${#inputs[@]} -eq 0 ]]; then
		not_ok "$t.replay # no inputs in regress/$t or corpus/$t"
	elif "$bin" -runs=1 "${inputs[@]}" >"$log.replay" 2>&1; then
		ok "$t.replay # ${#inputs[@]} inputs"
	else
		not_ok "$t.replay # see $log.replay"
		grep -E "invariant failed|ERROR: |runtime error|Running: " \
			"$log.replay" | tail -n 4 | sed 's/^/# /'
	fi

	fuzzed+=("$t")
done

# fuzz_one TARGET: fuzz it for $secs seconds; its result line goes to
# OUT/log/TARGET.result
fuzz_one() {
	local t=$1 bin=$out/$1 log=$out/log/$1 t0=$SECONDS rc s crash
	# Inputs found go to work/; corpus/ is only read. -timeout: a hang
	# (one input running 10 s) is a failure too.
	nice -n 10 "$bin" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$t/" ${FUZZ_FLAGS:-} \
		"$out/work/$t" "$here/corpus/$t" >"$log" 2>&1
	rc=$?
	s=$(stats "$log")
	if [[ $rc -eq 0 ]]; then
		echo "ok $t # $((SECONDS - t0)) s: ${s:-no statistics}"
	else
		crash=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -n 1)
		echo "not ok $t # exit $rc after $((SECONDS - t0)) s; input ${crash:-?}; log $log"
		grep -E "invariant failed|ERROR: |runtime error|SUMMARY" "$log" |
			head -n 4 | sed 's/^/# /'
	fi >"$log.result"
}

if [[ $secs -gt 0 ]]; then
	pids=()
	for t in "${fuzzed[@]}"; do
		rm -f "$out/log/$t.result"
		if [[ ${FUZZ_SERIAL:-0} == 1 ]]; then
			fuzz_one "$t"
		else
			fuzz_one "$t" &
			pids+=($!)
		fi
	done
	((${#pids[@]} == 0)) || wait "${pids[@]}"
	for t in "${fuzzed[@]}"; do
		r=$out/log/$t.result
		if [[ ! -s $r ]]; then
			not_ok "$t # no result"
			continue
		fi
		cat "$r"
		if [[ $(head -c 3 "$r") == "ok " ]]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
		fi
	done
fi

echo "fuzz: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
