#!/bin/sh
# Runs the range planner's host tests (TAP) after the event tests and prints
# the combined totals: the last line is "N passed, N failed" for both, the
# exit status non-zero if anything failed.
#   run-tests.sh EVENTS_TAP   (the event runner's output; its totals line last)
# Environment: OUT (build dir).
events_tap=$1
passed=0
failed=0

totals=$(tail -n 1 "$events_tap" 2>/dev/null)
case "$totals" in
*" passed, "*" failed")
	passed=${totals%% passed*}
	failed=${totals##*passed, }
	failed=${failed%% failed}
	;;
*)
	echo "not ok - the event tests printed no totals (got: '$totals')"
	failed=1
	;;
esac

echo "# test_range"
if [ -x "$OUT/tests/test_range" ]; then
	"$OUT/tests/test_range" > "$OUT/tests/test_range.tap" 2>&1
	status=$?
	while IFS= read -r line; do
		echo "$line"
		case "$line" in
		"ok "*) passed=$((passed + 1)) ;;
		"not ok "*) failed=$((failed + 1)) ;;
		esac
	done < "$OUT/tests/test_range.tap"
	if [ $status -ne 0 ] && ! grep -q '^not ok' "$OUT/tests/test_range.tap"; then
		echo "not ok - test_range exited with status $status"
		failed=$((failed + 1))
	fi
else
	echo "not ok - test_range was not built"
	failed=$((failed + 1))
fi

check() {	# check DESCRIPTION COMMAND...: one TAP line
	desc=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "ok - $desc"; passed=$((passed + 1))
	else
		echo "not ok - $desc"; failed=$((failed + 1))
	fi
}

# The expectations are PAPI's published Itanium 2 offsets and the x86 limit.
echo "# pmuctx range"
P="$OUT/pmuctx"
R="$OUT/range.out"
check "range prints PAPI's offsets for a heap array on itanium2" sh -c "'$P' range --range-hw itanium2 0x6000000004064030-0x6000000004074030 > $R && grep -q 'Start Offset: 0x30; Actual Start Address: 0x6000000004064000' $R && grep -q 'End Offset  : 0x10; Actual End Address  : 0x6000000004074040' $R && grep -q '^Registers *: 4' $R"
check "range START+SIZE, exact pointer: zero offsets" sh -c "'$P' range --range-hw itanium2 0x6000000000011640+8 > $R && grep -q 'Start Offset: 0x0;' $R && grep -q 'End Offset  : 0x0;' $R"
check "range names the preset it used" sh -c "'$P' range 0x1000+8 | grep -q 'default preset for this machine' && '$P' range --range-hw x86-debugregs 0x1000+8 | grep -q '^Range hardware *: x86-debugregs (preset chosen by --range-hw'"
check "range: 33 bytes on x86 is ERANGE, status 1" sh -c "'$P' range --range-hw x86-debugregs 0x1000+33 > $R; [ \$? -eq 1 ] && grep -q 'Error *: ERANGE' $R"
check "range: read-only on x86 is EOPNOTSUPP" sh -c "'$P' range --range-hw x86-debugregs --kind data-read 0x1000+8 > $R; [ \$? -eq 1 ] && grep -q 'EOPNOTSUPP' $R"
check "range: byte select on arm64 watchpoints" sh -c "'$P' range --range-hw arm64-watchpoints 0x1003-0x1006 | grep -q 'byte select 3 bytes'"
check "range: malformed range is a usage error" sh -c "'$P' range 5-x 2> $R; [ \$? -eq 2 ] && grep -q 'not START-END or START+SIZE' $R"
check "range: unknown hardware lists the presets" sh -c "'$P' range --range-hw nope 1-2 2> $R; [ \$? -eq 2 ] && grep -q '^itanium2 ' $R"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
