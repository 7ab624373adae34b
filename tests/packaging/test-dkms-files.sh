#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# irqloop-responder-dkms ships the kernel responder's device-tree overlays and the responder
# node's binding (docs/backends/kernel-responder.md, "Device tree"): every
# target-responder/kmod/dts/*.dtso and dts/bindings/*.yaml of the tree is in the package that
# .ci/package wrote, under /usr/share/irqloop-responder-dkms/dts/, byte for byte, mode 0644, and
# nothing else is there.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }
deb=$(ls "$src"/build/packages/irqloop-responder-dkms_*_all.deb 2>/dev/null | tail -n1 || true)
[[ -n $deb ]] || fail "no irqloop-responder-dkms package in build/packages (run: bash .ci/package)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=usr/share/irqloop-responder-dkms/dts
dpkg-deb -x "$deb" "$tmp"
dpkg-deb -c "$deb" | awk '$6 ~ /^\.\/usr\/share\/irqloop-responder-dkms\/.*[^\/]$/ { print $1, $6 }' |
    sort >"$tmp/listing"
want=()
for f in "$src"/target-responder/kmod/dts/*.dtso "$src"/target-responder/kmod/dts/bindings/*.yaml; do
    rel=${f#"$src"/target-responder/kmod/dts/}
    want+=("./$dest/$rel")
    [[ -f $tmp/$dest/$rel ]] || fail "${deb##*/} lacks /$dest/$rel"
    cmp -s "$f" "$tmp/$dest/$rel" || fail "/$dest/$rel in ${deb##*/} differs from the tree's"
done
[[ ${#want[@]} -ge 4 ]] || fail "expected at least 3 overlays and a binding in the tree"
diff <(printf -- '-rw-r--r-- %s\n' "${want[@]}" | sort) "$tmp/listing" >"$tmp/diff" ||
    { cat "$tmp/diff"; fail "/usr/share/irqloop-responder-dkms holds other files or other modes than the tree's overlays and binding"; }
printf '%s\n' "${want[@]#.}"
echo "PASS: ${deb##*/} ships ${#want[@]} device-tree files, the tree's own"
