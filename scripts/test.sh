#!/bin/bash
# Run every dray test and print one closing line "N passed, N failed, N skipped".
#
#   1. static checks: checkpatch --strict, W=1 and sparse builds (scripts/check.sh)
#   2. user-space unit tests (tests/unit), then the libFuzzer targets of
#      tests/fuzz (frame parser, responder, completer: regressions and
#      seed corpus replayed, then 60 s of fuzzing each)
#   3. kernel selftests inside the test VM against the real module
#      (tests/selftests/run.sh), with libibverbs and the provider built
#      from rdma-core 56.1
#   4. the RDMA data-path tests inside the test VM (tests/rdma/run.sh dray:
#      ibv_rc_pingpong, perftest, data integrity, verbs errors, a hostile
#      process, netem loss)
#   5. two VMs joined by a QEMU network, one dray device each: ib_write_bw
#      and ib_send_lat across, NVMe-oF with the target in one VM and the
#      host in the other, Open MPI with one rank in each (tests/rdma/two-vm.sh)
#   6. the kernel verbs through a test module in the VM (tests/kverbs/)
#   7. RDMA CM over the GSI QP in the VM (tests/cm/run.sh: rping, ucmatose,
#      udaddy, fi_pingpong, perftest -R)
#   8. kernel storage over RDMA in the VM (tests/storage/run.sh): NVMe over
#      Fabrics (nvmet-rdma, nvme-rdma, fio with verification) and NFS
#      over RDMA (nfsd, proto=rdma), both on fast registration
#   9. rdma-core's pyverbs suite against dray0 in the VM (tests/pyverbs/)
#  10. wire interop with Soft-RoCE, dray0 <-> rxe0 in the VM: the subset
#      pingpong, capture (tshark decode, ICRC check), rping and perftest's
#      ib_read_bw/ib_atomic_bw (defaults) of tests/interop/interop.sh
#      (`make interop` runs all of it); then NVMe-oF with the host on
#      dray0 and the target on rxe1 (interop-nvmeof)
#  11. the debug stages (debug-*), in VMs that boot the debug kernel
#      (scripts/debug-kernel.sh: KASAN, KFENCE, lockdep, UBSAN, DEBUG_LIST,
#      DEBUG_OBJECTS, kmemleak) with dray.ko built against it: the
#      selftests; the rdma groups integrity, verbs_err, hostile, ud, uc,
#      xrc, srq, dm, dmabuf, inject, failnth, abifuzz and faults; kverbs; cm without perftest; storage with a quarter of the
#      data (Documentation/testing.md says what each covers). A report of
#      any of those checkers fails the stage, and so does a kmemleak leak
#      attributed to dray (vm-run.sh scans after each lane). The kernel is
#      built once (niced, in the background while stages 1-10 run) and
#      cached under ~/.cache/dray/debug-kernel.
#  12. Debian 12's 6.12 LTS kernel (scripts/vm-kernel.sh --kernel 6.12):
#      dray.ko, dray_ktest.ko and the dma-buf exporter built against its
#      headers, then stages 3, 4 (the groups whose paths go through
#      kernel interfaces that changed: see groups612 below), 6, 8
#      (nvmet-rdma with use_srq=1) and 9 again in VMs that boot it
#      (6.12-*), and interop with its rxe (ibta15: ATOMIC WRITE and
#      FLUSH; then NVMe-oF with the host on rxe0 and the target on
#      dray1). They run before the debug stages, while the debug kernel
#      may still be building.
#  13. the Debian packages (tests/package/run.sh): built with
#      scripts/package.sh, installed in a throw-away root on the host (DKMS
#      builds dray.ko for 6.1, and for 6.12 on the kernel upgrade; purge),
#      then installed in the VM on each kernel, where Debian's own
#      libibverbs tools, perftest and the dray-link@ unit run against dray.
#
# Options: --no-debug skips stage 11; --debug-only runs only stage 11 and
# the builds (`make debug`).
#
# The RC smoke lane (tests/smoke/rc-smoke.sh, `make smoke`) is a quick
# subset of stage 4 for development and is not run here.
#
# Installs its prerequisites first (needs root). Exit status is non-zero if
# anything failed. Logs: build/test/.
set -uo pipefail

normal=1 debug=1
case ${1:-} in
--no-debug) debug='' ;;
--debug-only) normal='' ;;
-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
'') ;;
*) echo "usage: ${0##*/} [--no-debug | --debug-only]" >&2; exit 2 ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"
logs=build/test
mkdir -p "$logs"

