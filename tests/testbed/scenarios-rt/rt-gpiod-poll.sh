#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpiod-poll on the PREEMPT_RT kernel: the logger against irqloop-responder --mode poll through two
# wires, ${TB_RT_SAMPLES:-10000} samples, none lost; the host checks run.db.
. /testbed/guest-lib.sh
. /testbed/guest-loop.sh
[ "$TB_RT" = 1 ] || tb_fail "this scenario belongs to the PREEMPT_RT boot"
tb_loop poll ${TB_RT_SAMPLES:-10000} testbed-rt-poll --interval 0 --timeout 1s --stats-interval 2s
tb_pass "poll-mode loop on $(uname -r)"
