#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The packages on the host, as root, in a throw-away root: an overlay of
# the host's / with a tmpfs upper layer, in a mount namespace of its own,
# so nothing reaches the host's own root (its dpkg database, /usr/src,
# /lib/modules, /var/lib/dkms).
#
#   tests/package/host.sh PKGDIR
#
# In that root, with the packages of scripts/package.sh from PKGDIR:
#   1. dpkg -i dray-dkms dray-tools ibverbs-provider-dray: DKMS builds
#      dray.ko for the installed kernel with headers (Debian's 6.1 of the
#      test VM) and installs it in /lib/modules/KVER/updates/dkms, where
#      modprobe finds it by name;
#   2. a kernel upgrade: dpkg -i of Debian 12's 6.12 image and headers
#      (the packages scripts/vm-kernel.sh downloaded; the image's need of
#      an initramfs generator ignored): the kernel's install hooks make
#      DKMS build and install dray.ko for 6.12 too;
#   3. dpkg --purge dray-dkms: DKMS removes the module of both kernels.
# The modules DKMS built are copied to PKGDIR/dkms/KVER/dray.ko, for the
# guest part (tests/package/guest.sh) to load.
#
# Prints TAP lines and "package-host: N passed, N failed, N skipped".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"
TAP_N=0 TAP_PASS=0 TAP_FAIL=0 TAP_SKIP=0

pkg=$(cd "${1:?usage: host.sh PKGDIR}" && pwd -P)
cache=${DRAY_CACHE:-$HOME/.cache/dray}

if [[ $(id -u) -ne 0 ]]; then
	echo "host.sh: must run as root" >&2
	exit 2
fi

# First the host's own namespace: find the packages, then run this
# script again in a mount namespace of its own.
if [[ -z ${DRAY_PKG_NS:-} ]]; then
	kver61=$("$ROOT/scripts/kver.sh")
	env612=$("$ROOT/scripts/vm-kernel.sh" --kernel 6.12) || {
		echo "host.sh: scripts/vm-kernel.sh --kernel 6.12 failed" >&2
		exit 1
	}
	kver612=$(sed -n 's/^KVER=//p' <<<"$env612")
	base612=${kver612%-amd64}
	debs612=()
	for p in "linux-image-$kver612" "linux-headers-$kver612" \
		"linux-headers-$base612-common" "linux-kbuild-$base612"; do
		f=$(compgen -G "$cache/debs/${p}_*.deb" | sort -V | tail -n1)
		[[ -n $f ]] || { echo "host.sh: no $p package in $cache/debs" >&2; exit 1; }
		debs612+=("$f")
	done
	rm -rf "$pkg/dkms"
	mkdir -p "$pkg/dkms"
	DRAY_PKG_NS=1 KVER61=$kver61 KVER612=$kver612 DEBS612="${debs612[*]}" \
		exec unshare --mount --propagation private "$0" "$pkg"
fi

log=$(mktemp -d)
top=$(mktemp -d /run/dray-pkg.XXXXXX)
mount -t tmpfs -o size=4g tmpfs "$top"
mkdir "$top/upper" "$top/work" "$top/root"
R=$top/root
mount -t overlay overlay -o "lowerdir=/,upperdir=$top/upper,workdir=$top/work" "$R"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount --rbind /sys "$R/sys"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
mkdir -p "$R/tmp/pkg" "$R/tmp/debs"
mount --bind "$pkg" "$R/tmp/pkg"
for f in $DEBS612; do
	cp "$f" "$R/tmp/debs/"
done

# in_root CMD...: CMD in the throw-away root, with a clean environment.
in_root() {
	chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive "$@"
}

check() {	# name, status, log file
	if [[ $2 -eq 0 ]]; then
		tap_ok "$1"
	else
		tap_fail "$1"
		[[ -z ${3:-} ]] || show "$3" | tail -n 30
	fi
}

ver=$(dpkg-deb -f "$pkg"/dray-dkms_*_all.deb Version)
echo "# package-host: dray $ver, kernels $KVER61 and $KVER612 (throw-away root $R)"

# dkms_state KVER: "installed" when DKMS reports dray/VER installed there
dkms_state() {
	in_root dkms status -m dray -v "$ver" -k "$1" 2>/dev/null |
		sed -n "s/^dray\/$ver, $1, [^:]*: //p"
}

# modprobe_finds KVER: modprobe resolves "dray" to DKMS's module for KVER
# and that module was built for KVER.
modprobe_finds() {
	local f v
	f=$(in_root modinfo -k "$1" -F filename dray 2>/dev/null)
	v=$(in_root modinfo -k "$1" -F vermagic dray 2>/dev/null)
	echo "# $1: $f ($v)"
	[[ $f == "/lib/modules/$1/updates/dkms/dray.ko"* && $v == "$1 "* ]]
}

