#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Load and unload: the module must come and go cleanly, taking its device
# node with it, as often as asked.  TAP output.
ko=${PMUCTX_KO:-/lib/modules/pmuctx.ko}
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
check() { if eval "$2"; then ok "$1"; else notok "$1"; fi; }

echo "TAP version 13"
echo "1..6"
check "module is loaded" "grep -q '^pmuctx ' /proc/modules"
check "device node exists" "[ -c /dev/pmuctx ]"
check "rmmod succeeds" "rmmod pmuctx"
check "device node is gone after unload" "[ ! -e /dev/pmuctx ] && ! grep -q '^pmuctx ' /proc/modules"
cycles=0
while [ $cycles -lt 5 ] && insmod "$ko" && rmmod pmuctx; do
	cycles=$((cycles + 1))
done
check "five load/unload cycles" "[ $cycles -eq 5 ]"
check "reload leaves device node" "insmod $ko && [ -c /dev/pmuctx ]"
echo "# Totals: pass:$((n - fail)) fail:$fail"
[ $fail -eq 0 ]
