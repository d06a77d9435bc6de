#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pmuctx stat in the VM: real counts through the CLI.  Refused events are
# marked and the others counted, -x/--json/-r/-I/--per-task/-p/-M/{groups}
# give what the kernel counted, results stay off the command's stdout, and
# errors are precise.  Adapts to the backend: on x86_64 (software only)
# hardware events must be <not supported>; on arm64, events PMCEID does not
# advertise must be, the others must count.  TAP output.
P=${PMUCTX:-pmuctx}
T=${TMPDIR:-/tmp}/stat_test.$$
mkdir -p "$T"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
check() { if eval "$2"; then ok "$1"; else notok "$1"; sed 's/^/# /' "$T/err" 2>/dev/null | head -20; fi; }

# a loop that retires a known number of instructions per iteration
LOOP='i=0; while [ $i -lt 300 ]; do i=$((i+1)); done'

backend=$($P info | sed -n 's/^backend: *//p')
hw=0
case $backend in armv8*) hw=1 ;; esac
# instructions count only where PMCEID advertises INST_RETIRED (QEMU: -icount)
insn=0
if [ $hw = 1 ] && ! $P list INST_RETIRED | grep -q 'INST_RETIRED .*not implemented'; then
	insn=1
fi
# an unprivileged user: busybox su, as root, needs only a passwd line (the
# VM's /etc is ours) and the device must be open to others; both undone at
# the end
as_user= added_user= mode=
PATH_P=$(command -v $P)
if busybox su --help 2>&1 | grep -q Usage; then
	if ! grep -q '^pmuctxstat:' /etc/passwd 2>/dev/null; then
		mkdir -p /etc && echo 'pmuctxstat:x:65534:65534::/:/bin/sh' >> /etc/passwd && added_user=1
	fi
	mode=$(stat -c %a /dev/pmuctx)
	chmod 666 /dev/pmuctx
	as_user="busybox su -s /bin/sh pmuctxstat -c"
fi

# an event the PMU cannot count: not in QEMU's PMCEID; on x86 no backend yet
BR=BR_RETIRED
[ $hw = 1 ] || BR=r00c4
echo "TAP version 13"
echo "# backend $backend, instructions countable: $insn"

# field F of the CSV line for EVENT (fields: value,unit,event,...)
field() {	# FILE EVENT F
	awk -F, -v ev="$2" -v f="$3" '$3 == ev { print $f; exit }' "$1"
}
is_count() { case $1 in ''|*[!0-9]*) return 1 ;; esac; [ "$1" -gt 0 ]; }

# ---- the acceptance run: -r 3 -x, ----
$P stat -e cycles,instructions,$BR,PAPI_TOT_INS -r 3 -x, -o "$T/csv" -- sh -c "$LOOP" \
	> "$T/out" 2> "$T/err"
rc=$?
check "stat -r 3 -x, runs the command and exits with its status" "[ $rc -eq 0 ]"
check "-x, prints one line per event" "[ \$(wc -l < '$T/csv') -eq 4 ]"
check "$BR is <not supported> (not in PMCEID / no PMU)" \
	"[ \"\$(field '$T/csv' $BR 1)\" = '<not supported>' ]"
check "the reason is on stderr, once per event" \
	"[ \$(grep -c '$BR.*not implemented by this PMU\\|$BR.*no hardware PMU backend' '$T/err') -eq 1 ]"
if [ $hw = 1 ]; then
	check "cycles count" "is_count \"\$(field '$T/csv' cycles 1)\""
	check "-r 3: a variance field after the event name" "field '$T/csv' cycles 4 | grep -q '^[0-9.]*%\$'"
else
	check "no hardware PMU: cycles <not supported>" "[ \"\$(field '$T/csv' cycles 1)\" = '<not supported>' ]"
	skip "cycles variance: no hardware PMU"
fi
if [ $insn = 1 ]; then
	check "instructions count" "is_count \"\$(field '$T/csv' instructions 1)\""
	check "PAPI_TOT_INS equals instructions (same counter)" \
		"[ \"\$(field '$T/csv' PAPI_TOT_INS 1)\" = \"\$(field '$T/csv' instructions 1)\" ]"
