# shellcheck shell=bash
# The debug lanes (Documentation/testing.rst): kernels built from Debian's
# linux-source by scripts/debug-kernel.  Sourced by lane.sh;
# pmuctx_debug_lane NAME sets the LANE_* variables, or returns 1 for a name
# that is not a debug lane.  LANE_DEBUG_KERNEL=1 tells vm-run to build the
# kernel first when the cache lacks it.

pmuctx_debug_lane() {
	local dir
	dir=$("$PMUCTX_TOP/scripts/debug-kernel" path "$1") || return 1
	LANE_KDIR=$dir
	LANE_DEBUG_KERNEL=1
	case $1 in
	x86_64-debug)	# lockdep, atomic sleep, KASAN, kmemleak, debug objects
		LANE_ARCH=x86_64
		LANE_KIMAGE=$dir/arch/x86/boot/bzImage
		LANE_MEM=2048
		LANE_APPEND="kasan_multi_shot"
		;;
	x86_64-kcsan)	# KCSAN (cannot share a kernel with KASAN)
		LANE_ARCH=x86_64
		LANE_KIMAGE=$dir/arch/x86/boot/bzImage
		LANE_MEM=1024
		LANE_APPEND=
		;;
	arm64-debug)	# lockdep, atomic sleep, KASAN on the PMU interrupt path
		LANE_ARCH=arm64
		LANE_KIMAGE=$dir/arch/arm64/boot/Image
		LANE_MEM=2048
		LANE_APPEND="kasan_multi_shot"
		;;
	*)
		return 1
		;;
	esac
}
