#!/usr/bin/env bash
# lintian on every .deb that .ci/package wrote for this machine (and the arch-independent one):
# no error and no warning (pedantic tags shown too). A tag that cannot be fixed is overridden
# in the package with its reason (none are, today).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
arch=$(dpkg --print-architecture)
command -v lintian >/dev/null || { echo "FAIL: lintian is missing (run: sudo bash .ci/setup test)"; exit 1; }
mapfile -t debs < <(ls "$src"/build/packages/*_"$arch".deb "$src"/build/packages/*_all.deb 2>/dev/null)
[[ ${#debs[@]} -ge 3 ]] || { echo "FAIL: expected 3 packages in build/packages (run: bash .ci/package)"; exit 1; }
fails=0
for deb in "${debs[@]}"; do
  out=$(lintian --pedantic --fail-on error,warning "$deb" 2>&1)
  rc=$?
  out=$(grep -v 'running with root privileges' <<<"$out")
  if [[ $rc -eq 0 ]] && ! grep -qE '^[EW]: ' <<<"$out"; then
    echo "${deb##*/}: no error, no warning${out:+ ($(grep -c '^[IPX]: ' <<<"$out") other tags)}"
  else
    echo "${deb##*/}: lintian exit $rc"
    echo "$out"
    fails=$((fails + 1))
  fi
done
echo "$(( ${#debs[@]} - fails )) passed, $fails failed"
[[ $fails -eq 0 ]]
