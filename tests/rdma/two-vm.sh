#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Two VMs joined by a QEMU network (a UDP socket pair on the host), one
# RoCE device each on its eth0; ib_write_bw and ib_send_lat run across.
#
#   tests/rdma/two-vm.sh [--module DRAY.KO] [dray|rxe]      (host)
#
# Boots both VMs with scripts/vm-run.sh --net-socket (1 vCPU each; the
# harness DRAY_VM_RUN overrides the path), each running this script with
# --guest: VM 1 (10.1.0.1) is the perftest server, VM 2 (10.1.0.2) the
# client; perftest's TCP exchange goes over the same virtio-net link.
# For dray, --module defaults to build/dray.ko. Prints the guests' output
# and ends with "two-vm: N passed, N failed"; exits non-zero on failure.
#
#   two-vm.sh --guest dray|rxe server|client                (in a VM)

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
SRV_IP=10.1.0.1
CLI_IP=10.1.0.2
PORT_BW=18515
PORT_LAT=18516
ITERS=${DRAY_TWO_VM_ITERS:-1000}

# ----------------------------------------------------------------- guest --
guest() {
	local role=$1 kind=$2 dev my_ip peer_ip gid rc=0 s

	if [[ ${LD_LIBRARY_PATH:-} != *rdma-core/build/lib* ]]; then
		s=$("$ROOT/scripts/rdma-env.sh" 2>/dev/null) && eval "$s"
	fi
	# shellcheck source=tests/lib.sh
	. "$ROOT/tests/lib.sh"

	if [[ $role == server ]]; then
		my_ip=$SRV_IP peer_ip=$CLI_IP
	else
		my_ip=$CLI_IP peer_ip=$SRV_IP
	fi
	if ! eth_link_up "$kind" "$my_ip"; then
		echo "not ok - $role: $kind device on eth0"
		return 1
	fi
	dev=$LINK_DEV gid=$LINK_GID
	echo "# $role: $dev on eth0 $my_ip, GID index $gid"

	local common="-d $dev -x $gid -F"
	if [[ $role == server ]]; then
		for t in "ib_write_bw $PORT_BW" "ib_send_lat $PORT_LAT"; do
			read -r prog port extra <<<"$t"
			# shellcheck disable=SC2086
			if timeout 300 $prog $common -n "$ITERS" -p "$port" $extra >/tmp/out 2>&1; then
				echo "ok - $prog server"
			else
				echo "not ok - $prog server (exit $?)"
				rc=1
			fi
			sed 's/^/# /' /tmp/out
		done
		return $rc
	fi

	for t in "ib_write_bw $PORT_BW - bw" "ib_send_lat $PORT_LAT - lat"; do
		read -r prog port extra kindf <<<"$t"
		[[ $extra == - ]] && extra=''
		# the server may not listen yet: retry the connection
		local ok=0 tries
		for ((tries = 0; tries < 60; tries++)); do
			# shellcheck disable=SC2086
			timeout 300 $prog $common -n "$ITERS" -p "$port" $extra "$peer_ip" >/tmp/out 2>&1
			s=$?
			if [[ $s -eq 0 ]]; then
				ok=1
				break
			fi
			grep -qE "Couldn't connect|Unable to open|connect" /tmp/out || break
			sleep 1
		done
		sed 's/^/# /' /tmp/out
		# completion is what counts here; perftest's figures can be
		# inf when its clock calibration fails under TCG: say so only
		if [[ $ok -eq 1 ]] && ! perf_sane /tmp/out "$kindf" >/dev/null; then
			echo "# $prog: figures not sane: $(grep -m1 Correlation /tmp/out)"
		fi
		if [[ $ok -eq 1 ]] && [[ -n $(perf_figures /tmp/out "$kindf") ]]; then
			echo "ok - $prog client"
		else
			echo "not ok - $prog client (exit $s)"
			rc=1
		fi
	done
	return $rc
}

if [[ ${1:-} == --guest ]]; then
	guest "$3" "$2"
	exit $?
fi

# ------------------------------------------------------------------ host --
# shellcheck source=scripts/vm/lib.sh
. "$ROOT/scripts/vm/lib.sh"
module=''
kind=dray
while [[ $# -gt 0 ]]; do
	case $1 in
	--module) module=$2; shift 2 ;;
	dray | rxe) kind=$1; shift ;;
	-h | --help) sed -n '3,15p' "$0"; exit 0 ;;
	*) echo "two-vm: unknown argument $1" >&2; exit 2 ;;
	esac
done
VM_RUN=${DRAY_VM_RUN:-$ROOT/scripts/vm-run.sh}
mods=()
if [[ $kind == dray ]]; then
	module=${module:-$ROOT/build/dray.ko}
	mods=(--module "$module")
fi

out=$ROOT/build/two-vm
cd "$ROOT" || exit 2
vm_pair "$out" "$VM_RUN" "${mods[@]}" -- bash "$HERE/two-vm.sh" --guest "$kind"
rc1=$VM_PAIR_RC1 rc2=$VM_PAIR_RC2

pass=0 fail=0
for vm in 1 2; do
	echo "# --- VM $vm ($( [[ $vm == 1 ]] && echo "server $SRV_IP" || echo "client $CLI_IP"))"
	cat "$out/vm$vm.out"
	pass=$((pass + $(grep -c '^ok - ' "$out/vm$vm.out")))
	fail=$((fail + $(grep -c '^not ok - ' "$out/vm$vm.out")))
done
# a VM that died or a guest that failed without saying so
if [[ $rc1 -ne 0 || $rc2 -ne 0 ]] && [[ $fail -eq 0 ]]; then
	echo "not ok - VM exit status: server $rc1, client $rc2"
	fail=$((fail + 1))
fi
if [[ $pass -lt 4 ]] && [[ $fail -eq 0 ]]; then
	echo "not ok - only $pass of 4 results reported"
	fail=$((fail + 1))
fi
echo "two-vm: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
