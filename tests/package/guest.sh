#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The packages inside the test VM, as root (tests/package/run.sh boots it):
#
#   tests/package/guest.sh PKGDIR
#
# The VM's /lib/modules/KVER/updates holds the dray.ko that DKMS built for
# KVER in tests/package/host.sh (PKGDIR/dkms/KVER/dray.ko, staged there by
# vm-run.sh --module, as DKMS installs it under updates/dkms). Then:
#   1. modprobe finds that module by name, and it is not loaded yet;
#   2. dpkg -i ibverbs-provider-dray dray-tools;
#   3. the boot unit dray-link@.service: its ExecStart (read from the
#      installed unit file, %I replaced) for veth0 and veth1 loads dray and
#      creates dray0 and dray1; again, it changes nothing; a missing netdev
#      fails; DRAY_LINK_NAME names the link;
#   4. Debian's own ibv_devinfo, ibv_{rc,ud,uc}_pingpong, perftest and
#      ucx_info against them with a clean environment (group distro of
#      tests/rdma/run.sh, on the installed provider);
#   5. the unit's ExecStop deletes each link, and once more is no error;
#   6. dpkg --purge removes the provider: Debian's libibverbs finds no
#      dray device any more.
# The guest's root is an overlay: nothing of this reaches the host.
#
# Prints TAP lines and "package-vm: N passed, N failed, N skipped".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"
TAP_N=0 TAP_PASS=0 TAP_FAIL=0 TAP_SKIP=0

pkg=$(cd "${1:?usage: guest.sh PKGDIR}" && pwd -P)
kver=$(uname -r)
unit=/lib/systemd/system/dray-link@.service
clean="env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root"
read -r TAINT0 </proc/sys/kernel/tainted
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

finish() {
	echo "package-vm: $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
	[[ $TAP_FAIL -eq 0 ]]
	exit
}

check() {	# name, status, log file
	if [[ $2 -eq 0 ]]; then
		tap_ok "$1"
	else
		tap_fail "$1"
		[[ -z ${3:-} || ! -e ${3:-} ]] || show "$3" | tail -n 30
	fi
}

