# shellcheck shell=bash
# The debug lanes (Documentation/testing.rst): kernels built from Debian's
# linux-source by scripts/debug-kernel.  Sourced by lane.sh;
# pmuctx_debug_lane NAME sets the LANE_* variables, or returns 1 for a name
# that is not a debug lane.  LANE_DEBUG_KERNEL=1 tells vm-run to build the
# kernel first when the cache lacks it.

# Memory of the KASAN lanes: 1 GB, not 2.  kmemleak's scans (two after
# the command, scripts/vm-init) walk every page's struct page,
# so they take time in proportion: an x86_64-debug boot with a trivial
# command took 87 s with 2 GB and 64 s with 1 GB (2026-11-27), and the
# whole -smp 2 lanes (fuzzer, every selftest) passed on both arches with
# 1 GB.
pmuctx_debug_lane() {
	local dir
	dir=$("$PMUCTX_TOP/scripts/debug-kernel" path "$1") || return 1
	LANE_KDIR=$dir
	LANE_DEBUG_KERNEL=1
	case $1 in
	x86_64-debug)	# lockdep, atomic sleep, KASAN, kmemleak, debug objects
		LANE_ARCH=x86_64
		LANE_KIMAGE=$dir/arch/x86/boot/bzImage
		LANE_MEM=1024	# why: the comment above pmuctx_debug_lane()
		LANE_APPEND="kasan_multi_shot"
		;;
	x86_64-kcsan)	# KCSAN (cannot share a kernel with KASAN)
		LANE_ARCH=x86_64
		LANE_KIMAGE=$dir/arch/x86/boot/bzImage
		LANE_MEM=1024
		LANE_APPEND=
		;;
	arm64-debug | arm64-6.12-debug)	# lockdep, atomic sleep, KASAN on the PMU interrupt path
		LANE_ARCH=arm64
		LANE_KIMAGE=$dir/arch/arm64/boot/Image
		LANE_MEM=1024	# why: the comment above pmuctx_debug_lane()
		LANE_APPEND="kasan_multi_shot"
		;;
	*)
		return 1
		;;
	esac
}
