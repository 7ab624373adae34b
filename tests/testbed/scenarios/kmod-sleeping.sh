#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The kernel responder on a chip whose lines can sleep (issue 27, item 7), as an I2C/SPI
# expander's: irqloop-wire can_sleep=1, whose line interrupts are nested threaded ones, run from
# a parent interrupt's thread. Hard mode is refused with its line (its handler cannot drive a
# sleeping line); threaded=1 loads with a trace trigger on the same chip, answers each edge,
# and the trigger's rising edge stops tracing. The trigger is requested in whatever context the
# line allows (request_any_context_irq()); the module of before asked a hard handler
# (IRQF_NO_THREAD), which a nested interrupt refuses, so its threaded=1 load with trigger= failed.
. /testbed/guest-lib.sh
tb_need gpioset
tb_kmod_setup
tr=/sys/kernel/tracing
[ -e $tr/tracing_on ] || mount -t tracefs tracefs $tr || tb_fail "cannot mount tracefs"
echo 1 >$tr/tracing_on

dmesg -c >/dev/null
tb_wire_reload can_sleep=1
dmesg | grep -F 'lines can sleep (nested threaded interrupts)' || tb_fail "irqloop-wire did not take can_sleep=1"

echo "--- hard mode: refused, the lines can sleep"
tb_kmod_refused "Invalid argument" \
	"out=wire1a: lines of 'irqloop-wire' can sleep (I2C/SPI expander?); a hard interrupt handler cannot use them (threaded=1 can)" \
	in=wire0b out=wire1a

echo "--- threaded=1 with trigger= on the same chip: loaded, answering, the trigger stops tracing"
dmesg -c >/dev/null
insmod "$ko" in=wire0b out=wire1a trigger=wire2b threaded=1 ||
	{ dmesg | grep irqloop; tb_fail "threaded=1 with trigger= refused on a sleeping chip"; }
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
gpioset -c "$TB_CHIP" -t 1ms,0 wire2a=1 || tb_fail "gpioset failed"
sleep 0.2
dmesg | grep irqloop
echo "context: $(cat $sys/context); seen: $(cat $sys/context_seen)"
echo "handled $(cat $sys/handled), spurious $(cat $sys/spurious), triggered $(cat $sys/triggered), tracing_on $(cat $tr/tracing_on)"
[ "$(cat $sys/handled)" = 2 ] || tb_fail "handled $(cat $sys/handled) edges, expected 2"
[ "$(cat $sys/spurious)" = 0 ] || tb_fail "$(cat $sys/spurious) edges counted spurious"
[ "$(cat $sys/triggered)" = 1 ] || tb_fail "triggered $(cat $sys/triggered), expected 1"
[ "$(cat $tr/tracing_on)" = 0 ] || tb_fail "tracing_on reads $(cat $tr/tracing_on) after the trigger"
# The parent's thread is irq/<n>-irqloop-wire-parent (comm cut at 15 characters); a handler of
# our own would run in irq/<n>-irqloop_responder.
grep -q '^thread irq/[0-9]*-irqloop-' $sys/context_seen ||
	tb_fail "the first edge was not answered in the chip's parent thread"
rmmod irqloop_responder || tb_fail "rmmod failed"
echo 1 >$tr/tracing_on
tb_pass "threaded=1: 2 edges answered in the parent's thread, trigger fired once, tracing stopped"
