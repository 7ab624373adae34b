#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpiod-poll on the PREEMPT_RT kernel: the logger against irqloop-responder --mode poll through two
# wires, ${TB_RT_SAMPLES:-10000} samples, none lost; the host checks run.db.
# The guest has two CPUs and the logger busy-polls one of them at SCHED_FIFO. With the polling
# responder at SCHED_FIFO 80 on the other, the RT guest stalled (no progress for minutes): no
# CPU is left to PREEMPT_RT's per-CPU kernel threads (ktimers/N and the softirq threads are
# real-time tasks below priority 80), the likely cause. So the responder polls at SCHED_OTHER
# here (--priority 0), which those threads preempt. On a board, poll on an isolated CPU.
. /testbed/guest-lib.sh
. /testbed/guest-loop.sh
[ "$TB_RT" = 1 ] || tb_fail "this scenario belongs to the PREEMPT_RT boot"
TB_RESPONDER_OPTS="--priority 0"
tb_loop poll ${TB_RT_SAMPLES:-10000} testbed-rt-poll --interval 0 --timeout 1s --stats-interval 2s
tb_pass "poll-mode loop on $(uname -r)"
