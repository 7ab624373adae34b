#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The kernel responder as the irqloop-responder-dkms package built it (DKMS, in a clean Debian
# root with this kernel's headers: tests/packaging/test-dkms.sh), not the tree's build: it is
# put in the guest by run-testbed.sh --ko. It loads, answers 10000 stimuli from its interrupt
# handler, and unloads. The host compares the module's sha256 with the package-built file.
. /testbed/guest-lib.sh
tb_need irqloop sqlite3 sha256sum
tb_kmod_setup "/lib/modules/$TB_KVER/prebuilt/irqloop_responder.ko" \
	"run-testbed.sh --ko build/dkms/irqloop_responder.ko"
tb_note "package-built module: sha256 $(sha256sum "$ko" | cut -d' ' -f1)"
echo "$(tr "\000" "\n" <"$ko" | grep -E '^(vermagic|version|srcversion)=' | tr '\n' ' ')"
n=10000
db=$TB_TMP/dkms.db
insmod "$ko" in=irqloop-wire:1 out=irqloop-wire:2 || tb_fail "cannot load the package-built module"
grep '^irqloop_responder ' /proc/modules
irqloop run --hw "gpiod:chip=$TB_CHIP,out=0,in=3" --force-tsc --cpu 0 --timeout 1s --db "$db" \
	--progress none --samples $n --label dkms-package ||
	tb_fail "irqloop run against the package-built module failed"
handled=$(cat $sys/handled)
rmmod irqloop_responder || tb_fail "rmmod failed"
row=$(tb_sql "$db" "SELECT status, stimuli, lost FROM runs WHERE label = 'dkms-package'")
echo "run dkms-package: status|stimuli|lost = $row; module handled $handled"
[ "$row" = "complete|$n|0" ] || tb_fail "the run is not complete with $n stimuli and 0 lost"
[ "$handled" = $n ] || tb_fail "the module handled $handled interrupts for $n stimuli"
tb_pass "package-built irqloop_responder.ko: loaded, $n samples answered, unloaded"
