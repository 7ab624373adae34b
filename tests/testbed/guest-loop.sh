# SPDX-License-Identifier: MIT
#
# The logger-against-responder loop on the irqloop-wire chip, shared by scenarios:
#   wire 0 (lines 0 -> 1) carries the stimulus: logger out=0, responder in=1;
#   wire 1 (lines 2 -> 3) carries the response: responder out=2, logger in=3.
# Source after guest-lib.sh, then: tb_loop MODE SAMPLES LABEL [extra irqloop run options...]
# TB_RESPONDER_OPTS, if set, adds options to the responder's command line.
# Give the longest --timeout (1 s): QEMU's threads share the host, and a starved host makes a
# response slow, not lost (the responder's own count in responder.log tells the two apart).
# Leaves run.db (+ -wal), logger.log and responder.log in $TB_OUT.

# tb_wait_consumer LINE CONSUMER: until gpioinfo shows LINE of the chip held by CONSUMER.
tb_wait_consumer()
{
	_i=0
	while ! gpioinfo -c "$TB_CHIP" "$1" | grep -q "consumer=\"$2\""; do
		_i=$((_i + 1))
		[ $_i -lt 300 ] || return 1
		sleep 0.1
	done
}

tb_loop()
{
	_mode=$1 _samples=$2 _label=$3
	shift 3
	tb_need irqloop irqloop-responder gpioinfo
	# A polling responder needs no edge events (the IRQ thread would only steal its CPU):
	# irqloop-responder --mode poll requests the line with events=none by itself.
	# shellcheck disable=SC2086 # TB_RESPONDER_OPTS: extra responder options, word-split
	irqloop-responder --hw "gpiod:chip=$TB_CHIP,out=2,in=1" --mode "$_mode" \
		--cpu 1 ${TB_RESPONDER_OPTS:-} >"$TB_OUT/responder.log" 2>&1 &
	_rpid=$!
	tb_wait_consumer 1 irqloop-responder || {
		cat "$TB_OUT/responder.log"
		tb_fail "the responder did not start"
	}
	echo "\$ irqloop run --hw gpiod:chip=$TB_CHIP,out=0,in=3 --samples $_samples $*"
	_t0=$(cut -d' ' -f1 /proc/uptime)
	# TCG's TSC follows the host's invariant TSC but the CPU model does not say so.
	irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --samples "$_samples" --cpu 0 --force-tsc \
		--db "$TB_TMP/run.db" --label "$_label" --target "irqloop-wire under QEMU" \
		--progress log --keep-disturbed "$@" >"$TB_OUT/logger.log" 2>&1
	_rc=$?
	_t1=$(cut -d' ' -f1 /proc/uptime)
	kill -INT $_rpid
	wait $_rpid
	_rrc=$?
	cat "$TB_OUT/logger.log"
	echo "--- responder"
	cat "$TB_OUT/responder.log"
	cp "$TB_TMP"/run.db* "$TB_OUT/" 2>/dev/null
	[ $_rc = 0 ] || tb_fail "irqloop run ended with status $_rc"
	[ $_rrc = 0 ] || tb_fail "irqloop-responder ended with status $_rrc"
	grep -q 'missed edges 0$' "$TB_OUT/responder.log" || [ "$_mode" = poll ] ||
		tb_fail "the responder missed edge events"
	# Poll mode must have requested its input without edge detection by itself.
	if [ "$_mode" = poll ]; then
		grep -q 'events=none, mode poll' "$TB_OUT/responder.log" ||
			tb_fail "the polling responder requested edge events"
	fi
	tb_note "$_mode mode: $_samples samples in $(echo "$_t1 - $_t0" | bc) s of guest time"
}
