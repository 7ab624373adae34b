#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The parport backend against Debian's parport_pc and ppdev, on QEMU's second emulated ISA
# parallel port (0x278, IRQ 3; its output goes to a chardev file that parport-ppdev.host.sh
# reads). tests/testbed/CMakeLists.txt adds that port with --qemu-arg; the first one (0x378,
# -parallel null) belongs to kmod-parport. QEMU emulates registers and a printer handshake,
# not wires: nothing loops data back into status, so no latency is measured here.
. /testbed/guest-lib.sh
tb_need irqloop-tests irqloop-responder modprobe
trap 'rmmod lp ppdev parport_pc 2>/dev/null' EXIT

# kmod-parport may have left parport_pc with 0x378 only: load it again with both ports.
rmmod lp ppdev parport_pc 2>/dev/null
modprobe parport_pc io=0x378,0x278 irq=7,3 || tb_fail "cannot load parport_pc"
modprobe ppdev || tb_fail "cannot load ppdev"
dmesg | grep -E 'parport|ppdev'
if [ ! -c /dev/parport1 ]; then
	echo "SKIP: no /dev/parport1: QEMU was started without the second parallel port" \
		"(-device isa-parallel,index=1,irq=3, see tests/testbed/CMakeLists.txt)"
	exit 4
fi
ls -l /dev/parport*
echo "parport1: irq $(cat /proc/sys/dev/parport/parport1/irq)," \
	"modes $(cat /proc/sys/dev/parport/parport1/modes)"
grep parport /proc/ioports /proc/interrupts

# run_tests LOG FILTER: the Catch2 tests, which SKIP unless the port variables are set.
run_tests()
{
	_log=$1
	shift
	irqloop-tests "$@" >"$_log" 2>&1
	_rc=$?
	cat "$_log"
	return $_rc
}

echo "--- ppdev and raw port I/O tests on the emulated port (0x3bc has no port)"
export IRQLOOP_TEST_PPDEV=/dev/parport1 IRQLOOP_TEST_PARPORT_BASE=0x278
export IRQLOOP_TEST_NO_PORT_BASE=0x3bc IRQLOOP_TEST_QEMU_LPT=1
# [cli] tests spawn the host build's binary by path: they run on the host, not here.
run_tests "$TB_TMP/tests.log" "[parport]~[cli]" || tb_fail "parport tests failed"
# Every real-port test ran except the one that needs lp loaded.
grep -q 'test cases:.* 1 skipped' "$TB_TMP/tests.log" || tb_fail "more than one test skipped"
tb_pass "parport tests, real-port ones included"
grep -E '^(ppdev|raw) ' "$TB_TMP/tests.log" | while read -r line; do tb_note "$line"; done

echo "--- irqloop-responder in event mode: woken through ppdev by the port's IRQ, answers on D3"
# outb PORT VALUE and inb PORT through /dev/port: the stimulus comes from outside the
# responder's claim, as raw I/O would. STROBE pulses with the IRQ enabled make QEMU's port
# raise IRQ 3; the status read withdraws it.
outb() { printf "\\$(printf %03o "$2")" | dd of=/dev/port bs=1 seek=$(($1)) count=1 2>/dev/null; }
inb() { dd if=/dev/port bs=1 skip=$(($1)) count=1 2>/dev/null | od -An -tu1 | tr -d ' '; }
irqloop-responder --hw parport:dev=/dev/parport1 --mode event --count 10 -p 0 --report 0 \
	>"$TB_TMP/responder.log" 2>&1 &
rpid=$!
sleep 1
d3=""
i=0
# Pulses closer than the guest can take them coalesce into one interrupt: pace them, and
# send more until the responder has answered 10.
while [ $i -lt 40 ] && kill -0 $rpid 2>/dev/null; do
	outb 0x27a 0x1d
	outb 0x27a 0x1c
	inb 0x279 >/dev/null
	sleep 0.3
	d3="$d3$((($(inb 0x278) >> 3) & 1))"
	i=$((i + 1))
done
kill -0 $rpid 2>/dev/null && sleep 2
kill $rpid 2>/dev/null && tb_fail "the responder did not answer 10 interrupts: $(cat "$TB_TMP/responder.log")"
wait $rpid
rrc=$?
cat "$TB_TMP/responder.log"
echo "D3 after each of $i pulses: $d3"
[ $rrc = 0 ] || tb_fail "irqloop-responder exit status $rrc"
grep -q 'done: handled 10' "$TB_TMP/responder.log" || tb_fail "the responder did not report 10 answers"
tb_pass "10 nACK-line interrupts answered by irqloop-responder through ppdev"
# Not one answer per pulse: while an interrupt is pending (until a status read), QEMU's port
# raises its line again on every register write, the responder's own PPWDATA included, and
# QEMU's IO-APIC takes each raise as a new edge. A real port does neither.
tb_note "responder event mode on QEMU: 10 answers after $i STROBE pulses; D3 after each: $d3"

echo "--- lp registered on the port: our exclusive claim is refused in one line"
modprobe lp || tb_fail "cannot load lp"
grep -l . /proc/sys/dev/parport/parport1/devices/* 2>/dev/null
IRQLOOP_TEST_PPDEV_HELD=1 run_tests "$TB_TMP/held.log" "[ppdev-hw]" ||
	tb_fail "lp-held tests failed"
grep -q 'test cases:.* 1 passed' "$TB_TMP/held.log" || tb_fail "the lp-held test did not run"
tb_expect_error 2 "port busy: another driver holds it" \
	irqloop-responder --hw parport:dev=/dev/parport1 --mode poll
rmmod lp || tb_fail "cannot unload lp"

echo "--- bad pin, missing ppdev"
tb_expect_error 2 "unknown pin 'D9'" irqloop-responder --hw parport:dev=/dev/parport1,out=D9
rmmod ppdev || tb_fail "cannot unload ppdev"
tb_expect_error 2 "modprobe ppdev parport_pc" \
	irqloop-responder --hw parport:dev=/dev/parport1 --mode poll
