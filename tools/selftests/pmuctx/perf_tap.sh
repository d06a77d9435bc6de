# SPDX-License-Identifier: GPL-2.0
# Sourced by the tests of Debian's perf and PAPI tools through
# libpmuctx-perf.so (perf_compat_test.sh, perf_record_test.sh,
# papi_compat_test.sh): TAP helpers, the skip when the VM lacks the tool
# ($TAP_TOOL, perf by default), the library or a hardware backend
# ($TAP_BACKENDS, the backends' name prefixes), and fixed addresses (exact user-mode
# counts need the same addresses in every run).  check prints $TAP_LOG
# ("$T/err" unless the caller sets it after) when it fails.  Sets P, T, LOOP and aslr; the
# caller ends with perf_tap_end (or perf_tap_restore, then its own end).
P=${PMUCTX:-pmuctx}
T=${TMPDIR:-/tmp}/$(basename "$0" .sh).$$
LOOP=$(dirname "$0")/perf_loop
TAP_LOG=$T/err
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
check() { if eval "$2"; then ok "$1"; else notok "$1"; sed 's/^/# /' "$TAP_LOG" 2>/dev/null | head -20; fi; }

echo "TAP version 13"
if ! command -v "${TAP_TOOL:-perf}" >/dev/null || ! $P exec -- true 2>/dev/null; then
	echo "1..0 # SKIP no ${TAP_TOOL:-perf} or no libpmuctx-perf.so here (scripts/vm-run --perf)"
	exit 0
fi
backend=$($P info | sed -n 's/^backend: *//p')
tap_backend=
for prefix in ${TAP_BACKENDS:-intel-perfmon armv8}; do
	case $backend in "$prefix"*) tap_backend=$prefix ;; esac
done
if [ -z "$tap_backend" ]; then
	echo "1..0 # SKIP backend '$backend': $(basename "$0") needs ${TAP_BACKENDS:-intel-perfmon or armv8} (the x86_64 PMU lane, arm64)"
	exit 0
fi
mkdir -p "$T"
aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 > /proc/sys/kernel/randomize_va_space

perf_tap_restore() {
	echo "$aslr" > /proc/sys/kernel/randomize_va_space
	rm -rf "$T"
}

perf_tap_end() {
	perf_tap_restore
	echo "1..$n"
	[ $fail -eq 0 ]
}
