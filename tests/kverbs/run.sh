#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Inside the test VM: the kernel-verbs tests. Sets up dray0 and dray1 on
# the routed veth pair (tests/lib.sh), loads dray_ktest.ko, which
# runs its tests at load time and logs TAP lines, and prints them with
# "kverbs: N passed, N failed".
#
# Usage: run.sh [PATH/dray_ktest.ko]   (default build/ktest/dray_ktest.ko)
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
ko=${1:-$repo/build/ktest/dray_ktest.ko}
# shellcheck source=tests/lib.sh
. "$repo/tests/lib.sh"

fail_setup() {
	echo "not ok 1 - kverbs.setup # $1"
	echo "kverbs: 0 passed, 1 failed"
	exit 1
}

[[ -r $ko ]] || fail_setup "$ko missing (make ktest-mod)"
veth_up || fail_setup "veth pair"
rdma_up dray || fail_setup "dray0/dray1 not up"

dmesg -C
if ! insmod "$ko" dev_a=dray0 dev_b=dray1; then
	fail_setup "insmod $ko failed"
fi
params=/sys/module/dray_ktest/parameters
read -r passed <"$params/passed"
read -r failed <"$params/failed"

# The module's TAP lines, without the kernel's prefix.
dmesg | sed -n 's/^.*dray_ktest: //p' | sed 's/^\([0-9]\+\.\.[0-9]\+\)$/\1/'
rmmod dray_ktest

[[ $passed -gt 0 ]] || failed=$((failed + 1))
echo "kverbs: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
