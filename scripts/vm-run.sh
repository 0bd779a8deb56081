#!/bin/bash
# Boot the dray test kernel in QEMU and run one command inside it.
#
# Guest: the host root over virtio-9p (read-only) under a tmpfs overlay, so
# everything built on the host is at the same path; /lib/modules/KVER is the
# Debian kernel's modules plus --module files under updates/. The command's
# stdout/stderr stream to ours through virtio-serial ports; the kernel console
# goes to a log file that is scanned for oopses, warnings, lockdep reports,
# hung tasks, RCU stalls and panics after the run. With --kernel debug the
# guest runs the debug kernel (scripts/debug-kernel.sh: KASAN, KFENCE,
# lockdep, UBSAN, DEBUG_LIST, DEBUG_OBJECTS, kmemleak), whose reports fail
# the run too, and kmemleak is scanned after CMD: a leak attributed to dray
# fails the run.
set -euo pipefail

usage() {
	cat <<EOF
usage: ${0##*/} [options] -- CMD [ARGS...]

Run CMD with ARGS (exec'd as given, looked up in PATH; use sh -c '...' for
shell syntax) in a VM, in the current directory, stdin /dev/null. The guest
sees the host's files read-only with a tmpfs overlay (writes are lost), but
its /tmp, /run and /dev/shm are its own.
Exit status: CMD's; 124 on timeout; 125 if the VM died without a status.
A kernel oops/BUG/WARNING/lockdep/hung-task/RCU-stall/panic, a KASAN,
KFENCE, UBSAN, DEBUG_LIST or DEBUG_OBJECTS report, and (debug kernel) a
kmemleak leak attributed to dray fail the run (CMD's status if non-zero,
else 1).

  --kernel K           debian (default): Debian's linux-image (6.1); 6.12:
                       Debian 12's 6.12 LTS image; debug: the debug kernel of
                       scripts/debug-kernel.sh (built and cached on first
                       use). Pass modules built against the kernel's tree
                       (KDIR printed by scripts/vm-kernel.sh --kernel K)

  --module FILE.ko     install FILE.ko under updates/ (repeatable), depmod'ed
  --timeout SECS       kill the VM SECS after its start, exit 124 (default 900)
  --log FILE           kernel console log (default build/vm/console.log)
  --smp N              vCPUs (default 2; under TCG maxcpus is at least 2)
  --mem MIB            memory (default 2048; debug kernel 1024: its boot and
                       each kmemleak scan take time in proportion)
  --net-socket L:R     virtio-net NIC (eth0) over UDP 127.0.0.1:L <-> 127.0.0.1:R
  --mac MAC            its MAC address (default derived from L)
  --qmp SOCKET         a QMP monitor on the UNIX socket SOCKET (scripts/vm/qmp.py
                       asks it about the NIC)
  --quiet              no "vm: boot-to-command" line

Environment: DRAY_VM_ACCEL=tcg|kvm forces the accelerator (default: KVM if a
cached probe says it boots, else TCG); DRAY_VM_KERNEL=debian|6.12|debug sets the
default of --kernel; DRAY_VM_APPEND adds kernel parameters;
DRAY_VM_KEEP=1 keeps the run directory (build/vm/runs/); DRAY_VM_TSC=kernel
boots TCG guests without tsc=unstable (see below); DRAY_VM_QEMU_TRACE=EV,...
enables those QEMU trace events, logged to the console log's name + .trace;
DRAY_VM_MAXCPUS=N sets QEMU's maxcpus (TCG default: 2 with one vCPU, see
below); DRAY_VM_QEMU_ARGS adds words to QEMU's command line (experiments);
all DRAY_* variables are passed to CMD.
EOF
}

here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=scripts/vm/lib.sh
. "$here/vm/lib.sh"

