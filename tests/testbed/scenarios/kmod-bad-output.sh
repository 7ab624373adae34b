#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop_responder.ko refuses an output it cannot drive (an input-only line): the load fails
# with -EINVAL and one dmesg line. irqloop-wire's input_only mask makes a line refuse output
# direction, as input-only pins of real controllers do; the knob is part of the chip.
. /testbed/guest-lib.sh
tb_kmod_setup
knob=/sys/module/irqloop_wire/parameters/input_only
[ -e $knob ] || tb_fail "irqloop-wire has no input_only parameter"
trap 'rmmod irqloop_responder 2>/dev/null; echo 0 >$knob' EXIT
chip=irqloop-wire

echo 4 >$knob # line 2, wire1a
tb_kmod_refused "Invalid argument" "out=$chip:2: cannot drive the line as an output" \
	in=$chip:1 out=$chip:2
echo 0 >$knob
insmod "$ko" in=$chip:1 out=$chip:2 || tb_fail "the same lines refused once line 2 can drive"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "the same parameters load once the line can be driven"
