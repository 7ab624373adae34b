#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop_responder.ko refuses bad parameters: each load fails with its errno and leaves one
# line in dmesg saying why; nothing stays loaded and nothing oopses.
. /testbed/guest-lib.sh
tb_need gpioset gpioinfo
ko=$TB_KMOD_DIR/irqloop_responder.ko
[ -f "$ko" ] || tb_fail "$ko is missing (run-testbed.sh --kmod target-responder/kmod)"
# Never leave the module loaded for the next scenario, whatever happens here.
trap 'rmmod irqloop_responder 2>/dev/null' EXIT
# The module links against parport.ko where the kernel has it (x86 Debian does).
if tr "\000" "\n" <"$ko" | grep -q "^depends=.*parport" && [ ! -d /sys/module/parport ]; then
	insmod "$(find /lib/modules/"$TB_KVER" -name 'parport.ko*' | head -n1)" ||
		tb_fail "parport.ko, which irqloop_responder.ko needs, is not in the guest"
fi
chip=irqloop-wire

# expect_refused ERRNO_TEXT DMESG_TEXT PARAM...: the load fails with that strerror() text and
# the kernel log gains DMESG_TEXT (a fixed string) under our prefix.
expect_refused()
{
	want=$1 text=$2
	shift 2
	dmesg -c >/dev/null
	echo "\$ insmod irqloop_responder.ko $*"
	if msg=$(insmod "$ko" "$@" 2>&1); then
		rmmod irqloop_responder
		tb_fail "loaded with bad parameters: $*"
	fi
	# Our own lines, without timestamps: busybox insmod may try twice (finit_module, then
	# init_module), which repeats the reason.
	log=$(dmesg | sed 's/^\[[ 0-9.]*\] //' | grep '^irqloop_responder: ' | sort -u)
	echo "$msg"
	echo "$log"
	echo "$msg" | grep -qF -- "$want" || tb_fail "insmod did not fail with '$want': $*"
	echo "$log" | grep -qF -- "irqloop_responder: $text" || tb_fail "dmesg lacks '$text': $*"
	[ "$(echo "$log" | wc -l)" = 1 ] || tb_fail "more than one distinct reason in dmesg: $*"
	[ ! -d /sys/module/irqloop_responder ] || tb_fail "module left loaded: $*"
	tb_pass "'$want' and '$text'"
}

echo "--- a missing chip: -ENODEV"
expect_refused "No such device" "in=no-such-chip:1: no gpiochip labelled 'no-such-chip'" \
	in=no-such-chip:1 out=$chip:2
expect_refused "No such device" "trigger=gone:5: no gpiochip labelled 'gone'" \
	in=$chip:1 out=$chip:2 trigger=gone:5

echo "--- a wrong offset: -EINVAL"
expect_refused "Invalid argument" "out=$chip:99: offset 99 out of range, chip '$chip' has lines 0..7" \
	in=$chip:1 out=$chip:99
expect_refused "Invalid argument" "in=$chip:x: offset 'x' is not a number" in=$chip:x out=$chip:2
expect_refused "Invalid argument" "in=${chip}1: expected <chip label>:<offset>" in=${chip}1 out=$chip:2

echo "--- a line already in use: -EBUSY, naming the consumer"
gpioset -c "$TB_CHIP" wire1a=0 &
holder=$!
i=0
while ! gpioinfo -c "$TB_CHIP" wire1a | grep -q 'consumer="gpioset"'; do
	i=$((i + 1))
	[ $i -lt 100 ] || tb_fail "gpioset did not take wire1a"
	sleep 0.1
done
expect_refused "Device or resource busy" "out=$chip:2: line in use by 'gpioset'" in=$chip:1 out=$chip:2
kill $holder
wait $holder 2>/dev/null

echo "--- other refusals: -EINVAL"
expect_refused "Invalid argument" "out=$chip:1: same line as in=$chip:1" in=$chip:1 out=$chip:1
expect_refused "Invalid argument" "edge=sideways: expected both, rising or falling" \
	in=$chip:1 out=$chip:2 edge=sideways
expect_refused "Invalid argument" "no lines given" 
expect_refused "Invalid argument" "parport=0: in= and out= belong to GPIO mode" \
	parport=0 in=$chip:1 out=$chip:2

echo "--- the lines are still free and the module still loads after all that"
insmod "$ko" in=$chip:1 out=$chip:2 || tb_fail "good parameters refused after the bad ones"
rmmod irqloop_responder || tb_fail "rmmod failed"
tb_pass "loads and unloads with good parameters"
