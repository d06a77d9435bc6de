# SPDX-License-Identifier: GPL-2.0
# Kernel feature probes (Documentation/design.rst, "Kernel compatibility"),
# included by Kbuild: each probes/NAME.c is compiled against the target
# kernel's headers and config with the module's own flags, and defines
# PMUCTX_HAVE_NAME (upper case) when it compiles.  The compat headers beside
# this file are the only readers of those names.  The probes run once per
# build pass (Makefile.build), not again for modpost or clean; DKMS and
# make deb build through this Kbuild too, so every build probes the kernel
# it builds for.
ifneq ($(filter %scripts/Makefile.build,$(MAKEFILE_LIST)),)
pmuctx-probe-flags := $(NOSTDINC_FLAGS) $(LINUXINCLUDE) \
	-include $(srctree)/include/linux/compiler_types.h \
	$(KBUILD_CPPFLAGS) $(KBUILD_CFLAGS) $(KBUILD_CFLAGS_MODULE) -DMODULE
pmuctx-probe = $(call try-run,$(CC) $(pmuctx-probe-flags) -c -o "$$TMP" $(1),$(2))
pmuctx-probed := $(foreach p,$(sort $(wildcard $(src)/kernel/compat/probes/*.c)),\
	$(call pmuctx-probe,$(p),-DPMUCTX_HAVE_$(shell echo $(basename $(notdir $(p))) | tr a-z A-Z)))
$(if $(filter -DPMUCTX_HAVE_CONTROL,$(pmuctx-probed)),,\
	$(error pmuctx: kernel/compat/probes/control.c does not compile against $(srctree)))
# Exports, which no compile can probe: every symbol of a group is in the
# kernel's Module.symvers with no namespace (exported to every module, not
# to a list of them).  CR4_EXPORTS: cr4_update_irqsoff() and
# cr4_read_shadow() (compat/cr4.h).  No Module.symvers: not exported.
pmuctx-exported = $(shell awk -F'\t' '$$5 == "" && ($(2)) { n++ } END { if (n == $(3)) print "$(1)" }' \
	$(objtree)/Module.symvers 2>/dev/null)
pmuctx-probed += $(patsubst %,-DPMUCTX_HAVE_%,$(call pmuctx-exported,CR4_EXPORTS,\
	$$2 == "cr4_update_irqsoff" || $$2 == "cr4_read_shadow",2))
$(shell mkdir -p $(obj)/kernel/compat)
$(file >$(obj)/kernel/compat/probed,$(patsubst -DPMUCTX_HAVE_%,%,$(pmuctx-probed)))
ccflags-y += $(pmuctx-probed)
endif
