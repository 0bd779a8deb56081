#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Print the environment that makes programs use the rdma-core build from
# scripts/build-rdma-core.sh (libibverbs 56.1 with the dray provider):
#
#   eval "$(scripts/rdma-env.sh)"
#
# PATH          build/bin first (rdma-core's own tools)
# LD_LIBRARY_PATH  build/lib first: Debian's perftest, ibverbs-utils, ...
#               then load our libibverbs.so.1, which reads the IN_PLACE
#               provider list in build/etc/libibverbs.d (dray.driver)
# PYTHONPATH    build/python first: pyverbs, built for /usr/bin/python3
#
# Each directory is put first once; re-evaluating does not stack copies.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BLD=$REPO/build/rdma-core/build

if [ ! -e "$BLD/lib/libibverbs.so.1" ] || [ ! -e "$BLD/etc/libibverbs.d/dray.driver" ]; then
	echo "rdma-env: no rdma-core build in $BLD; run scripts/build-rdma-core.sh" >&2
	exit 1
fi

# prepend DIR LIST: DIR, then LIST without any DIR entries (and no empties).
prepend() {
	local dir=$1 list=$2 out=$1 ent
	local IFS=:

	set -f

	for ent in $list; do
		[ -n "$ent" ] && [ "$ent" != "$dir" ] && out=$out:$ent
	done
	printf '%s' "$out"
}

emit() {
	printf 'export %s=%q\n' "$1" "$2"
}

emit PATH "$(prepend "$BLD/bin" "${PATH:-}")"
emit LD_LIBRARY_PATH "$(prepend "$BLD/lib" "${LD_LIBRARY_PATH:-}")"
emit PYTHONPATH "$(prepend "$BLD/python" "${PYTHONPATH:-}")"
