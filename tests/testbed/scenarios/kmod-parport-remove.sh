#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A parallel port removed under the bound responder (issue 27, item 15). QEMU's port cannot go
# away while the responder holds it (kmod-parport-detach), so this uses irqloop_fakeport.ko
# (tests/testbed/kmod-node): a port without hardware whose module its devices do not pin, so that
# unloading it removes the port as a PCI or USB port's removal does. parport then calls the
# responder's detach: its device on the port is released (none left on the dead port), the
# responder stays bound and waiting; loading the port module again announces a new port of the
# same number, and match_port attaches the responder to it. Nothing is answered here: the port
# has no interrupt (kmod-parport answers on QEMU's).
. /testbed/guest-lib.sh
tb_kmod_setup
fake=$TB_KMOD_DIR/irqloop_fakeport.ko
[ -f "$fake" ] || tb_fail "$fake is missing (run-testbed.sh --kmod tests/testbed/kmod-node)"
trap 'rmmod irqloop_responder 2>/dev/null; rmmod irqloop_fakeport 2>/dev/null' EXIT
pardev=/sys/bus/parport/devices/irqloop_responder.0

echo "--- a removable port, and the responder on it"
dmesg -c >/dev/null
insmod "$fake" || tb_fail "cannot load irqloop_fakeport"
port=$(dmesg | sed -n 's/.*irqloop_fakeport: \(parport[0-9]*\) registered.*/\1/p' | tail -n1)
[ -n "$port" ] || tb_fail "irqloop_fakeport registered no port"
n=${port#parport}
echo "irqloop_fakeport: $port"
insmod "$ko" parport="$n" || tb_fail "cannot load on $port"
[ "$(basename "$(readlink $pardev/driver)")" = irqloop_responder ] || tb_fail "not bound on $port"
echo "mode: $(cat $sys/mode)"
tb_pass "responder bound on $port"

echo "--- the port removed under it: detached, no device left on the dead port"
dmesg -c >/dev/null
rmmod irqloop_fakeport || tb_fail "cannot unload irqloop_fakeport"
dmesg | grep -E 'irqloop|parport'
dmesg | grep -qF "irqloop_responder: $port went away: device released" || tb_fail "no detach line"
ls /sys/bus/parport/devices/ | tr '\n' ' '
echo
[ ! -e $pardev ] || tb_fail "irqloop_responder.0 left on the removed $port"
[ -e $sys/driver ] || tb_fail "the responder's platform device is no longer bound"
tb_pass "detached from the removed $port, still bound and waiting"

echo "--- the port back: attached again"
dmesg -c >/dev/null
insmod "$fake" || tb_fail "cannot load irqloop_fakeport again"
dmesg | grep -E 'irqloop|parport'
dmesg | grep -qF "irqloop_responder: $port is back: answering nACK again" || tb_fail "not attached again"
[ "$(basename "$(readlink $pardev/driver)")" = irqloop_responder ] || tb_fail "not bound again on $port"
rmmod irqloop_responder || tb_fail "rmmod failed"
[ ! -e $pardev ] || tb_fail "irqloop_responder.0 left after the unload"
rmmod irqloop_fakeport || tb_fail "cannot unload irqloop_fakeport"
tb_pass "attached again when $port came back; clean unload"
