#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A known truth: the response wire delays every change by 50 us, so no sample may come in
# under 50 us, whatever TCG does to the rest. The host checks the minimum and quotes the median.
. /testbed/guest-lib.sh
. /testbed/guest-loop.sh
tb_wire_delay 1 50000
echo "delay_ns: $(cat /sys/module/irqloop_wire/parameters/delay_ns)"
tb_loop event 5000 testbed-delay-50us --interval 0 --timeout 1s --stats-interval 2s
tb_pass "loop through a 50 us wire"
