#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PAPI's own ctests (built by scripts/papi-ctests into /papi-ctests), each
# run unmodified, through libpmuctx-perf.so ("pmuctx exec --") by default,
# or straight on the kernel's perf with --kernel.  One line per test with
# PAPI's own verdict (PASSED, SKIPPED, FAILED: the last it printed; a
# nonzero exit is FAILED) and the reason it gave, then the totals.  A report, not a pass/fail test:
# Documentation/tools.rst says why each failure fails.
dir=${PAPI_CTESTS:-/papi-ctests}
limit=${PAPI_CTEST_SECONDS:-40}
via="pmuctx exec --" where="through pmuctx"
[ "${1:-}" = --kernel ] && via='' where="on the kernel's perf"
[ -d "$dir" ] || { echo "papi_ctests: no $dir (scripts/papi-ctests builds it)" >&2; exit 1; }
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
# PAPI disables itself at Debian's level 3 without asking the kernel; the
# library shows pmuctx's level, the kernel's perf needs the sysctl.
[ -n "$via" ] || echo 2 > /proc/sys/kernel/perf_event_paranoid
out=${TMPDIR:-/tmp}/papi_ctests.$$
passed=0 skipped=0 failed=0 timedout=0 n=0
cd "$dir" || exit 1
for t in *; do
	[ -x "$t" ] || continue
	case $t in
	# PAPI's own lists leave these out of a run: interactive, or minutes long
	timer_overflow|filter_helgrind|burn|attach_target) continue ;;
	esac
	n=$((n + 1))
	# shellcheck disable=SC2086 # $via is a command prefix or nothing
	timeout "$limit" $via "./$t" TESTS_QUIET > "$out" 2>&1
	rc=$?
	verdict=$(grep -o 'PASSED\|FAILED\|SKIPPED' "$out" | tail -n 1)
	why=$(grep -v 'Missing event LLC_' "$out" | grep 'FAILED\|SKIPPED\|Error\|error' |
		tail -n 1 | tr -s ' \t' ' ' | cut -c1-150)
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 143 ]; then
		verdict=TIMEOUT why="over ${limit} s under TCG"
	elif [ "$rc" -ne 0 ]; then
		# test_fail exits 1, and one thread's PASSED may come before
		# another's failure (multiplex3_pthreads): the status decides
		verdict=FAILED
	fi
	case $verdict in
	PASSED) passed=$((passed + 1)) ;;
	SKIPPED) skipped=$((skipped + 1)) ;;
	TIMEOUT) timedout=$((timedout + 1)) ;;
	*) verdict=FAILED failed=$((failed + 1)) ;;
	esac
	echo "ctest $t $verdict (exit $rc): $why"
done
echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid
rm -f "$out"
echo "papi ctests $where: $passed passed, $skipped skipped, $failed failed, $timedout timed out, of $n"
