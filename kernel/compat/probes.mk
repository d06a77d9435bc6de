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
$(shell mkdir -p $(obj)/kernel/compat)
$(file >$(obj)/kernel/compat/probed,$(patsubst -DPMUCTX_HAVE_%,%,$(pmuctx-probed)))
ccflags-y += $(pmuctx-probed)
endif
