# SPDX-License-Identifier: GPL-2.0
# pmuctx top-level build.  The module objects are listed in Kbuild; this file
# drives the host-side targets.  See README.md.
#
#   make deps            install everything from Debian (idempotent)
#   make                 build pmuctx.ko (KDIR=... to choose the kernel tree)
#   make ARCH=arm64      cross-build pmuctx.ko for the Debian arm64 test kernel
#   make check           everything CI runs; ends with "N passed, N failed"
#   make demo            boot a VM, load pmuctx, show it working
#   make install         module (DKMS), CLI, libpmuctx, man pages; PREFIX, DESTDIR
#   make uninstall       remove what 'make install' installed (same variables)
#   make deb             Debian packages in build/deb/ (dpkg-buildpackage)

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

# Userspace compiles go through ccache (scripts/ccache.sh), paths taken
# relative to the tree (CCACHE_BASEDIR), so a new clone of it finds the last
# one's objects: "env PATH=... CCACHE_...=..." before each compiling make,
# or nothing (PMUCTX_NO_CCACHE=1, no ccache).  Only here: the debug kernels
# make deps builds stay out of the cache's size.
WITH_CCACHE := $(shell . scripts/env.sh && . scripts/ccache.sh && pmuctx_ccache_env && \
	echo env PATH=$$PATH $$(env | grep '^CCACHE_' | sort) CCACHE_BASEDIR=$(TOP))

# Default kernel tree: the running kernel's headers when installed, else the
# Debian kernel the VMs boot.
KDIR ?= $(shell if [ "$(ARCH)" = "$$(uname -m | sed 's/aarch64/arm64/')" ] && \
	[ -d /lib/modules/$$(uname -r)/build ]; then echo /lib/modules/$$(uname -r)/build; \
	else $(KFACTS) && . scripts/lane.sh && pmuctx_lane $(ARCH) && echo $$LANE_KDIR; fi)

.PHONY: all module deps userspace selftests tools fuzz x86-pmu perf-throttle check demo bench bench-scale papi-ctests perf-tests style clean \
	install install-build install-tools install-lib install-dkms-src install-man4 \
	install-module uninstall deb

all: module

module:
	scripts/build-module --arch $(ARCH) --kdir $(KDIR) --out $(BUILD)/module-$(ARCH)
	@echo "built $(BUILD)/module-$(ARCH)/pmuctx.ko against $(KDIR)"

deps:
	scripts/deps.sh

# Static userspace for one arch: selftests and, once they exist, the tools.
userspace: selftests tools fuzz x86-pmu perf-throttle

selftests:
	$(WITH_CCACHE) $(MAKE) -s -C tools/selftests/pmuctx OUT=$(BUILD)/$(ARCH)/selftests \
		CC=$(CROSS_CC) KSELFTEST_DIR=$$($(KFACTS) && echo $$KSELFTEST_DIR)

