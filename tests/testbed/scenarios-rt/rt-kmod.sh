#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The kernel responder on Debian's PREEMPT_RT kernel:
#  - a controller whose set() takes a spinlock_t (irqloop-wire spin_lock=1, label
#    irqloop-wire-spin; a sleeping lock on RT) is refused in hard-IRQ mode with the reason,
#    loads with threaded=1, and loads with force=1 (with a warning; never fed an edge, see
#    below);
#  - the Pi 5's RP1 (irqloop-wire rp1=mainline|rpi): mainline's regmap driver refused in every
#    mode with the reason, the Raspberry Pi kernel's direct driver accepted in hard mode;
#  - on the raw-safe chip, hard mode, threaded=1 and the userspace event responder are
#    measured on the same wires; hard is the lowest median. TCG timings: ordering only.
# The guest's init fails the scenario on any "BUG: scheduling while atomic", "sleeping function
# called" or lockdep report in dmesg.
. /testbed/guest-lib.sh
tb_need irqloop irqloop-responder sqlite3 gpioinfo gpioset gpioget
[ "$TB_RT" = 1 ] || tb_fail "this scenario belongs to the PREEMPT_RT boot"
uname -v
uname -v | grep -q PREEMPT_RT || tb_fail "the guest kernel is not PREEMPT_RT"
tb_kmod_setup
n=${TB_RT_SAMPLES:-5000}
db=$TB_TMP/rt.db

echo "--- set() not raw-safe: refused in hard mode, touching nothing"
tb_wire_reload spin_lock=1
spin=irqloop-wire-spin
# The response wire left high (wire1a, line 2, read at its far end wire1b): a refused load must
# leave it so. The refusal used to come after out= was already driven low.
gpioset -c "$TB_CHIP" wire1a=1 &
holder=$!
tb_wait_consumer "$TB_CHIP" wire1a gpioset "gpioset did not take wire1a"
kill $holder
wait $holder 2>/dev/null
[ "$(gpioget -c "$TB_CHIP" --numeric wire1b)" = 1 ] || tb_fail "cannot take the response wire high"
tb_kmod_refused "Operation not permitted" \
	"out=$spin:2: PREEMPT_RT: '$spin' is not known to take only raw spinlocks in get()/set()" \
	in=$spin:1 out=$spin:2
level=$(gpioget -c "$TB_CHIP" --numeric wire1b)
[ "$level" = 1 ] || tb_fail "the refused load drove out= (the response wire reads $level)"
tb_pass "the refused load left out= high, as it found it"
insmod "$ko" in=$spin:1 out=$spin:2 threaded=1 || tb_fail "threaded=1 refused on $spin"
cat $sys/context
rmmod irqloop_responder
tb_pass "threaded=1 loads on $spin"
# force=1 is what its warning says: a bet. It is loaded and unloaded here, never fed an edge.
# Fed edges on this chip, the hard handler's set() takes the chip's spinlock_t (an rtmutex on
# RT); when the edge's interrupt fires on a CPU whose task is inside set() holding that lock
# (irq_work right after set(), or a wire hrtimer that a host stall makes due at once), the
# handler blocks on it: "BUG: scheduling while atomic" and a deadlocked guest, seen twice
# while this scenario was written. That is the failure the refusal above exists for.
dmesg -c >/dev/null
insmod "$ko" in=$spin:1 out=$spin:2 force=1 || tb_fail "force=1 refused on $spin"
ctx=$(cat $sys/context)
rmmod irqloop_responder
dmesg | grep irqloop_responder
dmesg | grep -q "irqloop_responder: out=$spin:2: force=1: hard IRQ on PREEMPT_RT with '$spin'" ||
	tb_fail "no force=1 warning"
[ "$ctx" = hard ] || tb_fail "force=1: context '$ctx', expected hard"
tb_pass "force=1 loads in hard mode, with a warning"
# force= is the module's on the device-tree route too (issue 27, item 13): without lines it loads
# here and waits for nodes (a stock kernel refuses it: kmod-dt-policy).
dmesg -c >/dev/null
insmod "$ko" force=1 || tb_fail "force=1 without lines refused on PREEMPT_RT"
dmesg | grep irqloop_responder
dmesg | grep -qF 'waiting for device-tree nodes compatible with "irqloop,responder", answered with force=1' ||
	tb_fail "force=1 without lines: no waiting line naming force=1"
