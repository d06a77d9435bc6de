#!/bin/sh
# Runs every host unit test (TAP), totals the results.  The last line is
# "N passed, N failed"; the exit status is non-zero if anything failed.
# Environment: OUT (build dir), JEVENTS, UPSTREAM_ARCH, PAPI_EVENTS_CSV.
cd "$(dirname "$0")/../.." || exit 1
passed=0
failed=0
fixtures=tests/events/fixtures

tally() {	# tally NAME < TAP output
	while IFS= read -r line; do
		echo "$line"
		case "$line" in
		"ok "*) passed=$((passed + 1)) ;;
		"not ok "*) failed=$((failed + 1)) ;;
		esac
	done
}

run_binary() {
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

# generator must stop with "file:line: message" on bad input
jevents_fails() {	# CASE EXPECTED-MESSAGE
	out=$("$JEVENTS" -o "$OUT/bad.c" "$fixtures/bad/$1" x86 2>&1) && return 1
	echo "$out" | grep -q -- "$2" || { echo "# got: $out"; return 1; }
}

run_binary test_json
run_binary test_events
run_binary test_derived


echo "# jevents"
check "malformed JSON names file and line" jevents_fails syntax "bad/syntax/x86/t/events.json:3: '}' or ',' expected"
check "unknown ArchStdEvent is an error" jevents_fails std "events.json:3: unknown ArchStdEvent \"NOT_THERE\""
check "mapfile naming a missing directory" jevents_fails map "mapfile.csv:2: directory \"missing-dir\""
check "bad number names file and line" jevents_fails number "events.json:3: field \"EventCode\": \"zz\" is not a number"
check "unit-mask group without members" jevents_fails group "unit-mask group 0 has no unit mask"
check "generator accepts our own tables" "$JEVENTS" -o "$OUT/ours.c" pmu-events/arch arm64 x86

echo "# pmuctx CLI"
P="$OUT/pmuctx"
check "check on forced arm64 CPU prints config" sh -c "'$P' --cpu 0x000f0510 check CPU_CYCLES:u | grep -q 'Config         : 0x11'"
check "PMUCTX_CPUID forces the table" sh -c "PMUCTX_CPUID=GenuineIntel-6-55-4 '$P' check LLC_MISSES | grep -q 'Config         : 0x412e'"
check "check fails with a precise error" sh -c "! '$P' --cpu GenuineIntel-6-55-4 check LONGEST_LAT_CACHE > $OUT/cli.out && grep -q 'needs a unit mask from group 0' $OUT/cli.out"
check "list --details shows groups and hard-wired mods" sh -c "'$P' --cpu GenuineIntel-6-55-4 list --details INSTRUCTION_RETIRED | grep -q 'STALL_CYCLES.*hard-wired c=1:i=1'"
check "list --json is valid JSON" sh -c "'$P' --cpu 0x000f0510 list --json > $OUT/list.json && grep -q '\"name\": \"CPU_CYCLES\"' $OUT/list.json && grep -q '\"metrics\"' $OUT/list.json"
check "list pattern filters" sh -c "'$P' --cpu 0x000f0510 list 'L1D*' | grep -q L1D_CACHE_REFILL && ! '$P' --cpu 0x000f0510 list 'L1D*' | grep -q CPU_CYCLES"
check "--event-file adds derived events to list" sh -c "'$P' --cpu GenuineIntel-6-55-4 --event-file $fixtures/derived-all-types.csv list USER_IF | grep -q DERIVED_INFIX"
check "PMUCTX_EVENT_FILE adds derived events" sh -c "PMUCTX_EVENT_FILE=$fixtures/derived-all-types.csv '$P' --cpu GenuineIntel-6-55-4 list PAPI_PF | grep -q DERIVED_POSTFIX"

echo "# papi_events.csv via the CLI"
if [ -r "$PAPI_EVENTS_CSV" ]; then
	check "pmuctx loads $PAPI_EVENTS_CSV" sh -c "'$P' --cpu GenuineIntel-6-55-4 --event-file '$PAPI_EVENTS_CSV' list PAPI_BR | grep -q PAPI_BR_MSP"
else
	echo "not ok - papi_events.csv missing ($PAPI_EVENTS_CSV): install libpapi7.0 (make deps)"
	failed=$((failed + 1))
fi

echo "# upstream perf tables"
if [ ! -d "$UPSTREAM_ARCH" ]; then
	echo "not ok - upstream perf tree missing ($UPSTREAM_ARCH): run 'make deps'"
	failed=$((failed + 1))
elif [ ! -x "$OUT/tests/test_upstream" ]; then
	echo "not ok - compiling the upstream tree failed (see $OUT/upstream-build.log)"
	sed 's/^/# /' "$OUT/upstream-build.log" | tail -20
	failed=$((failed + 1))
else
	run_binary test_upstream
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
