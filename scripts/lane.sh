# shellcheck shell=bash
# A lane is one kernel the VM tests boot: its arch, kernel image, the build
# tree the module compiles against, and what QEMU needs for it.
# Sourced after env.sh; pmuctx_lane NAME sets LANE_* variables.
# Lanes: x86_64 and arm64 are Debian's stock kernels; x86_64-SERIES and
# arm64-SERIES (x86_64-6.12) Debian's other kernels (scripts/deps/kernels.txt);
# the debug lanes are built from linux-source by scripts/debug-kernel
# (ARCH-NAME from 6.1's, ARCH-SERIES-NAME from that series': arm64-6.12-debug).

pmuctx_lane() {
	LANE=$1
	LANE_MEM=1024
	LANE_APPEND=
	LANE_KVER=
	LANE_BUILD_ROOT=
	case $LANE in
	x86_64)
		LANE_ARCH=x86_64
		LANE_KIMAGE=/boot/vmlinuz-$KABI-amd64
		LANE_KDIR=/usr/src/linux-headers-$KABI-amd64
		;;
	arm64)
		LANE_ARCH=arm64
		LANE_KIMAGE=$ARM64_ROOT/boot/vmlinuz-$KABI-arm64
		LANE_KDIR=$ARM64_ROOT/usr/src/linux-headers-$KABI-arm64
		;;
	# A debug lane of another series (arm64-6.12-debug): below.
	x86_64-[0-9]*-* | arm64-[0-9]*-*)
		pmuctx_debug_lane_of "$LANE"
		;;
	x86_64-[0-9]* | arm64-[0-9]*)
		pmuctx_series_facts "${LANE#*-}" || return 1
		LANE_ARCH=${LANE%%-*}
		local deb=amd64
		[ "$LANE_ARCH" = arm64 ] && deb=arm64
		LANE_KIMAGE=$SERIES_ROOT/boot/vmlinuz-$SERIES_ABI-$deb
		# Names its extracted PVH vmlinux (vm-run), as KABI-KDEBVER does 6.1's.
		LANE_KVER=$SERIES_ABI-$(cat "$SERIES_ROOT/.complete")
		LANE_KDIR=$SERIES_ROOT/usr/src/linux-headers-$SERIES_ABI-$deb
		# Its modules are built in that suite's build root, if it names one.
		LANE_BUILD_ROOT=$(sed -e 's/#.*//' "$PMUCTX_TOP/scripts/deps/kernels.txt" |
			awk -v s="${LANE#*-}" '$1 == s { print $3 }')
		;;
	*)
		pmuctx_debug_lane_of "$LANE"
		;;
	esac
}

pmuctx_debug_lane_of() {	# pmuctx_debug_lane_of NAME: a debug lane, or unknown
	if [ -f "$PMUCTX_TOP/scripts/debug-lanes.sh" ]; then
		. "$PMUCTX_TOP/scripts/debug-lanes.sh"
		pmuctx_debug_lane "$1" && return 0
	fi
	echo "unknown lane '$1'" >&2
	return 1
}

pmuctx_cross_compile() {
	case $1 in
	arm64) echo aarch64-linux-gnu- ;;
	*) echo "" ;;
	esac
}
