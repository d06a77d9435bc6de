#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# perf_parity.sh kernel|pmuctx: one half of an A/B run of Debian's perf
# stat, the same commands in the same environment, counted by the kernel's
# own perf driver (a boot where it owns the PMU) or by pmuctx (a boot where
# pmuctx's backend does).  libpmuctx-perf.so is preloaded in both
# (PMUCTX_PERF_ROUTE says where its perf_event_open goes), so the counted
# programs see environments of one size and their user-mode counts are
# comparable exactly under -icount.  It prints one line per event,
#   PERF-PARITY|<case>|<event>|<value>[ <variance>]|<percent running>
# and scripts/tests/perf-parity compares the two boots' lines.  The exit
# status says only whether perf ran.
route=${1:?usage: perf_parity.sh kernel|pmuctx}
P=${PMUCTX:-pmuctx}
LOOP=$(dirname "$0")/perf_loop
T=${TMPDIR:-/tmp}/perf_parity.$$
mkdir -p "$T"
echo 0 > /proc/sys/kernel/randomize_va_space

# The core PMU's name as perf finds it in sysfs (the kernel's directory, or
# pmuctx exec's copy); then per arch: the raw codes of instructions and
# cycles, an extra event (x86's fixed-counter-only ref-cycles), and perf's
# PMU syntax on the core PMU.
core=$(env PMUCTX_PERF_ROUTE="$route" $P exec -- perf list --no-desc pmu 2>/dev/null |
	grep -o -E '(^| )(cpu|armv8_[a-z0-9_]+)/' | head -n 1 | tr -d ' /')
echo "PERF-PARITY|pmu|name|$core|"
case $(uname -m) in
x86_64) raw="rc0:u,r3c:u" extra="ref-cycles:u"
	pmu="$core/event=0xc0/u,$core/instructions/u,$core/cpu-cycles/u" ;;
aarch64) raw="r08:u,r11:u" extra="stalled-cycles-frontend:u"
	pmu="$core/event=0x08/u,$core/inst_retired/u,$core/cpu_cycles/u" ;;
esac
fail=0
one() {	# one CASE PERF-STAT-ARGS...
	name=$1
	shift
	env -i PATH=/usr/bin:/bin:/sbin PMUCTX_PERF_ROUTE="$route" \
		$P exec -- perf stat -x, -o "$T/out" "$@" > "$T/stdout" 2> "$T/err"
	rc=$?
	echo "PERF-PARITY|$name|exit|$rc|"
	[ $rc -eq 0 ] || { fail=1; sed 's/^/# /' "$T/err" | head -5; }
	# value,unit,event,run time,percent; with -r: value,unit,event,variance,...
	awk -F, -v c="$name" 'NF >= 3 && $1 !~ /^#/ && $3 != "" {
		if ($4 ~ /%$/) printf "PERF-PARITY|%s|%s|%s %s|%s\n", c, $3, $1, $4, $6
		else printf "PERF-PARITY|%s|%s|%s|%s\n", c, $3, $1, $5 }' "$T/out"
}
one single -e instructions:u,cycles:u -- "$LOOP" 1000000
one group -e '{instructions:u,cycles:u}' -- "$LOOP" 1000000
one raw -e "$raw" -- "$LOOP" 1000000
one extra -e "$extra" -- "$LOOP" 1000000
one pmu -e "$pmu" -- "$LOOP" 1000000
one repeat -r 3 -e instructions:u -- "$LOOP" 1000000
one inherit -e instructions:u,cycles:u -- "$LOOP" 1000000 2
one no-inherit --no-inherit -e instructions:u -- "$LOOP" 1000000 2
one absent -e branches:u,branch-misses:u,cache-misses:u -- "$LOOP" 1000000
one precise -e cycles:ppu,instructions:pu -- "$LOOP" 1000000
rm -rf "$T"
exit $fail