total_pass=0
total_fail=0
total_skip=0
failed_stages=()

# Add up one stage's "NAME: N passed, N failed[, N skipped]" line; a stage
# that ends without one counts as one failure.
tally() {	# stage, rc, log
	local line p f s
	line=$(grep -E '^(# )?[a-z-]+: [0-9]+ passed, [0-9]+ failed' "$3" | tail -1)
	if [[ -z $line ]]; then
		echo "test: stage $1 produced no summary (rc $2), counted as failed; see $3"
		total_fail=$((total_fail + 1))
		failed_stages+=("$1")
		return
	fi
	p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	s=0
	[[ $line == *skipped* ]] && s=$(sed -E 's/.* ([0-9]+) skipped.*/\1/' <<<"$line")
	if [[ $2 -ne 0 && $f -eq 0 ]]; then
		echo "test: stage $1 exited $2 with no failed test, counted as failed"
		f=1
		failed_stages+=("$1")
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
}

stage() {	# name, command...
	local name=$1 rc t0 con
	shift
	# --debug-only: the builds run, the stages but the debug ones do not.
	[[ -n $normal || $name == debug-* ]] || return 0
	echo "=== $name"
	t0=$SECONDS
	touch "$logs/.stage"
	"$@" 2>&1 | tee "$logs/$name.log"
	rc=${PIPESTATUS[0]}
	echo "test: stage $name took $((SECONDS - t0)) s"
	# The stage's kernel console (vm-run.sh's newest), kept beside its log.
	con=$(find build/vm -maxdepth 1 -name 'console*.log' -newer "$logs/.stage" \
		-printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2)
	[[ -z $con ]] || cp "$con" "$logs/$name.console"
	tally "$name" "$rc" "$logs/$name.log"
}

must() {	# a build step: failing it ends the run
	echo "=== $*"
	if ! "$@" >"$logs/build.log" 2>&1; then
		tail -40 "$logs/build.log"
		echo "test: build step failed: $*"
		echo "$total_pass passed, $((total_fail + 1)) failed, $total_skip skipped"
		exit 1
	fi
}

if [[ $EUID -eq 0 ]]; then
	must scripts/install-deps.sh
else
	echo "test: not root, skipping package installation"
fi

# The debug kernel builds (niced) while the other stages run.
debug_pid=''
if [[ -n $debug ]]; then
	echo "=== scripts/debug-kernel.sh (in the background; log $logs/debug-kernel.log)"
	scripts/debug-kernel.sh >"$logs/debug-kernel.env" 2>"$logs/debug-kernel.log" &
	debug_pid=$!
fi

# The rdma groups of stage 12 (6.12): those whose paths go through
# interfaces of the kernel that changed between 6.1 and 6.12 (the verbs
# and uverbs of the core, SRQ and XRC objects, dma-buf, mmap, the
# counters' API, device removal and its events, IBTA 1.5) and integrity
# for the data path over 6.12's network stack. The rest (perftest,
# pingpong, the polling engine, jumbo, hostile, UC, inject, evflood, UCX,
# the distribution's tools) exercises the provider and the NIC model the
# same way on either kernel: 6.1 runs it (Documentation/testing.md).
groups612="integrity verbs_err ud xrc ibta15 srq dm dmabuf abifuzz faults counters"

stage check scripts/check.sh
stage unit make -s -C tests/unit run
stage fuzz make -s -C tests/fuzz run

must make -s module
must make -s provider
must make -s -C tests/selftests

stage selftests scripts/vm-run.sh --timeout 1200 --module build/dray.ko -- \
	bash -c 'eval "$(scripts/rdma-env.sh)" && tests/selftests/run.sh'

must make -s -C tests/rdma
# dray_ktest.ko: the kverbs stage, and the kernel ULP of the rdma faults
# group (traffic=1; DRAY_KTEST_KO, build/ktest/dray_ktest.ko by default)
must make -s ktest-mod
# The faults group with 5 cycles of each fault (the perftest stream in the
# first): 50-cycle runs are done by hand (Documentation/testing.md).
stage rdma scripts/vm-run.sh --timeout 2400 --module build/dray.ko -- \
	bash -c 'eval "$(scripts/rdma-env.sh)" && DRAY_FAULT_CYCLES=5 tests/rdma/run.sh dray'
stage two-vm tests/rdma/two-vm.sh --module build/dray.ko dray

stage kverbs scripts/vm-run.sh --timeout 600 --module build/dray.ko -- \
	tests/kverbs/run.sh build/ktest/dray_ktest.ko
