#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's perf record and perf report (linux-perf 6.1, unmodified) on
# pmuctx through libpmuctx-perf.so: samples through the shim's ring, COMM
# and MMAP2 records from /proc (sideband.c), perf's default of one event
# per CPU (the first CPU's carries the task: shim.c), several events in
# one ring (PERF_EVENT_IOC_SET_OUTPUT), call chains (-g) and each
# sample's CPU, user registers and stacks (--call-graph dwarf).  TAP
# output.
. "$(dirname "$0")/perf_tap.sh"

# rec_report NAME 'TURNS [CHILDREN]' ARGS...: perf record ARGS of perf_loop
# TURNS (2 TURNS + 20,000 user instructions, in each of 1 + CHILDREN
# processes), then perf report's sample count, event count, and its top
# line's share, command, object and symbol.  $pin runs before perf
# (taskset), $wrap before perf_loop, $sort is perf report's sort order.  On arm64 the cycle
# counter (a cycle an instruction under -icount): QEMU raises an event
# counter's overflow only at the next change of exception level, so its
# samples would name the system call that ends the loop, and perf record
# -c writes no PERIOD (a late sample would count one period).
rec_event=instructions:u
rec_other=cycles:u
if [ "$(uname -m)" = aarch64 ]; then
	rec_event=cycles:u
	rec_other=instructions:u
fi
# With more CPUs than one, everything runs on the last: icount is one
# count for every vCPU, so what perf does on another CPU would show in
# the loop's instructions.  The task's events of the other CPUs (the
# first one's among them) then see it run elsewhere.
cpus=$(nproc)
last=$((cpus - 1))
pin=
[ "$cpus" -gt 1 ] && pin="taskset -c $last"
sort=
wrap=
rec_report() {
	name=$1
	turns=$2
	shift 2
	$pin $P exec -- perf record "$@" -o "$T/$name.data" -- $wrap "$LOOP" $turns \
		> "$T/rec" 2> "$T/err"
	rc=$?
	perf report -i "$T/$name.data" --stdio ${sort:--F overhead,comm,dso,sym} \
		> "$T/rep" 2>> "$T/err"
	samples=$(sed -n 's/^# Samples: \([0-9]*\) .*/\1/p' "$T/rep" | head -1)
	count=$(sed -n 's/^# Event count (approx\.): \([0-9]*\)$/\1/p' "$T/rep" | head -1)
	top=$(grep -m1 '%' "$T/rep" | grep -v '^#' | tr -s ' ')
	share=$(echo "$top" | sed -n 's/^ *\([0-9]*\)\..*%.*/\1/p')
}
# the first event's 60 samples of 100000 (3,000,000 turns): exact on x86;
# on arm64 now and then one interrupt stands for two periods
# (perf_sampling), and perf counts each sample as one
check_period_samples() {	# WHAT
	if [ "$(uname -m)" = aarch64 ]; then
		check "$1: up to 60 samples of 100000 ($samples samples, $count events)" \
			"[ '${samples:-0}' -ge 30 ] && [ '$samples' -le 60 ] && [ '$count' = \$(($samples * 100000)) ]"
	else
		check "$1: 60 samples of 100000 ($samples samples, $count events)" \
			"[ '$samples' = 60 ] && [ '$count' = 6000000 ]"
	fi
}
check_main() {	# WHAT
	check "$1: perf report names perf_loop's main, with most of the events ($top)" \
		"echo '$top' | grep -q ' perf_loop perf_loop \[\.\] main' && [ '${share:-0}' -ge 90 ]"
}

# ---- one ring per thread (--per-thread) ----
rec_report period 3000000 --per-thread -e $rec_event -c 100000
check "perf record --per-thread -c 100000 exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check_period_samples "--per-thread -c 100000"
check_main "--per-thread -c 100000"
# 60 ms of the loop at 1000 a second: ~60 periods near 10^6 (the start
# of the program, the loader's, takes about one), their events most of
# the count (what ran after the last sample is in none)
rec_report freq 30000000 --per-thread -e $rec_event -F 1000
check "perf record --per-thread -F 1000 exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check "-F 1000: frequency sampling's periods add up to most of the count ($samples samples, $count events)" \
	"[ '${samples:-0}' -ge 30 ] && [ '${count:-0}' -ge 50000000 ] && [ '${count:-0}' -le 60100000 ]"
check_main "-F 1000"

# ---- perf's default: the task's event on every CPU, a ring each ----
rec_report percpu 3000000 -e $rec_event -c 100000
check "perf record -c 100000 (an event on each of $cpus CPUs) exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check_period_samples "an event on each CPU"
check_main "an event on each CPU"
# two events: the second goes to the first one's ring (SET_OUTPUT)
rec_report two 3000000 -e $rec_event -e $rec_other -c 100000
check "perf record -e $rec_event -e $rec_other exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check_period_samples "two events, $rec_event"
other=$(sed -n "s/^# Samples: \([0-9]*\) *of event '$rec_other'.*/\1/p" "$T/rep")
check "two events: $rec_other has samples too (${other:-none})" "[ '${other:-0}' -ge 20 ]"

