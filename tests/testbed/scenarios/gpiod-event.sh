#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The logger against the userspace responder in event mode (libgpiod edge events: IRQ, IRQ
# thread, wake-up), through two wires: 100k samples, none lost. run.db is checked on the host.
. /testbed/guest-lib.sh
. /testbed/guest-loop.sh
tb_loop event 100000 testbed-event --interval 0 --timeout 1s --stats-interval 2s
tb_pass "event-mode loop"

# Event mode blocks in one read() per edge, without a timeout: --duration and SIGTERM must still
# end it when no edge comes (the reporter thread signals the responding one).
start=$(date +%s)
timeout 20 irqloop-responder --hw "gpiod:chip=$TB_CHIP,in=1,out=2" --mode event --duration 1s \
	--report 0 || tb_fail "the idle event-mode responder did not end at --duration 1s (status $?)"
took=$(($(date +%s) - start))
[ $took -le 10 ] || tb_fail "the idle event-mode responder took ${took} s to end at --duration 1s"
irqloop-responder --hw "gpiod:chip=$TB_CHIP,in=1,out=2" --mode event --report 0 2>idle.log &
idle=$!
# (guest-loop.sh's tb_wait_consumer: LINE CONSUMER, on $TB_CHIP)
tb_wait_consumer wire1a irqloop-responder || { cat idle.log; tb_fail "the responder did not take its lines"; }
kill -TERM $idle
timeout 20 sh -c "while kill -0 $idle 2>/dev/null; do sleep 0.1; done" ||
	tb_fail "the idle event-mode responder did not end on SIGTERM"
wait $idle
tb_pass "an idle event-mode responder ends at --duration (${took} s) and on SIGTERM"
