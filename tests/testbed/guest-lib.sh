# SPDX-License-Identifier: MIT
#
# Helpers for testbed scenarios, sourced inside the guest: . /testbed/guest-lib.sh
#
# A scenario is a busybox sh script run by the guest's init with:
#   TB_NAME     its name;   TB_OUT  a folder that comes out to the host (results/NAME/);
#   TB_TMP      its working folder (tmpfs; SQLite files belong here, then get copied out);
#   TB_CHIP     the irqloop-wire chip (gpiochipN), loaded with 4 wires: lines 2n <-> 2n+1;
#   TB_KVER     the guest kernel;   TB_KMOD_DIR  where the .ko files of --kmod folders are.
# Exit status 0 passes, 4 skips, anything else fails. Output goes to results/NAME/log.

set -u

# tb_note TEXT: a line the host prints under the scenario's verdict (figures worth quoting).
tb_note()
{
	echo "NOTE: $*"
	echo "$*" >>"$TB_OUT/notes"
}

tb_fail()
{
	echo "FAIL: $*"
	exit 1
}

tb_pass()
{
	echo "PASS: $*"
}

# tb_need PROGRAM...: fail (not skip) when a program is missing from the initramfs.
tb_need()
{
	for p in "$@"; do
		command -v "$p" >/dev/null || tb_fail "$p is not in the guest (not built?)"
	done
}

# tb_wire_delay WIRE NS: from now on the far end of wire WIRE sees changes NS later.
tb_wire_delay()
{
	_v=$(cat /sys/module/irqloop_wire/parameters/delay_ns)
	_new=$(echo "$_v" | awk -F, -v w="$1" -v ns="$2" \
		'{ for (i = 1; i <= 16; i++) { v = (i - 1 == w) ? ns : ($i == "" ? 0 : $i);
		   printf "%s%s", v, (i < 16 ? "," : "\n") } }')
	echo "$_new" >/sys/module/irqloop_wire/parameters/delay_ns
}

# tb_expect_error STATUS TEXT CMD...: CMD must exit with STATUS and print TEXT (a fixed string).
tb_expect_error()
{
	_want=$1 _text=$2
	shift 2
	_msg=$("$@" 2>&1)
	_got=$?
	echo "\$ $*"
	echo "$_msg"
	[ "$_got" = "$_want" ] || tb_fail "exit status $_got, expected $_want: $*"
	echo "$_msg" | grep -qF -- "$_text" || tb_fail "message lacks '$_text': $*"
	tb_pass "exit status $_got and '$_text'"
}

# tb_sql DB QUERY: one value from an SQLite file (needs sqlite3 in the guest).
tb_sql()
{
	sqlite3 -batch -noheader "$1" "$2"
}

# tb_kmod_setup [KO HINT]: the start every kernel-responder scenario shares. Sets $ko (the
# module file: KO, by default the tree's build under $TB_KMOD_DIR) and $sys (its sysfs folder
# when loaded with parameters), fails with HINT (by default the runner's --kmod) when the file
# is missing, makes sure the module is never left loaded for the next scenario, and loads
# parport.ko first when the module links against it (x86 Debian kernels have CONFIG_PARPORT).
tb_kmod_setup()
{
	ko=${1:-$TB_KMOD_DIR/irqloop_responder.ko}
	sys=/sys/devices/platform/irqloop_responder
	[ -f "$ko" ] || tb_fail "$ko is missing (${2:-run-testbed.sh --kmod target-responder/kmod})"
	trap 'rmmod irqloop_responder 2>/dev/null' EXIT
	if tr "\000" "\n" <"$ko" | grep -q "^depends=.*parport" && [ ! -d /sys/module/parport ]; then
		insmod "$(find /lib/modules/"$TB_KVER" -name 'parport.ko*' | head -n1)" ||
			tb_fail "parport.ko, which irqloop_responder.ko needs, is not in the guest"
	fi
}

# tb_wait_consumer CHIP LINE CONSUMER FAILURE [LOG]: waits (10 s at most) until CONSUMER holds
# line LINE of CHIP; when it does not, shows LOG (a file), if given, and fails with FAILURE.
tb_wait_consumer()
{
	_i=0
	while ! gpioinfo -c "$1" "$2" | grep -q "consumer=\"$3\""; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || { [ -z "${5:-}" ] || cat "$5"; tb_fail "$4"; }
		sleep 0.1
	done
}

