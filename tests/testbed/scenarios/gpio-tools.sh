#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Debian's own gpiod tools (libgpiod 2) against the irqloop-wire chip: an independent check
# that the chip behaves like hardware before any irqloop code is trusted with it.
. /testbed/guest-lib.sh
tb_need gpiodetect gpioinfo gpioget gpioset gpiomon

chip=$TB_CHIP

echo "--- the chip is listed with its label and 8 lines"
gpiodetect
gpiodetect | grep -qx "$chip \[irqloop-wire\] (8 lines)" || tb_fail "gpiodetect: no 8-line irqloop-wire"
info=$(gpioinfo -c "$chip")
echo "$info"
for n in 0a 0b 1a 1b 2a 2b 3a 3b; do
	echo "$info" | grep -q "\"wire$n\"" || tb_fail "gpioinfo: no line named wire$n"
done
tb_pass "gpiodetect and gpioinfo"

# wait_consumer LINE CONSUMER: until gpioinfo shows LINE held by CONSUMER (at most 10 s).
# The kernel names the consumer before it arms edge detection: a monitor needs a moment more.
wait_consumer()
{
	i=0
	while ! gpioinfo -c "$chip" "$1" | grep -q "consumer=\"$2\""; do
		i=$((i + 1))
		[ $i -lt 100 ] || tb_fail "$2 did not request $1"
		sleep 0.1
	done
}

echo "--- a level held on one end is read at the other"
for v in 1 0 1; do
	gpioset -c "$chip" wire1a=$v &
	pid=$!
	wait_consumer wire1a gpioset
	got=$(gpioget -c "$chip" --numeric wire1b)
	kill $pid
	wait $pid 2>/dev/null
	echo "wire1a=$v -> wire1b reads $got"
	[ "$got" = "$v" ] || tb_fail "wire1b reads $got while wire1a holds $v"
done
tb_pass "levels cross the wire"

echo "--- every toggle is one edge event at the far end, in order"
# The wire starts low (wire0a was never driven). 20 values 1,0,1,... are 20 edges, 20 ms
# apart: closer edges may merge in the IRQ thread on a busy host, as on real hardware.
gpiomon -c "$chip" --idle-timeout 10s -n 20 -F '%e %l' wire0b >mon.txt &
mon=$!
wait_consumer wire0b gpiomon
sleep 1
periods=$(printf '20ms,%.0s' $(seq 19))0
timeout 60 gpioset -c "$chip" -t "$periods" wire0a=1 || tb_fail "gpioset toggling failed"
i=0
while kill -0 $mon 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill $mon 2>/dev/null && tb_fail "gpiomon saw fewer than 20 events: $(wc -l <mon.txt)"
cat mon.txt
expected=$(for i in $(seq 10); do echo '1 wire0b'; echo '2 wire0b'; done)
[ "$(cat mon.txt)" = "$expected" ] || tb_fail "events are not 20 alternating rising/falling edges"
tb_pass "20 toggles, 20 edges, rising and falling alternating"

echo "--- a programmed delay holds the far end back (lower bound only: TCG)"
tb_wire_delay 2 3000000000
cat /sys/module/irqloop_wire/parameters/delay_ns
gpioset -c "$chip" wire2a=1 &
set_pid=$!
wait_consumer wire2a gpioset
early=$(gpioget -c "$chip" --numeric wire2b)
sleep 3.5
late=$(gpioget -c "$chip" --numeric wire2b)
kill $set_pid
wait $set_pid 2>/dev/null
echo "wire2b right after wire2a went high: $early, 3.5 s later: $late"
[ "$early" = 0 ] || tb_fail "the far end changed before the 3 s delay"
[ "$late" = 1 ] || tb_fail "the far end never changed"
gpiomon -c "$chip" --idle-timeout 10s -n 1 -F '%E' wire2b >delay-mon.txt &
mon=$!
wait_consumer wire2b gpiomon
sleep 1
gpioset -c "$chip" wire2a=0 &
set_pid=$!
wait $mon
kill $set_pid
echo "gpiomon on wire2b after wire2a went low: $(cat delay-mon.txt)"
[ "$(cat delay-mon.txt)" = falling ] || tb_fail "gpiomon did not see the delayed falling edge"
tb_wire_delay 2 0
tb_pass "3 s delay: far end unchanged right after, changed 3.5 s later, one edge"

echo "--- a spike delays the next change only"
echo 0,0,0,3000000000 >/sys/module/irqloop_wire/parameters/spike_ns
gpioset -c "$chip" wire3a=1 &
set_pid=$!
wait_consumer wire3a gpioset
early=$(gpioget -c "$chip" --numeric wire3b)
spike_left=$(cut -d, -f4 /sys/module/irqloop_wire/parameters/spike_ns)
sleep 3.5
kill $set_pid
wait $set_pid 2>/dev/null
gpioset -c "$chip" wire3a=0 &
set_pid=$!
wait_consumer wire3a gpioset
next=$(gpioget -c "$chip" --numeric wire3b)
kill $set_pid
echo "spiked change seen at once: $early; spike_ns after use: $spike_left; next change: $next"
[ "$early" = 0 ] || tb_fail "the spiked change was not delayed"
[ "$spike_left" = 0 ] || tb_fail "spike_ns was not consumed by the change"
[ "$next" = 0 ] || tb_fail "the change after the spike was delayed too"
tb_pass "one-off spike"
grep irqloop-wire /proc/interrupts || true
