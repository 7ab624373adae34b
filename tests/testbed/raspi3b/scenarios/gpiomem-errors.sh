#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The refusals of the gpiomem backend on a real kernel: each exits with status 2 and says why.
. /testbed/guest-lib.sh
tb_need irqloop irqloop-bench-gpiomem
cal() { irqloop calibrate --no-db --samples 10 --timeout 1s "$@"; }

echo "--- no /dev/gpiomem (Debian's kernel has no gpiomem driver)"
tb_expect_error 2 "/dev/gpiomem: no such device" cal --hw gpiomem:out=17,in=17
tb_expect_error 2 "Raspberry Pi OS kernels" cal --hw gpiomem:out=17,in=17

echo "--- a chip that is not the SoC's GPIO block (the firmware's expander)"
tb_expect_error 2 "[raspberrypi-exp-gpio] is not the bcm2837 GPIO block, whose chip is pinctrl-bcm2835" \
	cal --hw gpiomem:dev=/dev/mem,chip=gpiochip1,out=0,in=0

echo "--- soc= contradicting the device tree"
tb_expect_error 2 "soc=bcm2711 contradicts the device tree, which names brcm,bcm2837" \
	cal --hw gpiomem:dev=/dev/mem,soc=bcm2711,out=17,in=17
tb_expect_error 2 "soc=rp1 contradicts the device tree" \
	cal --hw gpiomem:dev=/dev/mem,soc=rp1,out=17,in=17

echo "--- a line held by another consumer"
irqloop-bench-gpiomem --hold /dev/gpiochip0:22 --consumer someone-else --seconds 60 &
holder=$!
sleep 2
tb_expect_error 2 "in use by 'someone-else'" cal --hw gpiomem:dev=/dev/mem,out=22,in=22
tb_expect_error 2 "stop 'someone-else' first" cal --hw gpiomem:dev=/dev/mem,out=17,in=22
kill $holder
wait $holder 2>/dev/null

echo "--- no permission: on the GPIO chips, then (chips opened up) on /dev/mem itself"
tb_expect_error 2 "Permission denied" \
	su tbuser -s /bin/sh -c "irqloop calibrate --no-db --samples 10 --hw gpiomem:dev=/dev/mem,out=17,in=17"
chmod 0666 /dev/gpiochip0 /dev/gpiochip1
tb_expect_error 2 "open gpiomem registers: /dev/mem: Permission denied" \
	su tbuser -s /bin/sh -c "irqloop calibrate --no-db --samples 10 --hw gpiomem:dev=/dev/mem,out=17,in=17"
chmod 0600 /dev/gpiochip0 /dev/gpiochip1
tb_pass "every error case"