stage cm scripts/vm-run.sh --timeout 900 --module build/dray.ko -- tests/cm/run.sh
stage storage scripts/vm-run.sh --timeout 1800 --module build/dray.ko -- \
	tests/storage/run.sh dray
stage pyverbs scripts/vm-run.sh --timeout 2400 --module build/dray.ko -- \
	tests/pyverbs/run.sh dray
must make -s -C tests/interop
# perftest's READ and atomic bandwidth tests with its defaults, both ways:
# rxe as requester keeps 128 requests outstanding at dray's responder.
stage interop scripts/vm-run.sh --timeout 1800 --module build/dray.ko -- \
	env DRAY_INTEROP_PERFTEST="ib_read_bw ib_atomic_bw" \
	tests/interop/interop.sh pingpong capture rping perftest
# NVMe-oF between the kinds: the nvme-rdma host on dray0, the nvmet-rdma
# target on rxe1 (fast registration, SEND_WITH_INV and the target's READs
# and WRITEs of dray's memory on the wire; the reverse runs on 6.12, see
# Documentation/testing.md).
stage interop-nvmeof scripts/vm-run.sh --timeout 900 --module build/dray.ko -- \
	tests/storage/run.sh dray-rxe nvmeof

# 12. The same lanes on Debian 12's 6.12 LTS kernel (see the header).
if [[ -n $normal ]]; then
	must scripts/vm-kernel.sh --kernel 6.12
	k612=$(sed -n 's/^KDIR=//p' "$logs/build.log")
	b612=$repo/build/6.12
	must make -s kmod KDIR="$k612" KMOD="$b612/kmod"
	must make -s ktest-mod KDIR="$k612" KTEST="$b612/ktest"
	must make -s -C tests/rdma KDIR="$k612" OUT="$b612/rdma" \
		"$b612/rdma/dray_dmabuf_exp.ko"
	ko612=$b612/kmod/dray.ko
	export DRAY_VM_KERNEL=6.12 DRAY_DMABUF_EXP_KO=$b612/rdma/dray_dmabuf_exp.ko
	export DRAY_KTEST_KO=$b612/ktest/dray_ktest.ko
	stage 6.12-selftests scripts/vm-run.sh --timeout 1200 --module "$ko612" -- \
		bash -c 'eval "$(scripts/rdma-env.sh)" && tests/selftests/run.sh'
	stage 6.12-rdma scripts/vm-run.sh --timeout 2400 --module "$ko612" -- \
		bash -c 'eval "$(scripts/rdma-env.sh)" && DRAY_FAULT_CYCLES=2 tests/rdma/run.sh dray '"$groups612"
	stage 6.12-kverbs scripts/vm-run.sh --timeout 600 --module "$ko612" -- \
		tests/kverbs/run.sh "$b612/ktest/dray_ktest.ko"
	# No cm stage here: 6.12's rdma_cm carries the storage stage's
	# connections and pyverbs' rdmacm tests; 6.1 runs the CM tools.
	# nvmet-rdma on a kernel SRQ here; the 6.1 stage runs it without.
	stage 6.12-storage scripts/vm-run.sh --timeout 1800 --module "$ko612" -- \
		env NVMET_USE_SRQ=1 tests/storage/run.sh dray
	stage 6.12-pyverbs scripts/vm-run.sh --timeout 2400 --module "$ko612" -- \
		tests/pyverbs/run.sh dray
	# rxe of 6.12 against dray: IBTA 1.5 ATOMIC WRITE and FLUSH (the
	# wire format of the rest is the same NIC model's on either kernel).
	stage 6.12-interop scripts/vm-run.sh --timeout 1800 --module "$ko612" -- \
		tests/interop/interop.sh ibta15
	# NVMe-oF the other way: the host on rxe0 of 6.12, the target on
	# dray1 (6.1's rxe host stalls; Documentation/testing.md).
	stage 6.12-interop-nvmeof scripts/vm-run.sh --timeout 900 --module "$ko612" -- \
		tests/storage/run.sh rxe-dray nvmeof
	unset DRAY_VM_KERNEL DRAY_DMABUF_EXP_KO DRAY_KTEST_KO
	# 13. Needs root for dpkg and the throw-away root.
	if [[ $EUID -eq 0 ]]; then
		stage package tests/package/run.sh
	else
		echo "test: not root, skipping stage package"
	fi
fi

