#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build rdma-core 56.1 with the dray provider dropped into its tree.
#
#   scripts/build-rdma-core.sh
#
# Steps, each skipped when already done:
#   1. fetch rdma-core_56.1.orig.tar.gz with apt-get source into
#      ${DRAY_CACHE:-$HOME/.cache/dray}, verified by its SHA-256;
#   2. extract it to <repo>/build/rdma-core;
#   3. insert the provider: providers/dray -> <repo>/userspace/providers/dray,
#      kernel-headers/rdma/dray-abi.h from <repo>/include/uapi/rdma, and the
#      CMake edits that register both;
#   4. configure (cmake -GNinja, IN_PLACE, with pyverbs) and run ninja.
#
# A re-run only runs ninja, so a provider change rebuilds just the provider.
# The outputs are used through scripts/rdma-env.sh.

set -euo pipefail

RDMA_CORE_VERSION=56.1
RDMA_CORE_DEB_VERSION=56.1-1
RDMA_CORE_TARBALL=rdma-core_${RDMA_CORE_VERSION}.orig.tar.gz
RDMA_CORE_SHA256=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8
# The interpreter that has Cython; a python3 earlier on PATH may not.
PYTHON=/usr/bin/python3

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=${DRAY_CACHE:-$HOME/.cache/dray}
SRC=$REPO/build/rdma-core
BLD=$SRC/build
PROVIDER=$REPO/userspace/providers/dray
ABI_HDR=$REPO/include/uapi/rdma/dray-abi.h

die() {
	echo "build-rdma-core: error: $*" >&2
	exit 1
}

log() {
	echo "build-rdma-core: $*"
}

