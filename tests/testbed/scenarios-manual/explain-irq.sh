#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop explain on a real kernel's trace, with a cause injected at known moments: another
# device's interrupt whose handler busy-waits $busy us (irqloop_inject.ko, kmod-node/: a timer on
# CPU 0 toggles wire2a; its edge on wire2b runs the handler on CPU 0, interrupts off). The kernel
# responder answers on the wires of kmod-measure; wire0 is delayed $delay us, so a stimulus's
# edge comes due on CPU 0 (the wire's hrtimer) while the logger waits, and when the injected
# handler runs then, the responder's handler waits for it. The irq and sched events are traced
# during a --raw --jitter run paced above the round trip (2 ms + 0..500 us: stimuli back to
# back, a round trip above the interval, leave the trace's edges two places alike); explain,
# run in the guest on that trace over the worst half of the samples, must
# name the injected handler as the largest blocker of each sample it names it in, wholly inside
# the window, in at least 10 samples and in no more than the injector fired, with its length
# within 10 % of $busy us, or longer when the module measured that run as longer (its busy-wait
# ends late when the host stalls QEMU's thread: overran counts such runs, longest_ns the
# longest); and it must not name it for a sample too fast to contain it. (The worst
# samples under TCG are mostly stalls of QEMU's thread on a busy host: nothing in the guest's
# trace, and explain says so.) The logger shares CPU 0
# with the injector (the wire raises its edges on the writer's CPU), so an injected handler also
# stops the logger's polls: --gap-limit 5ms keeps such a sample undisturbed, ranked by its
# latency (a disturbed one is ranked by its bracket's lower bound, the poll before the gap).
. /testbed/guest-lib.sh
tb_need irqloop sqlite3
tb_kmod_setup
inj=$TB_KMOD_DIR/irqloop_inject.ko
[ -f "$inj" ] || tb_fail "$inj is missing (run-testbed.sh --kmod tests/testbed/kmod-node)"
n=2000        # samples; the worst 1000 explained (explain's --worst takes at most 1000)
k=1000
busy=1000     # us, the injected handler's busy-wait
period=5000   # us between two injected interrupts
delay=500     # us on wire0 (logger to responder)
db=$TB_TMP/explain.db
tr=/sys/kernel/tracing
trap 'rmmod irqloop_responder 2>/dev/null; rmmod irqloop_inject 2>/dev/null; tb_wire_delay 0 0' EXIT

[ -e $tr/trace ] || mount -t tracefs tracefs $tr || tb_fail "cannot mount tracefs"
echo 0 >$tr/tracing_on
echo nop >$tr/current_tracer
echo 8192 >$tr/buffer_size_kb
for e in irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit \
	sched/sched_switch sched/sched_wakeup; do
	echo 1 >$tr/events/$e/enable || tb_fail "cannot enable the event $e"
done
# The stock kernel has no CONFIG_PREEMPTIRQ_TRACEPOINTS: IRQs-off sections are not traced.
if grep -q '^preemptirq:irq_disable$' $tr/available_events; then
	echo "preemptirq events: present, enabled"
	echo 1 >$tr/events/preemptirq/irq_disable/enable
	echo 1 >$tr/events/preemptirq/irq_enable/enable
else
	echo "preemptirq events: absent from available_events (no CONFIG_PREEMPTIRQ_TRACEPOINTS)"
fi
echo >$tr/trace

insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 || tb_fail "cannot load the responder"
tb_wire_delay 0 $((delay * 1000))
insmod "$inj" cpu=0 period_us=$period busy_us=$busy || tb_fail "cannot load irqloop_inject"
grep irqloop_ /proc/interrupts
p=/sys/module/irqloop_inject/parameters
f0=$(cat $p/fired) o0=$(cat $p/overran)
echo 1 >$tr/tracing_on
irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --timeout 1s \
	--samples $n --interval 2ms --jitter 500us --gap-limit 5ms --raw --label explain-irq \
	--progress none --db "$db" \
	--target "QEMU TCG guest, $(uname -r), irqloop_responder.ko, irqloop_inject.ko" \
	>/dev/null || tb_fail "irqloop run failed"
echo 0 >$tr/tracing_on
fired=$(($(cat $p/fired) - f0)) overran=$(($(cat $p/overran) - o0))
longest=$(($(cat $p/longest_ns) / 1000))
rmmod irqloop_inject || tb_fail "cannot unload irqloop_inject"
rmmod irqloop_responder || tb_fail "cannot unload the responder"
tb_wire_delay 0 0
cat $tr/trace >trace.txt
echo 0 >$tr/events/enable
echo "trace: $(wc -l <trace.txt) lines, $(grep -c 'name=irqloop_inject' trace.txt) injected" \
	"entries; the injector fired $fired times during the run, $overran of them longer than" \
	"$busy us + 10 %, the longest $longest us"