if [[ -n $debug ]]; then
	echo "=== debug kernel (waiting for scripts/debug-kernel.sh)"
	if ! wait "$debug_pid"; then
		tail -40 "$logs/debug-kernel.log"
		echo "test: build step failed: scripts/debug-kernel.sh"
		echo "$total_pass passed, $((total_fail + 1)) failed, $total_skip skipped"
		exit 1
	fi
	cat "$logs/debug-kernel.log"
	dkdir=$(sed -n 's/^KDIR=//p' "$logs/debug-kernel.env")
	# dray.ko, dray_ktest.ko and the dma-buf test exporter against the
	# debug kernel, apart from the modules of the other stages.
	dbuild=$repo/build/debug
	must make -s kmod KDIR="$dkdir" KMOD="$dbuild/kmod"
	must make -s ktest-mod KDIR="$dkdir" KTEST="$dbuild/ktest"
	must make -s -C tests/rdma KDIR="$dkdir" OUT="$dbuild/rdma" \
		"$dbuild/rdma/dray_dmabuf_exp.ko"
	dko=$dbuild/kmod/dray.ko
	export DRAY_VM_KERNEL=debug
	# The debug kernel moves data about two orders of magnitude slower
	# under TCG: the programs of tests/rdma run through
	# scripts/vm/debug-rdma (integrity with a quarter of the iterations),
	# and every test program's RC QPs get an ACK timeout of 1.07 s
	# (exponent 18), not 67 ms.
	export DRAY_RDMA_BIN=$repo/scripts/vm/debug-rdma
	export DRAY_RDMA_TIMEOUT_EXP=18
	export DRAY_DMABUF_EXP_KO=$dbuild/rdma/dray_dmabuf_exp.ko
	export DRAY_KTEST_KO=$dbuild/ktest/dray_ktest.ko

	# 10 cycles of each life-cycle loop, not 50: a module load and
	# unload there costs about 2 s (the 50 took 158 s of the stage's 289
	# on 2026-12-06); 6.1 and 6.12 run the 50.
	stage debug-selftests scripts/vm-run.sh --timeout 1800 --module "$dko" -- \
		bash -c 'eval "$(scripts/rdma-env.sh)" && DRAY_LIFECYCLE_CYCLES=10 tests/selftests/run.sh'
	stage debug-rdma scripts/vm-run.sh --timeout 2400 --module "$dko" -- \
		bash -c 'eval "$(scripts/rdma-env.sh)" && DRAY_FAULT_CYCLES=1 DRAY_INTEGRITY_BIG=16m DRAY_INJECT_FRAMES=10000 DRAY_INJECT_INTEG_ITERS=2400 DRAY_HOSTILE_STORM=20000 tests/rdma/run.sh dray integrity verbs_err hostile ud uc xrc srq dm dmabuf inject failnth abifuzz faults'
	stage debug-kverbs scripts/vm-run.sh --timeout 900 --module "$dko" -- \
		tests/kverbs/run.sh "$dbuild/ktest/dray_ktest.ko"
	stage debug-cm scripts/vm-run.sh --timeout 1200 --module "$dko" -- \
		env DRAY_CM_PERFTEST=0 tests/cm/run.sh
	stage debug-storage scripts/vm-run.sh --timeout 1800 --module "$dko" -- \
		env STORAGE_SMALL=1 tests/storage/run.sh dray
	unset DRAY_VM_KERNEL DRAY_RDMA_BIN DRAY_RDMA_TIMEOUT_EXP DRAY_DMABUF_EXP_KO
	unset DRAY_KTEST_KO
fi

# The failed cases again, so that the end of the output names them: each
# "not ok" line with the comment lines that follow it (up to 12), and each
# stage that ended without a summary or with a kernel problem, with what
# vm-run.sh said about it (the first kernel report whole).
if [[ $total_fail -ne 0 ]]; then
	echo "=== failed"
	for f in "$logs"/*.log; do
		awk -v st="$(basename "$f" .log)" '
		/^(# )?not ok/ && !/# TODO/ { print st ": " $0; n = 12; next }
		n > 0 && /^#/ { print st ":   " $0; n--; next }
		{ n = 0 }' "$f"
	done
	for st in "${failed_stages[@]}"; do
		echo "$st: counted as failed; what vm-run.sh said:"
		awk '/^vm-run.sh:/ { on = 1 } on && shown < 60 { print "  " $0; shown++ }' \
			"$logs/$st.log"
		[[ ! -f $logs/$st.console ]] || echo "  (kernel console kept in $logs/$st.console)"
	done
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[[ $total_fail -eq 0 ]]
