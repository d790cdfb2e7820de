# SPDX-License-Identifier: GPL-2.0
#
# Deferred user-space stack unwinding for Linux 6.12: build, boot and test.
#
#   make run       boot the built kernel and profile a demo (or CMD='prog args')
#   make test      build what is stale, boot, run every test, print the tally
#   make tree      prepare build/linux: base + patches/ + the overlay
#   make refresh   write edits made in build/linux back into the repository
#   make kernel    build build/obj-$(CONFIG)/arch/x86/boot/bzImage
#   make perf      build the perf tool of the prepared tree as build/bin/perf
#   make unwindprof  build the BPF profiler (tools/bpf/unwindprof) as build/bin/unwindprof
#   make cfi2sframe  build the .eh_frame to SFrame converter (tools/unwind) as build/bin/cfi2sframe
#   make lint      checkpatch, kernel-doc, W=1 and sparse on what the series adds
#   make series    export a git-am-able series to build/series
#   make matrix    build the series' objects with W=1 in 12 configurations
#   make bisect    build, W=1 and boot the series one patch at a time (slow)
#   make torture   a long torture run (DURATION=600 seconds), not in CI
#   make bench     benchmarks against perf's in-NMI walk and DWARF: bench/results.md
#   make bench-bytes  perf.data bytes per sample, fp against fp,defer (quick)
#   make bench-insns  kernel instructions per operation, counted (null syscall)
#   make bench-insns-hist BEFORE=DIR  the same, function by function, of two kernels
#
# CONFIG=guest (default), CONFIG=debug (guest + configs/debug.config) or
# CONFIG=kcsan (guest + configs/kcsan.config; torture and kselftests only).
# CONFIG=nounwind (guest without CONFIG_UNWIND_USER) is make bench's baseline.

SHELL := /bin/bash
.DEFAULT_GOAL := help
CONFIG ?= guest
export CONFIG
JOBS ?= $(shell nproc)
TOP := $(CURDIR)
SRC := $(TOP)/build/linux
KOBJ := $(TOP)/build/obj-$(CONFIG)
BZIMAGE := $(KOBJ)/arch/x86/boot/bzImage
ifeq ($(CONFIG),nounwind)
# guest.config's UNWIND_USER lines name options that cannot exist without
# the core, so they are left out rather than overridden.
FRAGMENTS := $(KOBJ)/guest-nounwind.config
$(KOBJ)/guest-nounwind.config: configs/guest.config configs/nounwind.config
	@mkdir -p $(@D)
	@{ grep -v '^CONFIG_UNWIND_USER' configs/guest.config; cat configs/nounwind.config; } >$@
else
FRAGMENTS := configs/guest.config $(if $(filter-out guest,$(CONFIG)),configs/$(CONFIG).config)
endif
export CCACHE_DIR ?= $(TOP)/build/ccache
export CCACHE_MAXSIZE ?= 5G
KMAKE := $(MAKE) --no-print-directory -C $(SRC) O=$(KOBJ) CC="ccache gcc" \
	HOSTCC="ccache gcc" LOCALVERSION= -j$(JOBS)

ifneq ($(filter-out guest debug kcsan nounwind,$(CONFIG)),)
$(error CONFIG must be guest, debug, kcsan or nounwind, not '$(CONFIG)')
endif

.PHONY: help tree refresh kernel perf perf-asan unwindprof cfi2sframe demo python kselftest test run lint series clean bench mainline-perf stock-cache \
	torture matrix bisect bench-bytes bench-insns bench-insns-hist bench-sframe-cost code-frames-check

help:
	@sed -n '3,25s/^# \{0,1\}//p' Makefile

# Packages the build and tests need, installed with apt the first time
# (and when the list changes), so that a fresh clone needs no other step.
DEPS_STAMP := build/.deps.stamp
$(DEPS_STAMP): harness/install-deps
	@harness/install-deps
	@mkdir -p $(@D) && touch $@

tree: $(DEPS_STAMP)
	@harness/tree.py prepare $(if $(FORCE),--force)

refresh:
	@harness/tree.py refresh $(if $(PATCH),--patch $(PATCH))

