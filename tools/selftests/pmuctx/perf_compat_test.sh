#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's own perf stat (linux-perf 6.1, unmodified) counting on pmuctx
# through libpmuctx-perf.so ("pmuctx exec --"), in the x86_64 PMU lane or
# on arm64: pmuctx's backend owns the (emulated) PMU and perf's driver is
# kept out of the kernel, so perf's hardware events exist only through the
# shim.
# Counts are exact under -icount: perf's must equal pmuctx stat's in the
# same environment, and perf_loop's two instructions per iteration must
# show exactly.  scripts/vm-run --pmu --perf carries perf and its
# libraries into the VM; without them every test is skipped.  TAP output.
. "$(dirname "$0")/perf_tap.sh"

# field F of perf's (or pmuctx stat's) -x, line for EVENT
field() {	# FILE EVENT F
	awk -F, -v ev="$2" -v f="$3" '$3 == ev { print $f; exit }' "$1"
}
is_count() { case $1 in ''|*[!0-9]*) return 1 ;; esac; [ "$1" -gt 0 ]; }
pstat() {	# OUT perf stat ARGS...: perf through the shim, -x, output in OUT
	out=$1
	shift
	$P exec -- perf stat -x, -o "$out" "$@" > "$T/out" 2> "$T/err"
}

# ---- perf alone: its hardware events do not exist on this kernel ----
perf stat -x, -o "$T/bare" -e instructions:u,cycles:u,task-clock -- "$LOOP" 1000000 \
	> "$T/out" 2> "$T/err"
rc=$?
bare_ins=$(field "$T/bare" instructions:u 1)
check "perf without the shim runs (exit $rc)" "[ $rc -eq 0 ]"
check "perf without the shim: instructions:u is '$bare_ins' (perf's driver is out)" \
	"case '$bare_ins' in '<not supported>'|'<not counted>') true ;; *) false ;; esac"
check "perf without the shim: its kernel still counts task-clock" \
	"[ -n \"\$(field '$T/bare' task-clock 1)\" ] && [ \"\$(field '$T/bare' task-clock 1)\" != '<not supported>' ]"

# ---- instructions:u and cycles:u, exact ----
pstat "$T/one" -e instructions:u,cycles:u -- "$LOOP" 1000000
rc=$?
ins1=$(field "$T/one" instructions:u 1)
cyc1=$(field "$T/one" cycles:u 1)
check "pmuctx exec -- perf stat exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check "instructions:u counts through the shim ($ins1)" "is_count '$ins1'"
check "cycles:u counts through the shim ($cyc1)" "is_count '$cyc1'"
pstat "$T/two" -e instructions:u,cycles:u -- "$LOOP" 2000000
ins2=$(field "$T/two" instructions:u 1)
check "a million more iterations are exactly 2000000 more instructions:u ($ins2 - $ins1)" \
	"is_count '$ins2' && [ \$(($ins2 - $ins1)) -eq 2000000 ]"

# pmuctx stat in perf's workload environment (perf adds PERF_BUILDID_DIR,
# the shim LD_PRELOAD; the static loop's startup reads them all)
$P exec -- perf stat -x, -o /dev/null -e task-clock -- env > "$T/env" 2> "$T/err"
set --
while IFS= read -r kv; do set -- "$@" "$kv"; done < "$T/env"
env -i "$@" $P stat -x, -o "$T/own" -e instructions:u,cycles:u -- "$LOOP" 1000000 \
	> "$T/out" 2> "$T/err"
own_ins=$(field "$T/own" instructions:u 1)
own_cyc=$(field "$T/own" cycles:u 1)
check "perf's instructions:u equal pmuctx stat's ($ins1, $own_ins)" "[ '$ins1' = '$own_ins' ]"
check "perf's cycles:u equal pmuctx stat's ($cyc1, $own_cyc)" "[ '$cyc1' = '$own_cyc' ]"

# ---- perf's PMU syntax: the core PMU's sysfs directory, made by pmuctx exec ----
# (as perf lists it: the guest's ls is static, the library is not in it)
pmu=$($P exec -- perf list --no-desc pmu 2>/dev/null |
	grep -o -E '(^| )(cpu|armv8_[a-z0-9_]+)/' | head -n 1 | tr -d ' /')
