#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The figures of the last scripts/test.sh run, from its logs in
# build/test/ (or DIR): what the fuzzers, the hostile process, the frame
# injector, the command fuzzer, fault injection, the faults under traffic
# and their kernel ULP got through, the kmemleak scans and the stages'
# results, as a Markdown list (Documentation/testing.md keeps one run's).
#
#   scripts/figures.sh [DIR]
#
# Reads only the logs; a figure whose stage did not run is left out.

set -u

dir=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)/build/test}
[[ -d $dir ]] || { echo "figures: no $dir (run scripts/test.sh)" >&2; exit 2; }

logs() {	# the logs of stages matching a glob
	local f
	for f in "$dir"/$1.log; do
		[[ -f $f ]] && echo "$f"
	done
}

say() {	# label, value (left out when empty)
	[[ -n $2 ]] && echo "- $1: $2"
}

mapfile -t fuzz < <(logs fuzz)
if [[ ${#fuzz[@]} -gt 0 ]]; then
	for t in fuzz_wire fuzz_resp fuzz_comp; do
		v=$(sed -En "s/^ok ([0-9]+ - )?$t # ([0-9]+) s: ([0-9]+) execs, .*cov ([0-9]+).*/\\3 inputs in \\2 s, coverage \\4 edges/p" "${fuzz[@]}" | tail -n 1)
		say "$t (libFuzzer)" "$v"
	done
fi

mapfile -t all < <(logs '*')
v=$(grep -hEo 'hostile: [0-9]+ rounds, [0-9]+ in error; [0-9]+ CQEs' "${all[@]}" |
	awk '{ r += $2; c += $7 } END { if (NR) printf "%d rounds, %d CQEs reaped, in %d runs\n", r, c, NR }')
say "hostile process (its rings rewritten under the device)" "$v"
v=$(grep -hEo 'hostile: storm: [0-9]+ WQEs \([0-9]+ garbage\)' "${all[@]}" |
	tr -d '(' | awk '{ w += $3; g += $5 } END { if (NR) printf "%d random WQEs (%d of them garbage), in %d runs\n", w, g, NR }')
say "hostile process's storm" "$v"
v=$(grep -hEo 'inject: [0-9]+ frames in' "${all[@]}" |
	awk '{ f += $2 } END { if (NR) printf "%d frames, in %d runs\n", f, NR }')
say "frames from the network (inject, beside integrity)" "$v"
v=$(grep -hEo 'abifuzz: [0-9]+ commands, [0-9]+ accepted' "${all[@]}" |
	awk '{ c += $2; a += $4 } END { if (NR) printf "%d commands, %d accepted, in %d runs\n", c, a, NR }')
say "abifuzz (uverbs command sequences)" "$v"
v=$(grep -hEo '[0-9]+ fault points(,|;) [0-9]+ failed' "${all[@]}" |
	awk '{ p += $1; f += $4 } END { if (NR) printf "%d fault points walked, %d of them failing the call, in %d walks\n", p, f, NR }')
say "failnth (fail-nth)" "$v"
v=$(grep -hEo '^ok [0-9]+ - faults: .*, [0-9]+ cycles under traffic' "${all[@]}" |
	sed -E 's/.*, ([0-9]+) cycles under traffic/\1/' |
	awk '{ c += $1 } END { if (NR) printf "%d cycles passed (link delete, netdev removal, rmmod, down and up, MTU change), in %d fault-and-stage runs\n", c, NR }')
say "faults under traffic" "$v"
v=$(grep -hEo '^# kernel ULP before its unload: starts [0-9]+ stops [0-9]+ posted [0-9]+ ok [0-9]+ flushed [0-9]+' "${all[@]}" |
	awk '{ s += $10; p += $12; o += $14; f += $16 } END { if (NR) printf "%d QP pairs drained at a removal, %d WRs posted, %d completed and checked, %d flushed, in %d runs\n", s, p, o, f, NR }')
say "the kernel ULP through the faults" "$v"
n=$(cat "${all[@]}" | grep -cE 'vm-run.sh: kmemleak: ')
if [[ $n -gt 0 ]]; then
	bad=$(cat "${all[@]}" | grep -cE 'vm-run.sh: kmemleak: [0-9]+ leak\(s\) attributed to dray')
	say "kmemleak scans (one after each debug-kernel VM run)" "$n, $bad with a leak of dray's"
fi

echo "- stages:"
for f in "${all[@]}"; do
	line=$(grep -E '^(# )?[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "$f" | tail -n 1)
	[[ -n $line ]] && echo "  - $(basename "$f" .log): ${line#\# }"
done
exit 0