$(KOBJ)/.fragments.stamp: $(FRAGMENTS) harness/kconfig | tree
	@harness/kconfig $(KOBJ) $(FRAGMENTS)
	@touch $@

kernel: tree $(KOBJ)/.fragments.stamp
	@+$(KMAKE) bzImage modules headers
	@echo "kernel: $(BZIMAGE)"

clean:
	rm -rf build/obj-* build/bin build/perf-obj build/kselftest build/demo build/vm

# The perf tool of the prepared tree, with libelf and libdw for symbols and
# DWARF. Python/Perl scripting and BPF skeletons are off: nothing here uses
# them and they would need more build dependencies. libunwind is off too:
# make bench installs it for unw_backtrace(), and perf's DWARF unwinding
# stays libdw's, as the benchmarks have always measured it.
PERF_FLAGS := O=$(TOP)/build/perf-obj NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JVMTI=1 \
	NO_LIBUNWIND=1 \
	BUILD_BPF_SKEL=0 NO_SHELLCHECK=1 CC="ccache gcc" HOSTCC="ccache gcc" \
	WERROR=0 prefix=/usr

perf: tree
	@mkdir -p build/perf-obj build/bin
	@+$(MAKE) --no-print-directory -C $(SRC)/tools/perf $(PERF_FLAGS) -j$(JOBS) >build/perf-obj/build.log 2>&1 || \
		{ tail -40 build/perf-obj/build.log; echo "perf: build failed, log: build/perf-obj/build.log"; exit 1; }
	@install -m 755 build/perf-obj/perf build/perf-obj/perf-archive build/bin/
	@build/bin/perf version --build-options | grep -E 'dwarf|libelf|libtraceevent' | sed 's/^/perf: /'

# The same perf built with AddressSanitizer and UBSan, in its own directory:
# the test of damaged perf.data files (harness/tests/guest/perf-crafted.sh)
# reads them with it.
perf-asan: tree
	@mkdir -p build/perf-asan-obj
	@+$(MAKE) --no-print-directory -C $(SRC)/tools/perf $(subst perf-obj,perf-asan-obj,$(PERF_FLAGS)) \
		EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -g" \
		LDFLAGS="-fsanitize=address,undefined" -j$(JOBS) >build/perf-asan-obj/build.log 2>&1 || \
		{ tail -40 build/perf-asan-obj/build.log; echo "perf-asan: build failed, log: build/perf-asan-obj/build.log"; exit 1; }
	@install -m 755 build/perf-asan-obj/perf build/bin/perf-asan

# Host-built programs the guest runs over 9p: the demo and the harness's own
# smoke tests. Frame pointers everywhere, so user stacks can be walked. They
# take the series' uapi (prctl options, perf ABI) from the headers of the
# kernel built here, as the selftests do (KHDR_INCLUDES).
UAPI := $(KOBJ)/usr/include
UAPI_CFLAGS := -isystem $(UAPI)
USER_CFLAGS := -O2 -g -Wall -Wextra -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls $(UAPI_CFLAGS)

# The kernel's uapi headers alone, without building it.
$(UAPI)/linux/prctl.h: $(KOBJ)/.fragments.stamp
	@+$(KMAKE) headers

build/demo/deepstack: demo/deepstack.c
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -o $@ $<

build/demo/minivm: demo/minivm.c tools/testing/selftests/unwind/minivm.h $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -o $@ $<

build/test-progs/perf_smoke: harness/tests/guest/perf_smoke.c
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -o $@ $<

build/test-progs/thread_churn: harness/tests/guest/thread_churn.c
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -pthread -o $@ $<

# For stock-tables: one sample carrying the kernel's chain and dwarf's.
build/test-progs/dwarf_also.so: harness/tests/guest/dwarf_also.c $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -fPIC -shared -o $@ $< -ldl

# For stock-clients: a stock program's first write() reads its own stack.
build/test-progs/own_stack.so: harness/tests/guest/own_stack.c $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -fPIC -shared -o $@ $< -ldl

demo: build/demo/deepstack build/demo/minivm python

