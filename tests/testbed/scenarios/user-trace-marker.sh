#!/bin/sh
# SPDX-License-Identifier: MIT
#
# irqloop-responder --trace on a real kernel's tracefs: the userspace responder (event mode,
# gpiod, wires 0 and 1) marks each answered edge in the kernel's trace through trace_marker,
# `irqloop_edge: seq=N level=L` when it has the edge and `irqloop_response: seq=N level=L` once
# the answer is written (the kernel responder's event text). A --raw --jitter run of $n samples
# with the irq and sched events traced; the trace must hold exactly one edge and one response
# marker per edge the responder handled, seq 1..handled in order, each response after its edge
# and before the next edge, the level alternating with the toggled stimulus (rising on odd
# seqs). Before that, the refusals: tracefs not mounted (exit 2, the line never requested), and
# tracing off (tracefs refuses the writes with EBADF: a warning, answers unaffected, exit 0).
# Then irqloop explain on the trace, --irq-name irqloop-responder (gpiolib's IRQ of the
# responder's line, one entry per edge, which the markers follow): every handled edge found, at
# least 3 in 4 of the stimuli paired (TCG's timing). explain does not print its pairing by
# sequence yet (explain.md, "Limits"): that the markers are read is the checks above.
# trace.txt, marker.db, explain.txt and the responder's logs come out in
# results/user-trace-marker/.
. /testbed/guest-lib.sh
tb_need irqloop irqloop-responder gpioinfo sqlite3
tr=/sys/kernel/tracing
n=400
db=$TB_TMP/marker.db
hw_resp="gpiod:chip=$TB_CHIP,in=1,out=2"

# start_responder LOG [OPTIONS...]: the event-mode responder with --trace on CPU 1; $rpid.
start_responder()
{
	_log=$1
	shift
	irqloop-responder --hw "$hw_resp" --mode event --cpu 1 --report 0 --trace "$@" 2>"$_log" &
	rpid=$!
	tb_wait_consumer "$TB_CHIP" wire1a irqloop-responder "irqloop-responder did not take its lines" "$_log"
}

# measure SAMPLES LABEL [OPTIONS...]: the logger against it.
measure()
{
	_s=$1 _l=$2
	shift 2
	irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --samples "$_s" --cpu 0 --force-tsc \
		--timeout 1s --keep-disturbed --db "$db" --label "$_l" --progress none "$@" >"$TB_OUT/$_l.log" 2>&1 ||
		{ cat "$TB_OUT/$_l.log"; tb_fail "irqloop run $_l failed"; }
}

# --- tracefs not mounted: refused before the line is requested.
umount $tr 2>/dev/null
[ ! -e $tr/trace_marker ] || tb_fail "tracefs is still mounted on $tr"
tb_expect_error 2 "irqloop-responder: open the trace marker '$tr/trace_marker': No such file or directory (mount tracefs" \
	irqloop-responder --hw "$hw_resp" --trace --count 1
gpioinfo -c "$TB_CHIP" 1 | grep -q 'consumer=' && tb_fail "the refused responder requested its line"
tb_pass "tracefs not mounted: refused with exit 2, no line requested"
mount -t tracefs tracefs $tr || tb_fail "cannot mount tracefs"
kb=$(sed "s/.*expanded: \([0-9]*\).*/\1/" $tr/buffer_size_kb) # "7 (expanded: 1408)" before first use
trap 'echo 0 >$tr/tracing_on; echo 0 >$tr/events/enable; echo $kb >$tr/buffer_size_kb' EXIT

echo 0 >$tr/tracing_on
echo nop >$tr/current_tracer
echo 4096 >$tr/buffer_size_kb
echo 0 >$tr/events/enable
echo >$tr/trace

# --- tracing off: tracefs refuses each marker (EBADF); the responder answers, warns, exits 0.
start_responder "$TB_OUT/off.log"
measure 20 tracing-off
kill -INT $rpid
wait $rpid || { cat "$TB_OUT/off.log"; tb_fail "the responder ended with status $? while tracing was off"; }
cat "$TB_OUT/off.log"
off=$(sed -n 's/.*done: handled \([0-9]*\),.*/\1/p' "$TB_OUT/off.log")
[ "${off:-0}" -ge 20 ] || tb_fail "handled ${off:-?} edges while tracing was off, expected 20"
grep -q "trace: 0 markers written to $tr/trace_marker, $((2 * off)) failed" "$TB_OUT/off.log" ||
	tb_fail "the responder did not count its $((2 * off)) refused markers"
grep -q "warning: trace: $((2 * off)) of $((2 * off)) markers not recorded: tracing was off" "$TB_OUT/off.log" ||
	tb_fail "no warning about tracing being off"
tb_pass "tracing off: $off edges answered, their $((2 * off)) markers counted as not recorded, exit 0"

# --- the traced run.
for e in irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit \
	sched/sched_switch sched/sched_wakeup; do
	echo 1 >$tr/events/$e/enable || tb_fail "cannot enable the event $e"
