#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Line parameters while a device-tree node is already bound (issue 27, item 9), on the x86 guest
# through irqloop_node.ko (see kmod-node.sh): the node's driver_override is set before the module
# is loaded, so registering the driver binds the node, and the parameters' own device then meets
# the bound node. The load must fail with -EBUSY and one line saying which node is bound (the
# module of before loaded, the parameters dropped in silence). The node's binding goes with the
# failed module; loaded without parameters, the module binds it again and it answers; a second
# load with parameters then fails in the kernel's module loader (already loaded) and the node
# stays bound and answering.
. /testbed/guest-lib.sh
tb_need gpioset
tb_kmod_setup
node=$TB_KMOD_DIR/irqloop_node.ko
[ -f "$node" ] || tb_fail "$node is missing (run-testbed.sh --kmod tests/testbed/kmod-node)"
nsys=/sys/bus/platform/devices/irqloop-node
trap 'rmmod irqloop_responder 2>/dev/null; rmmod irqloop_node 2>/dev/null' EXIT
busy="irqloop_responder: irqloop_responder: one irqloop responder at a time: irqloop-node is already bound (unbind it, or remove its device-tree node)"

# Start from a low stimulus wire, whatever earlier scenarios left on it.
gpioset -c "$TB_CHIP" wire0a=0 &
holder=$!
tb_wait_consumer "$TB_CHIP" wire0a gpioset "gpioset did not take wire0a"
kill $holder
wait $holder 2>/dev/null

echo "--- line parameters with a node bound at the driver's registration: -EBUSY and one line"
insmod "$node" || tb_fail "cannot load irqloop_node"
echo irqloop_responder >$nsys/driver_override || tb_fail "cannot set driver_override"
dmesg -c >/dev/null
echo "\$ insmod irqloop_responder.ko in=wire2b out=wire3a"
if msg=$(insmod "$ko" in=wire2b out=wire3a 2>&1); then
	echo "loaded; $nsys/driver: $(readlink $nsys/driver)"
	dmesg | grep irqloop
	rmmod irqloop_responder
	tb_fail "loaded with in= and out= while irqloop-node was bound: the parameters were dropped"
fi
echo "$msg"
# Without timestamps, and once: busybox insmod may try twice (finit_module, then init_module).
all=$(dmesg | sed 's/^\[[ 0-9.]*\] //' | sort -u)
echo "$all" | sed 's/^/  dmesg: /'
echo "$msg" | grep -qF "Device or resource busy" || tb_fail "insmod did not fail with -EBUSY"
[ "$(echo "$all" | grep -c 'one irqloop responder at a time')" = 1 ] ||
	tb_fail "not one line saying a responder is already bound"
echo "$all" | grep -qxF "$busy" || tb_fail "dmesg lacks: $busy"
[ ! -d /sys/module/irqloop_responder ] || tb_fail "module left loaded"
[ ! -e $nsys/driver ] || tb_fail "irqloop-node still bound to an unloaded module"
tb_pass "-EBUSY and '$busy'"

echo "--- loaded without parameters: the node bound again, answering"
insmod "$ko" || tb_fail "cannot load without parameters"
[ -e $nsys/driver ] || tb_fail "irqloop-node not bound"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
[ "$(cat $nsys/handled)" = 2 ] || tb_fail "handled $(cat $nsys/handled) edges, expected 2"
tb_pass "irqloop-node bound and answering: 2 edges"

echo "--- parameters while the module is loaded: the module loader refuses, the node stays"
dmesg -c >/dev/null
echo "\$ insmod irqloop_responder.ko in=wire2b out=wire3a"
msg=$(insmod "$ko" in=wire2b out=wire3a 2>&1) && tb_fail "a second copy of the module loaded"
echo "$msg"
echo "$msg" | grep -qF "File exists" || tb_fail "insmod did not fail with -EEXIST"
[ -e $nsys/driver ] || tb_fail "irqloop-node unbound by the refused load"
gpioset -c "$TB_CHIP" -t 1ms,0 wire0a=1 || tb_fail "gpioset failed"
[ "$(cat $nsys/handled)" = 4 ] || tb_fail "handled $(cat $nsys/handled) edges, expected 4"
[ "$(cat $nsys/spurious)" = 0 ] || tb_fail "$(cat $nsys/spurious) spurious edges"
rmmod irqloop_responder || tb_fail "rmmod failed"
rmmod irqloop_node || tb_fail "cannot unload irqloop_node"
tb_pass "-EEXIST from the module loader; irqloop-node still bound, 4 edges, none spurious"
