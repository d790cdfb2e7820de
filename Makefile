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
#   make lint      checkpatch, kernel-doc, W=1 and sparse on what the series adds
#   make series    export a git-am-able series to build/series
#
# CONFIG=guest (default) or CONFIG=debug (guest + configs/debug.config).

SHELL := /bin/bash
.DEFAULT_GOAL := help
CONFIG ?= guest
JOBS ?= $(shell nproc)
TOP := $(CURDIR)
SRC := $(TOP)/build/linux
KOBJ := $(TOP)/build/obj-$(CONFIG)
BZIMAGE := $(KOBJ)/arch/x86/boot/bzImage
FRAGMENTS := configs/guest.config $(if $(filter debug,$(CONFIG)),configs/debug.config)
export CCACHE_DIR ?= $(TOP)/build/ccache
export CCACHE_MAXSIZE ?= 5G
KMAKE := $(MAKE) --no-print-directory -C $(SRC) O=$(KOBJ) CC="ccache gcc" \
	HOSTCC="ccache gcc" LOCALVERSION= -j$(JOBS)

ifneq ($(filter-out guest debug,$(CONFIG)),)
$(error CONFIG must be guest or debug, not '$(CONFIG)')
endif

.PHONY: help tree refresh kernel perf demo test run lint series clean

help:
	@sed -n '3,15s/^# \{0,1\}//p' Makefile

tree:
	@harness/tree.py prepare $(if $(FORCE),--force)

refresh:
	@harness/tree.py refresh $(if $(PATCH),--patch $(PATCH))

$(KOBJ)/.fragments.stamp: $(FRAGMENTS) harness/kconfig | tree
	@harness/kconfig $(KOBJ) $(FRAGMENTS)
	@touch $@

kernel: tree $(KOBJ)/.fragments.stamp
	@+$(KMAKE) bzImage
	@echo "kernel: $(BZIMAGE)"

clean:
	rm -rf build/obj-* build/bin build/perf-obj build/kselftest build/demo build/vm
