# SPDX-License-Identifier: GPL-2.0-only
# dray top-level build.
#
#   make               dray.ko and the rdma-core provider
#   make module        dray.ko only (W=1 and C=1 work as in the kernel)
#   make provider      rdma-core 56.1 with providers/dray, tools and pyverbs
#   make unit          user-space unit tests
#   make fuzz          the libFuzzer targets (tests/fuzz), FUZZ_TIME s each
#   make selftests     kernel selftests (run inside the VM)
#   make check         checkpatch --strict, W=1 and sparse builds
#   make demo          the main job: build, boot, create dray0, ibv_devinfo
#   make test          every test; ends with "N passed, N failed"
#   make debug         the debug stages of `test` only: the VM lanes under the
#                      debug kernel (KASAN, lockdep, UBSAN, kmemleak, ...)
#   make debug-kernel  build (or find cached) the debug kernel
#   make debug-module  dray.ko against the debug kernel, in build/debug/kmod
#   make smoke         RC data-path smoke lane in the VM (not yet in `test`)
#   make kverbs        kernel-verbs tests (tests/kverbs/dray_ktest.ko) in the VM
#   make interop       wire interop with Soft-RoCE (rxe) in the VM (`test` runs a subset)
#   make cm            RDMA CM over the GSI QP in the VM (tests/cm/run.sh)
#   make storage       NVMe-oF and NFS over RDMA in the VM (tests/storage/run.sh)
#   make pyverbs       rdma-core's pyverbs suite against dray0 in the VM

KVER ?= $(shell $(CURDIR)/scripts/kver.sh)
KDIR ?= /usr/src/linux-headers-$(KVER)
BUILD := $(CURDIR)/build
# The module is built from a copy of its sources in build/kmod: kbuild's
# clean for an external module deletes every object file below M=, which
# must never reach the rdma-core build in build/.
KMOD := $(BUILD)/kmod
KSRC := Kbuild drivers include
# The kernel-verbs test module, built the same way from build/ktest.
KTEST := $(BUILD)/ktest
# kbuild compiles the modules' files in parallel, one job per CPU.
JOBS ?= $(shell nproc)

.PHONY: all module kmod ktest-mod provider unit fuzz selftests check demo test smoke \
	kverbs interop cm storage pyverbs debug debug-kernel debug-module clean

all: module provider

module: kmod
	cp $(KMOD)/dray.ko $(BUILD)/dray.ko

# Copy the module sources to $(KMOD) and build there (KMOD= may name
# another directory, as scripts/check.sh does for its W=1 and C=1 builds).
kmod:
	@mkdir -p $(KMOD)
	@cp -a --parents $$(git ls-files -co --exclude-standard $(KSRC)) $(KMOD)/
	$(MAKE) -j$(JOBS) -C $(KDIR) M=$(KMOD) modules

# The test module (KTEST= may name another directory, as for kmod).
ktest-mod:
	@mkdir -p $(KTEST)
	@cp -a tests/kverbs/Kbuild tests/kverbs/*.[ch] $(KTEST)/
	$(MAKE) -j$(JOBS) -C $(KDIR) M=$(KTEST) modules

provider:
	scripts/build-rdma-core.sh

unit:
	$(MAKE) -C tests/unit

fuzz:
	$(MAKE) -C tests/fuzz run

selftests: provider
	$(MAKE) -C tests/selftests

check:
	scripts/check.sh

demo:
	scripts/demo.sh

test:
	scripts/test.sh

debug:
	scripts/test.sh --debug-only

debug-kernel:
	scripts/debug-kernel.sh

# The debug build lives apart from build/dray.ko (KMOD=, KTEST=).
DEBUG_KDIR = $(shell $(CURDIR)/scripts/debug-kernel.sh | sed -n 's/^KDIR=//p')
debug-module:
	$(MAKE) kmod KDIR=$(DEBUG_KDIR) KMOD=$(BUILD)/debug/kmod
	$(MAKE) ktest-mod KDIR=$(DEBUG_KDIR) KTEST=$(BUILD)/debug/ktest

smoke: module provider
	scripts/vm-run.sh --timeout 900 --module $(BUILD)/dray.ko -- tests/smoke/rc-smoke.sh

kverbs: module ktest-mod
	scripts/vm-run.sh --timeout 600 --module $(BUILD)/dray.ko -- \
		tests/kverbs/run.sh $(KTEST)/dray_ktest.ko

interop: module provider
	$(MAKE) -C tests/rdma
	$(MAKE) -C tests/interop
	scripts/vm-run.sh --timeout 2400 --module $(BUILD)/dray.ko -- tests/interop/interop.sh

cm: module provider
	scripts/vm-run.sh --timeout 900 --module $(BUILD)/dray.ko -- tests/cm/run.sh

storage: module
	scripts/vm-run.sh --timeout 1800 --module $(BUILD)/dray.ko -- tests/storage/run.sh dray

pyverbs: module provider
	scripts/vm-run.sh --timeout 3600 --module $(BUILD)/dray.ko -- tests/pyverbs/run.sh dray

clean:
	rm -rf $(KMOD) $(KTEST) $(BUILD)/dray.ko $(BUILD)/debug
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/fuzz clean
	-$(MAKE) -C tests/selftests clean
	-$(MAKE) -C tests/interop clean