sha256_ok() {
	[ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$RDMA_CORE_SHA256" ]
}

fetch_tarball() {
	local tarball=$CACHE/$RDMA_CORE_TARBALL
	local rc=0

	if sha256_ok "$tarball"; then
		log "using cached $tarball"
		return
	fi

	mkdir -p "$CACHE"
	rm -f "$tarball"
	log "fetching $RDMA_CORE_TARBALL with apt-get source"
	# The .dsc is not always served: apt-get then exits 100 after it
	# has fetched the orig tarball. The checksum below is the verdict.
	(cd "$CACHE" &&
	 apt-get source --download-only "rdma-core=$RDMA_CORE_DEB_VERSION") ||
		rc=$?
	[ -f "$tarball" ] ||
		die "apt-get source (exit $rc) did not fetch $RDMA_CORE_TARBALL; is a deb-src entry for trixie configured (scripts/install-deps.sh) and 'apt-get update' done?"
	if ! sha256_ok "$tarball"; then
		mv -f "$tarball" "$tarball.bad"
		die "SHA-256 mismatch for $RDMA_CORE_TARBALL (moved to $tarball.bad): expected $RDMA_CORE_SHA256, got $(sha256sum "$tarball.bad" | cut -d' ' -f1)"
	fi
	[ "$rc" -eq 0 ] ||
		log "apt-get source exited $rc, but the tarball checksum is correct"
}

extract_tree() {
	local tmp=$SRC.tmp

	if [ -f "$SRC/.dray-extracted" ]; then
		return
	fi
	[ ! -e "$SRC" ] ||
		die "$SRC exists but is not a complete extraction; remove it"
	log "extracting to $SRC"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -xzf "$CACHE/$RDMA_CORE_TARBALL" -C "$tmp" --strip-components=1
	[ -f "$tmp/CMakeLists.txt" ] || die "unexpected tarball layout"
	touch "$tmp/.dray-extracted"
	mv "$tmp" "$SRC"
}

# Replace a file only when its content changes, so ninja sees no new mtime.
install_if_changed() {
	if ! cmp -s "$1" "$2"; then
		log "updating ${2#"$REPO"/}"
		cp "$1" "$2"
	fi
}

insert_provider() {
	local khdr=$SRC/kernel-headers/CMakeLists.txt
	local top=$SRC/CMakeLists.txt
	local n

	[ -f "$PROVIDER/CMakeLists.txt" ] || die "missing $PROVIDER/CMakeLists.txt"
	[ -f "$ABI_HDR" ] || die "missing $ABI_HDR"

	# The provider directory is the repo's, through a symlink.
	if [ "$(readlink "$SRC/providers/dray" 2>/dev/null)" != "$PROVIDER" ]; then
		[ ! -e "$SRC/providers/dray" ] || [ -L "$SRC/providers/dray" ] ||
			die "$SRC/providers/dray exists and is not a symlink"
		ln -sfn "$PROVIDER" "$SRC/providers/dray"
	fi

	# The repo header is the only source of truth: re-copied when changed.
	install_if_changed "$ABI_HDR" "$SRC/kernel-headers/rdma/dray-abi.h"

	# kernel-headers/CMakeLists.txt: the header is published and turned
	# into kernel-abi/dray-abi.h; both lists hold efa-abi.h, so insert it
	# before that entry, in alphabetical order.
	n=$(grep -c '^  rdma/dray-abi\.h$' "$khdr" || true)
	if [ "$n" -eq 0 ]; then
		[ "$(grep -c '^  rdma/efa-abi\.h$' "$khdr")" -eq 2 ] ||
			die "$khdr: expected rdma/efa-abi.h in exactly two lists"
		sed -i 's|^  rdma/efa-abi\.h$|  rdma/dray-abi.h\n&|' "$khdr"
		log "added rdma/dray-abi.h to kernel-headers/CMakeLists.txt"
	elif [ "$n" -ne 2 ]; then
		die "$khdr: rdma/dray-abi.h listed $n times, expected 2"
	fi

	# Top-level CMakeLists.txt: next to the other DMA-capable providers.
	if ! grep -q '^add_subdirectory(providers/dray)$' "$top"; then
		grep -q '^add_subdirectory(providers/vmw_pvrdma)$' "$top" ||
			die "$top: anchor add_subdirectory(providers/vmw_pvrdma) not found"
		sed -i 's|^add_subdirectory(providers/vmw_pvrdma)$|&\nadd_subdirectory(providers/dray)|' "$top"
		log "added add_subdirectory(providers/dray) to CMakeLists.txt"
	fi
}

pyverbs_enabled() {
	grep -q 'pyverbs/device' "$BLD/build.ninja"
}

configure() {
	local cfglog=$BLD/configure.log

	if [ -f "$BLD/build.ninja" ]; then
		# ninja re-runs cmake by itself when a CMakeLists.txt changes.
		pyverbs_enabled ||
			die "$BLD is configured without pyverbs; remove it and re-run"
		return
	fi
	[ -x "$PYTHON" ] || die "$PYTHON not found"
	"$PYTHON" -c 'import Cython' 2>/dev/null ||
		die "$PYTHON cannot import Cython (install cython3)"

	log "configuring in $BLD (log: ${cfglog#"$REPO"/})"
	mkdir -p "$BLD"
	if ! (cd "$BLD" &&
	      cmake -GNinja -DIN_PLACE=1 -DNO_MAN_PAGES=1 \
		    -DPYTHON_EXECUTABLE="$PYTHON" .. >"$cfglog" 2>&1); then
		cat "$cfglog" >&2
		rm -f "$BLD/build.ninja"
		die "cmake failed"
	fi
	sed -n '/Missing Optional Items:/,$p' "$cfglog"
	if grep -q 'cython NOT found' "$cfglog" || ! pyverbs_enabled; then
		rm -f "$BLD/build.ninja"
		die "pyverbs is disabled in the configuration (see $cfglog)"
	fi
	log "pyverbs enabled"
}

main() {
	command -v cmake >/dev/null || die "cmake not installed"
	command -v ninja >/dev/null || die "ninja not installed (ninja-build)"

	if [ ! -f "$SRC/.dray-extracted" ]; then
		fetch_tarball
		extract_tree
	fi
	insert_provider
	configure
	log "ninja -C ${BLD#"$REPO"/}"
	ninja -C "$BLD"
	[ -f "$BLD/lib/libdray-rdmav34.so" ] || die "libdray-rdmav34.so not built"
	[ -f "$BLD/etc/libibverbs.d/dray.driver" ] || die "dray.driver not written"
	log "done: $BLD/lib/libdray-rdmav34.so"
}

main "$@"
