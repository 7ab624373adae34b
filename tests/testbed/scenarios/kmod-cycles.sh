#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop_responder.ko loaded and unloaded 100 times, answering two edges each time: no
# warning in dmesg, every line, interrupt and module reference given back.
. /testbed/guest-lib.sh
tb_need gpioset gpioget gpioinfo
tb_kmod_setup
chip=irqloop-wire
cycles=100

dmesg -c >/dev/null
kmemleak=/sys/kernel/debug/kmemleak
grep -q ' /sys/kernel/debug ' /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if [ -e $kmemleak ]; then
	echo clear >$kmemleak
else
	echo "kmemleak: not in this kernel (Debian leaves CONFIG_DEBUG_KMEMLEAK off)"
fi

# Start from a low stimulus wire, whatever earlier scenarios left on it.
gpioset -c "$TB_CHIP" wire0a=0 &
holder=$!
sleep 0.5
kill $holder
wait $holder 2>/dev/null
[ "$(gpioget -c "$TB_CHIP" --numeric wire0b)" = 0 ] || tb_fail "cannot take the stimulus wire low"

i=0
while [ $i -lt $cycles ]; do
	i=$((i + 1))
	insmod "$ko" in=$chip:1 out=$chip:2 trigger=$chip:5 || tb_fail "load $i failed"
	# Two edges on the stimulus wire (high for 1 ms, then low): two interrupts answered.
	gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed in cycle $i"
	handled=$(cat $sys/handled)
	[ "$handled" = 2 ] || tb_fail "cycle $i: $handled interrupts handled, expected 2"
	rmmod irqloop_responder || tb_fail "unload $i failed"
done
tb_pass "$cycles loads and unloads, 2 edges answered each time"

[ ! -d /sys/module/irqloop_responder ] || tb_fail "module still loaded"
[ ! -e $sys ] || tb_fail "$sys still exists"
grep -qE 'irqloop_(responder|trigger)' /proc/interrupts && tb_fail "an interrupt handler was left behind"
info=$(gpioinfo -c "$TB_CHIP")
echo "$info"
echo "$info" | grep -q 'consumer="irqloop_responder"' && tb_fail "a line is still requested"
tb_pass "no interrupt handler and no line left behind"

loads=$(dmesg | grep -c 'irqloop_responder: answering both edges')
unloads=$(dmesg | grep -c 'irqloop_responder: unloaded: 2 handled, 0 spurious, 0 triggered')
echo "dmesg: $loads load lines, $unloads unload lines"
[ "$loads" = $cycles ] && [ "$unloads" = $cycles ] || tb_fail "expected $cycles of each"
if dmesg | grep -E 'WARNING:|BUG:|Oops|RIP:|Call Trace|refcount|leak'; then
	tb_fail "the kernel complained"
fi
tb_pass "dmesg: $cycles clean loads and unloads, no warning"

if [ -e $kmemleak ]; then
	echo scan >$kmemleak
	sleep 1
	echo scan >$kmemleak
	if grep -q irqloop $kmemleak; then
		cat $kmemleak
		tb_fail "kmemleak reports a leak"
	fi
	tb_pass "kmemleak: nothing of ours"
fi

# The chip module's reference count is back to zero: it unloads (init reloads it).
rmmod irqloop_wire || tb_fail "irqloop_wire cannot unload: a reference was leaked"
tb_pass "irqloop_wire unloads: no module reference leaked"
