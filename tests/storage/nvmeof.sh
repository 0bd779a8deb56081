# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The NVMe over Fabrics group of tests/storage/run.sh (sourced): the
# kernel's own NVMe host (nvme-rdma) and target (nvmet-rdma) with the
# distribution's nvme-cli and fio. The target exports a file on tmpfs as
# namespace 1 of a subsystem on an RDMA port at dev_b's address (veth1,
# 10.0.0.2); the host connects from dev_a's (veth0, 10.0.0.1), so every
# I/O crosses the veth pair through both devices. The host registers
# every data buffer with fast registration (REG_MR) and the target
# invalidates the keys with SEND_WITH_INV, or the host with LOCAL_INV.
#
# fio with crc32c verification (random and sequential writes of 4 KiB to
# 1 MiB at queue depth 32, read back and checked; random 4 KiB reads; a
# mix), the host's device removed under fio and made again (a new connect
# verifies data), then disconnect and a clean teardown.
#
# NVMET_USE_SRQ=1 loads nvmet-rdma with use_srq=1: the target's queues
# receive through a kernel SRQ of dev_b (checked with rdma resource).

nvmeof_out=/tmp/nvmeof
nqn=nqn.2026-12.dev.dray:test
hostnqn=nqn.2026-12.dev.dray:host
hostid=6a4d5f0e-3c1b-4e8a-9d2f-7b6c5a4e3d21
cfg=/sys/kernel/config/nvmet
img=/tmp/nvmet-ns1.img
# more nvme connect options (two-vm.sh: a longer keep-alive timeout)
nvmeof_connect_opts=()
port_id=1

# The controller device of our subsystem, once it exists (nvme0, ...).
ctrl_of() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -r $c/subsysnqn && $(<"$c/subsysnqn") == "$nqn" ]] &&
			echo "${c##*/}" && return 0
	done
	return 1
}

# The namespace's block device (nvme0n1, ...; with native multipath the
# head device, whose device/ is the subsystem, not the hidden per-path
# nvme0c0n1).
blk_of() {
	local b
	for b in /sys/block/nvme*; do
		[[ -b /dev/${b##*/} && -r $b/device/subsysnqn &&
			$(<"$b/device/subsysnqn") == "$nqn" ]] &&
			echo "${b##*/}" && return 0
	done
	return 1
}

# nvmeof_fio BLK NAME ARGS...: fio on /dev/BLK must exit 0 with no I/O or
# verify error, and a verifying job must have read data back (a job that
# spends its time writing never verifies); the bandwidth goes into the
# TAP line.
nvmeof_fio() {
	local blk=$1 name=$2 o=$nvmeof_out/$2 verifies=false
	shift 2
	case " $* " in *" --do_verify=1 "*) verifies=true ;; esac
	if timeout 300 fio --name="$name" --filename="/dev/$blk" --direct=1 \
		--ioengine=libaio --group_reporting --output="$o.txt" \
		"$@" >"$o.err" 2>&1 &&
		grep -q "err= 0" "$o.txt" &&
		{ ! $verifies || grep -qE "READ: .*io=[1-9]" "$o.txt"; } &&
		! grep -qiE "verify: bad|verify failed|crc32c" "$o.err"; then
		tap_ok "$sp.nvmeof.fio.$name: $(grep -oE '(READ|WRITE): bw=[^,]*' \
			"$o.txt" | tr '\n' ' ')"
	else
		tap_fail "$sp.nvmeof.fio.$name"
		tail -15 "$o.txt" "$o.err" 2>/dev/null | sed 's/^/# /'
		dmesg | tail -10 | sed 's/^/# /'
	fi
}

# nvmeof_connect TRADDR HOSTADDR: nvme connect to the subsystem at
# TRADDR from HOSTADDR; sets ctrl and blk (the
# caller's) once the namespace's block device is there. 1 (with the
# reason printed) if not.
nvmeof_connect() {
	local i ta=$1 ha=$2
	if ! timeout 60 nvme connect -t rdma -a "$ta" -s 4420 -w "$ha" \
		-n "$nqn" --hostnqn="$hostnqn" --hostid="$hostid" \
		"${nvmeof_connect_opts[@]}" >"$nvmeof_out/connect" 2>&1; then
		show "$nvmeof_out/connect"
		echo "# nvme connect -t rdma failed"
		return 1
	fi
	ctrl='' blk=''
	for ((i = 0; i < 300; i++)); do
		ctrl=$(ctrl_of) && blk=$(blk_of) && [[ -b /dev/$blk ]] && return 0
		sleep 0.1
	done
	echo "# no namespace block device (controller '$ctrl')"
	nvmeof_diag
	return 1
}

