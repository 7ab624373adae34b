#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The kernel responder's state belongs to the bound device (issue 27, item 14): unbinding its
# device and binding it again through sysfs starts from zeroed counters (one static state kept
# counting across binds). A bind whose chip is missing (irqloop-wire unloaded meanwhile) is
# deferred, and /sys/kernel/debug/devices_deferred says why (dev_err_probe()); with the chip back,
# the device binds. At load a missing chip is still refused at once (kmod-bad-params). The
# deferred bind goes through /sys/bus/platform/drivers_probe, the driver core's matching probe:
# a write to the driver's bind file probes too, but never lists a deferral as deferred.
. /testbed/guest-lib.sh
tb_need gpioset gpiodetect
tb_kmod_setup
chip=irqloop-wire
drv=/sys/bus/platform/drivers/irqloop_responder

# Start from a low stimulus wire, whatever earlier scenarios left on it.
gpioset -c "$TB_CHIP" wire0a=0 &
holder=$!
tb_wait_consumer "$TB_CHIP" wire0a gpioset "gpioset did not take wire0a"
kill $holder
wait $holder 2>/dev/null

# counters: handled spurious triggered context_seen, on one line.
counters() { echo "$(cat $sys/handled) $(cat $sys/spurious) $(cat $sys/triggered) $(cat $sys/context_seen)"; }

echo "--- load, answer one pulse"
insmod "$ko" in=$chip:1 out=$chip:2 trigger=$chip:5 || tb_fail "cannot load"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
before=$(counters)
echo "handled spurious triggered context_seen: $before"
[ "${before%% *}" = 2 ] || tb_fail "expected 2 edges handled before the rebind: $before"

echo "--- unbind and bind again through sysfs"
echo irqloop_responder >$drv/unbind || tb_fail "unbind failed"
[ ! -e $sys/driver ] || tb_fail "still bound after unbind"
echo irqloop_responder >$drv/bind || tb_fail "bind failed"
after=$(counters)
echo "handled spurious triggered context_seen: $after"
[ "$after" = "0 0 0 none yet" ] || tb_fail "the counters after a rebind are '$after', expected '0 0 0 none yet'"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
[ "$(cat $sys/handled)" = 2 ] || tb_fail "the rebound responder handled $(cat $sys/handled) edges, expected 2"
tb_pass "a rebind starts from zero: '$before' -> '$after', then 2 edges answered"

echo "--- bind while the chip is away: deferred, with the reason in devices_deferred"
echo irqloop_responder >$drv/unbind || tb_fail "unbind failed"
rmmod irqloop_wire || tb_fail "cannot unload irqloop-wire"
dmesg -c >/dev/null
echo irqloop_responder >/sys/bus/platform/drivers_probe
[ ! -e $sys/driver ] || tb_fail "bound without its chip"
[ -e /sys/kernel/debug/devices_deferred ] ||
	mount -t debugfs debugfs /sys/kernel/debug || tb_fail "cannot mount debugfs"
deferred=$(cat /sys/kernel/debug/devices_deferred)
echo "devices_deferred: $deferred"
echo "$deferred" | grep -F irqloop_responder |
	grep -qF "out=$chip:2: no gpiochip labelled '$chip' yet: waiting for it" ||
	tb_fail "devices_deferred does not give the reason"
tb_pass "deferred, and devices_deferred says why"

echo "--- the chip back: the deferred device binds"
insmod "$TB_KMOD_DIR/irqloop-wire.ko" || tb_fail "cannot load irqloop-wire"
TB_CHIP=$(gpiodetect | sed -n 's/^\(gpiochip[0-9]*\) \[irqloop-wire\].*/\1/p')
# The driver core retries its deferred probes on its own triggers (a driver binding a device,
# among others); if none has come yet, probe again through drivers_probe.
sleep 0.2
if [ -e $sys/driver ]; then
	echo "bound again by the driver core's retry"
else
	echo "not retried yet: probing again through drivers_probe"
	echo irqloop_responder >/sys/bus/platform/drivers_probe
fi
[ -e $sys/driver ] || tb_fail "not bound with the chip back"
grep -q irqloop_responder /sys/kernel/debug/devices_deferred && tb_fail "still listed as deferred"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
[ "$(cat $sys/handled)" = 2 ] || tb_fail "handled $(cat $sys/handled) edges after the deferral, expected 2"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "bound once the chip was back, 2 edges answered"