done
echo >$tr/trace
echo 1 >$tr/tracing_on
start_responder "$TB_OUT/responder.log"
echo "\$ irqloop-responder --hw $hw_resp --mode event --cpu 1 --report 0 --trace"
echo "\$ irqloop run --hw gpiod:chip=$TB_CHIP,out=0,in=3 --samples $n --interval 2ms --jitter 500us --raw ..."
measure $n user-trace-marker --interval 2ms --jitter 500us --raw \
	--target "QEMU TCG guest, $(uname -r), irqloop-responder --trace"
kill -INT $rpid
wait $rpid || { cat "$TB_OUT/responder.log"; tb_fail "the responder ended with status $?"; }
echo 0 >$tr/tracing_on
cat "$TB_OUT/user-trace-marker.log" "$TB_OUT/responder.log"
cat $tr/trace >trace.txt
echo 0 >$tr/events/enable
cp trace.txt "$TB_OUT/trace.txt"
sqlite3 "$db" ".backup $TB_OUT/marker.db" || tb_fail "cannot copy the database out"
grep '^# entries-in-buffer' trace.txt
grep -m 4 'tracing_mark_write: irqloop_' trace.txt

handled=$(sed -n 's/.*done: handled \([0-9]*\),.*/\1/p' "$TB_OUT/responder.log")
stimuli=$(tb_sql "$db" "SELECT stimuli FROM runs WHERE label = 'user-trace-marker'")
[ "${handled:-0}" -gt 0 ] || tb_fail "the responder handled no edge"
grep -q "trace: $((2 * handled)) markers written to $tr/trace_marker, 0 failed" "$TB_OUT/responder.log" ||
	tb_fail "the responder's marker count is not 2 x handled ($handled), none failed"
# Lost lines: the buffer's header counts what it holds against what was written.
grep -q '^# entries-in-buffer/entries-written: \([0-9]*\)/\1 ' trace.txt ||
	tb_fail "the trace buffer overflowed: $(grep '^# entries-in-buffer' trace.txt)"

# Each marker line as: kind seq level time(us); then in order: edge k, response k, edge k+1, ...
awk '/tracing_mark_write: irqloop_(edge|response): / {
	for (i = 1; i <= NF; i++) if ($i == "tracing_mark_write:") break
	t = $(i - 1); sub(":", "", t)
	kind = $(i + 1); seq = $(i + 2); lev = $(i + 3)
	sub("seq=", "", seq); sub("level=", "", lev); sub(":", "", kind)
	# (not the digits after the point as a number: busybox awk reads "053313" as octal)
	printf "%s %s %s %.0f\n", kind, seq, lev, t * 1000000
}' trace.txt >markers.txt
edges=$(grep -c '^irqloop_edge ' markers.txt)
responses=$(grep -c '^irqloop_response ' markers.txt)
bad=$(awk '
	{ want = (NR % 2) ? "irqloop_edge" : "irqloop_response"; k = int((NR + 1) / 2) }
	$1 != want || $2 != k || $3 != k % 2 || $4 < last { bad++; if (bad <= 3) print "bad:", NR, $0 > "/dev/stderr" }
	{ last = $4 }
	END { print bad + 0 }' markers.txt)
echo "markers: $edges edges, $responses responses; the responder handled $handled edges; the logger sent $stimuli stimuli"
[ "$edges" = "$handled" ] && [ "$responses" = "$handled" ] ||
	tb_fail "$edges edge and $responses response markers for $handled handled edges"
[ "$bad" = 0 ] || tb_fail "$bad markers out of order, or with a wrong seq or level"
tb_pass "one edge and one response marker per handled edge, seq 1..$handled in order, levels alternating"

# --- irqloop explain on that trace. The responder's edges are the entries of gpiolib's IRQ for
# its line, which is named after the line's consumer (irqloop-responder); each edge marker goes
# with the entry before it (explain.md, "The responder's own events").
irqloop explain --db "$db" --run 2 --trace trace.txt --irq-name irqloop-responder --worst 3 \
	>explain.txt 2>&1 || { cat explain.txt; tb_fail "irqloop explain refused the trace with the markers"; }
cp explain.txt "$TB_OUT/explain.txt"
sed -n '1,5p' explain.txt
grep -q "^trace: [0-9]* events, $handled edges of IRQ 'irqloop-responder'$" explain.txt ||
	tb_fail "explain did not find the $handled edges of the responder's IRQ"
paired=$(sed -n 's/^paired: \([0-9]*\) of \([0-9]*\) stimuli.*/\1/p' explain.txt)
[ "${paired:-0}" -ge $((stimuli * 3 / 4)) ] ||
	tb_fail "explain paired ${paired:-no} of $stimuli stimuli with the responder's edges"
tb_pass "explain: $handled edges of the responder's IRQ, $paired of $stimuli stimuli paired"
gap=$(awk '$1 == "irqloop_response" { print $4 - e } { e = $4 }' markers.txt | sort -n |
	awk '{ v[NR] = $1 } END { printf "min %d  p50 %d  max %d", v[1], v[int((NR + 1) / 2)], v[NR] }')
tb_note "user-trace-marker: $n stimuli, $handled edges handled, $edges + $responses markers in the trace; edge to response marker (us, trace clock): $gap; explain paired $paired of $stimuli stimuli"