rmmod irqloop_responder
tb_pass "force=1 without lines loads on PREEMPT_RT, for device-tree nodes"

echo "--- the Pi 5's RP1: mainline's driver (a regmap) refused in every mode, the Raspberry Pi kernel's accepted"
# irqloop-wire rp1=mainline: label pinctrl-rp1, set() through a regmap on its parent device, as
# mainline's pinctrl-rp1; rp1=rpi: the same label, direct writes, as the Raspberry Pi kernel's.
tb_wire_reload rp1=mainline
rp1=pinctrl-rp1
why="in=$rp1:1: PREEMPT_RT: mainline pinctrl-rp1 writes through a regmap"
tb_kmod_refused "Operation not permitted" "$why" in=$rp1:1 out=$rp1:2
tb_kmod_refused "Operation not permitted" "$why" in=$rp1:1 out=$rp1:2 threaded=1
tb_kmod_refused "Operation not permitted" "$why" in=$rp1:1 out=$rp1:2 force=1
tb_wire_reload rp1=rpi
dmesg -c >/dev/null
insmod "$ko" in=$rp1:1 out=$rp1:2 || tb_fail "hard mode refused on the Raspberry Pi kernel's pinctrl-rp1"
ctx=$(cat $sys/context)
rmmod irqloop_responder
dmesg | grep irqloop_responder
[ "$ctx" = hard ] || tb_fail "rp1=rpi: context '$ctx', expected hard"
tb_pass "the Raspberry Pi kernel's pinctrl-rp1 (no regmap) loads in hard mode"
tb_wire_reload

# measure LABEL CONTEXT: a run of N samples against the module loaded with the rest.
measure()
{
	label=$1 want=$2
	shift 2
	insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 "$@" || tb_fail "cannot load $*"
	irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --timeout 1s \
		--samples $n --label "$label" --db "$db" --progress none || tb_fail "run $label failed"
	ctx=$(cat $sys/context) seen=$(cat $sys/context_seen) handled=$(cat $sys/handled)
	rmmod irqloop_responder
	echo "$label: context '$ctx', context_seen '$seen', handled $handled"
	[ "$ctx" = "$want" ] || tb_fail "$label: context '$ctx'"
	[ "$handled" = $n ] || tb_fail "$label: $handled handled for $n"
}
echo "--- medians on PREEMPT_RT: hard, threaded=1, userspace event"
measure kmod-hard hard
[ "$seen" = hard ] || tb_fail "hard mode ran in '$seen' on RT: IRQF_NO_THREAD not honoured"
measure kmod-threaded "threaded (threaded=1)" threaded=1
echo "$seen" | grep -q '^thread irq/' || tb_fail "threaded mode ran in '$seen'"
tb_event_responder_start
irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --timeout 1s \
	--samples $n --label user-event --db "$db" --progress none || tb_fail "run user-event failed"
tb_event_responder_stop
irqloop compare --by label "$db" || tb_fail "irqloop compare failed"
sqlite3 "$db" ".backup $TB_OUT/rt.db"
for l in kmod-hard kmod-threaded user-event; do
	row=$(tb_sql "$db" "SELECT status, stimuli, lost FROM runs WHERE label = '$l'")
	[ "$row" = "complete|$n|0" ] || tb_fail "$l: run is '$row'"
done
h=$(tb_sql "$db" "SELECT p50_ns FROM runs WHERE label = 'kmod-hard'")
t=$(tb_sql "$db" "SELECT p50_ns FROM runs WHERE label = 'kmod-threaded'")
u=$(tb_sql "$db" "SELECT p50_ns FROM runs WHERE label = 'user-event'")
tb_note "$(uname -r): medians hard $h ns, threaded $t ns, userspace event $u ns ($n samples each; TCG: ordering only)"
[ "$h" -lt "$t" ] || tb_fail "hard median $h ns not below threaded $t ns"
[ "$h" -lt "$u" ] || tb_fail "hard median $h ns not below userspace $u ns"
tb_pass "on PREEMPT_RT the hard median is the lowest"