cp trace.txt "$TB_OUT/trace.txt"
sqlite3 "$db" ".backup $TB_OUT/explain.db" || tb_fail "cannot copy the database out"
[ "$fired" -gt 0 ] || tb_fail "the injector never fired during the run"

irqloop explain --db "$db" --run 1 --trace trace.txt --worst $k >all.txt 2>&1 ||
	{ cat all.txt; tb_fail "irqloop explain refused the real trace"; }
cp all.txt "$TB_OUT/explain-all.txt"
sed -n '1,6p' all.txt
irqloop explain --db "$db" --run 1 --trace trace.txt --worst 3 --json >worst.json ||
	tb_fail "irqloop explain --json failed"
cp worst.json "$TB_OUT/explain-worst.json"

# Per sample: seq, latency, the largest blocker's kind, name, length in the window and whole
# (us), and whether the injected handler is named anywhere in the sample.
awk '
function flush() { if (seq != "") print seq, lat, kind, name, inw, whole, named; seq = "" }
/^seq / { flush(); seq = $2; lat = $4; kind = "-"; name = "-"; inw = 0; whole = 0; named = 0; first = 1 }
/^    (irq|irqs off|softirq|nmi) / {
	o = ($1 == "irqs") ? 1 : 0
	if (first) { kind = o ? "irqs-off" : $1; inw = $(2 + o); whole = $(5 + o); name = $NF; first = 0 }
	if ($0 ~ /irqloop_inject/) named = 1
}
END { flush() }' all.txt >all.sum
[ "$(wc -l <all.sum)" = $k ] || tb_fail "explain did not explain the $k worst samples"
lo=$((busy * 9 / 10)) hi=$((busy * 11 / 10))
echo "samples naming the injected handler (seq latency_us largest name in_window_us whole_us):"
awk '$7 == 1' all.sum
within=$(awk -v lo=$lo -v hi=$hi '$7 == 1 && $6 >= lo && $6 <= hi' all.sum | wc -l)
longer=$(awk -v hi=$hi '$7 == 1 && $6 > hi' all.sum | wc -l)
wrong=$(awk -v lo=$lo -v top=$((longest * 11 / 10 + 1)) '$7 == 1 && !($3 == "irq" &&
	$4 == "irqloop_inject" && $5 == $6 && $6 >= lo && $6 <= top)' all.sum | wc -l)
named=$(awk '$7 == 1' all.sum | wc -l)
fast=$(awk -v lo=$lo '$2 < lo' all.sum | wc -l)
fast_named=$(awk -v lo=$lo '$2 < lo && $7 == 1' all.sum | wc -l)
untraced=$(grep -c 'in the window: no other IRQ' all.txt)
echo "worst 10 (seq latency_us largest name in_window_us whole_us named):"
head -n 10 all.sum
tb_note "explain-irq: $named of the $k worst of $n samples name the injected $busy us handler (it fired $fired times during the run, $overran runs longer than $busy us + 10 %, the longest $longest us); in each it is the largest blocker, wholly in the window; $within within 10 % of $busy us, $longer longer; $fast samples under $lo us, $fast_named of them name it; $untraced samples with nothing traced in their window"
[ "$named" -ge 10 ] || tb_fail "only $named samples name the injected handler"
[ "$named" -le "$fired" ] || tb_fail "$named samples name the injected handler, which ran $fired times"
[ "$wrong" = 0 ] ||
	tb_fail "$wrong samples name the injected handler but not as the largest blocker, whole, $lo us to the longest run + 10 %"
[ "$longer" -le "$overran" ] ||
	tb_fail "$longer samples read the handler longer than $hi us; the module measured $overran such runs"
[ "$within" -ge 10 ] || tb_fail "only $within samples read the handler within 10 % of $busy us"
tb_pass "$named samples name the injected handler as the largest blocker, wholly in the window; $within within 10 % of $busy us, $longer longer (the module measured $overran longer runs)"
[ "$fast" -ge 100 ] || tb_fail "only $fast samples are under $lo us"
[ "$fast_named" = 0 ] || tb_fail "$fast_named samples under $lo us name the injected handler"
tb_pass "none of the $fast samples under $lo us names the injected handler"
