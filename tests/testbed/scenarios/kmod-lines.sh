#!/bin/sh
# SPDX-License-Identifier: MIT
#
# How the kernel responder names and holds its lines: line names accepted (in=wire0b), the
# consumer gpioinfo shows is the module's name on every line it holds, the trigger input is
# pulled down so that a floating trigger does not fire, and the parameters reach the platform
# driver through a software node (the same probe as the device-tree route). Loaded with no
# parameters, the module only registers its driver and waits for device-tree nodes.
. /testbed/guest-lib.sh
tb_need gpioinfo gpiomon
tb_kmod_setup

echo "--- a floating line picks up noise: irqloop-wire float_noise_ns=2000000"
# After the reload every line is an input: wire 2 is driven by neither end.
tb_wire_reload float_noise_ns=2000000
gpiomon -c "$TB_CHIP" --idle-timeout 2s -n 10 -F '%E' wire2b >noise.txt 2>&1
cat noise.txt | tr '\n' ' '
echo
noise=$(grep -c . noise.txt)
[ "$noise" -ge 10 ] || tb_fail "gpiomon saw $noise edges on the floating wire2b, expected 10"
tb_pass "without bias, the floating wire2b toggles: $noise edges in gpiomon"

echo "--- in=, out=, trigger= by line name; the trigger is pulled down"
dmesg -c >/dev/null
insmod "$ko" in=wire0b out=wire1a trigger=wire2b edge=rising || tb_fail "cannot load by line names"
dmesg | grep irqloop_responder
info=$(gpioinfo -c "$TB_CHIP")
echo "$info"
for l in wire0b wire1a wire2b; do
	echo "$info" | grep "\"$l\"" | grep -q 'consumer="irqloop_responder"' ||
		tb_fail "gpioinfo does not show $l held by irqloop_responder"
done
echo "$info" | grep '"wire2b"' | grep -q 'pull-down' || tb_fail "wire2b is not pulled down"
tb_pass "gpioinfo: consumer irqloop_responder on wire0b, wire1a, wire2b; wire2b pull-down"
sleep 2
triggered=$(cat $sys/triggered)
echo "after 2 s on the floating wire: triggered $triggered"
[ "$triggered" = 0 ] || tb_fail "the floating trigger fired $triggered times"
tb_pass "the pulled-down trigger does not fire on a floating wire"

echo "--- the parameters reached probe through a software node"
mode=$(cat $sys/mode)
echo "mode: $mode"
ls -l $sys/ | grep -E 'driver|software_node|firmware_node' || true
[ "$(basename "$(readlink $sys/driver)")" = irqloop_responder ] || tb_fail "device not bound to the driver"
# edge= is not read by probe from the parameter: only from the node's irqloop,edge property.
[ "$mode" = "gpio in=wire0b out=wire1a edge=rising" ] || tb_fail "mode '$mode' lacks edge=rising"
ls /sys/kernel/software_nodes/ 2>/dev/null | head
tb_pass "bound through the platform driver, edge from the software node's irqloop,edge"
rmmod irqloop_responder || tb_fail "rmmod failed"

echo "--- no parameters: the driver waits for device-tree nodes"
dmesg -c >/dev/null
insmod "$ko" || tb_fail "cannot load without parameters"
dmesg | grep irqloop_responder
dmesg | grep -qF 'waiting for device-tree nodes compatible with "irqloop,responder"' ||
	tb_fail "no waiting message"
[ -d /sys/bus/platform/drivers/irqloop_responder ] || tb_fail "no platform driver registered"
[ ! -e $sys ] || tb_fail "a device appeared without parameters"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "driver only, no device"