case $backend in
intel-perfmon*) raw_ins=event=0xc0 alias_ins=instructions ;;
*) raw_ins=event=0x08 alias_ins=inst_retired ;;
esac
check "pmuctx exec shows perf a core PMU ('$pmu')" "[ -n '$pmu' ]"
pstat "$T/pmu" -e "$pmu/$raw_ins/u,$pmu/$alias_ins/u" -- "$LOOP" 1000000
rc=$?
p_raw=$(field "$T/pmu" "$pmu/$raw_ins/u" 1)
p_alias=$(field "$T/pmu" "$pmu/$alias_ins/u" 1)
check "$pmu/$raw_ins/u and $pmu/$alias_ins/u count instructions:u (exit $rc; $p_raw, $p_alias, $ins1)" \
	"[ $rc -eq 0 ] && [ '$p_raw' = '$ins1' ] && [ '$p_alias' = '$ins1' ]"
check "perf alone has no $pmu PMU here (perf's driver is out)" \
	"[ ! -e /sys/bus/event_source/devices/$pmu ]"
check "pmuctx exec removed its copy of perf's PMU directory" \
	"! ls -d \${TMPDIR:-/tmp}/pmuctx-sysfs.* 2>/dev/null"
# the copy is its user's alone, and an unprivileged user's perf uses it
$P exec -- sh -c 'ls -ld "$PMUCTX_PERF_SYSFS/.."' > "$T/mode" 2> "$T/err"
check "the copy's directory is mode 0700 ($(cut -c1-10 "$T/mode"))" "grep -q '^drwx------ ' '$T/mode'"
chmod 1777 "$T"
"$(dirname "$0")/run_as" 65534 env TMPDIR="$T" $P exec -- perf stat -x, -o "$T/nobody" \
	-e "$pmu/$raw_ins/u" -- "$LOOP" 1000000 > "$T/out" 2> "$T/err"
rc=$?
check "as uid 65534: $pmu/$raw_ins/u counts (exit $rc, $(field "$T/nobody" "$pmu/$raw_ins/u" 1))" \
	"[ $rc -eq 0 ] && is_count \"\$(field '$T/nobody' '$pmu/$raw_ins/u' 1)\""
$P exec -- perf list --no-desc pmu > "$T/list" 2> "$T/err"
check "perf list shows $pmu/$alias_ins/ as a PMU event" "grep -q '$pmu/$alias_ins/' '$T/list'"
if [ $pmu = cpu ]; then
	# a core PMU gets perf's own event table for the CPU (Skylake here)
	pstat "$T/json" -e inst_retired.any:u -- "$LOOP" 1000000
	check "perf's JSON name inst_retired.any:u counts instructions:u ($(field "$T/json" inst_retired.any:u 1))" \
		"[ \"\$(field '$T/json' inst_retired.any:u 1)\" = '$ins1' ]"
	# (named: the -x, output's fields are split at commas)
	pstat "$T/cmask" -e cpu/event=0xc0,cmask=1,name=cmask_one/u -- "$LOOP" 1000000
	check "cpu/event=0xc0,cmask=1/u is <not supported>: pmuctx programs bits 15:0 ($(field "$T/cmask" cmask_one 1))" \
		"[ \"\$(field '$T/cmask' cmask_one 1)\" = '<not supported>' ]"
fi

# ---- a group: PERF_FORMAT_GROUP|ID reads, members gated by the leader ----
pstat "$T/grp" -e '{instructions:u,cycles:u}' -- "$LOOP" 1000000
g_ins=$(field "$T/grp" instructions:u 1)
g_cyc=$(field "$T/grp" cycles:u 1)
check "a group's instructions:u and cycles:u are the lone events' ($g_ins, $g_cyc)" \
	"[ '$g_ins' = '$ins1' ] && [ '$g_cyc' = '$cyc1' ]"

# ---- -r 3: three opens, enables and reads; the mean of equal runs ----
pstat "$T/rep" -r 3 -e instructions:u -- "$LOOP" 1000000
rc=$?
r_ins=$(field "$T/rep" instructions:u 1)
check "-r 3 gives the single run's count ($r_ins, exit $rc)" "[ $rc -eq 0 ] && [ '$r_ins' = '$ins1' ]"

