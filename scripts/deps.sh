#!/bin/bash
# make deps: install everything the project needs from Debian's archive.
# Idempotent: each step checks before it works, so a warm machine takes ~1 s.
set -euo pipefail
. "$(dirname "$0")/env.sh"

log() { echo "deps: $*"; }

apt_updated=
apt_update_once() {
	[ -n "$apt_updated" ] && return 0
	log "apt-get update"
	apt-get update -qq
	apt_updated=1
}

# host-packages.txt's lines: PKG, or PKG CODENAME... for a package of only
# those Debian releases (the host's VERSION_CODENAME: bookworm, trixie).
install_host_packages() {
	local want=() missing=() p codename
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	mapfile -t want < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' \
		"$PMUCTX_TOP"/scripts/deps/host-packages.txt |
		awk -v c="$codename" 'NF == 1 { print; next }
			{ for (i = 2; i <= NF; i++) if ($i == c) print $1 }')
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	apt_update_once
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

# download_unpack DIR ROOT PKG...: Debian's packages into DIR, unpacked
# into ROOT (not installed).
download_unpack() {
	local dl=$1 root=$2 f
	shift 2
	(cd "$dl" && apt-get download -qq "$@") 2>&1 |
		grep -v '^W: Download is performed unsandboxed' || true
	for f in "$dl"/*.deb; do dpkg-deb -x "$f" "$root"; done
}

# The arm64 kernel is never installed system-wide: it is unpacked into the
# cache, and its headers are made usable from amd64 by pointing their
# scripts/ and tools/ at the amd64 kbuild of the same series.
fetch_arm64() {
	local stamp=$ARM64_ROOT/.complete dl hdr kbuild
	[ -f "$stamp" ] && return 0
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "adding foreign architecture arm64"
		dpkg --add-architecture arm64
		apt_updated=
	fi
	apt_update_once
	dl=$PMUCTX_CACHE/arm64/$KDEBVER/debs
	rm -rf "$ARM64_ROOT" "$dl"
	mkdir -p "$dl" "$ARM64_ROOT"
	log "downloading arm64 kernel $KDEBVER and busybox"
	download_unpack "$dl" "$ARM64_ROOT" "linux-image-$KABI-arm64:arm64=$KDEBVER" \
		"linux-headers-$KABI-arm64:arm64=$KDEBVER" busybox-static:arm64
	# Debian 13's busybox-static is usr/bin/busybox (merged /usr); the VM
	# images take the arm64 one from bin/busybox, as in Debian 12's.
	if [ ! -e "$ARM64_ROOT/bin/busybox" ] && [ -x "$ARM64_ROOT/usr/bin/busybox" ]; then
		mkdir -p "$ARM64_ROOT/bin"
		ln -s ../usr/bin/busybox "$ARM64_ROOT/bin/busybox"
	fi
	hdr=$ARM64_ROOT/usr/src/linux-headers-$KABI-arm64
	# Debian 12's kbuild is per series (linux-kbuild-6.1), Debian 13's
	# per ABI (linux-kbuild-6.12.118+deb13).
	kbuild=/usr/lib/linux-kbuild-$KSERIES
	[ -d "$kbuild" ] || kbuild=/usr/lib/linux-kbuild-$KABI
	ln -sfn "$kbuild/scripts" "$hdr/scripts"
	ln -sfn "$kbuild/tools" "$hdr/tools"
	[ -f "/usr/src/linux-headers-$KABI-common/Makefile" ] || {
		echo "deps: /usr/src/linux-headers-$KABI-common missing" >&2
		exit 1
	}
	rm -rf "$dl"
	touch "$stamp"
}

# Debian's perf for arm64 guests (vm-run --arch arm64 --perf): linux-perf
# of the host's version for arm64 and the arm64 libraries of its dependency
# closure (libc6, libelf1, libpython3.11, ...), unpacked into the cache as
# the arm64 kernel is, never installed.  vm-run copies perf and the
# libraries it, the shim and their libraries need (by their DT_NEEDED).
fetch_arm64_perf() {
	local ver root dl pkgs
	ver=$(dpkg-query -W -f='${Version}' linux-perf 2>/dev/null) || return 0
	root=$PMUCTX_CACHE/arm64/perf-$ver/root
	[ -f "$root/.complete" ] && return 0
	apt_update_once
	dl=$PMUCTX_CACHE/arm64/perf-$ver/debs
	rm -rf "$root" "$dl"
	mkdir -p "$dl" "$root"
	# Libraries only: -stdlib and -minimal are Python's modules, not its library.
	mapfile -t pkgs < <(apt-cache depends --recurse --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances "linux-perf:arm64=$ver" |
		grep -E '^(lib[^ ]*|zlib1g):arm64$' | grep -vE -- '-(stdlib|minimal):' | sort -u)
	log "downloading arm64 linux-perf $ver and ${#pkgs[@]} libraries"
	download_unpack "$dl" "$root" "linux-perf:arm64=$ver" "${pkgs[@]}"
	[ -x "$root/usr/bin/perf" ] || { echo "deps: arm64 linux-perf has no /usr/bin/perf" >&2; exit 1; }
	rm -rf "$dl"
	touch "$root/.complete"
}

# Only the pieces of linux-source we use: the kselftest harness, checkpatch
# and its data, perf's pmu-events tree (read by the event-table import test).
extract_source() {
	local tarball=/usr/src/linux-source-$KSERIES.tar.xz
	local stamp=$SRC_ROOT/.complete-$KDEBVER
	[ -f "$stamp" ] && return 0
	log "extracting selected parts of $tarball"
	rm -rf "$SRC_ROOT"
	mkdir -p "$PMUCTX_CACHE/src"
	tar -C "$PMUCTX_CACHE/src" -xJf "$tarball" \
		"linux-source-$KSERIES/tools/testing/selftests/kselftest_harness.h" \
		"linux-source-$KSERIES/tools/testing/selftests/kselftest.h" \
		"linux-source-$KSERIES/scripts/checkpatch.pl" \
		"linux-source-$KSERIES/scripts/spelling.txt" \
		"linux-source-$KSERIES/scripts/const_structs.checkpatch" \
		"linux-source-$KSERIES/tools/perf/pmu-events"
	touch "$stamp"
}

# The lanes' QEMU, x86_64 and aarch64: Debian's qemu source with our
# patches (scripts/qemu/README), ~20 minutes cold on 2 cores, then cached
# by the patch series' key.  Its log is build/qemu-build.log.  A heavy build like
# the debug kernels: skipped with them (make demo, make bench) unless
# PMUCTX_DEPS_QEMU=1; vm-run --pmu builds it when missing.  It builds
# beside the debug kernels: their single-threaded stretches (extraction,
# objtool and kallsyms links) and its own (download, configure) leave a
# CPU idle when either builds alone.
build_qemu() {
	local qlog=$PMUCTX_BUILD/qemu-build.log t0
	t0=$(date +%s)
	if PMUCTX_QEMU_LOG=$qlog "$PMUCTX_TOP"/scripts/qemu/build >/dev/null; then
		log "qemu (x86_64 and aarch64): built $("$PMUCTX_TOP"/scripts/qemu/build --key) in $(( $(date +%s) - t0 ))s (log: $qlog)"
	else
		log "qemu (x86_64 and aarch64): build FAILED after $(( $(date +%s) - t0 ))s (log: $qlog)"
		return 1
	fi
}
install_host_packages
pmuctx_kernel_facts
fetch_arm64
# Debian's other kernels (scripts/deps/kernels.txt: 6.12) for both arches,
# unpacked into the cache as the arm64 one is.
# The kernels built in a build root (kernels.txt's third word: sid's 7.2)
# and those roots are make check's only, skipped with the debug kernels.
export PMUCTX_DEPS_BUILD_ROOTS=${PMUCTX_DEPS_BUILD_ROOTS:-${PMUCTX_DEPS_DEBUG_KERNELS:-1}}
"$PMUCTX_TOP"/scripts/deps/fetch-kernel
if [ "$PMUCTX_DEPS_BUILD_ROOTS" = 1 ]; then
	sed -e 's/#.*//' "$PMUCTX_TOP"/scripts/deps/kernels.txt | awk 'NF >= 3 { print $3 }' |
		sort -u | while read -r suite; do
			"$PMUCTX_TOP"/scripts/deps/build-root "$suite" >/dev/null
		done
fi
# Heavy like the debug kernels, and skipped with them (make demo).
[ "${PMUCTX_DEPS_DEBUG_KERNELS:-1}" = 1 ] && fetch_arm64_perf
# After fetch_arm64's apt-get update: the QEMU build reads the host's apt
# lists to find the archive.
qemu_pid=
if [ "${PMUCTX_DEPS_QEMU:-${PMUCTX_DEPS_DEBUG_KERNELS:-1}}" = 1 ] && ! "$PMUCTX_TOP"/scripts/qemu/build --path >/dev/null; then
	mkdir -p "$PMUCTX_BUILD"
	build_qemu &
	qemu_pid=$!
fi
extract_source
# The debug kernels' build output has its own log; this one gets a line.
if [ -x "$PMUCTX_TOP/scripts/debug-kernel" ] && [ "${PMUCTX_DEPS_DEBUG_KERNELS:-1}" = 1 ]; then
	dklog=$PMUCTX_BUILD/debug-kernels.log
	mkdir -p "$PMUCTX_BUILD"
	t0=$(date +%s)
	log "debug kernels: building or checking the cache (log: $dklog)"
	if "$PMUCTX_TOP/scripts/debug-kernel" build-all >"$dklog" 2>&1; then
		log "debug kernels: ready in $(( $(date +%s) - t0 ))s"
	else
		tail -n 25 "$dklog" >&2
		log "debug kernels: build FAILED after $(( $(date +%s) - t0 ))s (log: $dklog)"
		exit 1
	fi
fi
if [ -n "$qemu_pid" ] && ! wait "$qemu_pid"; then
	exit 1
fi
log "ready: kernel $KABI ($KDEBVER), cache $PMUCTX_CACHE"
