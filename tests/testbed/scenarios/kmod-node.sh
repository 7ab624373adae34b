#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The kernel responder's device-tree route (issue 27, items 13 and 14) on a guest without a device
# tree: irqloop_node.ko (tests/testbed/kmod-node) registers a platform device "irqloop-node" whose
# software node carries what an "irqloop,responder" node would, and a lookup table for its lines
# on irqloop-wire; driver_override binds it to the responder, whose probe then takes the node's
# route, not the module-parameter one. Shown: the deprecated irqloop,threaded property honoured
# with a warning that it moved; threaded=1 as a module parameter answering the node threaded,
# without the property; a node whose GPIO controller is missing deferred, with the reason in
# devices_deferred, then bound once the controller is back.
. /testbed/guest-lib.sh
tb_need gpioset gpiodetect
tb_kmod_setup
node=$TB_KMOD_DIR/irqloop_node.ko
[ -f "$node" ] || tb_fail "$node is missing (run-testbed.sh --kmod tests/testbed/kmod-node)"
nsys=/sys/bus/platform/devices/irqloop-node
trap 'rmmod irqloop_responder 2>/dev/null; rmmod irqloop_node 2>/dev/null' EXIT

# Start from a low stimulus wire, whatever earlier scenarios left on it.
gpioset -c "$TB_CHIP" wire0a=0 &
holder=$!
tb_wait_consumer "$TB_CHIP" wire0a gpioset "gpioset did not take wire0a"
kill $holder
wait $holder 2>/dev/null

# bind_node: irqloop-node probed by the responder (driver_override, then the driver core's
# matching probe, which lists a deferral in devices_deferred).
bind_node()
{
	echo irqloop_responder >$nsys/driver_override || tb_fail "cannot set driver_override"
	echo irqloop-node >/sys/bus/platform/drivers_probe
}

echo "--- a node with the deprecated irqloop,threaded: honoured, with a warning"
dmesg -c >/dev/null
insmod "$ko" || tb_fail "cannot load the driver only"
insmod "$node" threaded_prop=1 || tb_fail "cannot load irqloop_node"
bind_node
dmesg | grep irqloop
[ -e $nsys/driver ] || tb_fail "irqloop-node not bound"
dmesg | grep -qF 'irqloop,threaded: this property moved to the module parameter threaded=1' ||
	tb_fail "no warning that irqloop,threaded moved"
echo "mode: $(cat $nsys/mode); context: $(cat $nsys/context)"
[ "$(cat $nsys/context)" = "threaded (threaded=1)" ] || tb_fail "the property was not honoured"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
[ "$(cat $nsys/handled)" = 2 ] || tb_fail "handled $(cat $nsys/handled) edges, expected 2"
rmmod irqloop_node || tb_fail "cannot unload irqloop_node"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "irqloop,threaded honoured with a warning; 2 edges answered threaded"

echo "--- threaded=1 as a module parameter: the node answered threaded, no property"
dmesg -c >/dev/null
insmod "$ko" threaded=1 || tb_fail "threaded=1 refused without lines"
insmod "$node" || tb_fail "cannot load irqloop_node"
bind_node
dmesg | grep irqloop
dmesg | grep -q 'irqloop,threaded' && tb_fail "a warning about a property the node does not have"
echo "mode: $(cat $nsys/mode); context: $(cat $nsys/context)"
[ "$(cat $nsys/context)" = "threaded (threaded=1)" ] || tb_fail "threaded=1 did not reach the node"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
[ "$(cat $nsys/handled)" = 2 ] || tb_fail "handled $(cat $nsys/handled) edges, expected 2"
tb_pass "threaded=1 applies to the node"

echo "--- the node's controller missing: deferred, with the reason in devices_deferred"
echo irqloop-node >/sys/bus/platform/drivers/irqloop_responder/unbind || tb_fail "unbind failed"
rmmod irqloop_wire || tb_fail "cannot unload irqloop-wire"
bind_node
[ ! -e $nsys/driver ] || tb_fail "bound without its controller"
[ -e /sys/kernel/debug/devices_deferred ] ||
	mount -t debugfs debugfs /sys/kernel/debug || tb_fail "cannot mount debugfs"
deferred=$(cat /sys/kernel/debug/devices_deferred)
echo "devices_deferred: $deferred"
echo "$deferred" | grep -F irqloop-node | grep -qF "out-gpios: its GPIO controller is not there yet" ||
	tb_fail "devices_deferred does not give the node's reason"
insmod "$TB_KMOD_DIR/irqloop-wire.ko" || tb_fail "cannot load irqloop-wire"
TB_CHIP=$(gpiodetect | sed -n 's/^\(gpiochip[0-9]*\) \[irqloop-wire\].*/\1/p')
sleep 0.2
[ -e $nsys/driver ] || echo irqloop-node >/sys/bus/platform/drivers_probe
[ -e $nsys/driver ] || tb_fail "not bound with the controller back"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
[ "$(cat $nsys/handled)" = 2 ] || tb_fail "handled $(cat $nsys/handled) edges after the deferral, expected 2"
rmmod irqloop_node || tb_fail "cannot unload irqloop_node"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "deferred with its reason, bound once the controller was back"
