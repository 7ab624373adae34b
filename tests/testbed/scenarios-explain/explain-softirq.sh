#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop explain on a real kernel's trace with a softirq hog injected at known moments:
# irqloop_hog.ko mode=softirq (kmod-node/), a tasklet on CPU 0 that busy-waits $busy us every
# $period us. On the stock kernel a hard interrupt handler preempts a softirq, so a softirq hog
# delays only a handler that runs in a thread: here irqloop-wire's threaded_parent=1 (edges
# through a parent interrupt whose handler is a SCHED_FIFO 50 thread, as gpio-omap's on
# PREEMPT_RT). The kernel responder (hard mode) answers on the wires of kmod-measure; its
# handler runs in that thread, which waits for a tasklet running on its CPU when the edge
# comes. Everything runs on CPU 0: the logger (its sampler at SCHED_FIFO 10, below the thread),
# the thread (pinned), the hog. (With the thread on the other vCPU, a loaded host's stalls of
# either vCPU thread land between the handler and the logger's read, and explain refuses the
# trace: the latencies contradict the handler's times.)
# Asserted on the trace of a --raw run (all of its samples explained; stimuli paced at 5 ms +
# 0..2 ms, above the round trip, so that explain can place the trace's first edges):
# - at least 5 samples name the tasklet (softirq TASKLET) for more than a tenth of $busy us
#   in their window, no more than it ran; none reads its run shorter than 90 % of $busy us, and
#   no more read it longer than 110 % than the module measured such runs;
# - at least 5 name it as their largest blocker, its run within 10 % of $busy us. (A loaded host
#   stalls QEMU's threads for milliseconds wherever the guest happens to be: a stall that lands
#   in another blocker makes that one larger; the notes count such samples);
# - no sample under 90 % of $busy us holds the tasklet's whole run inside its window.
# On PREEMPT_RT the tasklet runs in a thread below the parent's, which preempts it, so it may
# hold at most 1 sample in 100 (where RT throttling stops the FIFO threads), none of them fast.
#
# Not in the default suite (tests/testbed/scenarios-explain/, -DIRQLOOP_TESTBED_EXPLAIN=ON then
# ctest -L explain). Before explain set contradicted samples aside: in 6 boots on a loaded 2-core
# host it passed 3 times; in the others explain's clock fit went wrong (drift -363 to -2476 ppm,
# residual 2.4 to 5.6 ms, 30 to 86 edges trace-only), which misplaces the windows: 690 and more
# samples under 900 us then held the tasklet's whole run, and the scenario failed. Run it alone:
#   tests/testbed/run-testbed.sh --build build --kmod target-responder/kmod \
#       --kmod tests/testbed/kmod-node --scenario-dir tests/testbed/scenarios-explain \
#       --scenarios explain-softirq
. /testbed/guest-lib.sh
tb_need irqloop sqlite3
tb_kmod_setup
hog=$TB_KMOD_DIR/irqloop_hog.ko
[ -f "$hog" ] || tb_fail "$hog is missing (run-testbed.sh --kmod tests/testbed/kmod-node)"
n=1000       # samples, all explained (explain takes at most 1000)
busy=1000    # us, the tasklet's busy-wait
period=1000  # us from the end of one run to the next
db=$TB_TMP/explain.db
tr=/sys/kernel/tracing
trap 'rmmod irqloop_responder 2>/dev/null; rmmod irqloop_hog 2>/dev/null; echo local >$tr/trace_clock 2>/dev/null' EXIT

tb_trace_setup x86-tsc irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry \
	irq/softirq_exit sched/sched_switch sched/sched_wakeup

