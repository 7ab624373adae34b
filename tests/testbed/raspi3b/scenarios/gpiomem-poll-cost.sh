#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The benchmark: one poll of the sensed line through libgpiod (an ioctl) against one load of
# GPLEV0 (a register), same guest, same line. Under TCG only the ratio means something.
. /testbed/guest-lib.sh
tb_need irqloop-bench-gpiomem
out=$(irqloop-bench-gpiomem --hw gpiomem:dev=/dev/mem,out=17,in=27 --reads 20000) ||
	tb_fail "the benchmark failed: $out"
echo "$out"
ratio=$(echo "$out" | sed -n 's/.*ratio \([0-9.]*\).*/\1/p')
[ -n "$ratio" ] || tb_fail "no ratio in the output"
tb_note "raspi3b TCG: $(echo "$out" | grep 'poll cost')"
# A register load that cost as much as an ioctl would mean the hot path is not a load.
awk -v r="$ratio" 'BEGIN { exit !(r > 2) }' || tb_fail "ratio $ratio: registers not faster"
tb_pass "poll-cost ratio $ratio"