# --- options ------------------------------------------------------------------
modules=() timeout=900 log='' smp=2 mem='' net='' mac='' quiet='' qmp=''
kernel=${DRAY_VM_KERNEL:-debian}
need_arg() {
	[[ $# -ge 2 ]] || { usage >&2; die "$1 needs an argument"; }
}
while [[ $# -gt 0 ]]; do
	case $1 in
	--module) need_arg "$@"; modules+=("$2"); shift 2 ;;
	--kernel) need_arg "$@"; kernel=$2; shift 2 ;;
	--timeout) need_arg "$@"; timeout=$2; shift 2 ;;
	--log) need_arg "$@"; log=$2; shift 2 ;;
	--smp) need_arg "$@"; smp=$2; shift 2 ;;
	--mem) need_arg "$@"; mem=$2; shift 2 ;;
	--net-socket) need_arg "$@"; net=$2; shift 2 ;;
	--mac) need_arg "$@"; mac=$2; shift 2 ;;
	--qmp) need_arg "$@"; qmp=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; die "unknown option $1" ;;
	*) break ;;
	esac
done
[[ $# -gt 0 ]] || { usage >&2; exit 2; }
[[ $kernel == debian || $kernel == 6.12 || $kernel == debug ]] ||
	die "--kernel wants debian, 6.12 or debug"
if [[ -z $mem ]]; then
	if [[ $kernel == debug ]]; then mem=1024; else mem=2048; fi
fi
for n in "$timeout" "$smp" "$mem"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "not a positive integer: $n"
done
if [[ -n $net ]]; then
	[[ $net =~ ^([0-9]+):([0-9]+)$ ]] || die "--net-socket wants LOCAL_PORT:REMOTE_PORT"
	net_local=${BASH_REMATCH[1]} net_remote=${BASH_REMATCH[2]}
	if [[ -z $mac ]]; then
		mac=$(printf '52:54:00:d7:%02x:%02x' $((net_local >> 8 & 255)) $((net_local & 255)))
	fi
fi
[[ -z $mac || $mac =~ ^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$ ]] || die "bad MAC $mac"
[[ -z $mac || -n $net ]] || die "--mac needs --net-socket"
for m in ${modules[@]+"${modules[@]}"}; do
	[[ $m == *.ko && -f $m ]] || die "--module $m: not a .ko file"
done

qemu="qemu-system-x86_64"
command -v "$qemu" >/dev/null || die "$qemu not found (scripts/install-deps.sh)"
qboot=/usr/share/qemu/qboot.rom
[[ -f $qboot ]] || die "$qboot not found"

# --- kernel, initramfs ----------------------------------------------------------
KVER='' VMLINUX='' INITRAMFS='' MODULES='' KDIR=''
while IFS='=' read -r k v; do
	case $k in
	KVER) KVER=$v ;;
	VMLINUX) VMLINUX=$v ;;
	INITRAMFS) INITRAMFS=$v ;;
	MODULES) MODULES=$v ;;
	KDIR) KDIR=$v ;;
	esac
done < <("$here/vm-kernel.sh" --kernel "$kernel")
[[ -n $KVER && -f $VMLINUX && -f $INITRAMFS && -d $MODULES ]] ||
	die "scripts/vm-kernel.sh failed"

vmdir=$DRAY_REPO/build/vm
mkdir -p "$vmdir/modules" "$vmdir/runs"

