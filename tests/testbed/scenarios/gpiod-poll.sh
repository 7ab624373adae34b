#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The logger against the userspace responder in poll mode (busy reads on both sides), through
# two wires: 100k samples, none lost. run.db is checked on the host.
. /testbed/guest-lib.sh
. /testbed/guest-loop.sh
tb_loop poll 100000 testbed-poll --interval 0 --timeout 1s --stats-interval 2s
tb_pass "poll-mode loop"