# ---- -I: interval reads while it runs add up to the whole count ----
pstat "$T/whole" -e instructions:u -- "$LOOP" 30000000
whole=$(field "$T/whole" instructions:u 1)
$P exec -- perf stat -x, -o "$T/intv" -I 20 -e instructions:u -- "$LOOP" 30000000 \
	> "$T/out" 2> "$T/err"
lines=$(awk -F, '$4 == "instructions:u"' "$T/intv" | wc -l)
sum=$(awk -F, '$4 == "instructions:u" { s += $2 } END { printf "%d", s }' "$T/intv")
check "-I 20 prints intervals ($lines) that add up to the whole count ($sum, $whole)" \
	"[ $lines -ge 2 ] && is_count '$whole' && [ '$sum' = '$whole' ]"

# ---- inheritance: perf_loop's two children and itself, through fork ----
pstat "$T/inh1" -e instructions:u -- "$LOOP" 1000000 2
pstat "$T/inh2" -e instructions:u -- "$LOOP" 2000000 2
i1=$(field "$T/inh1" instructions:u 1)
i2=$(field "$T/inh2" instructions:u 1)
check "inherited: a million more iterations in three tasks are exactly 6000000 more ($i2 - $i1)" \
	"is_count '$i1' && is_count '$i2' && [ \$(($i2 - $i1)) -eq 6000000 ]"
env -i "$@" $P stat -x, -o "$T/inh_own" -e instructions:u -- "$LOOP" 1000000 2 > "$T/out" 2> "$T/err"
i_own=$(field "$T/inh_own" instructions:u 1)
check "inherited: perf's count is pmuctx stat's ($i1, $i_own)" "[ '$i1' = '$i_own' ]"
pstat "$T/noinh" --no-inherit -e instructions:u -- "$LOOP" 1000000 2
n_perf=$(field "$T/noinh" instructions:u 1)
env -i "$@" $P stat --no-inherit -x, -o "$T/noinh_own" -e instructions:u -- "$LOOP" 1000000 2 \
	> "$T/out" 2> "$T/err"
n_own=$(field "$T/noinh_own" instructions:u 1)
check "--no-inherit: perf_loop alone, as pmuctx stat --no-inherit counts it ($n_perf, $n_own)" \
	"is_count '$n_perf' && [ '$n_perf' = '$n_own' ] && [ $n_perf -lt \$(($i1 - 3900000)) ]"
# a shell and its children (their counts differ by the pids sh formats)
pstat "$T/inh" -e instructions:u -- sh -c "$LOOP 1000000; $LOOP 1000000"
i_sh=$(field "$T/inh" instructions:u 1)
check "inherited: sh -c with two loops counts their 4000000 and more ($i_sh)" \
	"is_count '$i_sh' && [ $i_sh -gt \$((2 * $ins1)) ]"

# ---- -p: attach to a running task (ioctl ENABLE, no enable_on_exec) ----
"$LOOP" 400000000 &
pid=$!
$P exec -- perf stat -x, -o "$T/attach" -p $pid -e instructions:u,task-clock -- sleep 0.2 \
	> "$T/out" 2> "$T/err"
rc=$?
wait $pid
a_ins=$(field "$T/attach" instructions:u 1)
check "perf stat -p counts a running task for 0.2 s (exit $rc, $a_ins instructions:u)" \
	"[ $rc -eq 0 ] && is_count '$a_ins' && [ $a_ins -lt 800000000 ]"

# ---- default events, inherited through sh ----
$P exec -- perf stat -x, -o "$T/dflt" -- sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); done' \
	> "$T/out" 2> "$T/err"
rc=$?
check "default perf stat -- sh -c exits 0 (exit $rc)" "[ $rc -eq 0 ]"
for ev in task-clock context-switches cpu-migrations page-faults cycles instructions; do
	v=$(field "$T/dflt" $ev 1)
	case $ev in
	task-clock|page-faults|cycles|instructions)
		check "default: $ev counted ($v)" "[ -n '$v' ] && awk 'BEGIN { exit !($v > 0) }'" ;;
	*)
		check "default: $ev counted ($v)" "case '$v' in ''|*[!0-9]*) false ;; esac" ;;
	esac