# unit_cmd Exec{Start,Stop} NETDEV: the unit's command line for NETDEV
unit_cmd() {
	local line
	line=$(sed -n "s/^$1=//p" "$unit")
	line=${line//%I/$2}
	echo "${line//%i/$2}"
}

# run_unit Exec{Start,Stop} NETDEV [VAR=VALUE...]: run it as systemd
# would, with a clean environment
run_unit() {
	local what=$1 ndev=$2 cmd
	shift 2
	cmd=$(unit_cmd "$what" "$ndev")
	# shellcheck disable=SC2086 # the unit's command line, split on blanks
	$clean "$@" $cmd
}

echo "# package-vm: kernel $kver, packages in $pkg"
ver=$(dpkg-deb -f "$pkg"/dray-tools_*_all.deb Version)
want_ko=$pkg/dkms/$kver/dray.ko
[[ -e $want_ko ]] || {
	tap_fail "package-vm: DKMS built a module for $kver (host.sh)"
	finish
}

# --- 1. the module, by name ---------------------------------------------------
f=$(modinfo -F filename dray 2>/dev/null)
[[ $f == /lib/modules/$kver/updates/* ]] && cmp -s "$f" "$want_ko" &&
	[[ ! -e /sys/module/dray ]]
check "package-vm: modprobe's dray is the module DKMS built for $kver ($f), not loaded yet" $?

# --- 2. install -----------------------------------------------------------------
dpkg -i "$pkg/ibverbs-provider-dray_${ver}_amd64.deb" \
	"$pkg/dray-tools_${ver}_all.deb" >"$log/install" 2>&1
check "package-vm: dpkg -i ibverbs-provider-dray dray-tools" $? "$log/install"
[[ -f $unit && -x /usr/sbin/dray-link ]]
check "package-vm: $unit and /usr/sbin/dray-link installed" $?

# --- 3. the boot unit -----------------------------------------------------------
veth_up >"$log/veth" 2>&1
run_unit ExecStart veth0 >"$log/start" 2>&1 &&
	run_unit ExecStart veth1 >>"$log/start" 2>&1 &&
	[[ -e /sys/module/dray && -e /sys/class/infiniband/dray0 &&
		-e /sys/class/infiniband/dray1 ]]
check "package-vm: ExecStart of dray-link@veth0 and @veth1 load dray and create dray0, dray1 ($(unit_cmd ExecStart veth0))" $? "$log/start"
$clean /usr/sbin/dray-link show >"$log/show" 2>&1
[[ $(sort "$log/show") == $'dray0 veth0\ndray1 veth1' ]]
check "package-vm: dray-link show: dray0 on veth0, dray1 on veth1" $? "$log/show"
run_unit ExecStart veth0 >"$log/again" 2>&1 &&
	[[ $(ls /sys/class/infiniband) == $'dray0\ndray1' ]]
check "package-vm: ExecStart again for veth0 succeeds and creates nothing" $? "$log/again"
! $clean /usr/sbin/dray-link add nosuch0 >"$log/nosuch" 2>&1 &&
	grep -q "no netdev nosuch0" "$log/nosuch"
check "package-vm: dray-link add on a missing netdev fails" $? "$log/nosuch"

# --- 4. Debian's tools on the installed provider --------------------------------
DRAY_DISTRO_PACKAGED=1 "$ROOT/tests/rdma/run.sh" dray distro >"$log/distro" 2>&1
# Its TAP lines become ours (its own kernel check is ours at the end).
while IFS= read -r line; do
	case $line in
	"ok "*" - kernel: "* | "not ok "*" - kernel: "*) ;;
	"ok "*) tap_ok "package-vm: ${line#ok * - }" ;;
	"not ok "*) tap_fail "package-vm: ${line#not ok * - }" ;;
	"# "*) echo "$line" ;;
	esac
done <"$log/distro"
grep -q "^ok .* distro: /usr/bin/ibv_devinfo" "$log/distro"
check "package-vm: the distro group ran on the installed provider" $? "$log/distro"

# --- 5. stop ----------------------------------------------------------------------
run_unit ExecStop veth1 >"$log/stop" 2>&1 &&
	[[ ! -e /sys/class/infiniband/dray1 && -e /sys/class/infiniband/dray0 ]]
check "package-vm: ExecStop of dray-link@veth1 deletes dray1 only" $? "$log/stop"
run_unit ExecStop veth1 >"$log/stop2" 2>&1
check "package-vm: ExecStop again for veth1 succeeds" $? "$log/stop2"
run_unit ExecStop veth0 >"$log/stop3" 2>&1 &&
	run_unit ExecStart veth0 DRAY_LINK_NAME=rdmatest >>"$log/stop3" 2>&1 &&
	[[ $(ls /sys/class/infiniband) == rdmatest ]] &&
	run_unit ExecStop veth0 >>"$log/stop3" 2>&1 &&
	[[ -z $(ls /sys/class/infiniband) ]]
check "package-vm: DRAY_LINK_NAME=rdmatest names the link; ExecStop deletes it" $? "$log/stop3"

# --- 6. purge -----------------------------------------------------------------------
run_unit ExecStart veth0 >"$log/purge" 2>&1
dpkg --purge ibverbs-provider-dray dray-tools >>"$log/purge" 2>&1 &&
	[[ ! -e /etc/libibverbs.d/dray.driver ]] &&
	! $clean /usr/bin/ibv_devinfo -d dray0 2>&1 | grep -q "hca_id:[[:space:]]*dray0"
check "package-vm: after dpkg --purge Debian's ibv_devinfo finds no dray0" $? "$log/purge"
[[ -e /sys/class/infiniband/dray0 ]] && rdma link delete dray0

kernel_clean "$TAINT0"
finish