# --- 1. install ---------------------------------------------------------------
in_root dpkg -i /tmp/pkg/dray-dkms_"$ver"_all.deb \
	/tmp/pkg/dray-tools_"$ver"_all.deb \
	/tmp/pkg/ibverbs-provider-dray_"$ver"_amd64.deb >"$log/install" 2>&1
check "package-host: dpkg -i dray-dkms dray-tools ibverbs-provider-dray" $? "$log/install"
grep -E "Building|Done|Skipped" "$log/install" | sed 's/^/# /'
[[ $(dkms_state "$KVER61") == installed ]]
check "package-host: dkms status: dray/$ver installed for $KVER61" $? "$log/install"
modprobe_finds "$KVER61"
check "package-host: modprobe finds DKMS's dray.ko for $KVER61 by name" $?
in_root test -x /usr/sbin/dray-link -a -f /lib/systemd/system/dray-link@.service \
	-a -f /etc/libibverbs.d/dray.driver \
	-a -f /usr/lib/x86_64-linux-gnu/libibverbs/libdray-rdmav34.so
check "package-host: dray-link, its unit and the provider are installed" $?
# The unit's Documentation= files exist (systemctl help opens them).
docs_present() {
	local uri
	for uri in $(sed -n 's/^Documentation=//p' "$R/lib/systemd/system/dray-link@.service"); do
		[[ $uri != file:* || -f $R${uri#file:} ]] || return 1
	done
}
docs_present
check "package-host: the files the unit names as its documentation are installed" $?
# A packaged library must not search the build tree.
! in_root readelf -d /usr/lib/x86_64-linux-gnu/libibverbs/libdray-rdmav34.so |
	grep -q -E "RPATH|RUNPATH"
check "package-host: the installed provider has no RPATH/RUNPATH" $?
# keep_module KVER: DKMS's module for KVER, for the guest part
# (uncompressed: DKMS compresses it as the kernel's own modules are, xz
# for 6.12)
keep_module() {
	local f
	[[ $(dkms_state "$1") == installed ]] || return 0
	f=$(in_root modinfo -k "$1" -F filename dray)
	mkdir -p "$pkg/dkms/$1"
	case $f in
	*.xz) in_root xz -dc "$f" ;;
	*) in_root cat "$f" ;;
	esac >"$pkg/dkms/$1/dray.ko"
}
keep_module "$KVER61"

# --- 2. kernel upgrade ----------------------------------------------------------
# The image's one dependency this root lacks is an initramfs generator
# (initramfs-tools): the VM boots its own initramfs.
# shellcheck disable=SC2046 # DEBS612 is a list
in_root dpkg --ignore-depends=initramfs-tools,linux-initramfs-tool -i $(for f in $DEBS612; do echo "/tmp/debs/${f##*/}"; done) \
	>"$log/upgrade" 2>&1
check "package-host: kernel upgrade: dpkg -i linux-image/headers-$KVER612" $? "$log/upgrade"
grep -E "dkms|Building|Done" "$log/upgrade" | sed 's/^/# /' | head -n 8
[[ $(dkms_state "$KVER612") == installed ]]
check "package-host: DKMS built and installed dray.ko for the new kernel $KVER612" $? "$log/upgrade"
modprobe_finds "$KVER612"
check "package-host: modprobe finds DKMS's dray.ko for $KVER612 by name" $?
[[ $(dkms_state "$KVER61") == installed ]]
check "package-host: the module of $KVER61 is still installed" $?
keep_module "$KVER612"

# --- 3. purge -------------------------------------------------------------------
in_root dpkg --purge dray-dkms >"$log/purge" 2>&1
check "package-host: dpkg --purge dray-dkms" $? "$log/purge"
[[ -z $(in_root dkms status -m dray 2>/dev/null) ]] &&
	! in_root test -e "/lib/modules/$KVER61/updates/dkms/dray.ko" &&
	! in_root test -e "/lib/modules/$KVER612/updates/dkms/dray.ko" &&
	! in_root test -e "/usr/src/dray-$ver" &&
	! in_root modinfo -k "$KVER61" dray >/dev/null 2>&1
check "package-host: after the purge DKMS has no dray, no kernel has its module, /usr/src/dray-$ver is gone" $? "$log/purge"
in_root dpkg --purge dray-tools ibverbs-provider-dray >>"$log/purge" 2>&1 &&
	! in_root test -e /etc/libibverbs.d/dray.driver
check "package-host: dpkg --purge dray-tools ibverbs-provider-dray" $? "$log/purge"

umount -R "$R" 2>/dev/null || umount -l "$R"
umount "$top"
rmdir "$top"
rm -rf "$log"
echo "package-host: $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
[[ $TAP_FAIL -eq 0 ]]
