# Sourced by the host test runner: TAP tallies for test binaries and
# one-line checks, summed in $passed and $failed.
passed=0
failed=0

tally() {	# tally NAME < TAP output
	while IFS= read -r line; do
		echo "$line"
		case "$line" in
		"ok "*) passed=$((passed + 1)) ;;
		"not ok "*) failed=$((failed + 1)) ;;
		esac
	done
}

run_binary() {	# run_binary NAME: $OUT/tests/NAME, which prints TAP
	name=$1
	echo "# $name"
	if [ ! -x "$OUT/tests/$name" ]; then
		echo "not ok - $name was not built"
		failed=$((failed + 1))
		return
	fi
	"$OUT/tests/$name" > "$OUT/tests/$name.tap" 2>&1
	status=$?
	tally < "$OUT/tests/$name.tap"
	if [ $status -ne 0 ] && ! grep -q '^not ok' "$OUT/tests/$name.tap"; then
		echo "not ok - $name exited with status $status"
		failed=$((failed + 1))
	fi
}

check() {	# check DESCRIPTION COMMAND...: one TAP line
	desc=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "ok - $desc"; passed=$((passed + 1))
	else
		echo "not ok - $desc"; failed=$((failed + 1))
	fi
}
