#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Unpack Debian's lava-dispatcher and lava-common (the versions apt offers) into DIR, for the
# LAVA signal check of tests/logger/test-export-ci.cpp. Not installed: lava-dispatcher depends
# on systemd, udev, NFS, dnsmasq and an MTA, which a build machine should not get for a test.
# Cached: a DIR that already holds them is left as it is. Exit 4 (SKIPPED) when apt cannot
# download them (no network and no cached .deb).
set -euo pipefail
dir=${1:?usage: fetch-lava.sh DIR}
mark=$dir/usr/lib/python3/dist-packages/lava_dispatcher/actions/test/shell.py
[[ -f $mark && -d $dir/usr/lib/python3/dist-packages/lava_common ]] && exit 0
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
  { echo "SKIPPED: apt-get and dpkg-deb are needed to fetch lava-dispatcher"; exit 4; }
mkdir -p "$dir/dl"
cd "$dir/dl"
rm -f ./*.deb
if ! apt-get download -qq -o APT::Sandbox::User=root lava-dispatcher lava-common >log 2>&1; then
  echo "SKIPPED: cannot download lava-dispatcher and lava-common: $(tail -n 1 log)"
  exit 4
fi
for d in ./lava-dispatcher_*.deb ./lava-common_*.deb; do
  dpkg-deb -x "$d" "$dir"
done
[[ -f $mark ]] || { echo "lava-dispatcher unpacked without $mark: its layout changed"; exit 1; }
