# The range planner's host tests and the range command: a suite of
# tests/events/run-tests.sh, which sources it with tests/tap.sh (run_binary,
# check and the totals).  Environment: OUT (build dir).

run_binary test_range

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