done
# CPUID 0AH:EBX (x86) or PMCEID (arm64) marks branch instructions unavailable
check "default: branches <not supported> ($(field "$T/dflt" branches 1))" \
	"[ \"\$(field '$T/dflt' branches 1)\" = '<not supported>' ]"
cyc=$(field "$T/dflt" cycles 1)
cycu=0
$P exec -- perf stat -x, -o "$T/dfltu" -e cycles:u -- sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); done' \
	> "$T/out" 2> "$T/err"
cycu=$(field "$T/dfltu" cycles:u 1)
check "default cycles count kernel mode too: more than cycles:u ($cyc > $cycu)" \
	"is_count '$cycu' && [ '$cyc' -gt '$cycu' ]"

# ---- what pmuctx cannot count is <not supported>, beside what it counts ----
pstat "$T/uns" -e instructions:u,branch-misses,r12345678,cycles:pp -- "$LOOP" 1000000
rc=$?
check "unsupported events leave the run alone (exit $rc, instructions:u $(field "$T/uns" instructions:u 1))" \
	"[ $rc -eq 0 ] && [ \"\$(field '$T/uns' instructions:u 1)\" = '$ins1' ]"
for ev in branch-misses r12345678; do
	check "$ev is <not supported> ($(field "$T/uns" $ev 1))" \
		"[ \"\$(field '$T/uns' $ev 1)\" = '<not supported>' ]"
done
# Precise modifiers as perf's kernel takes them (perf_parity.sh compares):
# x86 without PEBS refuses them; arm64's driver has no skid to narrow and
# counts the event.
case $backend in
intel-perfmon*)
	check "cycles:pp is <not supported>, as perf's x86 driver without PEBS says ($(field "$T/uns" cycles:pp 1))" \
		"[ \"\$(field '$T/uns' cycles:pp 1)\" = '<not supported>' ]" ;;
*)
	check "cycles:pp counts, as perf's arm64 driver counts it ($(field "$T/uns" cycles:pp 1))" \
		"is_count \"\$(field '$T/uns' cycles:pp 1)\"" ;;
esac
# CPU-wide counting is not pmuctx's: hardware events refused, never counted
$P exec -- perf stat -x, -o "$T/cpu" -a -e instructions -- "$LOOP" 1000 > "$T/out" 2> "$T/err"
check "perf stat -a: instructions is <not supported> ($(field "$T/cpu" instructions 1))" \
	"[ \"\$(field '$T/cpu' instructions 1)\" = '<not supported>' ]"

# ---- what perf stat does not do: our own clients' TAP, renumbered ----
client() {	# client NAME: run it through the shim, its checks as ours
	$P exec -- "$(dirname "$0")/$1" > "$T/client" 2> "$T/err"
	rc=$?
	check "$1 through the shim exits 0 (exit $rc)" "[ $rc -eq 0 ]"
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$1: ${line#ok [0-9]* }" ;;
		"not ok "*) notok "$1: ${line#not ok [0-9]* }" ;;
		esac
	done < "$T/client"
}
client perf_client
# sampling: perf's ring, its records and signals (the same program passes
# on the kernel's perf: vm-fallback-*)
client perf_sampling
# self-reads: perf's page for a counting event, read in user mode (the same
# program passes on the kernel's perf: vm-fallback-*); then across
# thousands of counter wraps where the backend can be told to wrap (x86's
# start_headroom: every 3000 events)
PMUCTX_EXPECT_RDPMC=1
export PMUCTX_EXPECT_RDPMC
client perf_selfread
H=/sys/module/pmuctx/parameters/start_headroom
if [ -w $H ]; then
	echo 3000 > $H
	PMUCTX_SELFREAD_HEADROOM=3000
	export PMUCTX_SELFREAD_HEADROOM
	client perf_selfread
	unset PMUCTX_SELFREAD_HEADROOM
	echo 0 > $H
fi
unset PMUCTX_EXPECT_RDPMC

perf_tap_end