# nvmeof_diag: what the host has of NVMe (controllers and their state,
# block devices, device nodes), whether the admin queue answers (the
# target's namespace list) and a rescan makes the namespace, and where
# the host's tasks wait (SysRq w, into the kernel log), as comment lines,
# for a namespace that did not appear. The test has failed already.
nvmeof_diag() {
	local c i
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c ]] || continue
		echo "# ${c##*/}: state $(<"$c/state"), subsysnqn $(<"$c/subsysnqn")," \
			"$(find "$c/" -mindepth 1 -maxdepth 1 -name 'nvme*' -printf '%f ' 2>/dev/null)"
	done
	echo "# /sys/block: $(cd /sys/block && echo *)"
	echo "# /dev: $(cd /dev && echo nvme*)"
	if [[ -n $ctrl && -c /dev/$ctrl ]]; then
		echo "# nvme list-ns /dev/$ctrl: $(timeout 30 nvme list-ns "/dev/$ctrl" 2>&1 | xargs)"
		timeout 30 nvme ns-rescan "/dev/$ctrl" >/dev/null 2>&1
		for ((i = 0; i < 100; i++)); do
			blk_of >/dev/null && break
			sleep 0.1
		done
		echo "# after nvme ns-rescan: block device '$(blk_of)'"
	fi
	echo w >/proc/sysrq-trigger 2>/dev/null
	sleep 1
	dmesg | sed -n '/sysrq: Show Blocked State/,$p' | tail -n 60 | sed 's/^/# /'
}

