#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pmuctx stat in the VM: real counts through the CLI.  Refused events are
# marked and the others counted, -x/--json/-r/-I/--per-task/-p/-M/{groups}
# give what the kernel counted, results stay off the command's stdout, and
# errors are precise.  Address ranges (--data-range, -e range:...) count
# range_target's accesses exactly, with PAPI's plan lines.  Adapts to the
# backend: with none (stock x86_64 QEMU) hardware events must be <not
# supported>; with a PMU (arm64, the x86_64 PMU lane), events it does not
# implement must be, the others must count.  TAP output.
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
# ~70 ms of one CPU under TCG: many clock ticks
LONG_LOOP='i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'

backend=$($P info | sed -n 's/^backend: *//p')
hw=0
case $backend in armv8* | intel-perfmon* | perf:* | perf-shared:*) hw=1 ;; esac
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

# The PMU's own names.  BR: an event the PMU cannot count (not in QEMU's
# PMCEID; on x86, branch instructions, which CPUID 0AH:EBX marks unavailable
# on the PMU lane; stock x86 QEMU has no backend at all).  CYC and INS:
# cycles and instructions by their table names; RCYC: cycles raw; NCTR:
# the hardware counters, r0 taking only general ones (ZERO_GROUP: one more
# than the general counters, which cannot fit).
if [ "$(uname -m)" = aarch64 ]; then
	BR=BR_RETIRED BR_NAME=BR_RETIRED CYC=CPU_CYCLES INS=STALL_BACKEND RCYC=r11
	PMU=armv8_pmuv3 NCTR=7 ZERO_GROUP='{r0,r0,r0,r0,r0,r0,r0}' IPC=ipc
else
	BR=r00c4 BR_NAME=BRANCH_INSTRUCTIONS_RETIRED CYC=UNHALTED_CORE_CYCLES
	INS=INSTRUCTION_RETIRED RCYC=r3c PMU=cpu NCTR=11
	ZERO_GROUP='{r0,r0,r0,r0,r0,r0,r0,r0,r0}'
	IPC=IPC	# -M matches metric names as perf does, without case; stat prints the table's
fi
echo "TAP version 13"
echo "# backend $backend, instructions countable: $insn"

# field F of the CSV line for EVENT (fields: value,unit,event,...)
field() {	# FILE EVENT F
	awk -F, -v ev="$2" -v f="$3" '$3 == ev { print $f; exit }' "$1"
}
is_whole() { case $1 in ''|*[!0-9]*) return 1 ;; esac; }
is_count() { is_whole "$1" && [ "$1" -gt 0 ]; }

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
	# One more hardware counter than the PMU has (arm64 6 + 1, x86 8 + 3):
	# they take turns, and each one shows a count, the part of the time it
	# ran and its error.
	nraw=$((NCTR - 1)) ev="{$CYC,$INS}"
	while [ $nraw -gt 0 ]; do ev="$ev,$RCYC"; nraw=$((nraw - 1)); done
	$P stat -e "$ev" -x, -o "$T/g" \
		-- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' 2> "$T/err"
	if [ "${backend#perf-shared:}" = "$backend" ]; then
		check "more events than counters multiplex: every one counts, some ran part of the time" \
			"[ \$(grep -c '^[0-9][0-9]*,,$RCYC,' '$T/g') -eq $((NCTR - 1)) ] &&
			 awk -F, '\$3 == \"$RCYC\" && \$5 < 100 { n++ } END { exit !n }' '$T/g' &&
			 awk -F, '\$3 == \"$RCYC\" && \$5 < 100 && \$NF !~ /^([0-9.]+%|\\?)\$/ { bad++ } END { exit bad }' '$T/g'"
	else
		# Borrowed from perf, one event is one of perf's events per
		# CPU however many counters count it: nothing to take turns.
		check "the same event $((NCTR - 1)) times borrows one counter: every one counts, all the time" \
			"[ \$(grep -c '^[0-9][0-9]*,,$RCYC,' '$T/g') -eq $((NCTR - 1)) ] &&
			 awk -F, '\$3 == \"$RCYC\" && \$5 < 100 { n++ } END { exit n }' '$T/g'"
	fi
	check "the group counts" "is_count \"\$(field '$T/g' $CYC 1)\""
	$P stat -e "$ZERO_GROUP" -x, -o "$T/g7" -- true 2> "$T/err"
	if [ "${backend#perf}" = "$backend" ]; then
		check "a group larger than the PMU: ENOSPC says why" "grep -q 'cannot fit on the PMU' '$T/err'"
	else
		skip "perf schedules the members of a group one by one on the perf-events and shared backends"
	fi
	$P stat -M ipc -x, -o "$T/m" -- sh -c "$LOOP" 2> "$T/err"
	if [ $insn = 1 ]; then
		check "-M ipc computes the metric" "field '$T/m' $IPC 1 | grep -q '^[0-9]*\\.[0-9][0-9]\$'"
	else
		check "-M ipc without INST_RETIRED: <not supported>" "[ \"\$(field '$T/m' $IPC 1)\" = '<not supported>' ]"
	fi
	check "list marks what the PMU leaves out (PMCEID, CPUID 0AH:EBX)" \
		"$P list $BR_NAME | grep -q '$BR_NAME .*\\[not implemented by this PMU\\]' && ! $P list $CYC | grep -q '$CYC .*not implemented'"
