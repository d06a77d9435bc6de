#!/bin/sh
# Runs every host unit test (TAP), totals the results.  The last line is
# "N passed, N failed"; the exit status is non-zero if anything failed.
# Environment: OUT (build dir), JEVENTS, UPSTREAM_ARCH, PAPI_EVENTS_CSV.
cd "$(dirname "$0")/../.." || exit 1
. tests/tap.sh
fixtures=tests/events/fixtures

# generator must stop with "file:line: message" on bad input
jevents_fails() {	# CASE EXPECTED-MESSAGE
	out=$("$JEVENTS" -o "$OUT/bad.c" "$fixtures/bad/$1" x86 2>&1) && return 1
	echo "$out" | grep -q -- "$2" || { echo "# got: $out"; return 1; }
}

run_binary test_json
run_binary test_events
run_binary test_derived
run_binary test_stat
run_binary test_perf_map


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

check "list glob matches bare names" sh -c "'$P' --cpu 0x410fd0c0 list 'INST*' | grep -q 'armv8_pmuv3::INST_RETIRED ' && ! '$P' --cpu 0x410fd0c0 list 'INST*' | grep -q CPU_CYCLES"
check "list glob matches EVENT.UMASK" sh -c "'$P' --cpu GenuineIntel-6-55-4 list 'INST_RETIRED.ANY*' | grep -q '^cpu::INST_RETIRED '"
check "list substring searches descriptions" sh -c "'$P' --cpu 0x410fd0c0 list mispredicted | grep -q BR_MIS_PRED_RETIRED"
check "list shows perf's generic names" sh -c "'$P' --cpu 0x410fd0c0 list branch-misses | grep -q '^branch-misses *= BR_MIS_PRED'"
check "list --details suggests a near name" sh -c "'$P' --cpu 0x410fd0c0 list --details BR_RETIRD 2>&1 | grep -q \"did you mean 'BR_RETIRED'\""
check "check suggests a near name" sh -c "'$P' --cpu 0x410fd0c0 check BR_RETIRD | grep -q \"did you mean 'BR_RETIRED'\""
check "unknown arm64 model: PMUv3 fallback" sh -c "'$P' --cpu 0x610f0220 list | head -1 | grep -q 'arm/pmuv3-generic (no table for this model'"
check "--skipped lists papi presets this CPU cannot count" sh -c "'$P' --cpu GenuineIntel-6-55-4 --event-file '$PAPI_EVENTS_CSV' list --skipped | grep -q \"PAPI_L2_TCM: base event 'LLC_REFERENCES': not an event of libpfm4's skx PMU\""
check "a one-base DERIVED_ADD loads, PAPI's whole file with it" sh -c "'$P' --cpu 0x410fd034 --event-file '$PAPI_EVENTS_CSV' list PAPI_ | grep -q '^PAPI_L1_DCM .*DERIVED_ADD'"

# every model of the upstream mapfiles lists and encodes its events
upstream_models() {	# ARCH: one CPU id per mapfile line, made concrete
	sed -e '/^#/d' -e '1d' "$UPSTREAM_ARCH/$1/mapfile.csv" | while IFS=, read -r id ver dir type rest; do
		[ "$type" = core ] || continue
		case $1 in
		arm64) echo "$id $dir" ;;
		x86) # first alternative of the pattern, first character of a class
			concrete=$(echo "$id" | sed -e 's/(\([^|)]*\)[^)]*)/\1/g' -e 's/\[\[:xdigit:\]\]+/31/' \
				-e 's/\[\([0-9A-F]\)[^]]*\]/\1/g' -e 's/\[\([0-9A-F]\)-[0-9A-F]\]/\1/g' -e 's/+//g')
			echo "$concrete $dir" ;;
		esac
	done
}
every_model() {
	bad=0
	for arch in x86 arm64; do
		upstream_models $arch > "$OUT/models.$arch"
		while read -r id dir; do
			first=$("$P" --cpu "$arch:$id" list 2>&1 | sed -n 's/^\([a-z_0-9]*::[A-Za-z0-9_.]*\) .*/\1/p' | grep -v '^sw::' | head -1)
			if ! "$P" --cpu "$arch:$id" list 2>&1 | head -1 | grep -q "table $dir\$\|table $dir "; then
				echo "# $arch:$id does not select $dir"; bad=1
			elif [ -z "$first" ] || ! "$P" --cpu "$arch:$id" check "$first" >/dev/null 2>&1 && \
				! "$P" --cpu "$arch:$id" check "$first" 2>&1 | grep -q 'needs a unit mask'; then
				echo "# $arch:$id: cannot encode $first"; bad=1
			fi
		done < "$OUT/models.$arch"
	done
	[ $bad -eq 0 ] && [ -s "$OUT/models.x86" ] && [ -s "$OUT/models.arm64" ]
}
if [ -d "$UPSTREAM_ARCH" ]; then
	every_model > "$OUT/models.log" 2>&1; status=$?
	cat "$OUT/models.log"
	if [ $status -eq 0 ]; then
		echo "ok - every upstream model ($(cat "$OUT/models.x86" "$OUT/models.arm64" | wc -l)) selects its table and encodes an event"
		passed=$((passed + 1))
	else
		echo "not ok - some upstream model does not select its table or encode"; failed=$((failed + 1))
	fi
