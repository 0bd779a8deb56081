#!/bin/bash
# The main job: install prerequisites, build dray.ko and the rdma-core
# provider, boot the test VM, create dray0 and dray1 on a veth pair, show
# them with `rdma link show` and `ibv_devinfo -v`, and run ib_write_bw.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"

if [[ $EUID -eq 0 ]]; then
	scripts/install-deps.sh
else
	echo "demo: not root, skipping package installation" >&2
fi
make -s module
make -s provider
exec scripts/vm-run.sh --timeout 600 --module build/dray.ko -- \
	scripts/demo-guest.sh
