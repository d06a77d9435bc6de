# The range planner's host tests and the range command: a suite of
# tests/events/run-tests.sh, which sources it with tests/tap.sh (run_binary,
# check and the totals).  Environment: OUT (build dir).

run_binary test_range
run_binary test_range_cli

# The expectations are PAPI's published Itanium 2 offsets and the x86 limit.
echo "# pmuctx range"
P="$OUT/pmuctx"
R="$OUT/range.out"
check "range prints PAPI's offsets for a heap array on itanium2" sh -c "'$P' range --range-hw itanium2 0x6000000004064030-0x6000000004074030 > $R && grep -q 'Start Offset: 0x30; Actual Start Address: 0x6000000004064000' $R && grep -q 'End Offset  : 0x10; Actual End Address  : 0x6000000004074040' $R && grep -q '^Registers *: 4' $R"
check "range: itanium2 fine-mode instructions are whole bundles (libpfm refuses unaligned ones)" sh -c "'$P' range --range-hw itanium2 --kind insn 0x1001-0x1005 > $R && grep -q 'Start Offset: 0x1; Actual Start Address: 0x0000000000001000' $R && grep -q 'End Offset  : 0xb; Actual End Address  : 0x0000000000001010' $R"
check "range --exact: an unaligned itanium2 instruction range is ERANGE" sh -c "'$P' range --range-hw itanium2 --kind insn --exact 0x1001-0x1005 > $R; [ \$? -eq 1 ] && grep -q 'ERANGE: no exact plan' $R"
check "range START+SIZE, exact pointer: zero offsets" sh -c "'$P' range --range-hw itanium2 0x6000000000011640+8 > $R && grep -q 'Start Offset: 0x0;' $R && grep -q 'End Offset  : 0x0;' $R"
check "range names the preset it used" sh -c "'$P' range 0x1000+8 | grep -q 'default preset for this machine\\|this machine (module)' && '$P' range --range-hw x86-debugregs 0x1000+8 | grep -q '^Range hardware *: x86-debugregs (preset chosen by --range-hw'"
check "range: 33 bytes on x86 is ERANGE, status 1" sh -c "'$P' range --range-hw x86-debugregs 0x1000+33 > $R; [ \$? -eq 1 ] && grep -q 'Error *: ERANGE' $R"
check "range: read-only on x86 is EOPNOTSUPP" sh -c "'$P' range --range-hw x86-debugregs --kind data-read 0x1000+8 > $R; [ \$? -eq 1 ] && grep -q 'EOPNOTSUPP' $R"
check "range: byte select on arm64 watchpoints" sh -c "'$P' range --range-hw arm64-watchpoints 0x1003-0x1006 | grep -q 'byte select 3 bytes'"
check "range: malformed range is a usage error" sh -c "'$P' range 5-x 2> $R; [ \$? -eq 2 ] && grep -q 'not START-END or START+SIZE' $R"
check "range: unknown hardware lists the presets" sh -c "'$P' range --range-hw nope 1-2 2> $R; [ \$? -eq 2 ] && grep -q '^itanium2 ' $R"
check "range --exact: a widened plan is ERANGE and says by how much" sh -c "'$P' range --range-hw x86-debugregs --exact 0x1001-0x1020 > $R; [ \$? -eq 1 ] && grep -q 'ERANGE: no exact plan: the closest one also counts 0x1 byte before and 0x0 after the range (0x1000-0x1020)' $R"
check "range: ERANGE names the registers" sh -c "'$P' range --range-hw x86-debugregs 0x1000+33 | grep -q 'cannot be covered with the 4 debug registers x86-debugregs has for data (each 1, 2, 4 or 8 aligned bytes)'"
check "range --list-hw describes each preset's registers" sh -c "'$P' range --list-hw > $R && grep -q '^ *data: 4 registers, each 1, 2, 4 or 8 aligned bytes' $R && grep -q '^ *insn: 6 registers, each 4 aligned bytes' $R && grep -q 'exact ranges within one 4096-byte page' $R"
check "check range:KIND@RANGE prints the plan" sh -c "'$P' check --range-hw x86-debugregs range:data-write@0x1001+31 > $R && grep -q '^Requested Event: range:data-write@0x1001-0x1020' $R && grep -q '^Range kind *: data-write' $R && grep -q 'Start Offset: 0x1;' $R"
check "check --data-range, events beside it" sh -c "'$P' --cpu 0x000f0510 check --data-range 0x1000+8 --range-kind insn --range-hw arm64-watchpoints CPU_CYCLES > $R && grep -q 'Config         : 0x11' $R && grep -q '^Requested Event: range:insn@0x1000-0x1008' $R && grep -q '^Registers *: 2' $R"
check "check: a malformed range event is an error line, status 1" sh -c "'$P' check range:data@0x1000 > $R; [ \$? -eq 1 ] && grep -q \"Error          : range event 'range:data@0x1000': '0x1000' is not START-END\" $R"
check "check: --exact without --data-range is a usage error" sh -c "'$P' check --exact cycles 2> $R; [ \$? -eq 2 ] && grep -q 'go with --data-range' $R"
check "stat: malformed --data-range is a usage error" sh -c "'$P' stat --data-range 0x1000 -- true 2> $R; [ \$? -eq 2 ] && grep -q 'is not START-END or START+SIZE: 0x1000' $R"
check "stat: inverted --data-range is a usage error" sh -c "'$P' stat --data-range 0x2000-0x1000 -- true 2> $R; [ \$? -eq 2 ] && grep -q 'empty or inverted range' $R"
check "stat: --range-kind without --data-range is a usage error" sh -c "'$P' stat --range-kind data -- true 2> $R; [ \$? -eq 2 ] && grep -q 'go with --data-range' $R"
check "stat: unknown --range-kind is a usage error" sh -c "'$P' stat --data-range 0x1000+8 --range-kind store -- true 2> $R; [ \$? -eq 2 ] && grep -q 'takes insn, data, data-write or data-read: store' $R"
check "stat: one --data-range; more with -e" sh -c "'$P' stat --data-range 0x1000+8 --data-range 0x2000+8 -- true 2> $R; [ \$? -eq 2 ] && grep -q 'more ranges with -e range:KIND@START-END' $R"
if [ ! -e /dev/pmuctx ]; then
	check "range without the module: the preset, and why" sh -c "'$P' range 0x1000+8 | grep -q 'default preset for this machine.s architecture: the module is not loaded'"
	check "range --range-hw module without the module: status 1" sh -c "'$P' range --range-hw module 0x1000+8 > $R; [ \$? -eq 1 ] && grep -q 'is the pmuctx module loaded' $R"
	check "stat --data-range without the module: status 1, before the command runs" sh -c "rm -f $OUT/ran; '$P' stat --data-range 0x1000+8 -- touch $OUT/ran 2> $R; [ \$? -eq 1 ] && grep -q 'range:data (range:data@0x1000-0x1008): /dev/pmuctx does not exist' $R && [ ! -e $OUT/ran ]"
fi