else
	check "instructions <not supported> where INST_RETIRED is not implemented" \
		"[ \"\$(field '$T/csv' instructions 1)\" = '<not supported>' ]"
	check "PAPI_TOT_INS follows its base event" \
		"[ \"\$(field '$T/csv' PAPI_TOT_INS 1)\" = '<not supported>' ]"
fi

# ---- exact count: ten times the loop body retires ten times the difference ----
if [ $insn = 1 ]; then
	$P stat -e instructions:u -x, -o "$T/a" -- sh -c 'i=0; while [ $i -lt 100 ]; do i=$((i+1)); done' 2>/dev/null
	$P stat -e instructions:u -x, -o "$T/b" -- sh -c 'i=0; while [ $i -lt 1100 ]; do i=$((i+1)); done' 2>/dev/null
	a=$(field "$T/a" instructions:u 1) b=$(field "$T/b" instructions:u 1)
	check "1000 more iterations retire more user instructions ($a -> $b)" \
		"is_count '$a' && is_count '$b' && [ $b -gt \$(($a + 1000 * 10)) ]"
else
	skip "instruction counts need INST_RETIRED (arm64 -icount)"
fi

# ---- --json: one object per line ----
$P stat -e cycles,instructions,$BR,PAPI_TOT_INS,task-clock --json -o "$T/json" -- sh -c "$LOOP" 2> "$T/err"
check "--json: five lines, each an object with counter-value and event" \
	"[ \$(grep -c '^{\"counter-value\" : \".*\", \"unit\" : \".*\", \"event\" : \".*\".*}\$' '$T/json') -eq 5 ]"
check "--json marks $BR <not supported>" \
	"grep -q '\"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"$BR\"' '$T/json'"

# ---- -I: intervals while the command runs ----
$P stat -e task-clock,context-switches -I 100 -x, -o "$T/int" -- sleep 0.5 2> "$T/err"
lines=$(grep -c ',task-clock,' "$T/int")
check "-I 100 over 0.5 s prints 4 to 7 task-clock intervals ($lines)" "[ $lines -ge 4 ] && [ $lines -le 7 ]"
$P stat -e task-clock -I 100 -x, -o "$T/int2" -- sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done' 2>/dev/null
check "-I: run time and CPUs utilized are per interval (one busy task: within its interval, <= 1.05 CPUs)" \
	"awk -F, '\$4 == \"task-clock\" { n++; if (\$5 > (\$1 - last) * 1e9 * 1.05 + 1e6 || \$7 > 1.05) bad = 1; last = \$1 }
		  END { exit bad || !n }' '$T/int2'"
$P stat -e task-clock -r 3 -I 100 -x, -o "$T/int3" -- sh -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done' 2>/dev/null
check "-r 3 -I 100: every run's intervals start again, each value its own interval's" \
	"[ \$(grep -c '^0\.1[0-9]*,.*,task-clock,' '$T/int3') -eq 3 ] &&
	 awk -F, '\$4 == \"task-clock\" { d = \$2 * 1000000 - \$5; if (d > 1000000 || d < -1000000) bad = 1 } END { exit bad }' '$T/int3'"
check "-I timestamps increase" \
	"awk -F, '\$4 == \"task-clock\" { if (\$1 <= last) bad = 1; last = \$1 } END { exit bad }' '$T/int'"

# ---- --per-task: the process-tree read ----
$P stat -e task-clock --per-task -x, -o "$T/pt" -- sh -c 'sleep 0.1 & sleep 0.1 & wait' 2> "$T/err"
check "--per-task: the command's own count" "grep -q '^command [0-9]* (exited),[1-9][0-9]*,task-clock\$' '$T/pt'"
check "--per-task: its two exited children folded together" \
	"grep -q '^exited children (2),[1-9][0-9]*,task-clock\$' '$T/pt'"
