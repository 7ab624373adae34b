#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# PID 1 of the testbed guest. Loads the modules, mounts the results share, runs each scenario
# listed in /testbed/scenarios.list with a timeout, leaves NAME/status, NAME/log and
# NAME/dmesg in the share, then ends QEMU through isa-debug-exit. Never interactive: every path
# ends in power-off, so a hang is the host watchdog's business, never a waiting shell.

. /testbed/guest-mounts.sh
. /testbed/env
export TB_KVER TB_RT TB_KMOD_DIR=/lib/modules/$TB_KVER/extra

say() { echo "TB: $*"; }

# isa-debug-exit,iobase=0xf4: QEMU exits with (code << 1) | 1, which tells the host that the
# guest reached the end (plain power-off or a panic exits with 0).
finish()
{
	sync
	umount /out 2>/dev/null
	printf "\\$(printf %03o "$1")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	poweroff -f
}

say "init at uptime $(cut -d' ' -f1 /proc/uptime)s, $(nproc) CPUs, kernel $(uname -r)"
while read -r ko; do
	insmod "/$ko" || { say "cannot load $ko"; finish 1; }
done </testbed/load.list
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 tbout /out; then
	say "cannot mount the results share"
	finish 1
fi
if ! insmod "$TB_KMOD_DIR/irqloop-wire.ko"; then
	say "cannot load irqloop-wire.ko"
	finish 1
fi
TB_CHIP=$(gpiodetect | sed -n 's/^\(gpiochip[0-9]*\) \[irqloop-wire\].*/\1/p')
export TB_CHIP
say "irqloop-wire is $TB_CHIP: $(gpiodetect | grep irqloop-wire)"
dmesg -c >/dev/null

all=0
while read -r name; do
	mkdir -p "/out/$name" "/tmp/$name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	(
		cd "/tmp/$name" &&
			TB_NAME=$name TB_OUT=/out/$name TB_TMP=/tmp/$name \
				timeout -s KILL "$TB_SCENARIO_TIMEOUT" sh "/testbed/scenarios/$name.sh"
	) >"/out/$name/log" 2>&1 </dev/null
	rc=$?
	[ $rc = 137 ] && echo "FAIL: killed after ${TB_SCENARIO_TIMEOUT}s" >>"/out/$name/log"
	# Whatever a scenario left running must not disturb the next one.
	kill -KILL -1 2>/dev/null
	dmesg -c >"/out/$name/dmesg"
	# On either kernel (standard or PREEMPT_RT): no warning, no atomic-context splat, no lockdep
	# report. Debian's kernels build neither DEBUG_ATOMIC_SLEEP nor lockdep, so the last two
	# kinds can only appear on a debug kernel (see docs/testbed.md).
	if grep -qE 'WARNING:|BUG:|Oops|RIP:|Call Trace|scheduling while atomic|sleeping function called|possible recursive locking|circular locking dependency|inconsistent lock state|lock held when returning' "/out/$name/dmesg"; then
		echo "FAIL: the kernel logged a warning or splat (see dmesg)" >>"/out/$name/log"
		[ $rc = 0 ] && rc=1
	fi
	# Put the wire back to its defaults for the next scenario: a scenario that loaded it with
	# other load-time options (threaded_parent, float_noise_ns, spin_lock, can_sleep) gets it
	# reloaded.
	p=/sys/module/irqloop_wire/parameters
	if [ -d $p ] && { [ "$(cat $p/threaded_parent)" != N ] || [ "$(cat $p/float_noise_ns)" != 0 ] ||
		[ "$(cat $p/spin_lock)" != N ] || [ "$(cat $p/can_sleep)" != N ]; }; then
		rmmod irqloop_responder 2>/dev/null
		rmmod irqloop_wire || say "cannot unload irqloop-wire after $name"
	fi
	if [ ! -d /sys/module/irqloop_wire ]; then
		insmod "$TB_KMOD_DIR/irqloop-wire.ko"
		TB_CHIP=$(gpiodetect | sed -n 's/^\(gpiochip[0-9]*\) \[irqloop-wire\].*/\1/p')
	fi
	# And tracing as the kernel starts it: a scenario that failed before its own clean-up (stop
	# 51's CI: kmod-trigger) left the x86-tsc clock, and the next one's trace had counts, not
	# seconds, in its time stamps.
	t=/sys/kernel/tracing
	if [ -e $t/trace_clock ]; then
		echo 0 >$t/events/enable
		echo local >$t/trace_clock
		echo nop >$t/current_tracer
		echo >$t/trace
		echo 1 >$t/tracing_on
	fi
	# Writing an array parameter sets only the elements given: give all of them.
	echo 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0 >/sys/module/irqloop_wire/parameters/delay_ns
	echo 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0 >/sys/module/irqloop_wire/parameters/spike_ns
	echo "$rc" >"/out/$name/status"
	t1=$(cut -d' ' -f1 /proc/uptime)
	say "scenario $name: exit status $rc after $(echo "$t1 - $t0" | bc)s"
	[ $rc = 0 ] || [ $rc = 4 ] || all=1
done </testbed/scenarios.list

say "done at uptime $(cut -d' ' -f1 /proc/uptime)s"
finish $all
