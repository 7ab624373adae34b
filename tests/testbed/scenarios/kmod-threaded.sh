#!/bin/sh
# SPDX-License-Identifier: MIT
#
# threaded=1 against hard mode, on the same wires: each run's handler context as the module
# reports it (context at load, context_seen at the first edge), and the threaded median above
# the hard one, as the thread wake-up is on its path. TCG timings: ordering only.
. /testbed/guest-lib.sh
tb_need irqloop sqlite3
tb_kmod_setup
n=${TB_KMOD_SAMPLES:-10000}
db=$TB_TMP/threaded.db

# measure LABEL CONTEXT SEEN_PATTERN PARAM...: one run of N samples against the module.
measure()
{
	label=$1 want_ctx=$2 want_seen=$3
	shift 3
	dmesg -c >/dev/null
	insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 "$@" || tb_fail "cannot load with $*"
	ctx=$(cat $sys/context)
	irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --timeout 1s \
		--samples $n --label "$label" --db "$db" --progress none ||
		tb_fail "irqloop run against $label failed"
	seen=$(cat $sys/context_seen)
	handled=$(cat $sys/handled)
	rmmod irqloop_responder || tb_fail "rmmod failed"
	dmesg | grep irqloop_responder
	echo "$label: context '$ctx', context_seen '$seen', handled $handled"
	[ "$ctx" = "$want_ctx" ] || tb_fail "$label: context '$ctx', expected '$want_ctx'"
	echo "$seen" | grep -qE "$want_seen" || tb_fail "$label: context_seen '$seen'"
	[ "$handled" = $n ] || tb_fail "$label: $handled handled for $n stimuli"
	row=$(tb_sql "$db" "SELECT status, stimuli, lost FROM runs WHERE label = '$label'")
	[ "$row" = "complete|$n|0" ] || tb_fail "$label: run is '$row'"
	tb_pass "$label: $n samples, context '$ctx', seen '$seen'"
}

measure hard hard '^hard$'
measure threaded "threaded (threaded=1)" '^thread irq/[0-9]+-irqloop' threaded=1
dmesg -c >/dev/null
irqloop compare --by label "$db" || tb_fail "irqloop compare failed"
sqlite3 "$db" ".backup $TB_OUT/threaded.db"
h=$(tb_sql "$db" "SELECT p50_ns FROM runs WHERE label = 'hard'")
t=$(tb_sql "$db" "SELECT p50_ns FROM runs WHERE label = 'threaded'")
tb_note "$(uname -r): median round trip hard $h ns, threaded $t ns (TCG: ordering only)"
[ "$t" -gt "$h" ] || tb_fail "the threaded median ($t ns) is not above the hard one ($h ns)"
tb_pass "threaded median above hard"