else
	# A command that runs for several clock ticks: in the -smp 2 VM the
	# TSCs are unsynchronized, and local_clock() (task-clock's clock, as
	# perf's) can stand still for up to a tick; a run of 'true' fell
	# inside one 1 time in ~150 and read 0.00 msec.
	$P stat -e '{task-clock,context-switches}' -x, -o "$T/g" -- sh -c "$LONG_LOOP" 2> "$T/err"
	cat "$T/g" >> "$T/err"	# shown if it fails
	check "a software group counts" "is_count \"\$(field '$T/g' task-clock 1 | tr -d .)\" &&
		is_whole \"\$(field '$T/g' context-switches 1)\""
	skip "counter exhaustion needs a hardware PMU"
	skip "ENOSPC message needs a hardware PMU"
	skip "metrics need a hardware PMU"
	skip "PMU marks need a hardware PMU"
fi

# ---- user-only fallback for an unprivileged user ----
if [ $hw = 1 ] && [ -n "$as_user" ] && grep -q '^[0N]$' /sys/module/pmuctx/parameters/allow_kernel 2>/dev/null; then
	$as_user "$PATH_P stat -e cycles,$PMU::$CYC -x, -- true" > /dev/null 2> "$T/err"
	$as_user "$PATH_P stat -e PAPI_TOT_CYC,$CYC:k -x, -- true" > /dev/null 2> "$T/err2"
	check "non-root: one note, then cycles:u and pmu::EVENT:u count" \
		"[ \$(grep -c 'note: counting user mode only' '$T/err') -eq 1 ] && grep -q '^[0-9]*,,cycles:u,' '$T/err' &&
		 grep -q '^[0-9]*,,$PMU::$CYC:u,' '$T/err'"
	check "non-root: a PAPI preset falls back too; an explicit :k does not" \
		"grep -q '^[0-9]*,,PAPI_TOT_CYC,' '$T/err2' && grep -q '^<not supported>,,$CYC:k,' '$T/err2' &&
		 grep -q 'counting kernel mode needs CAP_PERFMON' '$T/err2'"
else
	skip "user-only fallback needs a hardware PMU, busybox su and allow_kernel=0"
	skip "user-only fallback of presets needs a hardware PMU, busybox su and allow_kernel=0"
fi

# ---- address ranges: range_target's accesses, counted exactly ----
# range_target writes its four words W times and reads them R times, and
# calls range_target_hit() C times (range_target.c); it is not
# position-independent, so "where" gives the addresses of every run.
# QEMU's x86 watchpoints (TCG) leave a watchpoint that hit marked as hit
# until an access to any page holding a watchpoint walks past it in QEMU's
# list, so a hit on one register can also report a stale one in DR6,
# whatever page it watches (Documentation/ranges.rst): accesses that alternate
# between the registers of one plan overcount there (4 words, each its
# own register: 6994 for 4000 stores), not on a CPU.  Plans of several
# registers are counted with "settle": an access outside the words after
# each one, which clears those marks; one-register plans need nothing.
RT=$(dirname "$0")/range_target
N_RANGE=17
if ! $P info | grep -q '^address ranges:'; then
	i=0; while [ $i -lt $N_RANGE ]; do skip "address ranges: the module has no PMUCTX_FEAT_ADDR_RANGE"; i=$((i + 1)); done