# ---- the kernel's side-band records: a family, FORK and EXIT ----
# perf_loop and its two children, 2,000,000 instructions each: each
# process's 20 samples resolve to main through the kernel's MMAP2 and FORK
# records (tracker.c), though every process has exited before perf drains
# 6,060,000-odd events in all, but not 60 samples every time: the
# processes' contexts are equivalent, so a switch between two of them
# swaps the contexts and leaves the PMU counting (as perf's swap does),
# which moves where each one's periods end; each of the three exits drops
# less than a period, so 58 to 60 (seen: 20, 19, 20 now and then)
rec_report family '1000000 2' -e $rec_event -c 100000
check "perf record of perf_loop and two children exits 0 (exit $rc)" "[ $rc -eq 0 ]"
if [ "$(uname -m)" = aarch64 ]; then
	check_period_samples "three processes"
else
	check "three processes: 58 to 60 samples of 100000 ($samples samples, $count events)" \
		"[ '${samples:-0}' -ge 58 ] && [ '$samples' -le 60 ] && [ '$count' = \$(($samples * 100000)) ]"
fi
check_main "three processes"
perf report -i "$T/family.data" --stdio --sort pid -F overhead,sample,pid > "$T/rep" 2> "$T/err"
pids=$(grep '%' "$T/rep" | grep -v '^#' | grep -c '[0-9]:perf_loop$')
each=$(grep '%' "$T/rep" | grep -v '^#' | awk '{ printf "%s%s", sep, $2; sep = "," }')
check "perf report --sort pid: three processes ($pids; samples $each)" "[ '$pids' = 3 ]"
perf script -i "$T/family.data" --show-task-events -F comm,pid,tid,time > "$T/script" 2> "$T/err"
forks=$(grep -c 'PERF_RECORD_FORK' "$T/script")
exits=$(grep -c 'PERF_RECORD_EXIT' "$T/script")
check "perf script: the kernel's FORK and EXIT records ($forks forks, $exits exits)" \
	"[ '$forks' -ge 2 ] && [ '$exits' -ge 3 ]"
# /proc's records, where the kernel gives none: the process must still
# run when perf drains, so perf runs free beside the loop (a longer one)
if [ "$cpus" -gt 1 ]; then
	pin_was=$pin
	pin=
	wrap="taskset -c $last"
	PMUCTX_PERF_SIDEBAND=proc rec_report proc 30000000 -e $rec_event -c 1000000
	pin=$pin_was
	wrap=
else
	PMUCTX_PERF_SIDEBAND=proc rec_report proc 30000000 -e $rec_event -c 1000000
fi
check "PMUCTX_PERF_SIDEBAND=proc perf record exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check_main "side-band records from /proc"

# ---- call chains (perf record -g: the module walks the frame pointers) ----
# perf_chain 3000000: main -> chain_outer -> chain_inner's loop, built
# with frame pointers; every sample's chain is those three
CHAIN=$(dirname "$0")/perf_chain
$pin $P exec -- perf record -g -e $rec_event -c 100000 -o "$T/g.data" -- "$CHAIN" 3000000 \
	> "$T/rec" 2> "$T/err"
