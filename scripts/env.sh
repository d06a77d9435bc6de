# shellcheck shell=bash
# Shared facts about the test kernels, sourced by every script in scripts/.
# The Debian kernel we test on is whatever linux-image-amd64 depends on; the
# arm64 image, its headers and the debug kernels must be that same release so
# one module source is checked against one kernel version everywhere.

PMUCTX_TOP=${PMUCTX_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
PMUCTX_CACHE=${PMUCTX_CACHE:-/var/cache/pmuctx}
PMUCTX_BUILD=${PMUCTX_BUILD:-$PMUCTX_TOP/build}

# "linux-image-6.1.0-56-amd64 (= 6.1.192-2)" -> abi 6.1.0-56, version 6.1.192-2
# Debian 13's "linux-image-6.12.118+deb13-amd64 (= 6.12.118-1)" -> abi
# 6.12.118+deb13, series 6.12.
pmuctx_kernel_facts() {
	local dep
	dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null) || {
		echo "linux-image-amd64 is not installed: run 'make deps'" >&2
		return 1
	}
	KABI=$(sed -n 's/.*linux-image-\([0-9.]*-[0-9]*\)-amd64.*/\1/p' <<<"$dep")
	[ -n "$KABI" ] ||
		KABI=$(sed -n 's/.*linux-image-\([0-9.]*+deb[0-9.]*\)-amd64.*/\1/p' <<<"$dep")
	KDEBVER=$(sed -n 's/.*(= \([^)]*\)).*/\1/p' <<<"$dep")
	case $KABI in
	*+deb*)	KSERIES=${KABI%%+*}; KSERIES=${KSERIES%.*} ;;	# 6.12
	*)	KSERIES=${KABI%.*-*} ;;			# 6.1
	esac
	[ -n "$KABI" ] && [ -n "$KDEBVER" ] || {
		echo "cannot parse linux-image-amd64 dependency '$dep'" >&2
		return 1
	}
	ARM64_ROOT=$PMUCTX_CACHE/arm64/$KDEBVER/root
	SRC_ROOT=$PMUCTX_CACHE/src/linux-source-$KSERIES
	KSELFTEST_DIR=$SRC_ROOT/tools/testing/selftests
	CHECKPATCH=$SRC_ROOT/scripts/checkpatch.pl
}

# pmuctx_series_facts SERIES: Debian's other kernels (scripts/deps/kernels.txt,
# scripts/deps/fetch-kernel): SERIES_ABI (6.12.95+deb12) and SERIES_ROOT,
# where both arches' images and headers are unpacked; SERIES_SOURCE, where
# its linux-source goes when a debug kernel wants it (fetch-kernel --source).
pmuctx_series_facts() {
	local link=$PMUCTX_CACHE/kernels/$1
	[ -f "$link/root/.complete" ] || {
		echo "Debian's $1 kernel is not in $PMUCTX_CACHE: run 'make deps'" >&2
		return 1
	}
	SERIES_ABI=$(readlink "$link")
	SERIES_ROOT=$PMUCTX_CACHE/kernels/$SERIES_ABI/root
	SERIES_SOURCE=$PMUCTX_CACHE/kernels/$SERIES_ABI/source
}
