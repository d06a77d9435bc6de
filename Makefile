# SPDX-License-Identifier: GPL-2.0
# pmuctx top-level build.  The module objects are listed in Kbuild; this file
# drives the host-side targets.  See README.md.
#
#   make deps            install everything from Debian (idempotent)
#   make                 build pmuctx.ko (KDIR=... to choose the kernel tree)
#   make ARCH=arm64      cross-build pmuctx.ko for the Debian arm64 test kernel
#   make check           everything CI runs; ends with "N passed, N failed"
#   make demo            boot a VM, load pmuctx, show it working

ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

SHELL := /bin/bash
TOP := $(CURDIR)
PMUCTX_CACHE ?= /var/cache/pmuctx
export PMUCTX_CACHE
BUILD := $(TOP)/build
ARCH ?= $(shell uname -m | sed -e 's/aarch64/arm64/')
KFACTS = . scripts/env.sh && pmuctx_kernel_facts

ifeq ($(ARCH),arm64)
CROSS_CC := $(if $(filter aarch64,$(shell uname -m)),gcc,aarch64-linux-gnu-gcc)
else
CROSS_CC := gcc
endif

# Default kernel tree: the running kernel's headers when installed, else the
# Debian kernel the VMs boot.
KDIR ?= $(shell if [ "$(ARCH)" = "$$(uname -m | sed 's/aarch64/arm64/')" ] && \
	[ -d /lib/modules/$$(uname -r)/build ]; then echo /lib/modules/$$(uname -r)/build; \
	else $(KFACTS) && . scripts/lane.sh && pmuctx_lane $(ARCH) && echo $$LANE_KDIR; fi)

.PHONY: all module deps userspace selftests tools check demo bench style clean

all: module

module:
	scripts/build-module --arch $(ARCH) --kdir $(KDIR) --out $(BUILD)/module-$(ARCH)
	@echo "built $(BUILD)/module-$(ARCH)/pmuctx.ko against $(KDIR)"

deps:
	scripts/deps.sh

# Static userspace for one arch: selftests and, once they exist, the tools.
userspace: selftests tools

selftests:
	$(MAKE) -s -C tools/selftests/pmuctx OUT=$(BUILD)/$(ARCH)/selftests \
		CC=$(CROSS_CC) KSELFTEST_DIR=$$($(KFACTS) && echo $$KSELFTEST_DIR)

tools:
	$(MAKE) -s -C tools OUT=$(BUILD)/$(ARCH)/bin CC=$(CROSS_CC) STATIC=1
	$(CROSS_CC) -O2 -Wall -Wextra -static -Iinclude/uapi -Itools/lib \
		-o $(BUILD)/$(ARCH)/bin/ctxsw $(wildcard tools/bench/*.c) $(BUILD)/$(ARCH)/bin/libpmuctx.a

bench:
	scripts/bench

check:
	scripts/check

demo:
	scripts/demo

style:
	scripts/style-check

clean:
	rm -rf $(BUILD)
	@if [ -f tools/Makefile ]; then $(MAKE) -s -C tools clean; fi

endif