rc=$?
check "perf record -g exits 0 (exit $rc)" "[ $rc -eq 0 ]"
perf script -i "$T/g.data" -F ip,sym > "$T/script" 2>> "$T/err"
# a sample: its address and symbol, then each caller's, a line each; a
# blank line ends it.  On arm64 perf also names the leaf's caller from
# the user link register (REGS_USER), which shows chain_outer twice
# (perf_chain's leaf keeps a frame record), on perf's own kernel too:
# repeats of a symbol are one frame here.
whole=$(awk 'BEGIN { RS = "" }
	{ k = 0; for (i = 2; i <= NF; i += 2) if (!k || $i != s[k - 1]) s[k++] = $i
	  if (s[0] == "chain_inner" && s[1] == "chain_outer" && s[2] == "main") w++; delete s }
	END { print w + 0 }' "$T/script")
all=$(awk 'BEGIN { RS = "" } END { print NR }' "$T/script")
check "perf script: every sample's chain is chain_inner, chain_outer, main ($whole of $all)" \
	"[ '$all' -ge 30 ] && [ '$whole' = '$all' ]"
perf report -i "$T/g.data" --stdio --children --sort sym > "$T/rep" 2>> "$T/err"
outer=$(grep -m1 '\] chain_outer' "$T/rep" | tr -s ' ')
check "perf report --children: chain_outer has all of the samples as a caller ($outer)" \
	"echo '$outer' | grep -q '^ *100\.00% *0\.00% '"

# ---- kernel call chains (perf record -g on cycles, kernel included) ----
# perf_chain 20000 k: the loop is getppid system calls.  A sample taken
# in a system call has the kernel's chain (the entry among it: kernel
# addresses) and then the user's (user addresses, down to main for the
# loop's), but in do_exit, whose task has no user registers left; perf
# script -F ip,sym prints an address and a symbol a frame.
kentry='do_syscall_64|invoke_syscall|el0_svc_common'
$pin $P exec -- perf record -g -e cycles -c 100000 -o "$T/gk.data" -- "$CHAIN" 20000 k \
	> "$T/rec" 2> "$T/err"
rc=$?
check "perf record -g -e cycles (kernel too) exits 0 (exit $rc)" "[ $rc -eq 0 ]"
perf script -i "$T/gk.data" -F ip,sym > "$T/script" 2>> "$T/err"
set -- $(awk -v k="^($kentry)\$" 'BEGIN { RS = "" }
	{ e = u = m = x = 0
	  for (i = 2; i <= NF; i += 2) {
		if ($i ~ k) e = 1
		else if (e && $(i - 1) !~ /^ffff/) u = 1
		m += $i == "main"; x += $i ~ /^do_exit$/
	  } }
	e && !x { s++ } e && !x && u { n++ } e && !x && m { l++ }
	END { print s + 0, n + 0, l + 0 }' "$T/script")
check "perf script: samples in system calls go on into user space ($2 of $1; $3 down to main)" \
	"[ '$1' -ge 10 ] && [ '$2' = '$1' ] && [ \$(($3 * 2)) -ge '$1' ]"

# --user-callchains (exclude_callchain_kernel): no kernel frames at all
# (perf script shows a chain from its first user frame)
$pin $P exec -- perf record -g --user-callchains -e cycles -c 100000 -o "$T/gu.data" -- \
	"$CHAIN" 20000 k > "$T/rec" 2> "$T/err"
rc=$?
perf script -i "$T/gu.data" -F ip,sym > "$T/script" 2>> "$T/err"
set -- $(awk 'BEGIN { RS = "" }
	{ k = 0; for (i = 1; i <= NF; i += 2) k += $i ~ /^ffff/ }
	k { n++ } / chain_outer\n/ { s++ } END { print s + 0, n + 0 }' "$T/script")
check "perf record -g --user-callchains: no kernel frames ($2 samples with one; $1 in the loop; exit $rc)" \
	"[ $rc -eq 0 ] && [ '$1' -ge 10 ] && [ '$2' = 0 ]"

# ---- --call-graph dwarf: perf_chain_dwarf keeps no frame pointers ----
# Each sample carries the task's user registers and 8 KiB of its stack
# (the module's sample_regs_user and sample_stack_user); perf unwinds
# them afterwards with the binary's call frame information.  perf script
# -F ip,sym: the loop's samples must go chain_inner, chain_outer, main.
# The control: -g (frame pointers) on the same binary names no caller.
dwarf_chains() {	# DATA: samples in the loop, and those with the whole chain
	# --no-inline: inlined frames come from addr2line, not in the VM
	# (perf script dies of SIGPIPE writing to it)
	perf script --no-inline -i "$1" -F ip,sym > "$T/script" 2>> "$T/err"
	# a frame a line, "IP SYM"; an inlined frame is a line of its own
	awk 'BEGIN { RS = ""; FS = "\n" }
		{ k = 0
		  for (i = 1; i <= NF; i++) {
			if ($i ~ /\(inlined\)/) continue
			split($i, f, " "); s[k++] = f[2]
		  }
		  if (s[0] == "chain_inner") { l++; if (s[1] == "chain_outer" && s[2] == "main") w++ }
		  delete s }
		END { print l + 0, w + 0, NR }' "$T/script"
	# samples perf's ring had no room for (a LOST record's second word)
	perf report -D -i "$1" 2>> "$T/err" |
		awk '/PERF_RECORD_LOST/ { for (i = 1; i <= NF; i++) if ($i ~ /^lost:?$/) n += $(i + 1) }
			END { print n + 0 }'
}
DWARF_CHAIN=$(dirname "$0")/perf_chain_dwarf
# The loop is 30 periods and more; what is checked is each sample's chain,
# so on arm64, whose cycle interrupts QEMU now and then raises a period
# late (one sample for two: check_period_samples), a quarter of them will
# do: a CI run at load once had 29 in the loop, all of them whole.
dwarf_floor=30
[ "$(uname -m)" = aarch64 ] && dwarf_floor=15
$pin $P exec -- perf record --call-graph dwarf -e $rec_event -c 100000 -o "$T/gd.data" -- \
	"$DWARF_CHAIN" 3000000 > "$T/rec" 2> "$T/err"
rc=$?
check "perf record --call-graph dwarf exits 0 (exit $rc)" "[ $rc -eq 0 ]"
set -- $(dwarf_chains "$T/gd.data")
check "--call-graph dwarf: every loop sample unwinds to chain_outer and main ($2 of $1; $3 samples in all, $4 lost)" \
	"[ '$1' -ge $dwarf_floor ] && [ '$2' = '$1' ]"
$pin $P exec -- perf record -g -e $rec_event -c 100000 -o "$T/gf.data" -- \
	"$DWARF_CHAIN" 3000000 > "$T/rec" 2> "$T/err"
set -- $(dwarf_chains "$T/gf.data")
check "-g on the same binary: frame pointers name no caller ($2 of $1 loop samples do)" \
	"[ '$1' -ge $dwarf_floor ] && [ '$2' = 0 ]"

# ---- a mixed session: a kernel tracepoint beside pmuctx's event ----
# sched:sched_process_fork is the kernel's event (period 1, as perf sets
# every tracepoint's): its records go into the pmuctx event's ring when
# it comes second (SET_OUTPUT to the library's ring), and the pmuctx
# event's into the kernel's ring when it comes second (the library
# adopts that ring); either way perf_loop's two forks are two samples,
# and the loop's samples are all there.
tracefs=/sys/kernel/tracing
[ -d $tracefs/events ] || mount -t tracefs none $tracefs 2> /dev/null
for order in pmuctx-first kernel-first; do
	if [ $order = pmuctx-first ]; then
		set -- -e $rec_event -e sched:sched_process_fork
	else
		set -- -e sched:sched_process_fork -e $rec_event
	fi
	$pin $P exec -- perf record "$@" -c 100000 -o "$T/mix.data" -- "$LOOP" 1000000 2 \
		> "$T/rec" 2> "$T/err"
	rc=$?
	perf report -i "$T/mix.data" --stats > "$T/rep" 2>> "$T/err"
	forks=$(awk '/sched:sched_process_fork stats:/ { getline; print $3 }' "$T/rep")
	loop=$(awk -v e="$rec_event stats:" '$0 ~ e { getline; print $3 }' "$T/rep")
	check "perf record $* ($order) exits 0 (exit $rc)" "[ $rc -eq 0 ]"
	check "$order: 2 fork samples of the kernel's tracepoint (${forks:-none}), 58 to 60 of the loop's (${loop:-none})" \
		"[ '${forks:-0}' = 2 ] && [ '${loop:-0}' -ge 58 ] && [ '${loop:-0}' -le 60 ]"
done

# ---- each sample's CPU (--sample-cpu), the last ----
sort="--sort cpu"
rec_report cpu 3000000 -e $rec_event -c 100000 --sample-cpu
check "perf record --sample-cpu exits 0 (exit $rc)" "[ $rc -eq 0 ]"
check_period_samples "--sample-cpu"
lines=$(grep '%' "$T/rep" | grep -vc '^#')
check "perf report --sort cpu: every sample on CPU $last ($top; $lines lines)" \
	"[ '$lines' = 1 ] && echo '$top' | grep -q '%  *0*$last\$'"
sort=

# ---- -p: a running process, for 0.3 s (perf's own synthesized maps) ----
$pin "$LOOP" 3000000000 &
loop_pid=$!
sleep 0.1
$P exec -- perf record -e $rec_event -c 1000000 -p $loop_pid -o "$T/attach.data" -- sleep 0.3 \
	> "$T/rec" 2> "$T/err"
rc=$?
kill $loop_pid 2> /dev/null
wait $loop_pid 2> /dev/null
check "perf record -p exits 0 (exit $rc)" "[ $rc -eq 0 ]"
perf report -i "$T/attach.data" --stdio -F overhead,comm,dso,sym > "$T/rep" 2>> "$T/err"
samples=$(sed -n 's/^# Samples: \([0-9]*\) .*/\1/p' "$T/rep" | head -1)
top=$(grep -m1 '%' "$T/rep" | grep -v '^#' | tr -s ' ')
check "perf record -p: samples of the running loop in its main ($samples; $top)" \
	"[ '${samples:-0}' -ge 10 ] && echo '$top' | grep -q ' perf_loop perf_loop \[\.\] main'"

# ---- CPU-wide recording is not pmuctx's ----
$P exec -- perf record -a -e $rec_event -o "$T/wide.data" -- "$LOOP" 1000 > "$T/rec" 2> "$T/err"
rc=$?
check "perf record -a (CPU-wide) fails (exit $rc)" "[ $rc -ne 0 ]"

perf_tap_end
