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
