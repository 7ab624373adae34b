#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# PID 1 of the raspi3b guest. Runs each scenario of /testbed/scenarios.list with a timeout;
# every line a scenario prints goes to the serial console as "TBL NAME: line", its exit status
# as "TBS NAME RC". Ends with "TB: END" (the runner then stops QEMU: raspi3b cannot power off).

. /testbed/guest-mounts.sh
dmesg -n 1

say() { echo "TB: $*"; }

say "init at uptime $(cut -d' ' -f1 /proc/uptime)s, $(nproc) CPUs, kernel $(uname -r)," \
	"$(tr '\0' ' ' </proc/device-tree/compatible)"
dmesg -c >/dev/null

while read -r name; do
	mkdir -p "/tmp/out/$name" "/tmp/$name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	(
		cd "/tmp/$name" &&
			TB_NAME=$name TB_OUT=/tmp/out/$name TB_TMP=/tmp/$name \
				timeout -s KILL 600 sh "/testbed/scenarios/$name.sh"
	) >"/tmp/out/$name/log" 2>&1 </dev/null
	rc=$?
	[ $rc = 137 ] && echo "FAIL: killed after 600s" >>"/tmp/out/$name/log"
	kill -KILL -1 2>/dev/null
	if dmesg -c | grep -E 'WARNING:|BUG:|Oops|Call trace' >>"/tmp/out/$name/log"; then
		echo "FAIL: the kernel logged a warning (above)" >>"/tmp/out/$name/log"
		[ $rc = 0 ] && rc=1
	fi
	sed "s/^/TBL $name: /" "/tmp/out/$name/log"
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "TBS $name $rc"
	say "scenario $name: exit status $rc after $(echo "$t1 $t0" | awk '{ print $1 - $2 }')s"
done </testbed/scenarios.list

say "END at uptime $(cut -d' ' -f1 /proc/uptime)s"
sync
while true; do sleep 60; done
