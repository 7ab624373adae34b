#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The kernel responder's own trace events (irqloop:irqloop_edge, irqloop_response and, in
# threaded mode, irqloop_thread; target-responder/kmod/irqloop_trace.h) on a real kernel, hard
# and threaded=1: after 20 warm-up samples, a short --raw --jitter run (300 samples, 5 ms +
# 0..10 ms apart, everything on CPU 0) against the module on the wires of kmod-measure, with the
# irqloop, irq and sched events traced on the x86-tsc trace clock: the guest's TSC, the counter
# the logger stamps with, its counts turned into seconds at the run's clock_hz
# (tb_trace_text), so the trace's clock is the logger's. (On the mono clock, the guest's HPET
# and so the host's CLOCK_MONOTONIC, a loaded CI host's traces bent against the logger's TSC by
# 100 to 300 ppm within the run, and explain refused some: a test of the host, not of the events
# and their pairing. explain's fit of a bent clock has its own test, tests/data/explain/
# bent-hard.) (With 0..2 ms, on a loaded host the guest's stimuli came about 8 ms apart whatever
# the jitter drew, a run nearly periodic, and explain refused it as one: two places alike.) The events' seqs must run h0+1..handled
# without a gap, one of each event per edge, each edge's response after its edge (and its
# thread between them); then explain must pair every stimulus with an edge, and each paired
# sample's handler run (entry to exit) must be the one of the edge whose seq is the sample's
# (logger seq - responder seq is constant here: the module saw every stimulus), which the
# trace itself gives. The clock fit's residual is noted. A third run, lossy, has lost and late
# answers: a 20 ms timeout, and one-off 20.5 ms spikes of the wire chip (spike_ns) on the
# stimulus wire and the answer wire in turn, every 0.5 s; the truth is the wire's (no change
# merged, one edge per stimulus) and the spiker's count per wire: each lost sample (explain
# --lost) must be on its seq's edge too, and explain must find as many handler entries 20 ms
# late as wire 0 took spikes, and as many answers held up after the handler (lost after the
# write, or found through a logger stall and set aside) as wire 1 took. (Every 0.5 s, not
# faster: answers set aside as held up may be a tenth of the answered, and on a loaded host
# most of wire 1's spiked answers are found through a stall.) About 55 s of guest time.
. /testbed/guest-lib.sh
tb_need irqloop sqlite3
tb_kmod_setup
n=300
db=$TB_TMP/trace-events.db
tr=/sys/kernel/tracing
trap 'rmmod irqloop_responder 2>/dev/null; echo 0 >$tr/events/enable 2>/dev/null; echo local >$tr/trace_clock 2>/dev/null' EXIT

[ -e $tr/trace ] || mount -t tracefs tracefs $tr || tb_fail "cannot mount tracefs"

