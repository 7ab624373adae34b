#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# dts-check.sh DTS_DIR OUT_DIR: every device-tree overlay of the kernel responder (*.dtso)
# compiles with dtc (-@: symbols and fixups, as bootloaders and dtoverlay need), and the
# compiled overlay holds a node compatible with "irqloop,responder" with in-gpios and out-gpios
# left as fixups against the board's GPIO controller label. Exit 0 or 1.
set -euo pipefail
src=$1 out=$2
command -v dtc >/dev/null || { echo "FAIL: dtc is missing (apt-get install device-tree-compiler; .ci/setup)"; exit 1; }
mkdir -p "$out"
n=0
for f in "$src"/*.dtso; do
    b=$(basename "$f" .dtso)
    echo "\$ dtc -@ -I dts -O dtb -o $b.dtbo $b.dtso"
    dtc -@ -I dts -O dtb -o "$out/$b.dtbo" "$f" 2>"$out/$b.err" || { cat "$out/$b.err"; echo "FAIL: $b"; exit 1; }
    if [[ -s $out/$b.err ]]; then cat "$out/$b.err"; echo "FAIL: dtc warned about $b"; exit 1; fi
    dtc -I dtb -O dts -o "$out/$b.back.dts" "$out/$b.dtbo" 2>/dev/null
    for want in 'compatible = "irqloop,responder"' 'in-gpios' 'out-gpios' 'pinctrl-0' '__fixups__'; do
        grep -qF "$want" "$out/$b.back.dts" || { echo "FAIL: $b.dtbo lacks $want"; exit 1; }
    done
    echo "$b.dtbo: $(stat -c %s "$out/$b.dtbo") bytes; fixups: $(sed -n '/__fixups__/,/};/p' "$out/$b.back.dts" | grep -o '^[[:space:]]*[a-z0-9_]* =' | tr -d ' =\t' | tr '\n' ' ')"
    n=$((n + 1))
done
[[ $n -gt 0 ]] || { echo "FAIL: no .dtso in $src"; exit 1; }
echo "PASS: $n overlays compile"
