#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The testbed's realism paths, seen from the kernel responder:
#  1. pulses shorter than the wire's delay stay separate edges: a one-off 300 ms spike holds
#     the first of four quick changes back, the three others queue behind it, and all four
#     arrive back to back; with the chip's parent in hard IRQ context each is its own
#     interrupt (handled 4, spurious 0);
#  2. irqloop-wire threaded_parent=1 delivers edges through a parent interrupt handled in a
#     thread (as gpio-omap on PREEMPT_RT): the module reports that its hard handler ran in that
#     thread, and edges arriving while the thread waits are latched into one interrupt: fewer
#     interrupts than edges, and the module's spurious counter (its missed-edge check) counts
#     the bursts whose merged edges leave the level unchanged (an odd number missed).
. /testbed/guest-lib.sh
tb_need gpioset
tb_kmod_setup
spike=/sys/module/irqloop_wire/parameters/spike_ns

# burst: four changes of wire0a (1,0,1,0), the first held back 300 ms, the rest queued behind.
burst()
{
	echo 300000000 >$spike
	gpioset -c "$TB_CHIP" -t 1ms,1ms,1ms,0 wire0a=1 || tb_fail "gpioset failed"
	sleep 1
}

echo "--- parent in hard IRQ context: four quick edges, four interrupts"
tb_wire_reload
insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 || tb_fail "cannot load"
burst
handled=$(cat $sys/handled) spurious=$(cat $sys/spurious) seen=$(cat $sys/context_seen)
echo "handled $handled, spurious $spurious, context_seen '$seen'"
[ "$handled" = 4 ] && [ "$spurious" = 0 ] || tb_fail "expected 4 handled, 0 spurious"
[ "$seen" = hard ] || tb_fail "context_seen '$seen', expected hard"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "4 edges shorter than the delay: 4 interrupts, none spurious"

echo "--- threaded parent: the module reports the thread, merged edges count as spurious"
tb_wire_reload threaded_parent=1
grep irqloop-wire-parent /proc/interrupts
dmesg -c >/dev/null
insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 || tb_fail "cannot load"
ctx=$(cat $sys/context)
try=0 merged=0
while [ $try -lt 5 ] && [ $merged = 0 ]; do
	try=$((try + 1))
	h0=$(cat $sys/handled) s0=$(cat $sys/spurious)
	burst
	h=$(($(cat $sys/handled) - h0)) s=$(($(cat $sys/spurious) - s0))
	echo "burst $try: 4 edges, handled $h, spurious $s"
	[ $h -lt 4 ] && [ $s -ge 1 ] && merged=1
done
seen=$(cat $sys/context_seen)
echo "context at load '$ctx', context_seen '$seen'"
dmesg | grep irqloop_responder
[ "$ctx" = hard ] || tb_fail "context '$ctx' at load, expected hard (a parent of our own is not in the table)"
echo "$seen" | grep -q '^thread irq/[0-9]*-irqloop' || tb_fail "context_seen '$seen' is not the parent's thread"
dmesg | grep -q "irqloop_responder: first edge answered in thread 'irq/[0-9]*-irqloop.*parent interrupt is threaded" ||
	tb_fail "dmesg does not report the threaded parent"
[ $merged = 1 ] || tb_fail "no burst was merged by the threaded parent in $try tries"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "threaded parent reported; merged edges counted as spurious"