tools:
	$(WITH_CCACHE) $(MAKE) -s -C tools OUT=$(BUILD)/$(ARCH)/bin CC=$(CROSS_CC) STATIC=1
	$(WITH_CCACHE) $(MAKE) -s -C tools OUT=$(BUILD)/$(ARCH)/bin CC=$(CROSS_CC) perf-shim
	$(WITH_CCACHE) $(CROSS_CC) -O2 -Wall -Wextra -static -Iinclude/uapi -Itools/lib \
		-o $(BUILD)/$(ARCH)/bin/ctxsw $(wildcard tools/bench/*.c) $(BUILD)/$(ARCH)/bin/libpmuctx.a -lm

# The ABI fuzzer (tools/testing/fuzz), packed into the VM's /usr/bin.
fuzz:
	$(WITH_CCACHE) $(MAKE) -s -C tools/testing/fuzz OUT=$(BUILD)/$(ARCH)/bin CC=$(CROSS_CC)

# The x86 PMU emulation's test (tools/testing/x86-pmu, x86_64 only).
x86-pmu:
ifeq ($(ARCH),x86_64)
	$(WITH_CCACHE) $(MAKE) -s -C tools/testing/x86-pmu OUT=$(BUILD)/$(ARCH)/bin CC=$(CROSS_CC)
endif

# perf's sampling under throttling, without pmuctx (tools/testing/perf-throttle).
perf-throttle:
	$(WITH_CCACHE) $(MAKE) -s -C tools/testing/perf-throttle OUT=$(BUILD)/$(ARCH)/bin CC=$(CROSS_CC)

bench:
	scripts/bench

bench-scale:
	scripts/bench-scale

# PAPI's own ctests through libpmuctx-perf.so (a ~15 minute report, not a check).
papi-ctests:
	scripts/papi-ctests

# perf's own "perf test" through libpmuctx-perf.so and on the kernel's perf
# (a ~12 minute report, not a check).
perf-tests:
	scripts/perf-tests

check:
	scripts/check

demo:
	scripts/demo

style:
	scripts/style-check

# ---------- install ----------
# GNU-style directories; DESTDIR is prepended to each.  The DKMS source tree
# is always /usr/src/pmuctx-<version>, the only place DKMS looks.
VERSION := $(shell cat $(TOP)/VERSION)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
# libpmuctx-perf.so, for 'pmuctx exec' (found at BINDIR/../lib/pmuctx/).
SHIMDIR ?= $(PREFIX)/lib/pmuctx
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DKMSSRCDIR := /usr/src/pmuctx-$(VERSION)
# How the module is installed: dkms (default when dkms is there), kbuild
# (modules_install into /lib/modules/KVER/updates) or none.
MODULE_INSTALL ?= $(if $(shell command -v dkms),dkms,kbuild)
KVER ?= $(shell uname -r)
INSTALL_OUT ?= $(BUILD)/install
# Outside /usr the CLI finds its library through a run path.
RPATH := $(if $(filter /usr,$(PREFIX)),,$(LIBDIR))
MAN1 := $(wildcard Documentation/man/*.1)
MAN3 := $(wildcard Documentation/man/*.3)
MAN4 := $(wildcard Documentation/man/*.4)
SOLIB := libpmuctx.so.$(VERSION)
# Only root on the real system refreshes the linker cache and depmod.
LIVE := $(if $(DESTDIR),,$(filter 0,$(shell id -u)))

install-build:
	$(MAKE) -s -C tools OUT=$(INSTALL_OUT) SHARED=1 PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) \
		INCLUDEDIR=$(INCLUDEDIR) RPATH=$(RPATH) all perf-shim

install: install-tools install-lib install-module

install-tools: install-build
	install -D -m 755 $(INSTALL_OUT)/pmuctx $(DESTDIR)$(BINDIR)/pmuctx
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -D -m 644 tools/pmuctx/completion.bash $(DESTDIR)$(BASHCOMPDIR)/pmuctx
	install -D -m 644 $(INSTALL_OUT)/libpmuctx-perf.so $(DESTDIR)$(SHIMDIR)/libpmuctx-perf.so

install-lib: install-build
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/pmuctx/linux \
		$(DESTDIR)$(MANDIR)/man3
	install -m 644 $(INSTALL_OUT)/$(SOLIB) $(DESTDIR)$(LIBDIR)/
	ln -sfn $(SOLIB) $(DESTDIR)$(LIBDIR)/libpmuctx.so.0
	ln -sfn libpmuctx.so.0 $(DESTDIR)$(LIBDIR)/libpmuctx.so
	install -m 644 $(INSTALL_OUT)/libpmuctx.a $(DESTDIR)$(LIBDIR)/
	install -m 644 $(INSTALL_OUT)/pmuctx.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 644 tools/lib/pmuctx_abi.h tools/lib/pmuctx_events.h \
		$(DESTDIR)$(INCLUDEDIR)/pmuctx/
	install -m 644 include/uapi/linux/pmuctx.h $(DESTDIR)$(INCLUDEDIR)/pmuctx/linux/
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	$(if $(LIVE),ldconfig)

# The module source DKMS builds from (kernel/plant.c is test-only).
install-dkms-src:
	install -d $(DESTDIR)$(DKMSSRCDIR)
	tar -cf - VERSION Kbuild kernel arch include/uapi | tar -C $(DESTDIR)$(DKMSSRCDIR) -xf - \
		--no-same-owner --exclude=plant.c --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod*' --exclude=modules.order --exclude=Module.symvers \
		--exclude=kernel/compat/probed
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf > $(DESTDIR)$(DKMSSRCDIR)/dkms.conf
	chmod -R u=rwX,go=rX $(DESTDIR)$(DKMSSRCDIR)

install-man4:
	install -d $(DESTDIR)$(MANDIR)/man4
	install -m 644 $(MAN4) $(DESTDIR)$(MANDIR)/man4/

install-module: install-man4
ifeq ($(MODULE_INSTALL),dkms)
	$(MAKE) -s install-dkms-src
ifeq ($(DESTDIR),)
	dkms status -m pmuctx -v $(VERSION) | grep -q . || dkms add -m pmuctx -v $(VERSION)
	dkms install -m pmuctx -v $(VERSION) -k $(KVER) --force
endif
else ifeq ($(MODULE_INSTALL),kbuild)
	scripts/build-module --arch $(ARCH) --kdir /lib/modules/$(KVER)/build \
		--out $(BUILD)/module-install-$(KVER)
	install -D -m 644 $(BUILD)/module-install-$(KVER)/pmuctx.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/pmuctx.ko
	$(if $(LIVE),depmod $(KVER))
endif

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pmuctx $(DESTDIR)$(BASHCOMPDIR)/pmuctx
	rm -rf $(DESTDIR)$(SHIMDIR)
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man4/,$(notdir $(MAN4)))
	rm -f $(DESTDIR)$(LIBDIR)/$(SOLIB) $(DESTDIR)$(LIBDIR)/libpmuctx.so.0 \
		$(DESTDIR)$(LIBDIR)/libpmuctx.so $(DESTDIR)$(LIBDIR)/libpmuctx.a \
		$(DESTDIR)$(LIBDIR)/pkgconfig/pmuctx.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/pmuctx
	if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null && \
		dkms status -m pmuctx -v $(VERSION) | grep -q .; then \
		dkms remove -m pmuctx -v $(VERSION) --all; fi
	rm -rf $(DESTDIR)$(DKMSSRCDIR)
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/pmuctx.ko
	$(if $(LIVE),ldconfig; depmod $(KVER) 2>/dev/null || true)

# Debian packages, built from the tracked files (uncommitted edits included,
# build products and untracked files not) in build/deb/pmuctx-<version>; the
# .debs land in build/deb/ and lintian judges them.
deb:
	scripts/make-deb

clean:
	rm -rf $(BUILD)
	@if [ -f tools/Makefile ]; then $(MAKE) -s -C tools clean; fi

endif