own=$(sed -n 's/^command [0-9]* (exited),\([0-9]*\),.*/\1/p' "$T/pt")
kids=$(sed -n 's/^exited children (2),\([0-9]*\),.*/\1/p' "$T/pt")
total=$(awk -F, '$3 == "task-clock" && $2 == "msec" { sub(/\./, "", $1); print $1 + 0 }' "$T/pt")
check "--per-task parts add up to the total ($own + $kids ns = $total x 10 us)" \
	"[ -n '$own' ] && [ -n '$kids' ] && [ -n '$total' ] && d=\$(( ($own + $kids) / 10000 - $total )) && [ \$d -ge -1 ] && [ \$d -le 1 ]"
# while the children live: one line per task, with -I
$P stat -e task-clock --per-task -I 200 -x, -o "$T/pt3" -- sh -c 'sleep 0.5 & sleep 0.5 & wait' 2>/dev/null
check "--per-task with -I: live children by tid" "[ \$(grep -c '^tid [0-9]*,[0-9]*,task-clock\$' '$T/pt3') -ge 2 ]"

# ---- -p: attach to a running process for the length of a command ----
sh -c 'while :; do :; done' &
spin=$!
$P stat -e task-clock -x, -o "$T/p" -p $spin -- sleep 0.3 2> "$T/err"
ms=$(field "$T/p" task-clock 1)
kill $spin; wait $spin 2>/dev/null
check "-p PID -- sleep 0.3 counts the spinning process (${ms} ms)" \
	"[ \"\${ms%%.*}\" -ge 100 ] 2>/dev/null"
sh -c 'while :; do :; done' &
spin=$!
$P stat -e task-clock -x, -o "$T/t" -t $spin sleep 0.2 2> "$T/err"
ms=$(field "$T/t" task-clock 1)
kill $spin; wait $spin 2>/dev/null
check "-t TID sleep 0.2 (no --) counts that task (${ms} ms)" "[ \"\${ms%%.*}\" -ge 50 ] 2>/dev/null"
# without a command: until every thread of the process is gone
sh -c 'sleep 0.3 & sleep 0.6; wait' &
two=$!
$P stat -e context-switches -x, -o "$T/p3" -p $two 2> "$T/err"
rc=$?
check "-p PID without a command ends when the process does (status $rc)" \
	"[ $rc -eq 0 ] && grep -q ',context-switches,' '$T/p3'"
wait $two 2>/dev/null
if [ -n "$as_user" ]; then
	check "-p of a task we may not count: the reason, then status 1" \
		"$as_user '$PATH_P stat -e task-clock -p 1' 2> '$T/err'; [ \$? -eq 1 ] &&
		 grep -q 'not allowed to count that task' '$T/err' && grep -q 'no counter could be attached to process 1' '$T/err'"
else
	skip "attach refusal needs busybox su"
fi
check "-p without a command and with a dead pid: precise error" \
	"! $P stat -p 999999 2> '$T/err' && grep -q 'no process 999999' '$T/err'"

# ---- results on stderr, not on the command's stdout; -o FILE ----
$P stat -e task-clock -- echo hello > "$T/out" 2> "$T/err"
check "stdout holds only the command's output" "[ \"\$(cat '$T/out')\" = hello ]"
check "the table is on stderr" "grep -q 'Performance counter stats for .echo hello.' '$T/err' && grep -q 'msec task-clock' '$T/err'"
$P stat -- sh -c 'exit 7' 2>/dev/null
check "exit status passes through" "[ $? -eq 7 ]"