# The CPython extension that reports Python frames (python/unwind_report.c),
# built against Debian's python3.11 (python3.11-dev), whose private frame
# layout it reads.
PY_EXT := build/python/unwind_report$(shell /usr/bin/python3.11-config --extension-suffix 2>/dev/null)
$(PY_EXT): python/unwind_report.c $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
		-fPIC -shared -fno-omit-frame-pointer $(UAPI_CFLAGS) \
		$$(/usr/bin/python3.11-config --includes) -o $@ $<
python: $(PY_EXT)

# kselftests of the series, installed where the guest finds them.
KSELFTEST_TARGETS := unwind
kselftest: tree
	@rm -rf build/kselftest
	@if [ -d $(SRC)/tools/testing/selftests/unwind ]; then \
		$(MAKE) --no-print-directory -C $(SRC)/tools/testing/selftests \
			TARGETS="$(KSELFTEST_TARGETS)" O=$(TOP)/build/kselftest-obj \
			KHDR_INCLUDES="-isystem $(KOBJ)/usr/include" VMLINUX_BTF=$(KOBJ)/vmlinux \
			INSTALL_PATH=$(TOP)/build/kselftest install >build/kselftest.log 2>&1 || \
		{ tail -30 build/kselftest.log; exit 1; }; \
	fi

# unwindprof, the BPF profiler built on deferred user stacks
# (tools/bpf/unwindprof), with this tree's libbpf and bootstrap bpftool,
# against the BTF of the kernel just built.
unwindprof: kernel
	@mkdir -p build/unwindprof build/bin
	@+$(MAKE) --no-print-directory -C $(SRC)/tools/bpf/unwindprof OUTPUT=$(TOP)/build/unwindprof/ \
		VMLINUX_BTF=$(KOBJ)/vmlinux CLANG=clang-16 >build/unwindprof/build.log 2>&1 || \
		{ tail -40 build/unwindprof/build.log; echo "unwindprof: build failed, log: build/unwindprof/build.log"; exit 1; }
	@install -m 755 build/unwindprof/unwindprof build/bin/
	@echo "unwindprof: build/bin/unwindprof"

# A real multithreaded program from Debian's sources, built with frame
# pointers: the real-zstd test stream profiles it.
build/real/zstd: harness/build-zstd
	@harness/build-zstd build/real

build/real/xz: harness/build-xz
	@harness/build-xz build/real

build/real/bzip2: harness/build-bzip2
	@harness/build-bzip2 build/real

# The frames-from-code reading built on the host from the kernel's source,
# which run-tests checks against the C library's .eh_frame.
code-frames-check: tree
	@$(MAKE) --no-print-directory -C harness/code-frames-check

# cfi2sframe, SFrame tables from .eh_frame (tools/unwind), a host tool.
cfi2sframe: tree
	@mkdir -p build/cfi2sframe build/bin
	@+$(MAKE) --no-print-directory -C $(SRC)/tools/unwind OUTPUT=$(TOP)/build/cfi2sframe/ \
		>build/cfi2sframe/build.log 2>&1 || \
		{ tail -40 build/cfi2sframe/build.log; echo "cfi2sframe: build failed, log: build/cfi2sframe/build.log"; exit 1; }
	@install -m 755 build/cfi2sframe/cfi2sframe build/bin/

test: kernel perf perf-asan unwindprof cfi2sframe stock-cache demo python kselftest code-frames-check mainline-perf \
	build/test-progs/perf_smoke build/test-progs/thread_churn build/test-progs/dwarf_also.so build/test-progs/own_stack.so \
	build/real/zstd build/real/xz \
	build/real/bzip2
	@harness/run-tests

# Tables for every object of this machine, converted from their .eh_frame
# into a cache by build ID (cfi2sframe -R -n): stock-tables gives the whole
# machine's from it, as README's one command for a real machine does.
stock-cache: cfi2sframe
	@build/bin/cfi2sframe -R -n -q -C build/stock-cache /usr/bin /usr/lib/x86_64-linux-gnu

# Mainline's perf tool (Debian unstable's linux-perf in build/sid), to read
# and write files with ours (harness/tests/guest/perf-mainline.sh).
mainline-perf:
	@harness/mainline-perf --setup

CMD ?= $(TOP)/build/demo/deepstack 3
run: kernel perf demo stock-cache
	@harness/vm-run -- $(TOP)/harness/demo-profile $(TOP)/build/bin/perf $(CMD)