# trace_mode MODE PARAM...: one run against the module loaded with PARAM, traced.
trace_mode()
{
	mode=$1
	shift
	echo 0 >$tr/tracing_on
	echo nop >$tr/current_tracer
	# x86-tsc, the logger's own counter (local and global are clamped per tick under TCG).
	echo x86-tsc >$tr/trace_clock || tb_fail "cannot select the x86-tsc trace clock"
	echo 2048 >$tr/buffer_size_kb
	insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 "$@" || tb_fail "$mode: cannot load with $*"
	# Everything on CPU 0, the logger's (the wire raises the edge there): the IRQ's thread too,
	# which the logger's priority (10, below the thread's 50) lets run.
	for d in /proc/[0-9]*; do
		case "$(cat $d/comm 2>/dev/null)" in
		irq/*-irqloop_r*) taskset -p 1 "${d#/proc/}" >/dev/null || tb_fail "cannot pin ${d#/proc/}" ;;
		esac
	done
	for e in irqloop irq/irq_handler_entry irq/irq_handler_exit sched/sched_switch \
		sched/sched_wakeup; do
		echo 1 >$tr/events/$e/enable || tb_fail "$mode: cannot enable the event $e"
	done
	# A warm-up run first, traced then cleared: under TCG the first edges through a new path
	# (the handler, the tracepoints) are slow, code translated on first use, and a first edge
	# milliseconds late leaves the clock fit's anchor two places alike. The measured run's
	# edges then count from h0 + 1: the offset is not the trivial one.
	echo 1 >$tr/tracing_on
	irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --priority 10 \
		--timeout 1s --gap-limit 5ms --keep-disturbed --samples 20 --label warm --progress none --db $TB_TMP/warm.db >/dev/null ||
		tb_fail "$mode: the warm-up run failed"
	h0=$(cat $sys/handled)
	merged0=$(cat /sys/module/irqloop_wire/parameters/merged)
	echo >$tr/trace
	rm -f $TB_TMP/spike-stop $TB_TMP/spikes
	[ "$mode" = lossy ] && { spiker & }
	irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --priority 10 \
		--timeout $timeout --samples $n --interval $interval --jitter 10ms --gap-limit 5ms --raw \
		--label "$mode" --progress none \
		--db "$db" --target "QEMU TCG guest, $(uname -r), irqloop_responder.ko $*" \
		>/dev/null || tb_fail "$mode: irqloop run failed"
	if [ "$mode" = lossy ]; then
		touch $TB_TMP/spike-stop
		wait
		spikes=$(cat $TB_TMP/spikes)
		# A spike set after the run's last change is still there: not consumed.
		case "$(cat $wp/spike_ns)" in *[1-9]*) spikes=$((spikes - 1)) ;; esac
		echo 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0 >$wp/spike_ns
	fi
	echo 0 >$tr/tracing_on
	echo 0 >$tr/events/enable
	handled=$(cat $sys/handled)
	# Read before the unload: the kernel empties the ring buffer when a module whose events
	# were enabled goes.
	# (tb_trace_text: the counts in seconds at the clock_hz of $db's last run, this one.)
	tb_trace_text "$db" >$mode.txt
	rmmod irqloop_responder || tb_fail "$mode: rmmod failed"
	run=$(tb_sql "$db" "SELECT id FROM runs WHERE label = '$mode'")
	cp $mode.txt "$TB_OUT/trace-events-$mode.txt"
	sqlite3 "$db" ".backup $TB_OUT/trace-events-$mode.db" || tb_fail "cannot copy the database out"
	stimuli=$(tb_sql "$db" "SELECT stimuli FROM runs WHERE id = $run")
	first=$(tb_sql "$db" "SELECT min(seq) FROM raw_samples WHERE run_id = $run")
	grep -m 3 'irqloop_' $mode.txt
	echo "$mode: run $run, $stimuli stimuli from seq $first; module handled $h0 + $((handled - h0));" \
		"$(grep -c ' irqloop_edge: ' $mode.txt) edge, $(grep -c ' irqloop_response: ' $mode.txt)" \
		"response, $(grep -c ' irqloop_thread: ' $mode.txt) thread events"
	# The truth: the wire merged no change and the module took one edge per stimulus, so
	# logger seq - responder seq is one constant, whatever was lost or late.
	merged=$(($(cat /sys/module/irqloop_wire/parameters/merged) - merged0))
	[ $((handled - h0)) = "$stimuli" ] && [ "$stimuli" = $n ] && [ $merged = 0 ] ||
		tb_fail "$mode: the module handled $((handled - h0)) edges for $stimuli stimuli ($n sent), the wire merged $merged changes"
	if [ "$mode" = lossy ]; then
		lost=$(tb_sql "$db" "SELECT lost FROM runs WHERE id = $run")
		late=$(tb_sql "$db" "SELECT late FROM runs WHERE id = $run")
		# A spiked sample whose answer the logger, stalled across its deadline (the guest's
		# vCPU descheduled), found only after the stall is answered, not lost: its bracket
		# spans the stall (and on wire 1 explain sets it aside: its answer after the exit).
		stalled=$(tb_sql "$db" "SELECT count(*) FROM raw_samples WHERE run_id = $run AND
			flags & 8 = 0 AND latency_ns > 20000000")
		echo "lossy: $spikes spikes of $spike ns taken by the wires; the run lost $lost, late" \
			"$late; answered after the timeout through a logger stall: $stalled"
		[ "$spikes" -ge 10 ] && [ "$lost" -ge $((spikes - stalled - 1)) ] ||
			tb_fail "lossy: $lost lost answers for $spikes spikes (timeout $timeout)"
	fi

	# The events, in the trace's (time) order: per seq, edge < thread < response, no gap.
	awk -v mode="$mode" -v last=$h0 -v want=$((handled - h0)) '
	/ irqloop_(edge|response|thread): / {
		for (i = 1; i <= NF; i++) if ($i ~ /^irqloop_/) ev = $i
		sub(/:$/, "", ev)
		for (i = 1; i <= NF; i++) if ($i ~ /^seq=/) s = substr($i, 5) + 0
		if (ev == "irqloop_edge") {
			if (s != last + 1) { printf "edge seq %d after %d\n", s, last; bad++ }
			last = s; edges++; state[s] = "e"
		} else if (ev == "irqloop_thread") {
			if (state[s] != "e") { printf "thread of seq %d not after its edge\n", s; bad++ }
			threads++; state[s] = "t"
		} else {
			if (state[s] != (mode == "threaded" ? "t" : "e")) {
				printf "response of seq %d out of order\n", s; bad++
			}
			responses++; state[s] = "r"
		}
	}
	END {
		if (edges != want || responses != want || (mode == "threaded") * want != threads) {
			printf "%d edges, %d responses, %d threads for %d handled\n", edges, responses,
				threads, want
			bad++
		}
		exit bad != 0
	}' $mode.txt || tb_fail "$mode: the responder's events do not run $((h0 + 1))..$handled in order"
	tb_pass "$mode: irqloop_edge and irqloop_response$([ "$mode" = threaded ] &&
		echo ' and irqloop_thread') seq $((h0 + 1))..$handled, one each per edge, in order"

	# explain: every stimulus paired; per sample, its handler run is its seq's edge's.
	irqloop explain --db "$db" --run $run --trace $mode.txt --worst $n >$mode.explain 2>&1 ||
		{ cat $mode.explain; tb_fail "$mode: irqloop explain refused the trace"; }
	sed -n '1,8p' $mode.explain
	cp $mode.explain "$TB_OUT/trace-events-$mode.explain.txt"
	grep -q "^paired: $n of $n stimuli; 0 edges trace-only, 0 stimuli with no edge" \
		$mode.explain || tb_fail "$mode: explain did not pair each of the $n stimuli"
	irqloop explain --db "$db" --run $run --trace $mode.txt --worst $n --json >$mode.json ||
		tb_fail "$mode: irqloop explain --json failed"
	# Per sample (the only objects with "seq" and "handler_ns"): its seq and handler run.
	pairs_of() {
		tr -d ',' <"$1" | awk '$1 == "\"seq\":" { s = $2 }
			$1 == "\"handler_ns\":" && $2 != "null" { print s, $2 }'
	}
	pairs_of $mode.json >$mode.pairs
	if [ "$mode" = lossy ]; then
		# The lost samples (--worst takes the answered ones): their edges too, and where
		# each answer was lost. The spiker took wire 0 first, then each wire in turn.
		irqloop explain --db "$db" --run $run --trace $mode.txt --lost --json >$mode.lost.json ||
			tb_fail "lossy: irqloop explain --lost --json failed"
		irqloop explain --db "$db" --run $run --trace $mode.txt --lost | sed -n '4p;9,13p'
		pairs_of $mode.lost.json >>$mode.pairs
		cp $mode.lost.json "$TB_OUT/"
		w0=$(((spikes + 1) / 2))
		w1=$((spikes / 2))
		# Wire 0's spikes: samples whose handler entered 20 ms or more after the stimulus, lost
		# (lost_at "before the handler") or answered through a logger stall. Wire 1's: lost
		# answers written in time ("after the write"), and answers the logger found through a
		# stall, which explain sets aside (their answer came after the handler's exit).
		late_entries() {
			tr -d ',' <"$1" | awk '$1 == "\"part\":" { p = ($0 ~ /before the handler/) }
				$1 == "\"ns\":" && p { if ($2 >= 20000000) n++; p = 0 } END { print n + 0 }'
		}
		before=$(($(late_entries $mode.json) + $(late_entries $mode.lost.json)))
		after=$(($(grep -c '"lost_at": "after the write"' $mode.lost.json) +
			$(grep -c '"contradiction": "answer after the handler' $mode.json)))
		echo "lossy: entered 20 ms or more late $before (wire 0 spiked $w0 times)," \
			"answer held up after the handler $after (wire 1 spiked $w1 times)"
		[ "$before" -ge $((w0 - 1)) ] && [ "$after" -ge $((w1 - 1)) ] ||
			tb_fail "lossy: explain put $before entries 20 ms late for $w0 spikes of wire 0, $after answers held up after the handler for $w1 of wire 1"
		tb_pass "lossy: explain finds each spike ($before handler entries 20 ms late, $after answers held up after the handler)"
		tb_note "kmod-trace-events lossy: $spikes spikes of $spike ns ($w0 on wire 0, $w1 on wire 1), the run lost $lost (late $late, $stalled answered through a logger stall); explain: $before handler entries 20 ms late, $after answers held up after the handler"
	fi
	# The trace's handler runs by the seq of the irqloop_edge inside them (exit - entry, ns).
	# The microseconds get a leading 1: busybox awk reads "025773" as an octal number.
	awk '
	function stamp() {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) t = $i
		sub(/:$/, "", t); split(t, p, "."); sec = p[1] + 0; us = ("1" substr(p[2] "000000", 1, 6)) - 1000000
	}
	/ irq_handler_entry: .*name=irqloop_responder/ { stamp(); es = sec; eus = us; open = 1; seq = 0 }
	/ irqloop_edge: / && open { for (i = 1; i <= NF; i++) if ($i ~ /^seq=/) seq = substr($i, 5) }
	/ irq_handler_exit: / && seq {
		stamp(); print seq, ((sec - es) * 1000000 + us - eus) * 1000; open = 0; seq = 0
	}' $mode.txt >$mode.handlers
	cp $mode.json $mode.pairs $mode.handlers "$TB_OUT/"
	k=$((first - h0 - 1))
	wrong=$(awk -v k=$k 'NR == FNR { h[$1] = $2; next }
		{ n++; if (h[$1 - k] != $2) bad++ } END { print bad + 0 " " n + 0 }' \
		$mode.handlers $mode.pairs)
	residual=$(irqloop explain --db "$db" --run $run --trace $mode.txt --worst 1 |
		sed -n 's/.*residual \([0-9.]* us\).*/\1/p')
	echo "$mode: samples whose handler run is not their seq's edge's, of those compared: $wrong"
	[ "${wrong#* }" -ge $((n * 9 / 10)) ] || tb_fail "$mode: only ${wrong#* } samples compared"
	[ "${wrong% *}" = 0 ] || tb_fail "$mode: ${wrong% *} samples paired with another seq's edge"
	tb_pass "$mode: explain pairs each of the $n samples with the edge of its seq (offset $k)"
	tb_note "kmod-trace-events $mode: $n samples, $((handled - h0)) edges traced (seq $((h0 + 1))..$handled), every sample on its seq's edge (logger seq - responder seq = $k); clock fit residual $residual"
}

