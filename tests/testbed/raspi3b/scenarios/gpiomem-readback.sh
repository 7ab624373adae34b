#!/bin/sh
# SPDX-License-Identifier: MIT
#
# GPIO17 requested through libgpiod (pinctrl-bcm2835 sets it as an output), driven through the
# registers mapped from /dev/mem, read back through GPLEV0 and through libgpiod: both agree at
# each level. busybox devmem shows the same bit in GPLEV0 (0x3f200034) afterwards.
. /testbed/guest-lib.sh
tb_need irqloop-bench-gpiomem devmem
spec=gpiomem:dev=/dev/mem,out=17,in=17
irqloop-bench-gpiomem --hw "$spec" --check || tb_fail "registers and libgpiod disagree"
irqloop-bench-gpiomem --hw "$spec" --check | grep -q "consumer 'irqloop'" ||
	tb_fail "the kernel does not show line 17 as irqloop's"
# Released low: GPLEV0 bit 17 is clear, and the line is free again.
lev=$(devmem 0x3f200034 32)
echo "GPLEV0 after release: $lev"
[ $((lev & 0x20000)) = 0 ] || tb_fail "GPIO17 still high after release"
tb_pass "registers and libgpiod read the same level"
