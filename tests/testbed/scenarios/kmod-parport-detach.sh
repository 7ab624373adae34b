#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Parallel-port mode's device is a parport driver's (issue 27, item 15): the responder's device
# on parport0 is bound to the module's parport driver (match_port, probe, detach, as lp and ppdev
# do), so that a port going away calls its detach, which releases the device instead of leaving
# it on a dead port, and a port coming back attaches again. On this guest the port goes away only
# with parport_pc, and the kernel refuses to unload parport_pc while any device is registered on
# one of its ports (each holds a reference on the port driver's module): the scenario shows that
# refusal, the responder still answering, and after the responder's unload no device of ours
# left on the port, parport_pc unloading and loading again, and the responder attaching again.
. /testbed/guest-lib.sh
tb_kmod_setup
kmod_file() { find /lib/modules/"$TB_KVER" -name "$1.ko*" | head -n1; }
parport=$(kmod_file parport)
parport_pc=$(kmod_file parport_pc)
if [ -z "$parport_pc" ]; then
	echo "SKIP: parport_pc.ko is not in the guest (run-testbed.sh --guest-modules parport_pc,lp)"
	exit 4
fi
[ -d /sys/module/parport ] || insmod "$parport" || tb_fail "cannot load parport.ko"
[ -d /sys/module/parport_pc ] || insmod "$parport_pc" io=0x378 irq=7 ||
	tb_fail "cannot load parport_pc.ko"
outb() { printf "\\$(printf %03o "$2")" | dd of=/dev/port bs=1 seek=$(($1)) count=1 2>/dev/null; }
# pulses N: N STROBE pulses, each making QEMU's port raise nACK's interrupt (kmod-parport).
pulses() { i=0; while [ $i -lt "$1" ]; do i=$((i + 1)); outb 0x37a 0x1d; outb 0x37a 0x1c; done; }
pardev=/sys/bus/parport/devices/irqloop_responder.0

echo "--- the responder's device on parport0 is bound to its parport driver"
insmod "$ko" parport=0 || tb_fail "cannot load in parallel-port mode"
ls /sys/bus/parport/devices/ /sys/bus/parport/drivers/ | tr '\n' ' '
echo
bound=$(basename "$(readlink $pardev/driver)" 2>/dev/null)
echo "$pardev/driver -> $bound"
[ "$bound" = irqloop_responder ] || tb_fail "the device on parport0 is bound to '$bound', not to a parport driver of the responder"
tb_pass "irqloop_responder.0 bound to the parport driver irqloop_responder"

echo "--- rmmod parport_pc while the responder holds parport0"
dmesg -c >/dev/null
if rmmod parport_pc 2>rmmod.err; then
	dmesg | grep irqloop_responder
	dmesg | grep -qF 'irqloop_responder: parport0 went away: device released' ||
		tb_fail "no detach line after parport_pc went"
	[ ! -e $pardev ] || tb_fail "a stale device of ours is left on the removed port"
	insmod "$parport_pc" io=0x378 irq=7 || tb_fail "cannot load parport_pc again"
	dmesg | grep -qF 'irqloop_responder: parport0 is back: answering nACK again' ||
		tb_fail "not attached again when parport0 came back"
	tb_pass "detached when parport0 went, attached again when it came back"
else
	cat rmmod.err
	[ -d /sys/module/parport_pc ] || tb_fail "rmmod failed but parport_pc is gone"
	echo "the kernel refuses: our device holds a reference on parport_pc (refcnt $(cat /sys/module/parport_pc/refcnt))"
fi
h0=$(cat $sys/handled)
pulses 5
h1=$(cat $sys/handled)
echo "5 pulses: handled $h0 -> $h1"
[ "$h1" -gt "$h0" ] || tb_fail "the responder does not answer any more"
tb_pass "the responder still answers on parport0"

echo "--- unload: no device of ours left; parport_pc unloads, loads, and the responder attaches again"
rmmod irqloop_responder || tb_fail "rmmod failed"
ls /sys/bus/parport/devices/ | tr '\n' ' '
echo
[ ! -e $pardev ] || tb_fail "irqloop_responder.0 left on parport0 after the unload"
[ ! -e /sys/bus/parport/drivers/irqloop_responder ] || tb_fail "parport driver left registered"
rmmod parport_pc || tb_fail "parport_pc cannot unload after the responder"
insmod "$parport_pc" io=0x378 irq=7 || tb_fail "cannot load parport_pc again"
insmod "$ko" parport=0 || tb_fail "cannot load again on the new parport0"
[ "$(basename "$(readlink $pardev/driver)")" = irqloop_responder ] || tb_fail "not bound again"
h0=$(cat $sys/handled)
pulses 5
[ "$(cat $sys/handled)" -gt "$h0" ] || tb_fail "no answer on the new parport0"
rmmod irqloop_responder || tb_fail "rmmod failed"
rmmod parport_pc || tb_fail "parport_pc cannot unload"
tb_pass "clean unload; parport_pc reloaded; attached and answering again"