fi

# stat on the host: no module needed for these answers
case $(uname -m) in aarch64) OTHER=GenuineIntel-6-55-4 ;; *) OTHER=arm64:0x410fd0c0 ;; esac
check "stat --cpu of another CPU is refused, status 2" sh -c "'$P' --cpu $OTHER stat -e task-clock -- true 2> $OUT/cli.err; [ \$? -eq 2 ] && grep -q 'is not this CPU' $OUT/cli.err && grep -q 'would count other events here' $OUT/cli.err"
check "stat: typo in -e gets a suggestion, status 2" sh -c "'$P' stat -e task-clok -- true 2> $OUT/cli.err; [ \$? -eq 2 ] && grep -q \"did you mean 'task-clock'\" $OUT/cli.err"
check "stat: bad -r is a usage error" sh -c "'$P' stat -r x -- true 2> $OUT/cli.err; [ \$? -eq 2 ] && grep -q 'positive number of runs: x' $OUT/cli.err"
if [ ! -e /dev/pmuctx ]; then
	check "stat without the module says so, status 1" sh -c "'$P' stat -e task-clock -- true 2> $OUT/cli.err; [ \$? -eq 1 ] && grep -q '/dev/pmuctx does not exist: is the pmuctx module loaded' $OUT/cli.err"
fi
check "pmuctx stat --version" sh -c "'$P' stat --version | grep -q '^pmuctx '"

echo "# papi_events.csv via the CLI"
if [ -r "$PAPI_EVENTS_CSV" ]; then
	check "pmuctx loads $PAPI_EVENTS_CSV" sh -c "'$P' --cpu GenuineIntel-6-55-4 --event-file '$PAPI_EVENTS_CSV' list PAPI_BR | grep -q PAPI_BR_MSP"
else
	echo "not ok - papi_events.csv missing ($PAPI_EVENTS_CSV): install libpapi7.0 (make deps)"
	failed=$((failed + 1))
fi

# For every CPU line of papi_events.csv that the installed PAPI defines
# presets for (forcing libpfm4's PMU), pmuctx defines the same presets.
papi_presets_match() {
	bad=0 n=0
	for pmu in $(sed -n 's/^CPU,\([a-z0-9_]*\)\r*$/\1/p' "$PAPI_EVENTS_CSV" | sort -u); do
		LIBPFM_FORCE_PMU=$pmu "$OUT/tests/papi_presets" > "$OUT/papi.$pmu" 2>/dev/null || return 1
		[ -s "$OUT/papi.$pmu" ] || continue	# not a PMU of this libpfm4 (other architectures)
		id=$(sed -n "s/^$pmu //p" tests/events/papi-cpus.txt)
		if [ -z "$id" ]; then
			echo "# $pmu: PAPI defines $(wc -l < "$OUT/papi.$pmu") presets; pmuctx has no event table for its CPUs"
			continue
		fi
		"$P" --cpu "$id" --event-file "$PAPI_EVENTS_CSV" list PAPI_ 2>&1 |
			sed -n 's/^\(PAPI_[A-Z0-9_]*\) .*/\1/p' | sort -u > "$OUT/ours.$pmu"
		sort -u "$OUT/papi.$pmu" -o "$OUT/papi.$pmu"
		if cmp -s "$OUT/papi.$pmu" "$OUT/ours.$pmu"; then
			echo "# $pmu ($id): $(wc -l < "$OUT/ours.$pmu") presets, as PAPI"
		else
			echo "# $pmu ($id): PAPI only: $(comm -23 "$OUT/papi.$pmu" "$OUT/ours.$pmu" | tr '\n' ' ')pmuctx only: $(comm -13 "$OUT/papi.$pmu" "$OUT/ours.$pmu" | tr '\n' ' ')"
			bad=1
		fi
		n=$((n + 1))
	done
	[ $bad -eq 0 ] && [ $n -ge 20 ]
}
echo "# PAPI presets against the installed PAPI (LIBPFM_FORCE_PMU)"
if [ -r "$PAPI_EVENTS_CSV" ] && "$OUT/tests/papi_presets" > /dev/null 2>&1; then
	papi_presets_match > "$OUT/papi.log" 2>&1; status=$?
	cat "$OUT/papi.log"
	if [ $status -eq 0 ]; then
		echo "ok - for every CPU PAPI supports and pmuctx has a table for, the presets are PAPI's"
		passed=$((passed + 1))
	else
		echo "not ok - some CPU's presets differ from PAPI's"; failed=$((failed + 1))
	fi
else
	echo "not ok - PAPI presets: libpapi7.0 and its papi_events.csv are needed (make deps)"
	failed=$((failed + 1))
fi

run_binary test_pfm_encodings

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
run_binary test_metrics

# The address-range planner (kernel/range_plan.c) and the range command.
. tests/range/tests.sh

# The error estimate of multiplexed counts (lib/estimate.c).
. tests/mux/tests.sh

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