else
	# x86_64: DR0-DR3, no loads-only watchpoint, execute breakpoints of one
	# byte; arm64 (QEMU -cpu max): 4 watchpoints with loads-only, 4-byte
	# A64 breakpoints
	if [ "$(uname -m)" = x86_64 ]; then
		kinds='insn, data, data-write' insn_len=1
	else
		kinds='insn, data, data-write, data-read' insn_len=4
	fi
	# "words 0x... hit 0x..."
	read -r _ words _ hit <<-EOF
	$($RT where)
	EOF
	check "info shows the debug registers" \
		"$P info > '$T/info' && grep -q '^address ranges:   $kinds (' '$T/info' &&
		 grep -q '^  data: *4 registers, each 1, 2, 4 or 8 aligned bytes' '$T/info'"
	check "range plans with the module" \
		"$P range $words+32 > '$T/plan' && grep -q '^Range hardware *: this machine (module)' '$T/plan' &&
		 grep -q '^Registers *: 4' '$T/plan'"
	check "check --data-range prints the module's plan" \
		"$P check --data-range $words+8 > '$T/plan' && grep -q '^Requested Event: range:data@$words-' '$T/plan' &&
		 grep -q 'Start Offset: 0x0; Actual Start Address: 0x0*${words#0x}\$' '$T/plan'"

	# one word, one register: W stores + R loads
	$P stat --data-range $words+8 -x, -o "$T/r" -- $RT run 1000 500 7 2> "$T/err"
	v=$(field "$T/r" range:data 1)
	check "--data-range of one word counts its 1000 stores and 500 loads ($v)" "[ '$v' = 1500 ]"
	check "-x: the plan on stderr, PAPI's wording, as comments" \
		"grep -q '^#   Requested Start Address: 0x0*${words#0x}; Start Offset: 0x0; Actual Start Address: 0x0*${words#0x}\$' '$T/err' &&
		 grep -q '^#   Requested End Address  : .*; End Offset  : 0x0; Actual End Address  : ' '$T/err'"
	$P stat --data-range $words+8 --range-kind data-write -x, -o "$T/r" -- $RT run 1000 500 7 2>/dev/null
	v=$(field "$T/r" range:data-write 1)
	check "--range-kind data-write counts the 1000 stores only ($v)" "[ '$v' = 1000 ]"
	$P stat --data-range $hit+$insn_len --range-kind insn -x, -o "$T/r" -- $RT run 1000 500 7 2>/dev/null
	v=$(field "$T/r" range:insn 1)
	check "--range-kind insn counts the 7 calls of range_target_hit ($v)" "[ '$v' = 7 ]"
	$P stat -e range:data@$words+8 -x, -o "$T/r" -- $RT run 1000 500 7 fork 2>/dev/null
	v=$(field "$T/r" range:data@$words+8 1)
	check "inherited: a forked child's accesses count too ($v)" "[ '$v' = 3000 ]"

	# four words, four registers
	$P stat --data-range $words+32 -x, -o "$T/r" -- $RT run 1000 500 7 settle 2>/dev/null
	v=$(field "$T/r" range:data 1)
	check "four registers: all 6000 accesses to the four words ($v)" "[ '$v' = 6000 ]"
	$P stat --data-range $words+32 --range-kind data-write -x, -o "$T/r" -- $RT run 1000 500 7 settle 2>/dev/null
	v=$(field "$T/r" range:data-write 1)
	check "four registers, data-write: the 4000 stores ($v)" "[ '$v' = 4000 ]"
	# PAPI's point: a plan wider than the request counts the neighbours too
	$P stat --data-range $((words + 1))-$((words + 32)) -- $RT run 1000 500 7 settle 2> "$T/err"
	check "a request the plan widens: Start Offset 0x1 in the table's header, and word 0 counted whole" \
		"grep -q '^   Requested Start Address: 0x0*$(printf %x $((words + 1))); Start Offset: 0x1; Actual Start Address: 0x0*${words#0x}\$' '$T/err' &&
		 grep -q '^ *6000      range:data *\$' '$T/err'"

	# refusals: the reason, status 1, and the command never runs
	check "a kernel address: refused before the command runs, status 1" \
		"$P stat --data-range 0xffffffff81000000+8 -- sh -c 'touch $T/ran' 2> '$T/err'; [ \$? -eq 1 ] &&
		 grep -q 'is not a user-space range: range counters watch user addresses only' '$T/err' && [ ! -e '$T/ran' ]"
	check "33 bytes do not fit in four registers: ERANGE says so, status 1" \
		"$P stat --data-range $words+33 -- sh -c 'touch $T/ran' 2> '$T/err'; [ \$? -eq 1 ] &&
		 grep -q '(33 bytes) cannot be covered with the 4 debug registers this CPU has for data' '$T/err' && [ ! -e '$T/ran' ]"
	check "--exact refuses a widened plan and says by how much" \
		"$P stat --data-range $((words + 1))-$((words + 32)) --exact -- true 2> '$T/err'; [ \$? -eq 1 ] &&
		 grep -q 'no exact plan: the closest one also counts 0x1 byte before and 0x0 after' '$T/err'"
	if [ "$(uname -m)" = x86_64 ]; then
		check "x86 has no read-only watchpoints: EOPNOTSUPP says which kinds it has" \
			"$P stat --data-range $words+8 --range-kind data-read -- true 2> '$T/err'; [ \$? -eq 1 ] &&
			 grep -q 'cannot watch kind data-read (they watch: insn, data, data-write)' '$T/err'"
	else
		$P stat --data-range $words+8 --range-kind data-read -x, -o "$T/r" -- $RT run 1000 500 7 2>/dev/null
		v=$(field "$T/r" range:data-read 1)
		check "--range-kind data-read counts the 500 loads only ($v)" "[ '$v' = 500 ]"
	fi
	check "a second range that finds the registers taken: EBUSY names who may hold them" \
		"$P stat -e range:data@$words+32,range:data@$words+8 -- true 2> '$T/err'; [ \$? -eq 1 ] &&
		 grep -q 'range:data@$words+8 .*the debug registers are in use' '$T/err'"
	check "a range in a group is refused before the kernel, status 2" \
		"$P stat -e '{task-clock,range:data@$words+8}' -- true 2> '$T/err'; [ \$? -eq 2 ] &&
		 grep -q 'a range counter cannot be a group member' '$T/err'"
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