tb_wire_reload threaded_parent=1
parent=$(awk '/irqloop-wire-parent/ { sub(":", "", $1); print $1 }' /proc/interrupts)
[ -n "$parent" ] || tb_fail "no irqloop-wire-parent in /proc/interrupts"
thread=
for d in /proc/[0-9]*; do
	case "$(cat $d/comm 2>/dev/null)" in "irq/$parent-"*) thread=${d#/proc/} ;; esac
done
[ -n "$thread" ] || tb_fail "no thread of the parent interrupt $parent"
taskset -p 1 "$thread" || tb_fail "cannot pin the parent's thread $thread to CPU 0"
insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 || tb_fail "cannot load the responder"
insmod "$hog" mode=softirq cpu=0 period_us=$period busy_us=$busy ||
	tb_fail "cannot load irqloop_hog"
p=/sys/module/irqloop_hog/parameters
tb_counts_start $p
echo 1 >$tr/tracing_on
irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --priority 10 --timeout 1s \
	--samples $n --interval 5ms --jitter 2ms --gap-limit 5ms --raw --label explain-softirq \
	--progress none --db "$db" \
	--target "QEMU TCG guest, $(uname -r), irqloop_responder.ko, irqloop_hog.ko mode=softirq, threaded_parent=1" \
	>/dev/null || tb_fail "irqloop run failed"
echo 0 >$tr/tracing_on
tb_counts_stop $p
rmmod irqloop_hog || tb_fail "cannot unload irqloop_hog"
rmmod irqloop_responder || tb_fail "cannot unload the responder"
tb_hog_trace_out "$db" $busy

irqloop explain --db "$db" --run 1 --trace trace.txt --worst $n >all.txt 2>&1 ||
	{ cat all.txt; tb_fail "irqloop explain refused the real trace"; }
cp all.txt "$TB_OUT/explain-all.txt"
sed -n '1,6p' all.txt

# Per sample: seq, latency, the largest blocker's kind, name, part in the window and whole run,
# the tasklet's part in the window and whole run (0 when not named) (all in us).
awk '
function flush() { if (seq != "") print seq, lat, kind, name, inw, whole, tin, twhole; seq = "" }
/^seq / { flush(); seq = $2; lat = $4; kind = "-"; name = "-"; inw = 0; whole = 0; tin = 0; twhole = 0; first = 1 }
/^    (irq|irqs off|softirq|nmi) / {
	o = ($1 == "irqs") ? 1 : 0
	if (first) { kind = o ? "irqs-off" : $1; inw = $(2 + o); whole = $(5 + o); name = $NF; first = 0 }
	if ($1 == "softirq" && $NF == "TASKLET" && $2 > tin) { tin = $2; twhole = $5 }
}
END { flush() }' all.txt >all.sum
[ "$(wc -l <all.sum)" = $n ] || tb_fail "explain did not explain the $n samples"
lo=$((busy * 9 / 10)) hi=$((busy * 11 / 10)) min=$((busy / 10))
echo "samples naming the tasklet (seq latency_us largest name in_window_us whole_us tasklet_in tasklet_whole):"
awk -v min=$min '$7 > min' all.sum
named=$(awk -v min=$min '$7 > min' all.sum | wc -l)
good=$(awk -v min=$min -v lo=$lo -v hi=$hi '$7 > min && $3 == "softirq" && $4 == "TASKLET" &&
	$5 == $7 && $8 >= lo && $8 <= hi' all.sum | wc -l)
beaten=$(awk -v min=$min '$7 > min && $5 > $7' all.sum | wc -l)
short=$(awk -v min=$min -v lo=$lo '$7 > min && $8 < lo' all.sum | wc -l)
longer=$(awk -v min=$min -v hi=$hi '$7 > min && $8 > hi' all.sum | wc -l)
fast=$(awk -v lo=$lo '$2 < lo' all.sum | wc -l)
fast_named=$(awk -v lo=$lo '$2 < lo && $7 > 0 && $7 == $8' all.sum | wc -l)
tb_note "explain-softirq: $named of $n samples name the tasklet in their window (it ran $fired times, $overran runs longer than $busy us + 10 %, the longest $longest us); in $good it is the largest blocker and within 10 % of $busy us; in $beaten another blocker is larger (a stall of QEMU's thread); $longer read it longer than $hi us, $short shorter than $lo us; $fast samples under $lo us, $fast_named of them hold its whole run"
if [ -e /sys/kernel/realtime ]; then
	# PREEMPT_RT runs the tasklet in a thread (ksoftirqd, or the one that raised it) below the
	# parent's SCHED_FIFO 50 thread, which preempts it: it delays no sample but where RT
	# throttling stops the FIFO threads and lets it run (stop 51's RT boot: 1 sample of 1000,
	# 52 ms). explain counts a softirq's running time, not its span.
	[ $((named * 100)) -le "$n" ] ||
		tb_fail "on PREEMPT_RT $named of $n samples hold the tasklet (more than 1 in 100)"
	[ "$fast_named" = 0 ] || tb_fail "$fast_named samples under $lo us hold the tasklet's whole run"
	tb_pass "on PREEMPT_RT the tasklet runs below the parent's thread: $named of $n samples hold it"
	exit 0
fi
[ "$named" -ge 5 ] || tb_fail "only $named samples name the tasklet"
[ "$named" -le "$fired" ] || tb_fail "$named samples name the tasklet, which ran $fired times"
[ "$short" = 0 ] || tb_fail "$short samples read the tasklet shorter than $lo us, which it never ran"
[ "$longer" -le "$overran" ] ||
	tb_fail "$longer samples read the tasklet longer than $hi us; the module measured $overran such runs"
[ "$good" -ge 5 ] ||
	tb_fail "only $good samples name the tasklet as the largest blocker, within 10 % of $busy us"
tb_pass "$good samples name the tasklet as the largest blocker, within 10 % of $busy us ($named name it, $longer longer: the module measured $overran longer runs)"
[ "$fast" -ge 20 ] || tb_fail "only $fast samples are under $lo us"
[ "$fast_named" = 0 ] || tb_fail "$fast_named samples under $lo us hold the tasklet's whole run in their window"
tb_pass "none of the $fast samples under $lo us holds the tasklet's whole run"