# spiker: until $TB_TMP/spike-stop exists, every 0.5 s, once the last spike was taken, a
# one-off spike of $spike ns on wire 0 (the stimulus: the responder sees it late) or wire 1
# (the answer), in turn; the count goes to $TB_TMP/spikes.
spiker()
{
	i=0
	sleep 0.5
	while [ ! -e $TB_TMP/spike-stop ]; do
		# (Empty until written: the module's array has no values after a load.)
		case "$(cat $wp/spike_ns)" in
		*[1-9]*) ;;
		*)
			if [ $((i % 2)) = 0 ]; then v=$spike,0; else v=0,$spike; fi
			echo $v,0,0,0,0,0,0,0,0,0,0,0,0,0,0 >$wp/spike_ns
			i=$((i + 1))
			;;
		esac
		sleep 0.5
	done
	echo $i >$TB_TMP/spikes
}
wp=/sys/module/irqloop_wire/parameters
timeout=1s
interval=5ms
trace_mode hard
trace_mode threaded threaded=1
# Lost and late answers: a 20 ms timeout and one-off spikes of 20.5 ms, 200 stimuli 40 ms +
# 0..10 ms apart (the spiked answer comes before the next stimulus).
n=200
timeout=20ms
interval=40ms
spike=20500000
trace_mode lossy
