#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A node whose in-gpios and out-gpios carry GPIO_ACTIVE_LOW (issue 27, item 3), as an active-low
# overlay on a board gives them, on the x86 guest through irqloop_node.ko active_low=1 (see
# kmod-node.sh), with irqloop,edge = "rising". The responder compares the input's raw level with
# the physical edges its interrupt asks for: one answer per rising edge of the wire, none for a
# falling one, and nothing counted spurious (the module of before compared the logical level and
# counted every answered edge as spurious). The output is driven as the node says: logical 0 at
# bind, so the wire stands high (gpiolib's debugfs shows the chip's own level) and the far end
# reads 1; each answer toggles it.
. /testbed/guest-lib.sh
tb_need gpioset gpioget
tb_kmod_setup
node=$TB_KMOD_DIR/irqloop_node.ko
[ -f "$node" ] || tb_fail "$node is missing (run-testbed.sh --kmod tests/testbed/kmod-node)"
nsys=/sys/bus/platform/devices/irqloop-node
trap 'kill $holder 2>/dev/null; rmmod irqloop_responder 2>/dev/null; rmmod irqloop_node 2>/dev/null' EXIT
[ -e /sys/kernel/debug/gpio ] ||
	mount -t debugfs debugfs /sys/kernel/debug || tb_fail "cannot mount debugfs"

# stimulus LEVEL: wire0a (the node's in, wire0b, at its far end) held at LEVEL until the next call.
holder=
stimulus()
{
	[ -z "$holder" ] || { kill $holder; wait $holder 2>/dev/null; }
	gpioset -c "$TB_CHIP" wire0a="$1" &
	holder=$!
	tb_wait_consumer "$TB_CHIP" wire0a gpioset "gpioset did not take wire0a"
	sleep 0.2
}

# expect HANDLED FAR: the node's answer count, and the level the far end of out (wire1b) reads.
expect()
{
	h=$(cat $nsys/handled) s=$(cat $nsys/spurious) far=$(gpioget --numeric -c "$TB_CHIP" wire1b)
	echo "handled $h, spurious $s, wire1b reads $far"
	[ "$h" = "$1" ] || tb_fail "handled $h edges, expected $1"
	[ "$s" = 0 ] || tb_fail "$s edges counted spurious, expected none"
	[ "$far" = "$2" ] || tb_fail "the far end of out reads $far, expected $2"
}

stimulus 0
dmesg -c >/dev/null
insmod "$ko" || tb_fail "cannot load the driver only"
insmod "$node" active_low=1 edge=rising || tb_fail "cannot load irqloop_node active_low=1"
echo irqloop_responder >$nsys/driver_override || tb_fail "cannot set driver_override"
echo irqloop-node >/sys/bus/platform/drivers_probe
dmesg | grep irqloop
[ -e $nsys/driver ] || tb_fail "irqloop-node not bound"

echo "--- bound: both lines active-low, out at logical 0 stands high"
grep -E '\((wire0b|wire1a) ' /sys/kernel/debug/gpio
grep -E '\(wire0b ' /sys/kernel/debug/gpio | grep -q 'ACTIVE LOW' || tb_fail "in is not active-low"
grep -E '\(wire1a ' /sys/kernel/debug/gpio | grep -q 'out hi .*ACTIVE LOW' ||
	tb_fail "out is not an active-low output standing high"
expect 0 1
tb_pass "in and out active-low; out stands high"

echo "--- rising, falling, rising edges of the wire: two answers, none spurious"
stimulus 1
expect 1 0
stimulus 0
expect 1 0
stimulus 1
expect 2 1
stimulus 0
tb_pass "one answer per rising edge, each toggling the wire; nothing spurious"

kill $holder
wait $holder 2>/dev/null
holder=
rmmod irqloop_node || tb_fail "cannot unload irqloop_node"
rmmod irqloop_responder || tb_fail "rmmod failed"
