#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A single-edge responder asks the kernel for that edge only. irqloop drives wire 0 and tells
# its spec the far end answers the rising edge (edges=rising: it re-arms on the falling edge
# unmeasured); irqloop-responder --edge rising then requests events=rising by itself, so each
# sample costs one edge event and one wake-up, not two. Counted against the same run with
# events=both forced (a wake-up for every falling edge, ignored). The responder's split of
# each answer (the kernel's hard-IRQ timestamp -> awake -> response written) comes out in its
# report and in split.csv, checked on the host.
. /testbed/guest-lib.sh
. /testbed/guest-loop.sh
tb_need irqloop irqloop-responder gpioinfo
n=5000

# run LABEL RESPONDER_SPEC_SUFFIX: one run of N samples; leaves the responder's log in LABEL.log.
run()
{
	irqloop-responder --hw "gpiod:chip=$TB_CHIP,out=2,in=1$2" --mode event --edge rising \
		--cpu 1 --report 0 --split-file "$TB_OUT/$1.csv" >"$TB_OUT/$1.log" 2>&1 &
	rpid=$!
	tb_wait_consumer 1 irqloop-responder || { cat "$TB_OUT/$1.log"; tb_fail "the responder did not start"; }
	irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3,edges=rising" --samples $n --cpu 0 \
		--force-tsc --timeout 1s --db "$TB_TMP/single.db" --label "$1" --progress none \
		--keep-disturbed || tb_fail "irqloop run $1 failed"
	kill -INT $rpid
	wait $rpid || tb_fail "the responder ($1) ended with an error"
	cat "$TB_OUT/$1.log"
	done_line=$(grep 'done:' "$TB_OUT/$1.log")
	handled=$(echo "$done_line" | sed -n 's/.*handled \([0-9]*\),.*/\1/p')
	ignored=$(echo "$done_line" | sed -n 's/.*ignored \([0-9]*\),.*/\1/p')
	wakeups=$(echo "$done_line" | sed -n 's/.*wake-ups \([0-9]*\),.*/\1/p')
	echo "$1: handled $handled, ignored $ignored, wake-ups $wakeups"
}

echo "--- --edge rising: the kernel is asked for rising edges only"
run rising ""
head -n1 "$TB_OUT/rising.log" | grep -q 'events=rising' || tb_fail "the responder did not request events=rising"
# (A TCG stall past the logger's 1 s timeout repeats a stimulus: at least N answers.)
[ "$handled" -ge $n ] || tb_fail "handled $handled, expected at least $n"
[ "$wakeups" = "$handled" ] && [ "$ignored" = 0 ] ||
	tb_fail "$wakeups wake-ups and $ignored ignored for $handled rising edges: a falling edge woke us"
tb_pass "$n samples: one wake-up per answered rising edge ($wakeups), none for the falling edges"
grep -q 'split IRQ -> wake-up' "$TB_OUT/rising.log" || tb_fail "no split in the responder's report"
rising_wakeups=$wakeups

echo "--- the same with events=both forced: every falling edge wakes the responder"
run both ",events=both"
# Falling edges now wake the responder too; a falling and the next rising edge read in one
# wake-up count once, so not quite 2N on a busy host.
[ "$wakeups" -gt $((n + n / 4)) ] && [ "$ignored" -gt $((n / 4)) ] ||
	tb_fail "$wakeups wake-ups, $ignored ignored: the falling edges did not wake the responder"
tb_pass "events=both: $wakeups wake-ups, $ignored of them for falling edges only"
tb_note "single edge, $n samples: $rising_wakeups wake-ups with events=rising, $wakeups with events=both ($ignored for falling edges)"
sqlite3 "$TB_TMP/single.db" ".backup $TB_OUT/single.db" 2>/dev/null || true
