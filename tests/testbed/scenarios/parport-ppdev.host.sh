#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# QEMU wrote every byte the guest strobed on its second parallel port to this chardev file.
. "$(dirname "$0")/../host-lib.sh"
lpt=$(dirname "$TB_RESULT")/parport-lpt1.out
[[ -f $lpt ]] || host_fail "no $lpt: QEMU ran without the second parallel port"
echo "chardev file: $(od -c "$lpt" | head -n 3)"
grep -q '^irqloop-ppdev$' "$lpt" || host_fail "the strobed text is not in $lpt"
host_note "the bytes strobed through ppdev reached QEMU's chardev file ($(wc -c <"$lpt") bytes)"