# tb_event_responder_start: irqloop-responder in event mode on wire0b (in) and wire1a (out), on
# CPU 1, its messages in responder.log; returns once it holds its lines. Sets $responder.
tb_event_responder_start()
{
	irqloop-responder --hw "gpiod:chip=$TB_CHIP,in=1,out=2" --mode event --cpu 1 --report 0 \
		2>responder.log &
	responder=$!
	tb_wait_consumer "$TB_CHIP" wire1a irqloop-responder \
		"irqloop-responder did not take its lines" responder.log
}

# tb_event_responder_stop: ends the responder tb_event_responder_start started (SIGINT) and
# shows its messages.
tb_event_responder_stop()
{
	kill -INT $responder
	wait $responder
	cat responder.log
}

# tb_kmod_refused ERRNO_TEXT DMESG_TEXT PARAM...: loading the module with PARAM... fails with
# that strerror() text, and the kernel log gains exactly one line of ours (prefix
# "irqloop_responder: "), containing DMESG_TEXT. Nothing stays loaded. Lines of gpiolib or the
# driver core are shown but not counted: they are the kernel's, not ours.
tb_kmod_refused()
{
	_want=$1 _text=$2
	shift 2
	dmesg -c >/dev/null
	echo "\$ insmod irqloop_responder.ko $*"
	if _msg=$(insmod "$ko" "$@" 2>&1); then
		rmmod irqloop_responder
		tb_fail "loaded with bad parameters: $*"
	fi
	# Without timestamps, and once: busybox insmod may try twice (finit_module, then
	# init_module), which repeats the reason.
	_all=$(dmesg | sed 's/^\[[ 0-9.]*\] //' | sort -u)
	_log=$(echo "$_all" | grep '^irqloop_responder: ')
	echo "$_msg"
	echo "$_all" | sed 's/^/  dmesg: /'
	echo "$_msg" | grep -qF -- "$_want" || tb_fail "insmod did not fail with '$_want': $*"
	echo "$_log" | grep -qF -- "irqloop_responder: $_text" || tb_fail "dmesg lacks '$_text': $*"
	[ "$(echo "$_log" | wc -l)" = 1 ] || tb_fail "more than one line of ours in dmesg: $*"
	[ ! -d /sys/module/irqloop_responder ] || tb_fail "module left loaded: $*"
	tb_pass "'$_want' and '$_text'"
}

# tb_wire_reload [PARAM...]: irqloop-wire loaded again with these load-time options (init puts
# the defaults back after the scenario). Sets TB_CHIP again.
tb_wire_reload()
{
	rmmod irqloop_responder 2>/dev/null
	rmmod irqloop_wire || tb_fail "cannot unload irqloop-wire"
	insmod "$TB_KMOD_DIR/irqloop-wire.ko" "$@" || tb_fail "cannot load irqloop-wire $*"
	# rp1=... labels the chip pinctrl-rp1, as the Pi 5's controller.
	TB_CHIP=$(gpiodetect | sed -n 's/^\(gpiochip[0-9]*\) \[\(irqloop-wire[a-z-]*\|pinctrl-rp1\)\].*/\1/p')
	[ -n "$TB_CHIP" ] || tb_fail "irqloop-wire $* registered no chip"
	echo "irqloop-wire $*: $(gpiodetect | grep -E 'irqloop-wire|pinctrl-rp1')"
}

