#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PAPI's own tools (Debian's papi-tools 7.0, unmodified) counting on
# pmuctx through libpmuctx-perf.so ("pmuctx exec --"), in the x86_64 PMU
# lane with a vCPU model libpfm4 knows (scripts/vm-run --pmu --perf
# --intel-model 94: Skylake; PAPI 7.0 will not count on the lane's default
# model, which only Linux's generic perfmon path takes).  perf's driver is
# kept out of the kernel, so PAPI alone cannot count a hardware event.
# Under -icount a cycle is an instruction: every count below is exact and
# the same in every run; PAPI reads a running set counter by counter
# (RDPMC through perf's self-read page), so two counts of one instant
# differ by its read loop.  TAP output.
PARANOID=/proc/sys/kernel/perf_event_paranoid
TAP_TOOL=papi_command_line
TAP_BACKENDS=intel-perfmon
. "$(dirname "$0")/perf_tap.sh"
TAP_LOG=$T/out
model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
paranoid=$(cat $PARANOID)
restore() {
	echo "$paranoid" > $PARANOID
	perf_tap_restore
}
# the perf_event component's line of papi_component_avail, and its reason
component() {	# OUT: "active" or the reason PAPI gives
	sed -n '/^Name: *perf_event /{n;p;}' "$1" | grep -q 'Disabled' &&
		sed -n '/^Name: *perf_event /{n;s/.*Disabled: *//p;}' "$1" || echo active
}
# the value papi_command_line -u printed for EVENT ("NAME : <tab>N(u)"),
# or nothing
value() {	# FILE EVENT
	sed -n "s/^$2 :[[:space:]]*\([0-9][0-9]*\)(u)[[:space:]]*\$/\1/p" "$1" | head -n 1
}

papi_component_avail > "$T/out" 2>&1
alone=$(component "$T/out")
if echo "$alone" | grep -q 'no default PMU'; then
	restore
	echo "1..0 # SKIP model $model: PAPI 7.0 counts only on a model libpfm4 knows (vm-run --intel-model 94)"
	exit 0
fi

# ---- Debian's level 3: PAPI stops before it asks the kernel anything ----
echo 3 > $PARANOID
papi_component_avail > "$T/out" 2>&1
r=$(component "$T/out")
check "PAPI alone at level 3: perf_event is disabled ($r)" \
	"echo '$r' | grep -q 'paranoid=3'"
$P exec -- papi_component_avail > "$T/out" 2>&1
r=$(component "$T/out")
check "PAPI through the shim at level 3 reads pmuctx's level 2: perf_event is $r" \
	"[ '$r' = active ]"
$P exec -- cat $PARANOID > "$T/out" 2>&1
check "the shim leaves perf_event_paranoid to read() as the kernel's ($(cat "$T/out"))" \
	"[ \"\$(cat '$T/out')\" = 3 ]"

# ---- PAPI alone, at level 2: presets, but no hardware counter ----
echo 2 > $PARANOID
papi_avail > "$T/alone" 2>&1
papi_command_line PAPI_TOT_INS > "$T/out" 2>&1
check "PAPI alone cannot count PAPI_TOT_INS (perf's driver is out)" \
	"[ -z \"\$(value '$T/out' PAPI_TOT_INS)\" ] && grep -q 'Failed adding: PAPI_TOT_INS' '$T/out'"

# ---- through the shim ----
$P exec -- papi_avail > "$T/shim" 2>&1
grep ' Yes ' "$T/alone" | awk '{ print $1 }' > "$T/alone.yes"
grep ' Yes ' "$T/shim" | awk '{ print $1 }' > "$T/shim.yes"
nyes=$(wc -l < "$T/shim.yes")
check "papi_avail through the shim lists PAPI's own presets ($nyes available, as PAPI alone)" \
	"[ $nyes -gt 10 ] && cmp -s '$T/alone.yes' '$T/shim.yes'"
check "papi_avail: PAPI_TOT_INS and PAPI_TOT_CYC are available" \
	"grep -qx PAPI_TOT_INS '$T/shim.yes' && grep -qx PAPI_TOT_CYC '$T/shim.yes'"

$P exec -- papi_command_line -u PAPI_TOT_INS PAPI_TOT_CYC > "$T/out" 2>&1
rc=$?
ins=$(value "$T/out" PAPI_TOT_INS)
cyc=$(value "$T/out" PAPI_TOT_CYC)
check "papi_command_line through the shim exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check "PAPI_TOT_INS counts ($ins)" "[ -n '$ins' ] && [ '$ins' -gt 1000000 ]"
# PAPI reads a running event set counter by counter with RDPMC through
# perf's self-read page (its fast_counter_read, as on the kernel's perf):
# one group started at one instant, then each read a turn of PAPI's read
# loop after the one before (50 instructions measured; bound 200).
check "PAPI reads through perf's self-read page (no mmap refused)" \
	"! grep -q \"Can't mmap\" '$T/out'"
check "PAPI_TOT_CYC is PAPI_TOT_INS under icount, read one PAPI read-loop turn later ($cyc, $ins)" \
	"[ -n '$cyc' ] && [ '$cyc' -ge '$ins' ] && [ \$(($cyc - $ins)) -le 200 ]"
$P exec -- papi_command_line -u PAPI_TOT_INS PAPI_TOT_CYC > "$T/out" 2>&1
again=$(value "$T/out" PAPI_TOT_INS)
check "the same run counts the same again ($again, $ins)" "[ -n '$again' ] && [ '$again' = '$ins' ]"

# the same instructions by PAPI's three names: preset, libpfm4's, perf's
$P exec -- papi_command_line -u PAPI_TOT_INS INST_RETIRED:ANY_P perf::INSTRUCTIONS > "$T/out" 2>&1
p=$(value "$T/out" PAPI_TOT_INS)
nat=$(value "$T/out" INST_RETIRED:ANY_P)
gen=$(value "$T/out" perf::INSTRUCTIONS)
check "libpfm4's INST_RETIRED:ANY_P counts as PAPI_TOT_INS ($nat, $p)" \
	"[ -n '$nat' ] && [ '$nat' = '$p' ]"
check "perf's generic perf::INSTRUCTIONS counts as PAPI_TOT_INS, read one turn later ($gen, $p)" \
	"[ -n '$gen' ] && [ '$gen' -ge '$p' ] && [ \$(($gen - $p)) -le 200 ]"

# an unprivileged user at Debian's level 3: user mode, through pmuctx
echo 3 > $PARANOID
"$(dirname "$0")/run_as" 65534 $P exec -- papi_command_line -u PAPI_TOT_INS > "$T/out" 2>&1
u=$(value "$T/out" PAPI_TOT_INS)
check "uid 65534 at level 3 counts PAPI_TOT_INS, user mode, through pmuctx ($u)" \
	"[ -n '$u' ] && [ '$u' -gt 1000000 ]"
"$(dirname "$0")/run_as" 65534 papi_command_line -u PAPI_TOT_INS > "$T/out" 2>&1
check "uid 65534 at level 3 without the shim: PAPI's perf_event is disabled" \
	"grep -q 'Failed adding: PAPI_TOT_INS' '$T/out'"

restore
echo "1..$n"
[ $fail -eq 0 ]
