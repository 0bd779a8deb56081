#!/bin/bash
# Build dray's Debian packages into build/pkg (or OUTDIR):
#
#   dray-dkms             the module's sources and dkms.conf in
#                         /usr/src/dray-VERSION; DKMS builds dray.ko for
#                         every installed kernel with headers, and again on
#                         each kernel (headers) install
#   ibverbs-provider-dray libdray-rdmav34.so in Debian's libibverbs provider
#                         directory and /etc/libibverbs.d/dray.driver
#   dray-tools            /usr/sbin/dray-link and dray-link@.service
#
#   scripts/package.sh [OUTDIR]
#
# Runs debian/rules in the tree (the provider comes from the rdma-core 56.1
# build of scripts/build-rdma-core.sh, built first when missing). Needs the
# packages of scripts/install-deps.sh (debhelper, dh-dkms).
set -euo pipefail

here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=scripts/vm/lib.sh
. "$here/vm/lib.sh"

case ${1:-} in
-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

repo=$(cd "$here/.." && pwd -P)
out=${1:-$repo/build/pkg}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
cd "$repo"

dpkg-checkbuilddeps || die "missing build dependencies (scripts/install-deps.sh)"
rm -f "$out"/*.deb "$out"/*.ddeb
debian/rules clean >/dev/null
debian/rules build
fakeroot debian/rules binary PKGDEST="$out"
debian/rules clean >/dev/null
ls -1 "$out"