# --- staged /lib/modules/KVER ---------------------------------------------------
# build/vm/modules/HASH/lib/modules/KVER: symlinks to the Debian tree, the
# extra modules copied under updates/, and depmod's output. HASH covers the
# extra modules' contents, so a tree is reused until a module changes, and
# concurrent runs with different modules do not share one.
stage_modules() {
	local key dir tmp m f
	key=$({
		echo "$MODULES"
		stat -c %Y "$MODULES/modules.dep"
		for m in ${modules[@]+"${modules[@]}"}; do
			echo "${m##*/} $(sha256sum <"$m")"
		done
	} | sha256sum | cut -c1-16)
	dir=$vmdir/modules/$key
	if [[ ! -f $dir/.done ]]; then
		tmp=$(mktemp -d "$vmdir/modules/.tmp.XXXXXX")
		chmod 0755 "$tmp"
		m=$tmp/lib/modules/$KVER
		mkdir -p "$m/updates"
		for f in kernel modules.order modules.builtin modules.builtin.modinfo; do
			ln -s "$MODULES/$f" "$m/$f"
		done
		[[ -z $KDIR || ! -e $KDIR ]] || ln -s "$KDIR" "$m/build"
		for f in ${modules[@]+"${modules[@]}"}; do
			[[ ! -e $m/updates/${f##*/} ]] || die "two modules named ${f##*/}"
			cp "$f" "$m/updates/"
		done
		depmod -b "$tmp" "$KVER" || die "depmod failed"
		touch "$tmp/.done"
		# Another run may have staged the same set meanwhile: keep the first.
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
	fi
	touch "$dir/.done"
	# Keep the 8 most recently used trees.
	find "$vmdir/modules" -mindepth 2 -maxdepth 2 -name .done -printf '%T@ %h\n' |
		sort -rn | tail -n +9 | cut -d' ' -f2- | xargs -r rm -rf
	staged=$dir/lib/modules/$KVER
}
stage_modules

# --- accelerator ------------------------------------------------------------------
# pci=noacpi: no ACPI interrupt-link evaluation (slow under TCG), virtio
# uses MSI-X; cryptomgr.notests: skip the crypto self-tests at boot.
base_cmdline="console=ttyS0 loglevel=7 panic=-1 mitigations=off 8250.nr_uarts=1"
base_cmdline+=" pci=noacpi cryptomgr.notests=1"
# The debug kernel: every KASAN report, not only the first.
[[ $kernel != debug ]] || base_cmdline+=" kasan_multi_shot"

probe_kvm() {
	local tmp verdict=tcg
	if [[ -r /dev/kvm && -w /dev/kvm ]]; then
		tmp=$(mktemp -d)
		timeout -k 2 15 "$qemu" -nodefaults -no-user-config -display none \
			-machine pc -accel kvm -cpu host -m 256 -bios "$qboot" \
			-kernel "$VMLINUX" -initrd "$INITRAMFS" -no-reboot \
			-append "$base_cmdline dray.probe=1" \
			-serial "file:$tmp/log" </dev/null >/dev/null 2>&1 || true
		! grep -q DRAY-VM-PROBE-OK "$tmp/log" 2>/dev/null || verdict=kvm
		rm -rf "$tmp"
	fi
	echo "$verdict"
}

accel=${DRAY_VM_ACCEL:-}
case $accel in
tcg | kvm) ;;
'')
	verdict_file=$DRAY_CACHE/accel-$(uname -r)-$KVER
	exec {lockfd}>"$verdict_file.lock"
	flock "$lockfd"
	if [[ ! -s $verdict_file ]]; then
		note "probing KVM (cached in $verdict_file)"
		probe_kvm >"$verdict_file"
	fi
	accel=$(<"$verdict_file")
	exec {lockfd}>&-
	;;
*) die "DRAY_VM_ACCEL must be tcg or kvm" ;;
esac

# --- per-run directory ----------------------------------------------------------------
# Runs older than a day were left by killed runs.
find "$vmdir/runs" -mindepth 1 -maxdepth 1 -mtime +0 -exec rm -rf {} + 2>/dev/null || :
run=$(mktemp -d "$vmdir/runs/run.XXXXXX")
share=$run/share # the guest's /run/dray-vm
mkdir "$share"
mkfifo "$run/stdout" "$run/stderr" "$run/ctl"

