#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What a user sees when the spec or the machine is wrong: each case ends with exit status 2
# and a message naming the chip, the line or the consumer at fault, from both programs.
. /testbed/guest-lib.sh
tb_need irqloop irqloop-responder gpioset gpioinfo
chip=$TB_CHIP
run() { irqloop run --no-db --samples 10 --timeout 1s "$@"; }

echo "--- no such chip"
tb_expect_error 2 "no such chip 'gpiochip9'" run --hw gpiod:chip=gpiochip9,out=0,in=3
tb_expect_error 2 "GPIO chips here: $chip [irqloop-wire]" run --hw gpiod:chip=gpiochip9,out=0,in=3
tb_expect_error 2 "no such chip 'gpiochip9'" irqloop-responder --hw gpiod:chip=gpiochip9,out=2,in=1

echo "--- offset out of range, and a line name no chip has"
tb_expect_error 2 "offset 99 is out of range: $chip [irqloop-wire] has lines 0..7" \
	run --hw "gpiod:chip=$chip,out=99,in=3"
tb_expect_error 2 "offset 8 is out of range" irqloop-responder --hw "gpiod:chip=$chip,out=2,in=8"
tb_expect_error 2 "no chip has a line named 'nowire'" run --hw gpiod:out=nowire,in=wire1b
tb_expect_error 2 "offset 3 without a chip" run --hw gpiod:out=wire0a,in=3

echo "--- a line in use by another consumer"
gpioset -c "$chip" -C someone-else wire1b=0 &
holder=$!
tb_wait_consumer "$chip" wire1b someone-else "gpioset did not take wire1b"
tb_expect_error 2 "in use by 'someone-else'" run --hw "gpiod:chip=$chip,out=0,in=3"
tb_expect_error 2 "stop 'someone-else' first" irqloop-responder --hw "gpiod:chip=$chip,out=3,in=1"
kill $holder
wait $holder 2>/dev/null

echo "--- no permission on the chip's device"
ls -l "/dev/$chip"
tb_expect_error 2 "cannot open /dev/$chip: Permission denied" \
	su tbuser -s /bin/sh -c "irqloop run --no-db --samples 10 --hw gpiod:chip=$chip,out=0,in=3"
tb_expect_error 2 "Permission denied" \
	su tbuser -s /bin/sh -c "irqloop-responder --hw gpiod:chip=$chip,out=2,in=1"

echo "--- the hint names the group that owns the device (Raspberry Pi OS: gpio)"
grep -q '^gpio:' /etc/group || echo 'gpio:x:997:' >>/etc/group
chgrp gpio "/dev/$chip" && chmod 0660 "/dev/$chip"
ls -l "/dev/$chip"
tb_expect_error 2 "add your user to group 'gpio', which owns /dev/$chip, or run as root" \
	su tbuser -s /bin/sh -c "irqloop run --no-db --samples 10 --hw gpiod:chip=$chip,out=0,in=3"
chgrp root "/dev/$chip" && chmod 0600 "/dev/$chip"
tb_pass "every error case"
