#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The Debian packages end to end, as root on the host: build them
# (scripts/package.sh), install, upgrade the kernel and purge in a
# throw-away root (tests/package/host.sh), then install them in the test
# VM and run Debian's tools against dray with the module DKMS built
# (tests/package/guest.sh), once on each kernel it was built for: Debian's
# 6.1 and the 6.12 of the kernel upgrade.
#
#   tests/package/run.sh
#
# Ends with "package: N passed, N failed, N skipped".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
pkg=$ROOT/build/pkg
log=$ROOT/build/test/package
mkdir -p "$log"
cd "$ROOT" || exit 1

pass=0 fail=0 skip=0
# add LOG: add up its last "NAME: N passed, N failed, N skipped" line;
# none counts as one failure
add() {
	local line p f s
	line=$(grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n1)
	if [[ -z $line ]]; then
		echo "not ok - ${1##*/}: no summary"
		fail=$((fail + 1))
		return
	fi
	read -r p f s < <(sed -E 's/^[a-z-]+: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/' <<<"$line")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + ${s:-0}))
}

if scripts/package.sh "$pkg" >"$log/build" 2>&1; then
	echo "ok - package: scripts/package.sh built $(ls "$pkg"/*.deb | wc -l) packages"
	pass=$((pass + 1))
	tests/package/host.sh "$pkg" 2>&1 | tee "$log/host"
	add "$log/host"
	# Each kernel DKMS built for boots with its module.
	for k in debian 6.12; do
		kver=$(scripts/vm-kernel.sh --kernel "$k" | sed -n 's/^KVER=//p')
		scripts/vm-run.sh --kernel "$k" --timeout 900 \
			--module "$pkg/dkms/$kver/dray.ko" -- \
			tests/package/guest.sh "$pkg" 2>&1 | tee "$log/vm-$k"
		add "$log/vm-$k"
	done
else
	echo "not ok - package: scripts/package.sh"
	sed 's/^/# /' "$log/build" | tail -n 30
	fail=$((fail + 1))
fi
echo "package: $pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
