#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The backend's unit tests ([gpiod] in irqloop-tests) where they cannot skip: on the real
# irqloop-wire chip. A skipped test here is a failure.
. /testbed/guest-lib.sh
tb_need irqloop-tests
irqloop-tests "[gpiod]" >unit.log 2>&1
rc=$?
cat unit.log
[ $rc = 0 ] || tb_fail "irqloop-tests [gpiod] ended with status $rc"
grep -qi skipped unit.log && tb_fail "some [gpiod] tests skipped on the testbed chip"
tb_note "$(grep -E '^All tests passed' unit.log)"
tb_pass "[gpiod] unit tests"
