#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the dray kernel selftests. Inside the test VM, as root, with dray.ko
# installed (scripts/vm-run.sh --module build/dray.ko) and the rdma-core
# build's environment (eval "$(scripts/rdma-env.sh)"):
#
#   tests/selftests/run.sh [TEST...]
#
# TEST names a binary in build/selftests (default: all of them). Prints
# each binary's TAP output and ends with
#
#   selftests: N passed, N failed, N skipped
#
# counting test cases ("ok"/"not ok" lines); a binary that crashes or
# stops early counts each missing case (at least one) as failed. Exits
# non-zero on any failure. Between binaries the VM is put back into a
# clean state: no dray device, no test netdev.

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
BIN_DIR=${DRAY_SELFTESTS_DIR:-$ROOT/build/selftests}
ALL_TESTS="dray_device_test dray_port_test dray_ucontext_test dray_link_test dray_lifecycle_test"

if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: must run as root, inside the test VM" >&2
	exit 2
fi

for m in veth bridge ib_uverbs; do
	if ! modprobe "$m"; then
		echo "run.sh: modprobe $m failed" >&2
		exit 2
	fi
done

# Remove whatever a test left behind. Only starts programs when needed.
clean_vm() {
	local d

	for d in /sys/class/infiniband/dray*; do
		[ -e "$d" ] && rdma link delete "${d##*/}"
	done
	for d in veth0 veth1 br0; do
		[ -e "/sys/class/net/$d" ] && ip link del "$d" 2>/dev/null
	done
	# Devices of a removed netdev go away asynchronously.
	for _ in $(seq 100); do
		compgen -G '/sys/class/infiniband/dray*' >/dev/null ||
			compgen -G '/sys/bus/platform/devices/dray.*' >/dev/null ||
			return 0
		sleep 0.1
	done
	return 1
}

pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS

for t in ${*:-$ALL_TESTS}; do
	bin=$BIN_DIR/$t
	echo "# selftest: $t"
	if [ ! -x "$bin" ]; then
		echo "not ok 1 $t # binary missing: $bin"
		fail=$((fail + 1))
		continue
	fi
	if ! clean_vm; then
		echo "# run.sh: cannot clean the VM before $t"
	fi
	t0=$SECONDS
	"$bin" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}

	planned=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | head -n1)
	p=$(grep -Ec '^ok [0-9]+' "$log")
	s=$(grep -Ec '^ok [0-9]+.*# SKIP' "$log")
	f=$(grep -Ec '^not ok [0-9]+' "$log")
	p=$((p - s))
	reported=$((p + s + f))
	missing=$(( ${planned:-0} > reported ? ${planned:-0} - reported : 0 ))
	# ksft exit codes: 0 pass, 4 skip; anything else is a failure.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$f" -eq 0 ] &&
	   [ "$missing" -eq 0 ]; then
		missing=1
	fi
	if [ "$missing" -gt 0 ]; then
		echo "# run.sh: $t exited with status $rc, $missing test case(s) without a result counted as failed"
	fi
	pass=$((pass + p))
	skip=$((skip + s))
	fail=$((fail + f + missing))
	echo "# $t: $((SECONDS - t0)) s"

	if ! clean_vm; then
		echo "# run.sh: dray devices left after $t:" \
			/sys/class/infiniband/dray* /sys/bus/platform/devices/dray.*
		fail=$((fail + 1))
	fi
done

echo "# total: $((SECONDS - start)) s"
echo "selftests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
