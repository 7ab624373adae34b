#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop_responder.ko refuses bad parameters: each load fails with its errno and leaves one
# line of ours in dmesg saying why; nothing stays loaded and nothing oopses. gpiod_get()'s own
# errors are mapped directly (no pre-check of the chip): gpiolib may log a line of its own.
. /testbed/guest-lib.sh
tb_need gpioset gpioinfo
tb_kmod_setup
chip=irqloop-wire

echo "--- a missing chip or line name: -ENODEV"
tb_kmod_refused "No such device" "in=no-such-chip:1: no gpiochip labelled 'no-such-chip'" \
	in=no-such-chip:1 out=$chip:2
tb_kmod_refused "No such device" "trigger=gone:5: no gpiochip labelled 'gone'" \
	in=$chip:1 out=$chip:2 trigger=gone:5
tb_kmod_refused "No such device" "in=GPIO17: no line named 'GPIO17'" in=GPIO17 out=wire1a

echo "--- a wrong offset or syntax: -EINVAL"
tb_kmod_refused "Invalid argument" "out=$chip:99: offset 99 out of range of chip '$chip'" \
	in=$chip:1 out=$chip:99
tb_kmod_refused "Invalid argument" "in=$chip:x: offset 'x' is not a number" in=$chip:x out=$chip:2
tb_kmod_refused "Invalid argument" "in=:3: expected <chip label>:<offset> or a line name" in=:3 out=$chip:2

echo "--- a line already in use: -EBUSY"
gpioset -c "$TB_CHIP" wire1a=0 &
holder=$!
tb_wait_consumer "$TB_CHIP" wire1a gpioset "gpioset did not take wire1a"
tb_kmod_refused "Device or resource busy" "out=$chip:2: line in use (gpioinfo names the consumer)" \
	in=$chip:1 out=$chip:2
kill $holder
wait $holder 2>/dev/null

echo "--- other refusals: -EINVAL"
tb_kmod_refused "Invalid argument" "out=$chip:1: same line as in=$chip:1" in=$chip:1 out=$chip:1
tb_kmod_refused "Invalid argument" "trigger=$chip:2: same line as out=$chip:2" \
	in=$chip:1 out=$chip:2 trigger=$chip:2
tb_kmod_refused "Invalid argument" "edge=sideways: expected both, rising or falling" \
	in=$chip:1 out=$chip:2 edge=sideways
tb_kmod_refused "Invalid argument" "out= missing: GPIO mode needs both in= and out=" in=$chip:1
tb_kmod_refused "Invalid argument" "no lines given" edge=rising
tb_kmod_refused "Invalid argument" "parport=0: in=, out=, edge= and threaded= belong to GPIO mode" \
	parport=0 in=$chip:1 out=$chip:2
tb_kmod_refused "Invalid argument" "parport=-2: expected a port number (0, 1, ...) or -1 for GPIO mode" \
	parport=-2
if [ "$TB_RT" = 1 ]; then
	tb_kmod_refused "Invalid argument" "force=1: only for hard-IRQ mode on a PREEMPT_RT kernel" \
		in=$chip:1 out=$chip:2 threaded=1 force=1
else
	tb_kmod_refused "Invalid argument" "force=1: only for hard-IRQ mode on a PREEMPT_RT kernel (this one is not PREEMPT_RT)" \
		in=$chip:1 out=$chip:2 force=1
fi
# A malformed bool is refused by the kernel's parameter parser itself, in its own words.
dmesg -c >/dev/null
insmod "$ko" in=$chip:1 out=$chip:2 threaded=maybe 2>&1 && tb_fail "threaded=maybe loaded"
dmesg | grep -F "threaded" || tb_fail "no dmesg line for threaded=maybe"
[ "$(dmesg | sed 's/^\[[ 0-9.]*\] //' | sort -u | grep -c '^irqloop_responder: ')" = 1 ] ||
	tb_fail "threaded=maybe: not exactly one line"
tb_pass "threaded=maybe refused by the parameter parser, one line"

echo "--- the lines are still free and the module still loads after all that"
insmod "$ko" in=$chip:1 out=$chip:2 || tb_fail "good parameters refused after the bad ones"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "loads and unloads with good parameters"
