#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The logger against the userspace responder in event mode (libgpiod edge events: IRQ, IRQ
# thread, wake-up), through two wires: 100k samples, none lost. run.db is checked on the host.
. /testbed/guest-lib.sh
. /testbed/guest-loop.sh
tb_loop event 100000 testbed-event --interval 0 --timeout 1s --stats-interval 2s
tb_pass "event-mode loop"
