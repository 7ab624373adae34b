#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Policy is the module's, not the board's (issue 27, item 13): threaded= and force= are module
# parameters that apply to device-tree nodes too, so a load without lines (the device-tree route)
# takes them, where it refused them before ("no lines given"); force=1 gets its own check on
# that route as on the other; edge= and trigger= without lines are still refused (they describe
# the wiring, which a node carries). This x86 guest has no device tree: kmod-node runs a node's
# route, and the warning for its old irqloop,threaded property, through a software-node stand-in.
. /testbed/guest-lib.sh
tb_kmod_setup

echo "--- threaded=1 without lines: the driver waits for nodes, to answer them threaded"
dmesg -c >/dev/null
insmod "$ko" threaded=1 || tb_fail "threaded=1 refused on the device-tree route"
dmesg | grep irqloop_responder
dmesg | grep -qF 'waiting for device-tree nodes compatible with "irqloop,responder", answered with threaded=1' ||
	tb_fail "no waiting line naming threaded=1"
[ "$(cat /sys/module/irqloop_responder/parameters/threaded)" = Y ] || tb_fail "threaded is not Y"
[ ! -e $sys ] || tb_fail "a device appeared without lines"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "threaded=1 loads on the device-tree route"

echo "--- force=1 without lines: checked as on the parameter route"
if [ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ]; then
	insmod "$ko" force=1 || tb_fail "force=1 refused on the device-tree route of a PREEMPT_RT kernel"
	rmmod irqloop_responder || tb_fail "rmmod failed"
	tb_pass "force=1 loads on the device-tree route"
else
	tb_kmod_refused "Invalid argument" \
		"force=1: only for hard-IRQ mode on a PREEMPT_RT kernel (this one is not PREEMPT_RT)" force=1
fi
tb_kmod_refused "Invalid argument" "force=1: only for hard-IRQ mode on a PREEMPT_RT kernel" \
	threaded=1 force=1

echo "--- wiring without lines: still refused"
tb_kmod_refused "Invalid argument" "no lines given" trigger=wire2b
