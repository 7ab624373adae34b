#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop_responder.ko refuses an output it cannot drive (an input-only line): the load fails
# with -EINVAL and one dmesg line. irqloop-wire's input_only mask makes a line refuse output
# direction, as input-only pins of real controllers do; without that knob this case cannot be
# produced on a stock kernel, and the scenario skips.
. /testbed/guest-lib.sh
ko=$TB_KMOD_DIR/irqloop_responder.ko
[ -f "$ko" ] || tb_fail "$ko is missing (run-testbed.sh --kmod target-responder/kmod)"
knob=/sys/module/irqloop_wire/parameters/input_only
if [ ! -e $knob ]; then
	echo "SKIP: irqloop-wire has no input_only parameter: no line refuses output direction"
	exit 4
fi
trap 'rmmod irqloop_responder 2>/dev/null; echo 0 >$knob' EXIT
if tr "\000" "\n" <"$ko" | grep -q "^depends=.*parport" && [ ! -d /sys/module/parport ]; then
	insmod "$(find /lib/modules/"$TB_KVER" -name 'parport.ko*' | head -n1)" ||
		tb_fail "parport.ko, which irqloop_responder.ko needs, is not in the guest"
fi
chip=irqloop-wire

echo 4 >$knob # line 2, wire1a
dmesg -c >/dev/null
echo "\$ insmod irqloop_responder.ko in=$chip:1 out=$chip:2   (line 2 input-only)"
if msg=$(insmod "$ko" in=$chip:1 out=$chip:2 2>&1); then
	tb_fail "loaded with an output that cannot be driven"
fi
log=$(dmesg | sed 's/^\[[ 0-9.]*\] //' | grep '^irqloop_responder: ' | sort -u)
echo "$msg"
echo "$log"
echo "$msg" | grep -qF "Invalid argument" || tb_fail "insmod did not fail with -EINVAL"
echo "$log" | grep -qF "irqloop_responder: out=$chip:2: cannot drive the line as an output" ||
	tb_fail "dmesg lacks the reason"
[ "$(echo "$log" | wc -l)" = 1 ] || tb_fail "more than one distinct reason in dmesg"
[ ! -d /sys/module/irqloop_responder ] || tb_fail "module left loaded"
tb_pass "input-only output refused: -EINVAL and one reason"

echo 0 >$knob
insmod "$ko" in=$chip:1 out=$chip:2 || tb_fail "the same lines refused once line 2 can drive"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "the same parameters load once the line can be driven"
