#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The module's parameter route whatever probe order the kernel is asked for. async_probe=1 (a
# parameter the kernel accepts for every module, as the driver_async_probe= boot option does for
# a driver) lets the driver core probe a newly added device later, from a worker. Init registers
# the module's own device and reads the probe's result at once, so an asynchronous probe failed
# every load with -ENODEV. The driver forces a synchronous probe: the load answers edges, and a
# bad parameter is still refused with its reason.
. /testbed/guest-lib.sh
tb_need gpioset gpioget
tb_kmod_setup
chip=irqloop-wire

# Start from a low stimulus wire, whatever earlier scenarios left on it.
gpioset -c "$TB_CHIP" wire0a=0 &
holder=$!
tb_wait_consumer "$TB_CHIP" wire0a gpioset "gpioset did not take wire0a"
kill $holder
wait $holder 2>/dev/null

echo "--- async_probe=1: loads, and answers"
dmesg -c >/dev/null
insmod "$ko" async_probe=1 in=$chip:1 out=$chip:2 || tb_fail "async_probe=1: the load failed"
dmesg | grep irqloop_responder
dmesg | grep -q "irqloop_responder: answering both edges of $chip:1 on $chip:2" ||
	tb_fail "async_probe=1: no 'answering' line in dmesg"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
handled=$(cat $sys/handled)
rmmod irqloop_responder || tb_fail "rmmod failed"
[ "$handled" = 2 ] || tb_fail "async_probe=1: $handled interrupts handled, expected 2"
tb_pass "async_probe=1: loaded, 2 edges answered"

echo "--- async_probe=1 with a bad offset: still refused with the reason"
tb_kmod_refused "Invalid argument" "out=$chip:99: offset 99 out of range of chip '$chip'" \
	async_probe=1 in=$chip:1 out=$chip:99
