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

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