# A long torture run of deferred unwinding, outside CI (harness/torture).
DURATION ?= 600
torture: kernel kselftest
	@DURATION=$(DURATION) harness/torture

# Benchmarks: the unwind_bench micro-benchmark and the perf tool on three
# workloads, in one guest run; bench/report.py writes the table and plot.
BENCH_PROGS := build/bench/micro build/bench/workload \
	       build/bench/micro-sframe build/bench/workload-sframe \
	       build/bench/selfstack build/bench/selfstack-sframe \
	       build/bench/selfstack-noeh build/bench/guess build/bench/selfunwind
build/bench/micro: bench/micro.c tools/testing/selftests/unwind/unwind_helpers.h \
		   $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -o $@ $<
build/bench/workload: bench/workload.c
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -o $@ $< -lpthread
# The same programs as distributions build them (no frame pointers), with
# SFrame tables: the walker's SFrame steps against its frame-pointer ones.
SFRAME_USER_CFLAGS := $(filter-out -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,\
	$(USER_CFLAGS)) -fomit-frame-pointer -Wa,--gsframe
build/bench/micro-sframe: bench/micro.c tools/testing/selftests/unwind/unwind_helpers.h \
			  $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc $(SFRAME_USER_CFLAGS) -o $@ $<
build/bench/workload-sframe: bench/workload.c
	@mkdir -p $(@D)
	gcc $(SFRAME_USER_CFLAGS) -o $@ $< -lpthread
# A program reading its own stack: the kernel's walker against backtrace()
# and libunwind, with frame pointers, without them but with SFrame tables
# (and .eh_frame, as distributions build), and with SFrame tables only (no
# .eh_frame, which the DWARF unwinders need).
SELFSTACK_DEPS := bench/selfstack.c tools/testing/selftests/unwind/user_backtrace.h \
		  $(UAPI)/linux/prctl.h
build/bench/selfstack: $(SELFSTACK_DEPS)
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -o $@ $< -lunwind
build/bench/selfstack-sframe: $(SELFSTACK_DEPS)
	@mkdir -p $(@D)
	gcc $(SFRAME_USER_CFLAGS) -o $@ $< -lunwind