# tb_trace_setup CLOCK EVENT...: tracefs mounted at $tr, tracing off, the nop tracer, CLOCK as
# the trace clock, 4 MiB of buffer per CPU, each EVENT (group/name) enabled, and with the
# preemptirq events when the kernel has them ($pirq says: present or absent; the stock kernel
# has no CONFIG_PREEMPTIRQ_TRACEPOINTS, so IRQs-off sections are not traced), the buffer empty.
# The explain scenarios' clock is x86-tsc, the guest's TSC, the counter the logger stamps with
# (--force-tsc) and the hogs busy-wait on (sched_clock()); tb_trace_text turns its counts into
# seconds. Not local, the default, nor global: where the kernel does not trust the TSC (as under
# TCG with two CPUs) both are clamped to one tick past each CPU's last tick, so a time stamp
# taken as interrupts come back on after a long IRQs-off section can lag by up to a tick, and
# CPUs drift apart. Not mono: QEMU's HPET, which follows the host's CLOCK_MONOTONIC, not the
# TSC; on a loaded host (and in PREEMPT_RT boots) the two bent apart by 100 to 300 ppm within a
# run, and explain refused such traces as a poor fit.
tb_trace_setup()
{
	tr=/sys/kernel/tracing
	_clock=$1
	shift
	[ -e $tr/trace ] || mount -t tracefs tracefs $tr || tb_fail "cannot mount tracefs"
	echo 0 >$tr/tracing_on
	echo nop >$tr/current_tracer
	echo "$_clock" >$tr/trace_clock || tb_fail "cannot select the trace clock $_clock"
	echo 4096 >$tr/buffer_size_kb
	for _e in "$@"; do
		echo 1 >$tr/events/$_e/enable || tb_fail "cannot enable the event $_e"
	done
	if grep -q '^preemptirq:irq_disable$' $tr/available_events; then
		pirq=present
		echo 1 >$tr/events/preemptirq/irq_disable/enable
		echo 1 >$tr/events/preemptirq/irq_enable/enable
	else
		pirq=absent
	fi
	echo "preemptirq events: $pirq"
	echo >$tr/trace
}

# tb_trace_seconds HZ <IN >OUT: a text trace taken with a counter trace clock (x86-tsc: each
# time stamp a count, not seconds) with each count divided by HZ, so its time stamps are seconds
# again with 6 decimals, as the kernel prints a clock in ns and irqloop explain reads them. With
# HZ the run's clock_hz, the trace is on the logger's own clock: in one guest both read the same
# TSC, and the logger's unix_ns are the TSC's counts divided by that same rate. (The guest's mono
# clock, from QEMU's HPET, follows the host's CLOCK_MONOTONIC instead; on a loaded host the two
# have bent against each other by 100 to 300 ppm within a run, which explain must then fit in
# pieces or refuse.)
tb_trace_seconds()
{
	awk -v hz="$1" '
	/^#/ { print; next }
	match($0, / [0-9]+: /) {
		printf "%s %.6f: %s\n", substr($0, 1, RSTART - 1), substr($0, RSTART + 1, RLENGTH - 3) / hz,
			substr($0, RSTART + RLENGTH)
		next
	}
	{ print }'
}

# tb_counts_start DIR, then tb_counts_stop DIR: a hog's or an injector's counters (module
# parameters in DIR) over a run: $fired runs, $overran of them longer than asked + 10 %, the
# longest $longest us.
tb_counts_start()
{
	_f0=$(cat "$1/fired") _o0=$(cat "$1/overran")
}
tb_counts_stop()
{
	fired=$(($(cat "$1/fired") - _f0)) overran=$(($(cat "$1/overran") - _o0))
	longest=$(($(cat "$1/longest_ns") / 1000))
}

# tb_trace_text DB: the trace buffer's text; on the x86-tsc clock, its counts turned into seconds
# at the clock_hz of DB's last run (tb_trace_seconds), so that it is on the logger's clock.
tb_trace_text()
{
	case "$(cat $tr/trace_clock)" in
	*'[x86-tsc]'*) tb_trace_seconds "$(tb_sql "$1" 'SELECT clock_hz FROM runs ORDER BY id DESC LIMIT 1')" <$tr/trace ;;
	*) cat $tr/trace ;;
	esac
}

# tb_hog_trace_out DB BUSY: after a run beside irqloop_hog (tracing off, tb_counts_stop done),
# the trace read into trace.txt, the events disabled and the buffer emptied; the trace and DB
# copied out; the hog must have run.
tb_hog_trace_out()
{
	tb_trace_text "$1" >trace.txt
	echo 0 >$tr/events/enable
	echo >$tr/trace
	echo "trace: $(wc -l <trace.txt) lines; the hog ran $fired times during the run," \
		"$overran of them longer than $2 us + 10 %, the longest $longest us"
	cp trace.txt "$TB_OUT/trace.txt"
	sqlite3 "$1" ".backup $TB_OUT/explain.db" || tb_fail "cannot copy the database out"
	[ "$fired" -gt 0 ] || tb_fail "the hog never ran during the run"
}