if [[ -z $log ]]; then
	log=$vmdir/console.log
	exec {logfd}>"$vmdir/console.log.lock"
	# Held by a concurrent run: do not clobber its log.
	if ! flock -n "$logfd"; then
		log=$vmdir/console-${run##*.}.log
		# Keep the 10 newest of these.
		find "$vmdir" -maxdepth 1 -name 'console-*.log' -printf '%T@ %p\n' |
			sort -rn | tail -n +10 | cut -d' ' -f2- | xargs -r rm -f
	fi
fi
mkdir -p "$(dirname "$log")"
log=$(realpath "$log")

quote() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}
# Host directories the guest's fresh /tmp and /run would hide.
keep_paths() {
	local p q out=()
	for p in "$@"; do
		p=$(realpath -m "$p")
		[[ $p == /tmp/* || $p == /run/* ]] || continue
		for q in ${out[@]+"${out[@]}"}; do
			[[ $p != "$q" && $p != "$q"/* ]] || continue 2
		done
		out+=("$p")
	done
	[[ ${#out[@]} -eq 0 ]] || printf '%s\n' "${out[@]}"
}
{
	echo "vm_modules=$(quote "$staged")"
	echo "vm_cwd=$(quote "$PWD")"
	echo "vm_hostname=dray-vm"
	echo "vm_keep=$(quote "$(keep_paths "$DRAY_REPO" "$DRAY_CACHE" "$PWD")")"
} >"$share/config"
while read -r v; do
	echo "export $v=$(quote "${!v}")"
done < <(compgen -e | grep '^DRAY_' || true) >"$share/env"
{
	printf 'set --'
	for a in "$@"; do
		printf ' %s' "$(quote "$a")"
	done
	echo
} >"$share/cmd"

# --- QEMU -------------------------------------------------------------------------
qpath() { # QEMU option values escape commas by doubling them
	echo "${1//,/,,}"
}
cmdline="$base_cmdline${DRAY_VM_APPEND:+ $DRAY_VM_APPEND}"
[[ -z $net ]] || cmdline+=" dray.net=1"
if [[ $accel == kvm ]]; then cpu=host; else cpu=max; fi
# Under TCG, the TSC marked unstable from boot: 6.1 finds the vCPUs' TSCs
# unsynchronized and does so itself, but 6.12 trusts them, marks
# sched_clock stable 1.2 s into boot and patches the __sched_clock_stable
# static branch (int3, text_poke) while the other vCPU runs through it;
# QEMU 7.2's multi-threaded TCG then lets that vCPU hit the int3 after
# the patch is done ("Oops: int3" in sched_clock_cpu, a panic in boot; a
# clocksource watchdog flipping it back can do the same mid-run). Kept
# unstable, the branch is never patched: both kernels run the same way.
# DRAY_VM_TSC=kernel leaves the choice to the kernel (for experiments).
[[ $accel == kvm || ${DRAY_VM_TSC:-} == kernel ]] || cmdline+=" tsc=unstable"
# Under TCG, QEMU 7.2 translates a machine that can have only one vCPU
# (maxcpus 1) in its uniprocessor mode: it drops the guest's memory
# barriers and makes its locked instructions plain loads and stores. Yet
# the device models run in other threads and read guest memory while the
# vCPU runs, so a virtqueue's driver and device can each miss the other's
# index (the two-VM transmit stall, Documentation/benchmark.md). QEMU 8.1
# keeps the barriers; here maxcpus 2 does, with one vCPU online.
# DRAY_VM_MAXCPUS sets maxcpus (for experiments: 1 is the old way).
smp_arg=$smp
if [[ -n ${DRAY_VM_MAXCPUS:-} ]]; then
	[[ $DRAY_VM_MAXCPUS =~ ^[1-9][0-9]*$ && $DRAY_VM_MAXCPUS -ge $smp ]] ||
		die "DRAY_VM_MAXCPUS must be a number of at least --smp"
	smp_arg+=",maxcpus=$DRAY_VM_MAXCPUS"
elif [[ $accel == tcg && $smp -eq 1 ]]; then
	smp_arg+=",maxcpus=2"
fi
# shellcheck disable=SC2054 # commas are QEMU's
qemu_args=(
	-nodefaults -no-user-config -display none -no-reboot
	-machine pc -accel "$accel" -cpu "$cpu" -smp "$smp_arg" -m "$mem"
	-bios "$qboot" -kernel "$(qpath "$VMLINUX")" -initrd "$(qpath "$INITRAMFS")"
	-append "$cmdline"
	-serial "file:$(qpath "$log")"
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
	-fsdev "local,id=drayrun,path=$(qpath "$share"),security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=drayrun,mount_tag=drayrun
	-device virtio-serial-pci,id=vser,max_ports=4
	-chardev "file,id=out,path=$(qpath "$run/stdout")"
	-device virtserialport,bus=vser.0,nr=1,chardev=out,name=dray.stdout
	-chardev "file,id=err,path=$(qpath "$run/stderr")"
	-device virtserialport,bus=vser.0,nr=2,chardev=err,name=dray.stderr
	-chardev "file,id=ctl,path=$(qpath "$run/ctl")"
	-device virtserialport,bus=vser.0,nr=3,chardev=ctl,name=dray.ctl
)
if [[ -n $net ]]; then
	qemu_args+=(
		-netdev "socket,id=net0,udp=127.0.0.1:$net_remote,localaddr=127.0.0.1:$net_local"
		-device "virtio-net-pci,netdev=net0,mac=$mac"
	)
fi

if [[ -n ${DRAY_VM_QEMU_TRACE:-} ]]; then
	IFS=, read -r -a evs <<<"$DRAY_VM_QEMU_TRACE"
	for ev in "${evs[@]}"; do
		qemu_args+=(-trace "enable=$ev")
	done
	qemu_args+=(-D "$(qpath "$log.trace")")
fi
# shellcheck disable=SC2206 # words, for experiments
[[ -z ${DRAY_VM_QEMU_ARGS:-} ]] || qemu_args+=($DRAY_VM_QEMU_ARGS)
if [[ -n $qmp ]]; then
	rm -f "$qmp"
	qemu_args+=(-qmp "unix:$(qpath "$qmp"),server=on,wait=off")
fi

pids=()
qemu_pid=''
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local p
	[[ -z $qemu_pid ]] || kill "$qemu_pid" 2>/dev/null || :
	for p in ${pids[@]+"${pids[@]}"}; do
		kill "$p" 2>/dev/null || :
	done
	[[ -n ${DRAY_VM_KEEP:-} ]] || rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Readers: the guest's stdout/stderr to ours; control messages timestamped.
cat "$run/stdout" &
pids+=($!)
cat "$run/stderr" >&2 &
pids+=($!)
while IFS= read -r line; do
	echo "$EPOCHREALTIME $line"
done <"$run/ctl" >"$run/ctl.log" &
pids+=($!)

t0=$EPOCHREALTIME
timeout -k 5 "$timeout" "$qemu" "${qemu_args[@]}" </dev/null >&2 &
qemu_pid=$!
qrc=0
wait "$qemu_pid" || qrc=$?
qemu_pid=''

# Unblock readers whose FIFO QEMU never opened, then let them drain.
for f in stdout stderr ctl; do
	exec {fd}<>"$run/$f"
	exec {fd}>&-
done
for p in "${pids[@]}"; do
	wait "$p" || :
done
pids=()

# --- verdict ------------------------------------------------------------------------
status=''
[[ ! -s $share/status ]] || status=$(<"$share/status")
[[ $status =~ ^[0-9]+$ ]] || status=''
taint=0
[[ ! -s $share/taint ]] || taint=$(<"$share/taint")

if [[ -z $quiet ]]; then
	start=$(sed -n 's/^\([0-9.]*\) start .*/\1/p' "$run/ctl.log" | head -n1)
	if [[ -n $start ]]; then
		awk -v a="$t0" -v b="$start" -v acc="$accel" \
			'BEGIN { printf "vm: boot-to-command %.1f s (accel %s)\n", b - a, acc }' >&2
	fi
fi

# Kernel problems, as printed on the console. The debug kernel's reports
# start with "BUG: KASAN:", "BUG: KFENCE:", "UBSAN:", "ODEBUG:", lockdep's
# "WARNING: possible ..."/"inconsistent lock state"/"BUG: Invalid wait
# context", DEBUG_LIST's "list_add corruption"/"list_del corruption",
# DEBUG_ATOMIC_SLEEP's "BUG: sleeping function called from invalid
# context"; kmemleak must not have switched itself off.
problems='(Oops|BUG:|WARNING:|kernel BUG at|general protection fault|invalid opcode:'
problems+='|Kernel panic|cut here|possible circular locking|inconsistent lock state'
problems+='|possible recursive locking|suspicious RCU usage|lock held when returning'
problems+='|blocked for more than [0-9]+ seconds|rcu: INFO:|detected stalls? on CPU'
problems+='|self-detected stall|soft lockup|hard LOCKUP|UBSAN:|KASAN:|KFENCE:'
problems+='|refcount_t:|list_(add|del) corruption|Unable to handle kernel|double fault'
problems+='|ODEBUG:|sleeping function called from invalid context|Invalid wait context'
problems+='|kmemleak: Kernel memory leak detector disabled|kmemleak: Memory pool empty)'
# Reports of known kernel bugs that are not dray's are masked first
# (scripts/vm/kernel-known.awk says which); they are counted and named.
masked=$(awk -f "$here/vm/kernel-known.awk" "$log" 2>/dev/null || true)
found=$(grep -nE "$problems" <<<"$masked" | head -n 40 || true)
known=$(sed -n 's/^dray-known: //p' <<<"$masked" | sort | uniq -c |
	awk '{ printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1 }')
# The lines above, then the first report whole: its first line and the
# 45 after it (RIP, registers, call trace), which no pattern picks out.
problems_show() {
	local first
	printf '%s\n' "$found" >&2
	first=${found%%:*}
	[[ $first =~ ^[0-9]+$ ]] || return 0
	echo "vm-run.sh: the first report, console lines $first-$((first + 45)):" >&2
	sed -n "${first},$((first + 45))p" "$log" >&2
}

# kmemleak (debug kernel): the guest scanned after CMD and left the report
# in the share. A leak is dray's if its backtrace names dray or dray_ktest,
# or has an address in module space without a symbol (code of a module
# unloaded since, or a module's init code, which is freed after loading)
# and names no other module: the lanes load no module but dray, dray_ktest
# and rdma_rxe, and the rest of the debug kernel is built in. dray's leaks
# fail the run; the others are counted and left in the report.
leak_report=''
dray_leaks=0 other_leaks=0
if [[ -f $share/kmemleak ]]; then
	leak_report=${log%.log}.kmemleak
	cp "$share/kmemleak" "$leak_report"
	read -r dray_leaks other_leaks < <(awk -v out="$leak_report.dray" '
	function flush() {
		if (rec == "")
			return
		if (dray || (nosym && !other)) {
			d++
			printf "%s", rec >out
		} else
			o++
		rec = ""
		dray = nosym = other = 0
	}
	/^unreferenced object/ { flush() }
	{ rec = rec $0 "\n" }
	/^ +\[<[0-9a-f]+>\] .*\[(dray|dray_ktest)\]$/ { dray = 1; next }
	/^ +\[<[0-9a-f]+>\] .*\[[A-Za-z0-9_]+\]$/ { other = 1; next }
	/^ +\[<[0-9a-f]+>\] 0xffffffff[a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/ {
		nosym = 1
	}
	END { flush(); close(out); print d + 0, o + 0 }' "$leak_report")
	[[ $dray_leaks -gt 0 ]] || rm -f "$leak_report.dray"
fi
# Taint flags: B bad page (5), D died (7), W warning (9), L soft lockup (14).
bad_taint=$((taint & (1 << 5 | 1 << 7 | 1 << 9 | 1 << 14)))
if [[ -n $known ]]; then
	note "known kernel bug(s), not dray's, masked: $known (scripts/vm/kernel-known.awk)"
	# Its WARN tainted the kernel; any other WARN is in $found.
	grep -qE 'WARNING:' <<<"$found" || bad_taint=$((bad_taint & ~(1 << 9)))
fi

if [[ $qrc -eq 124 ]]; then
	note "timeout after $timeout s: VM killed; kernel log: $log"
	[[ -z $found ]] || problems_show
	exit 124
fi
if [[ -z $status ]]; then
	note "the guest stopped without reporting a status (QEMU exit $qrc); kernel log: $log"
	if [[ -n $found ]]; then
		problems_show
	else
		tail -n 20 "$log" >&2 2>/dev/null || :
	fi
	exit 125
fi
if [[ -n $found || $bad_taint -ne 0 ]]; then
	note "kernel problem detected (taint $taint); kernel log: $log"
	[[ -z $found ]] || problems_show
	[[ $status -ne 0 ]] || status=1
fi
if [[ -n $leak_report ]]; then
	if [[ $dray_leaks -gt 0 ]]; then
		note "kmemleak: $dray_leaks leak(s) attributed to dray ($other_leaks other); report: $leak_report"
		head -n 60 "$leak_report.dray" >&2
		[[ $status -ne 0 ]] || status=1
	else
		note "kmemleak: no leak attributed to dray ($other_leaks other suspected leak(s), which do not fail the run); report: $leak_report"
	fi
fi
exit "$status"
