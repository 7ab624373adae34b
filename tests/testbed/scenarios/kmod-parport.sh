#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Parallel-port mode (the lpptest target) on QEMU's emulated ISA port at 0x378, IRQ 7: the
# module claims parport0 through the parport device model, enables the nACK interrupt and
# inverts the data byte in the handler. QEMU plays the far end: after a STROBE pulse, its port
# raises IRQ 7 as a printer's nACK would, so the whole kernel path runs; only the pins are
# emulated. No latency is measured here (the logger's parport backend needs two ports).
. /testbed/guest-lib.sh
tb_kmod_setup
tr "\000" "\n" <"$ko" | grep -q "^depends=.*parport" ||
	tb_fail "irqloop_responder.ko was built without parallel-port mode"
# Debian's 6.1 modules are plain .ko files, 6.12's are .ko.xz: BusyBox insmod takes both.
kmod_file() { find /lib/modules/"$TB_KVER" -name "$1.ko*" | head -n1; }
parport=$(kmod_file parport)
parport_pc=$(kmod_file parport_pc)
lp=$(kmod_file lp)
if [ -z "$parport_pc" ] || [ -z "$lp" ]; then
	echo "SKIP: parport_pc.ko or lp.ko is not in the guest (run-testbed.sh --guest-modules parport_pc,lp)"
	exit 4
fi
[ -d /sys/module/parport ] || insmod "$parport" || tb_fail "cannot load parport.ko"

# outb PORT VALUE and inb PORT, through /dev/port (the guest is root).
outb() { printf "\\$(printf %03o "$2")" | dd of=/dev/port bs=1 seek=$(($1)) count=1 2>/dev/null; }
inb() { dd if=/dev/port bs=1 skip=$(($1)) count=1 2>/dev/null | od -An -tu1 | tr -d ' '; }

echo "--- no port yet: -ENODEV with a hint"
dmesg -c >/dev/null
insmod "$ko" parport=0 2>&1 && tb_fail "loaded without a parallel port"
dmesg | grep -qF 'irqloop_responder: parport=0: no such port (modprobe parport_pc io=0x378 irq=7)' ||
	tb_fail "dmesg lacks the missing-port reason"
tb_pass "no parport0: refused"

# expect_refused ERRNO_TEXT DMESG_TEXT: loading parport=0 fails that way, with that reason.
expect_refused()
{
	dmesg -c >/dev/null
	msg=$(insmod "$ko" parport=0 2>&1) && tb_fail "loaded although: $2"
	echo "$msg"
	dmesg | grep 'irqloop_responder: ' | tail -n 1
	echo "$msg" | grep -qF "$1" || tb_fail "insmod did not fail with '$1'"
	dmesg | grep -qF "irqloop_responder: $2" || tb_fail "dmesg lacks '$2'"
	tb_pass "'$1' and '$2'"
}

echo "--- a port without an interrupt: -EINVAL"
insmod "$parport_pc" io=0x378 irq=none || tb_fail "cannot load parport_pc.ko"
expect_refused "Invalid argument" "parport=0: parport0 has no interrupt (modprobe parport_pc io=0x378 irq=7)"
rmmod parport_pc || tb_fail "cannot unload parport_pc"

insmod "$parport_pc" io=0x378 irq=7 || tb_fail "cannot load parport_pc.ko"
dmesg | grep parport0
[ -d /sys/class/parport/parport0 ] || grep -q parport0 /proc/interrupts ||
	tb_fail "parport_pc found no port at 0x378 (is QEMU's isa-parallel device there?)"

echo "--- the port held by lp: -EBUSY"
insmod "$lp" || tb_fail "cannot load lp.ko"
expect_refused "Device or resource busy" "parport=0: cannot register on parport0 (in use by lp or ppdev?)"
rmmod lp || tb_fail "cannot unload lp"

echo "--- claim parport0 and answer nACK"
insmod "$ko" parport=0 || tb_fail "cannot load in parallel-port mode"
cat $sys/mode
[ "$(cat $sys/mode)" = parport0 ] || tb_fail "mode is not parport0"
grep -q 'irqloop_responder' /proc/sys/dev/parport/parport0/devices 2>/dev/null ||
	cat /proc/sys/dev/parport/parport0/devices 2>/dev/null
ctrl=$(inb 0x37a)
echo "control register: $ctrl (bit 4 enables the nACK interrupt)"
[ $((ctrl & 16)) = 16 ] || tb_fail "the nACK interrupt is not enabled"
# Writing the control register with the interrupt enabled makes QEMU's port raise IRQ 7 too,
# so claiming the port may already have been answered: count from here.
sleep 0.2
data0=$(inb 0x378)
handled0=$(cat $sys/handled)
spurious0=$(cat $sys/spurious)
echo "after the claim: handled $handled0, spurious $spurious0, data byte $data0"
# A byte the handler never writes (it inverts its own copy): if it stays, nothing answered.
outb 0x378 0x55

# Each STROBE pulse (control 0x1d then 0x1c, IRQ enabled) makes QEMU raise IRQ 7. QEMU's port
# raises the line again when the handler writes the data byte before it reads the status (a
# real port does not), so one pulse may be answered twice; the handler counts such an
# interrupt as spurious because nACK does not read high. Hence handled - spurious == pulses.
pulses=20
i=0
while [ $i -lt $pulses ]; do
	i=$((i + 1))
	outb 0x37a 0x1d
	outb 0x37a 0x1c
done
handled=$(($(cat $sys/handled) - handled0))
spurious=$(($(cat $sys/spurious) - spurious0))
data=$(inb 0x378)
echo "$pulses pulses: handled $handled, spurious $spurious, data byte $data0 (0x55 poked) -> $data"
grep -E 'parport0|irqloop' /proc/interrupts
[ $((handled - spurious)) = $pulses ] || tb_fail "expected $pulses genuine nACK interrupts"
# The handler inverts its copy of the byte once per interrupt, spurious ones included.
if [ $(((handled0 + handled) % 2)) = 1 ]; then want=255; else want=0; fi
[ "$data" = "$want" ] || tb_fail "data byte $data after $handled inversions of $data0"
tb_pass "$pulses nACK pulses answered, data byte inverted on each interrupt"

echo "--- unload, load again, unload: the port is released each time"
rmmod irqloop_responder || tb_fail "rmmod failed"
dmesg | grep 'irqloop_responder: unloaded'
insmod "$ko" parport=0 || tb_fail "cannot load again after unloading"
rmmod irqloop_responder || tb_fail "second rmmod failed"
rmmod parport_pc || tb_fail "parport_pc cannot unload: the port was not released"
tb_pass "unloads and releases the port"