build/bench/selfstack-noeh: $(SELFSTACK_DEPS)
	@mkdir -p $(@D)
	gcc $(SFRAME_USER_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-o $@ $< -lunwind

# Guessed frames against backtrace()'s, on the selftests' chain built the
# way distributions build code: no frame pointers, no SFrame.
build/bench/guess: bench/guess.c tools/testing/selftests/unwind/unwind_chain.h \
		   tools/testing/selftests/unwind/unwind_helpers.h \
		   tools/testing/selftests/unwind/user_backtrace.h $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -fomit-frame-pointer -fno-optimize-sibling-calls -fno-inline \
		$(UAPI_CFLAGS) -o $@ $<

# Self-unwinding by signal: the signal round trip per kernel entry.
build/bench/selfunwind: bench/selfunwind.c $(UAPI)/linux/prctl.h
	@mkdir -p $(@D)
	gcc $(USER_CFLAGS) -o $@ $<

# Kernel instructions per operation, counted by a TCG plugin rather than
# timed: the null system call on the series' kernel against the same guest
# kernel without it (CONFIG=nounwind), and the deferred and in-NMI walks
# (bench/insns/run, bench/insns/results.md).
build/bench/insns-plugin.so: bench/insns/plugin.c
	@mkdir -p $(@D)
	gcc -O2 -Wall -shared -fPIC -o $@ $<
build/bench/insns-probe: bench/insns/probe.c
	@mkdir -p $(@D)
	gcc -O1 -g -Wall -fno-omit-frame-pointer -static -no-pie -o $@ $<
build/bench/insns-probe-gsframe: bench/insns/probe.c
	@mkdir -p $(@D)
	gcc -O1 -g -Wall -fomit-frame-pointer -fno-optimize-sibling-calls -Wa,--gsframe \
		-static -no-pie -o $@ $<
build/bench/insns-probe-file: bench/insns/probe.c
	@mkdir -p $(@D)
	gcc -O1 -g -Wall -fomit-frame-pointer -fno-optimize-sibling-calls -static -no-pie -o $@ $<
INSNS_PROGS := build/bench/insns-plugin.so build/bench/insns-probe
bench-insns: kernel $(INSNS_PROGS)
	@+$(MAKE) --no-print-directory kernel CONFIG=nounwind
	@bench/insns/run build/bench-insns nounwind $(CONFIG)

# Where two kernels' instructions of a phase go, function by function:
# BEFORE names a kernel's object directory (or CONFIG), e.g. one built from
# an older commit; AFTER defaults to this CONFIG's (bench/insns/hist).
bench-insns-hist: kernel $(INSNS_PROGS)
	@[ -n "$(BEFORE)" ] || { echo "bench-insns-hist: BEFORE=DIR names the other kernel" >&2; exit 2; }
	@bench/insns/hist build/bench-insns-hist $(BEFORE) $(or $(AFTER),$(CONFIG)) $(PHASES)

# The walk's cost per frame by a table given for the file, against the
# assembler's section and frame pointers (issue 45): bench/insns/sframe.md.
bench-sframe-cost: kernel cfi2sframe $(INSNS_PROGS) build/bench/insns-probe-gsframe build/bench/insns-probe-file
	@bench/insns/run-sframe build/bench-sframe-cost

# The null system call is also timed on the same guest kernel without the
# series (CONFIG=nounwind), in boots alternating with the series' kernel.
NULL_BOOTS ?= 3
bench: kernel perf unwindprof cfi2sframe stock-cache demo $(BENCH_PROGS) $(INSNS_PROGS) build/real/zstd build/real/xz \
	build/real/bzip2
	@+$(MAKE) --no-print-directory kernel CONFIG=nounwind
	@bench/insns/run build/bench-insns nounwind $(CONFIG)
	@rm -rf build/bench-out && mkdir -p build/bench-out
	@harness/vm-run --timeout 3600 --mem 3072 --nmi --rw $(TOP)/build/bench-out \
		--env ZSTD=$(TOP)/build/real/zstd --env XZ=$(TOP)/build/real/xz \
		--env BZIP2_PROG=$(TOP)/build/real/bzip2 --env C2S=$(TOP)/build/bin/cfi2sframe \
		--env SRC=$(TOP)/build/linux --env MINIVM=$(TOP)/build/demo/minivm -- \
		$(TOP)/bench/run-guest $(TOP)/build/bench-out $(TOP)/build/bin/perf $(TOP)/build/bench \
		$(TOP)/build/bin/unwindprof
	@for i in $$(seq $(NULL_BOOTS)); do for k in nounwind $(CONFIG); do \
		echo "bench: null system calls on $$k, boot $$i"; \
		harness/vm-run --kernel $(TOP)/build/obj-$$k/arch/x86/boot/bzImage --timeout 600 \
			--rw $(TOP)/build/bench-out -- /bin/sh -c \
			"$(TOP)/build/bench/micro null 5 2000 >>$(TOP)/build/bench-out/null-$$k.txt" || exit 1; \
	done; done
	@bench/report.py build/bench-out bench/results.md bench/cost-vs-depth.svg "make bench"
	@echo "bench: bench/results.md, bench/cost-vs-depth.svg"

# perf.data bytes per sample, fp against fp,defer, on bench's workloads
# and zstd: a quick subset of make bench (bench/bytes-guest).
bench-bytes: kernel perf $(BENCH_PROGS) build/real/zstd
	@harness/vm-run --timeout 1800 --mem 3072 \
		--env ZSTD=$(TOP)/build/real/zstd --env SRC=$(TOP)/build/linux -- \
		$(TOP)/bench/bytes-guest $(TOP)/build/bin/perf $(TOP)/build/bench

lint: tree $(KOBJ)/.fragments.stamp
	@harness/lint

series: tree
	@harness/tree.py series

# The config matrix (harness/config-matrix): guest, each client and
# feature off, i386, Debian's amd64 config. NAMES= picks some.
matrix: kernel
	@harness/config-matrix $(NAMES)

# The series one patch at a time (harness/bisect-lane); FIRST= and LAST=
# pick a range. Its own tree and objects in build/bisect.
bisect: series
	@harness/bisect-lane $(FIRST) $(LAST)