# ---- {groups}, more events than counters ----
if [ $hw = 1 ]; then
	# Eight hardware counters on 6 + 1: they take turns, and each one
	# shows a count, the part of the time it ran and its error.
	$P stat -e '{CPU_CYCLES,STALL_BACKEND},r11,r11,r11,r11,r11,r11' -x, -o "$T/g" \
		-- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' 2> "$T/err"
	check "more events than counters multiplex: every one counts, some ran part of the time" \
		"[ \$(grep -c '^[0-9][0-9]*,,r11,' '$T/g') -eq 6 ] &&
		 awk -F, '\$3 == \"r11\" && \$5 < 100 { n++ } END { exit !n }' '$T/g' &&
		 awk -F, '\$3 == \"r11\" && \$5 < 100 && \$NF !~ /^([0-9.]+%|\\?)\$/ { bad++ } END { exit bad }' '$T/g'"
	check "the group counts" "is_count \"\$(field '$T/g' CPU_CYCLES 1)\""
	$P stat -e '{r0,r0,r0,r0,r0,r0,r0}' -x, -o "$T/g7" -- true 2> "$T/err"
	check "a group larger than the PMU: ENOSPC says why" "grep -q 'cannot fit on the PMU' '$T/err'"
	$P stat -M ipc -x, -o "$T/m" -- sh -c "$LOOP" 2> "$T/err"
	if [ $insn = 1 ]; then
		check "-M ipc computes the metric" "field '$T/m' ipc 1 | grep -q '^[0-9]*\\.[0-9][0-9]\$'"
	else
		check "-M ipc without INST_RETIRED: <not supported>" "[ \"\$(field '$T/m' ipc 1)\" = '<not supported>' ]"
	fi
	check "list marks what PMCEID leaves out" \
		"$P list BR_RETIRED | grep -q 'BR_RETIRED .*\\[not implemented by this PMU\\]' && ! $P list CPU_CYCLES | grep -q 'CPU_CYCLES .*not implemented'"
else
	$P stat -e '{task-clock,context-switches}' -x, -o "$T/g" -- true 2> "$T/err"
	check "a software group counts" "is_count \"\$(field '$T/g' task-clock 1 | tr -d .)\""
	skip "counter exhaustion needs a hardware PMU"
	skip "ENOSPC message needs a hardware PMU"
	skip "metrics need a hardware PMU"
	skip "PMCEID marks need arm64"
fi

# ---- user-only fallback for an unprivileged user ----
if [ $hw = 1 ] && [ -n "$as_user" ] && grep -q '^[0N]$' /sys/module/pmuctx/parameters/allow_kernel 2>/dev/null; then
	$as_user "$PATH_P stat -e cycles,armv8_pmuv3::CPU_CYCLES -x, -- true" > /dev/null 2> "$T/err"
	$as_user "$PATH_P stat -e PAPI_TOT_CYC,CPU_CYCLES:k -x, -- true" > /dev/null 2> "$T/err2"
	check "non-root: one note, then cycles:u and pmu::EVENT:u count" \
		"[ \$(grep -c 'note: counting user mode only' '$T/err') -eq 1 ] && grep -q '^[0-9]*,,cycles:u,' '$T/err' &&
		 grep -q '^[0-9]*,,armv8_pmuv3::CPU_CYCLES:u,' '$T/err'"
	check "non-root: a PAPI preset falls back too; an explicit :k does not" \
		"grep -q '^[0-9]*,,PAPI_TOT_CYC,' '$T/err2' && grep -q '^<not supported>,,CPU_CYCLES:k,' '$T/err2' &&
		 grep -q 'counting kernel mode needs CAP_PERFMON' '$T/err2'"
else
	skip "user-only fallback needs arm64, busybox su and allow_kernel=0"
	skip "user-only fallback of presets needs arm64, busybox su and allow_kernel=0"
fi

# ---- precise errors ----
check "a typo gets a suggestion and status 2" \
	"$P stat -e cylces -- true 2> '$T/err'; [ \$? -eq 2 ] && grep -q \"did you mean 'cycles'\" '$T/err'"
check "software events refuse :u before the kernel" \
	"! $P stat -e task-clock:u -- true 2> '$T/err' && grep -q 'counts the task in every mode' '$T/err'"
check "unknown option: usage and status 2" \
	"$P stat --bogus -- true 2> '$T/err'; [ \$? -eq 2 ] && grep -q 'unknown option: --bogus' '$T/err'"

[ -n "$mode" ] && chmod "$mode" /dev/pmuctx
[ -n "$added_user" ] && sed -i '/^pmuctxstat:/d' /etc/passwd
rm -rf "$T"
echo "1..$n"
[ $fail -eq 0 ]
