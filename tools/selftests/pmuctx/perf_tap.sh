# SPDX-License-Identifier: GPL-2.0
# Sourced by the tests of Debian's perf through libpmuctx-perf.so
# (perf_compat_test.sh, perf_record_test.sh): TAP helpers, the skip when
# the VM has no perf or no hardware backend, and fixed addresses (exact
# user-mode counts need the same addresses in every run).  Sets P, T,
# LOOP and aslr; the caller ends with perf_tap_end.
P=${PMUCTX:-pmuctx}
T=${TMPDIR:-/tmp}/$(basename "$0" .sh).$$
LOOP=$(dirname "$0")/perf_loop
mkdir -p "$T"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
check() { if eval "$2"; then ok "$1"; else notok "$1"; sed 's/^/# /' "$T/err" 2>/dev/null | head -20; fi; }

echo "TAP version 13"
if ! command -v perf >/dev/null || ! $P exec -- true 2>/dev/null; then
	echo "1..0 # SKIP no perf or no libpmuctx-perf.so here (scripts/vm-run --perf)"
	exit 0
fi
backend=$($P info | sed -n 's/^backend: *//p')
case $backend in
intel-perfmon*|armv8*) ;;
*) echo "1..0 # SKIP backend '$backend': $(basename "$0") needs a hardware backend (the x86_64 PMU lane, arm64)"; exit 0 ;;
esac
aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 > /proc/sys/kernel/randomize_va_space

perf_tap_end() {
	echo "$aslr" > /proc/sys/kernel/randomize_va_space
	rm -rf "$T"
	echo "1..$n"
	[ $fail -eq 0 ]
}
