#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rdma-core's pyverbs test suite (issue 4, section 2), inside the test VM
# as root:
#
#   tests/pyverbs/run.sh [dray|rxe] [TEST...]
#
# Creates the routed veth pair (veth0 10.0.0.1 <-> veth1 10.0.0.2) with
# one device of the kind on each end (dray0/dray1 or rxe0/rxe1; see
# tests/lib.sh) and runs the suite of the rdma-core tree the build
# uses (build/rdma-core/tests, unpatched) against the first device, with
# the IPv4 RoCEv2 GID, as `run_tests.py --dev DEV --gid N -v [TEST...]`
# would (TEST: e.g. tests.test_qp or tests.test_qp.QPTest.test_modify_qp).
# tests/pyverbs/suite.py adds a per-test time limit and a result file;
# tests/pyverbs/tap.py turns that into TAP lines ending with
# "pyverbs: N passed, N failed, N skipped". Exits non-zero if anything
# failed. For dray, a skip that tests/pyverbs/skips.txt (the reviewed list)
# does not hold, or holds with another reason, gets a comment line.
#
# If the Python process dies inside a test (a crash, or the whole-run
# limit), that test is reported as an error and the run resumes after it.
#
# Environment:
#   DRAY_PYVERBS_TIMEOUT  seconds per test (default 240)
#   DRAY_PYVERBS_LOG=1    also print the suite's own verbose unittest
#                         output (as "# | " lines) before the TAP lines
#   DRAY_PYVERBS_SUITE    the suite's directory (default build/rdma-core/tests)
# The rdma-core build's environment (scripts/rdma-env.sh) is loaded unless
# LD_LIBRARY_PATH already names an rdma-core build.

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"

kind=${1:-dray}
case $kind in
dray | rxe) shift || true ;;
*) kind=dray ;;
esac
PY=/usr/bin/python3	# the interpreter pyverbs was built for
SUITE=${DRAY_PYVERBS_SUITE:-$ROOT/build/rdma-core/tests}
PER_TEST=${DRAY_PYVERBS_TIMEOUT:-240}

die() {
	echo "not ok 1 - pyverbs.setup # $*"
	echo "pyverbs: 0 passed, 1 failed, 0 skipped"
	exit 1
}

[[ $(id -u) -eq 0 ]] || { echo "run.sh: must run as root, inside the test VM" >&2; exit 2; }
if [[ ${LD_LIBRARY_PATH:-} != *rdma-core/build/lib* ]]; then
	env_out=$("$ROOT/scripts/rdma-env.sh") || die "no rdma-core build (make provider)"
	eval "$env_out"
fi
[[ -f $SUITE/run_tests.py ]] || die "no suite in $SUITE"
"$PY" -c 'import pyverbs.device' 2>/dev/null ||
	die "pyverbs does not import (make provider; Cython for $PY?)"

read -r DEV_A DEV_B <<<"$(rdma_devs "$kind")"
veth_up || die "veth pair"
rdma_up "$kind" || die "$DEV_A/$DEV_B"
GID=$(gid_v4 "$DEV_A") || die "$DEV_A has no IPv4 RoCEv2 GID"
echo "# $kind: suite $SUITE on $DEV_A (netdev veth0), GID index $GID, $PER_TEST s per test"

# A few 2 MiB huge pages, so that the huge-page tests get as far as
# asking the device (best effort; they skip without).
sysctl -qw vm.nr_hugepages=16 2>/dev/null

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RES=$WORK/results.jsonl
LOG=$WORK/unittest.log

# The suite writes temporary files and __pycache__ next to itself; in the
# VM the tree is a tmpfs overlay, so nothing reaches the host.
cd "$WORK" || die "cd $WORK"
start=$SECONDS
for attempt in 1 2 3 4 5 6 7 8; do
	"$PY" "$HERE/suite.py" --suite "$SUITE" --results "$RES" \
		--timeout "$PER_TEST" -- --dev "$DEV_A" --gid "$GID" -v "$@" \
		>>"$LOG" 2>&1 </dev/null
	rc=$?
	grep -q '"ev": "done"' "$RES" 2>/dev/null && break
	echo "# suite process exited $rc before the end (attempt $attempt); resuming after the test it was in"
done
echo "# suite ran $((SECONDS - start)) s"

if [[ ${DRAY_PYVERBS_LOG:-0} == 1 ]]; then
	sed 's/^/# | /' "$LOG"
fi
dmesg | grep -iE 'dray|rxe|rdma' | grep -iE 'error|warn|fail' | tail -20 | sed 's/^/# dmesg: /'
known=()
[[ $kind == dray && -f $HERE/skips.txt ]] && known=(--known-skips "$HERE/skips.txt")
"$PY" "$HERE/tap.py" "$RES" "${known[@]}"