# nvmeof_modules: nvmet, nvmet-rdma (use_srq=1 with NVMET_USE_SRQ=1) and
# nvme-rdma loaded, configfs mounted. 1 (the reason printed) if not.
nvmeof_modules() {
	local m opts
	for m in nvmet nvmet-rdma nvme-rdma; do
		opts=()
		[[ $m == nvmet-rdma && ${NVMET_USE_SRQ:-0} == 1 ]] && opts=(use_srq=1)
		modprobe "$m" "${opts[@]}" || { echo "# modprobe $m failed"; return 1; }
	done
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

# nvmeof_target_up TRADDR [DEVICE]: the nvmet subsystem with DEVICE as
# namespace 1 (default: a 192 MiB file on tmpfs, with buffered I/O since
# tmpfs has no O_DIRECT) on an RDMA port at TRADDR:4420. 1 (the step
# that failed printed) if not; nvmeof_target_down undoes what was made.
nvmeof_target_up() {
	local ns=$cfg/subsystems/$nqn/namespaces/1 dev=${2:-$img}
	[[ -n ${2:-} ]] || truncate -s 192M "$img"
	mkdir "$cfg/subsystems/$nqn" || { echo "# subsystem"; return 1; }
	echo 1 >"$cfg/subsystems/$nqn/attr_allow_any_host"
	mkdir "$ns"
	echo "$dev" >"$ns/device_path"
	[[ -b $dev ]] || echo 1 >"$ns/buffered_io"
	echo 1 >"$ns/enable" || { echo "# namespace enable ($dev)"; return 1; }
	mkdir "$cfg/ports/$port_id"
	echo rdma >"$cfg/ports/$port_id/addr_trtype"
	echo ipv4 >"$cfg/ports/$port_id/addr_adrfam"
	echo "$1" >"$cfg/ports/$port_id/addr_traddr"
	echo 4420 >"$cfg/ports/$port_id/addr_trsvcid"
	ln -s "$cfg/subsystems/$nqn" "$cfg/ports/$port_id/subsystems/$nqn" ||
		{ echo "# RDMA port on $1"; return 1; }
}

# nvmeof_target_down: the port, namespace and subsystem removed (what
# exists of them), the tmpfs file deleted.
nvmeof_target_down() {
	rm -f "$cfg/ports/$port_id/subsystems/$nqn"
	[[ -d $cfg/ports/$port_id ]] && rmdir "$cfg/ports/$port_id"
	if [[ -d $cfg/subsystems/$nqn ]]; then
		[[ -d $cfg/subsystems/$nqn/namespaces/1 ]] &&
			echo 0 >"$cfg/subsystems/$nqn/namespaces/1/enable" &&
			rmdir "$cfg/subsystems/$nqn/namespaces/1"
		rmdir "$cfg/subsystems/$nqn"
	fi
	rm -f "$img"
	return 0
}

# nvmeof_removal BLK: `rdma link delete` of the host's device while fio
# runs mixed I/O at queue depth 32 on /dev/BLK. nvme-rdma's ib_client
# removes the controller while the device still works (its queues
# drain); fio's I/O then fails: fio must end by itself within 120 s with
# errors, the controller must be gone, and nothing may hang. With dev_a
# made again, a new connect must work and verify data (ctrl and blk of
# the caller are the new ones). 1 if the lane cannot go on.
nvmeof_removal() {
	local o=$nvmeof_out/removal fpid rc=0 i t0 gone=''
	timeout 300 fio --name=removal --filename="/dev/$1" --direct=1 \
		--ioengine=libaio --rw=randrw --bsrange=4k-256k --iodepth=32 \
		--size=64m --runtime=120 --time_based --output="$o.txt" \
		>"$o.err" 2>&1 &
	fpid=$!
	sleep 3
	if ! kill -0 "$fpid" 2>/dev/null; then
		wait "$fpid"
		tap_fail "$sp.nvmeof.removal: fio ended before the removal" "exit $?"
		tail -15 "$o.txt" "$o.err" | sed 's/^/# /'
		return 1
	fi
	t0=$SECONDS
	rdma link delete "$dev_a" >"$o.del" 2>&1 || rc=$?
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$fpid" 2>/dev/null; then
		kill -9 "$fpid"
		wait "$fpid"
		tap_fail "$sp.nvmeof.removal: fio still running 120 s after rdma link delete $dev_a"
		dmesg | tail -20 | sed 's/^/# /'
		return 1
	fi
	wait "$fpid"
	local frc=$?
	for ((i = 0; i < 300; i++)); do
		ctrl_of >/dev/null || { gone=1; break; }
		sleep 0.1
	done
	if [[ $rc -eq 0 && $frc -ne 0 && $frc -ne 124 && -n $gone ]]; then
		tap_ok "$sp.nvmeof.removal: rdma link delete $dev_a under fio: fio ended with I/O errors (exit $frc) $((SECONDS - t0)) s later, controller gone"
		grep -m1 -oE "err= *[0-9]+[^,]*" "$o.txt" | sed 's/^/# fio: /'
	else
		tap_fail "$sp.nvmeof.removal: link delete exit $rc, fio exit $frc, controller ${gone:+gone}${gone:-still there}"
		tail -15 "$o.txt" "$o.err" "$o.del" 2>/dev/null | sed 's/^/# /'
		dmesg | tail -20 | sed 's/^/# /'
		return 1
	fi
	if ! storage_up; then
		nvmeof_fail removal "$dev_a not made again on veth0"
		return 1
	fi
	if ! nvmeof_connect "$ADDR_B" "$ADDR_A"; then
		nvmeof_fail removal "no new connect after $dev_a was made again"
		return 1
	fi
	tap_ok "$sp.nvmeof.removal: $dev_a made again, nvme connect: $ctrl, /dev/$blk"
	nvmeof_fio "$blk" after-removal-verify --rw=randwrite --bsrange=4k-256k \
		--iodepth=32 --size=8m --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --randrepeat=0
}

# nvmeof_fail NAME DETAIL: a step the rest depends on failed.
nvmeof_fail() {
	tap_fail "$sp.nvmeof.$1" "$2"
	dmesg | tail -20 | sed 's/^/# /'
	return 1
}

# nvmeof_lane: the NVMe-oF group (the top of this file).
nvmeof_lane() {
	local ctrl blk trtype addr nh nt nm
	mkdir -p "$nvmeof_out"
	nvmeof_modules >"$nvmeof_out/setup" 2>&1 ||
		{ nvmeof_fail setup "$(tail -n 1 "$nvmeof_out/setup")"; return; }

	# --- target: subsystem, namespace on a tmpfs file, RDMA port on dev_b ---------
	if ! nvmeof_target_up "$ADDR_B" >"$nvmeof_out/target" 2>&1; then
		nvmeof_fail target "$(tail -n 1 "$nvmeof_out/target") ($dev_b)"
		nvmeof_target_down
		return
	fi
	tap_ok "$sp.nvmeof.target: nvmet subsystem, tmpfs namespace, RDMA port $ADDR_B:4420"

	# --- host: connect from dev_a's address ---------------------------------------
	if ! nvmeof_connect "$ADDR_B" "$ADDR_A"; then
		nvmeof_fail connect "nvme connect -t rdma from $ADDR_A"
		return
	fi
	trtype=$(<"/sys/class/nvme/$ctrl/transport")
	addr=$(<"/sys/class/nvme/$ctrl/address")
	if [[ $trtype == rdma && $addr == *"traddr=$ADDR_B"* ]]; then
		tap_ok "$sp.nvmeof.connect: nvme connect -t rdma: $ctrl ($addr), /dev/$blk"
	else
		tap_fail "$sp.nvmeof.connect: transport $trtype, address $addr"
	fi

	# The queues are kernel RC QPs of the two devices, connected through
	# rdma_cm (the admin queue and one I/O queue per CPU): the host's on
	# dev_a, the target's on dev_b; the host's MR pool (fast registration)
	# is on dev_a.
	rdma resource show qp >"$nvmeof_out/qps" 2>&1
	rdma resource show mr >"$nvmeof_out/mrs" 2>&1
	nh=$(grep -c "link $dev_a/.*type RC state RTS.*comm \[rdma_cm\]" "$nvmeof_out/qps")
	nt=$(grep -c "link $dev_b/.*type RC state RTS.*comm \[rdma_cm\]" "$nvmeof_out/qps")
	nm=$(grep -c "dev $dev_a .*comm \[nvme_rdma\]\|link $dev_a.*comm \[nvme_rdma\]" "$nvmeof_out/mrs")
	if [[ $nh -ge 2 && $nt -ge 2 ]]; then
		tap_ok "$sp.nvmeof.qps: $nh connected RC QPs on $dev_a, $nt on $dev_b ($nm MRs of nvme_rdma on $dev_a)"
	else
		tap_fail "$sp.nvmeof.qps: $nh connected RC QPs on $dev_a, $nt on $dev_b"
		sed 's/^/# /' "$nvmeof_out/qps" | head -20
	fi
	sed 's/^/# /' "$nvmeof_out/mrs" | head -4
	if [[ ${NVMET_USE_SRQ:-0} == 1 ]]; then
		rdma resource show srq >"$nvmeof_out/srqs" 2>&1
		if grep -q "dev $dev_b .*type BASIC .*comm \[nvmet_rdma\]" "$nvmeof_out/srqs"; then
			tap_ok "storage.nvmeof.srq: nvmet-rdma use_srq=1, the target's QPs on a kernel SRQ of $dev_b"
		else
			tap_fail "storage.nvmeof.srq: no SRQ of nvmet_rdma on $dev_b"
		fi
		sed 's/^/# /' "$nvmeof_out/srqs" | head -4
	fi

	# --- fio with verification ------------------------------------------------
	# MiB per job: a quarter with STORAGE_SMALL and with Soft-RoCE on one
	# end (interop: rxe moves a few MB/s under TCG).
	local q=4
	[[ ${STORAGE_SMALL:-0} == 1 || $kind_a != "$kind_b" ]] && q=1
	nvmeof_fio "$blk" randwrite-verify --rw=randwrite --bsrange=4k-1m \
		--iodepth=32 --size=$((24 * q))m --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --randrepeat=0
	nvmeof_fio "$blk" seqwrite-verify --rw=write --bs=128k --iodepth=32 \
		--offset=96m --size=$((16 * q))m --verify=crc32c --verify_fatal=1 \
		--do_verify=1
	nvmeof_fio "$blk" randread --rw=randread --bs=4k --iodepth=32 \
		--size=160m --runtime=$((2 + 2 * q)) --time_based
	nvmeof_fio "$blk" mixed-verify --rw=randrw --bsrange=4k-256k \
		--iodepth=32 --offset=160m --size=$((8 * q))m --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --randrepeat=0

	nvmeof_removal "$blk" || return

	# --- disconnect and tear down -------------------------------------------------
	if timeout 60 nvme disconnect -n "$nqn" >"$nvmeof_out/disconnect" 2>&1 &&
		! ctrl_of >/dev/null; then
		tap_ok "$sp.nvmeof.disconnect: nvme disconnect, controller gone"
	else
		tap_fail "$sp.nvmeof.disconnect"
		show "$nvmeof_out/disconnect"
	fi
	nvmeof_target_down
	if modprobe -r nvme-rdma nvmet-rdma 2>"$nvmeof_out/rmmod"; then
		tap_ok "$sp.nvmeof.teardown: nvmet config removed, nvme-rdma and nvmet-rdma unloaded"
	else
		tap_fail "$sp.nvmeof.teardown" "$(head -1 "$nvmeof_out/rmmod")"
	fi
}
