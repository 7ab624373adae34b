#!/usr/bin/env bash
# irqloop-responder-dkms in a clean Debian 12 root with a Debian kernel's headers
# (linux-headers-amd64: the kernel the QEMU testbed boots): apt installs the package, DKMS
# builds and installs irqloop_responder.ko for that kernel (not for the host's), the module's
# vermagic names that kernel; purge removes the module and leaves no file behind. Then the
# by-hand route of kernel-responder.md: the tree's folder copied to /usr/src, dkms install.
# The built .ko is copied to build/dkms/ for the testbed scenario kmod-dkms-package.
set -uo pipefail
. "$(dirname "$0")/clean-root-lib.sh"
need_root_tools
find_debs
enter_root dkms-test

say "== apt-get install linux-headers-amd64 (a Debian kernel's headers)"
in_root apt-get install -y -q --no-install-recommends linux-headers-amd64 >"$cache/dkms-test-apt.log" 2>&1 ||
  { tail -20 "$cache/dkms-test-apt.log"; fail "cannot install linux-headers-amd64 in the clean root"; }
abi=$(in_root dpkg-query -W -f='${Package}\n' 'linux-headers-*-amd64' | sed -n 's/^linux-headers-\(.*\)$/\1/p' | head -1)
[[ -n $abi ]] || fail "no linux-headers-*-amd64 installed"
say "kernel headers: $abi (host kernel: $(uname -r))"

mkdir -p "$root/tmp/debs"
cp "$debs_dkms" "$root/tmp/debs/"
before=$(snapshot)
say "== apt-get install ./${debs_dkms##*/}"
in_root apt-get install -y -q --no-install-recommends /tmp/debs/"${debs_dkms##*/}" >>"$cache/dkms-test-apt.log" 2>&1
rc=$?
sed -n '/Setting up irqloop-responder-dkms/,$p' "$cache/dkms-test-apt.log" | head -30
[[ $rc -eq 0 ]] || fail "apt-get install of the dkms package failed (log: build/clean-root/dkms-test-apt.log)"

say "== dkms status"
in_root dkms status | tee "$cache/dkms-test-status.txt"
grep -q "irqloop-responder/.*, $abi, .*: installed" "$cache/dkms-test-status.txt" ||
  fail "DKMS did not build and install irqloop-responder for $abi"
ko=$(cd "$root" && ls lib/modules/"$abi"/updates/dkms/irqloop_responder.ko* 2>/dev/null | head -1)
[[ -n $ko ]] || fail "no irqloop_responder.ko under /lib/modules/$abi/updates/dkms"
vermagic=$(in_root modinfo -F vermagic "/$ko")
say "/$ko: vermagic $vermagic"
[[ $vermagic == "$abi "* ]] || fail "the module's vermagic '$vermagic' is not for $abi"
in_root modinfo -F license "/$ko" | grep -qx 'GPL' || fail "modinfo cannot read the module's license"
mkdir -p "$src/build/dkms"
rm -f "$src"/build/dkms/*.ko*
cp "$root/$ko" "$src/build/dkms/"
echo "$abi" >"$src/build/dkms/kernel-abi"
say "copied to build/dkms/${ko##*/} (for the testbed scenario kmod-dkms-package)"

say "== purge"
rm -rf "$root/tmp/debs"
in_root apt-get purge -y -q irqloop-responder-dkms >"$cache/dkms-test-purge.log" 2>&1 ||
  { tail -20 "$cache/dkms-test-purge.log"; fail "apt-get purge irqloop-responder-dkms"; }
[[ -z $(ls "$root"/lib/modules/"$abi"/updates/dkms/irqloop_responder.ko* 2>/dev/null) ]] ||
  fail "purge left the module in /lib/modules/$abi"
in_root apt-get autoremove --purge -y -q -o APT::AutoRemove::RecommendsImportant=false -o APT::AutoRemove::SuggestsImportant=false >>"$cache/dkms-test-purge.log" 2>&1 ||
  { tail -20 "$cache/dkms-test-purge.log"; fail "apt-get autoremove --purge"; }
after=$(snapshot)
left=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')
# Not ours, and not removed by their own packages on purpose: depmod's index files of the
# kernel (present anyway once its linux-image is installed) and DKMS's module-signing key
# (kept so that a key enrolled in the firmware's MOK list stays valid).
[[ -d $root/var/lib/dkms/irqloop-responder ]] && fail "purge left /var/lib/dkms/irqloop-responder"
left=$(grep -vE '^> \./(usr/)?lib/modules/[^/]+/modules\.[a-z.]+$|^> \./var/lib/dkms(/mok\.(key|pub))?$' <<<"$left")
[[ -z $left ]] || fail "purge left these changes:
$left"
say "purge removed the module and left nothing (apt/dpkg bookkeeping aside)"

# The by-hand route of kernel-responder.md ("DKMS"): the tree's folder copied as it is. Its
# dkms.conf once held an unexpanded @PROJECT_VERSION@, which DKMS refused.
ver=$(sed -n 's/^project(irqloop VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[[ -n $ver ]] || fail "no version in CMakeLists.txt's project()"
say "== by hand: cp -r target-responder/kmod /usr/src/irqloop-responder-$ver; dkms add; dkms install"
mkdir -p "$root/usr/src"
cp -r "$src/target-responder/kmod" "$root/usr/src/irqloop-responder-$ver"
find "$root/usr/src/irqloop-responder-$ver" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
  -o -name Module.symvers -o -name modules.order \) -delete
in_root apt-get install -y -q --no-install-recommends dkms >>"$cache/dkms-test-apt.log" 2>&1 ||
  fail "cannot install dkms for the by-hand route"
# dkms add with the folder's path reads the name and version from its dkms.conf (DKMS 3.0.10
# takes them from the command line in "dkms install NAME/VERSION" alone, so that route did not
# show the unexpanded version); then the documented install.
in_root dkms add "/usr/src/irqloop-responder-$ver" >"$cache/dkms-test-hand.log" 2>&1 &&
  in_root dkms install "irqloop-responder/$ver" -k "$abi" >>"$cache/dkms-test-hand.log" 2>&1
rc=$?
tail -5 "$cache/dkms-test-hand.log"
[[ $rc -eq 0 ]] || fail "dkms install irqloop-responder/$ver from the copied folder failed (log: build/clean-root/dkms-test-hand.log)"
in_root dkms status | tee "$cache/dkms-test-status-hand.txt"
grep -q "irqloop-responder/$ver, $abi, .*: installed" "$cache/dkms-test-status-hand.txt" ||
  fail "the by-hand route did not install irqloop-responder/$ver for $abi"
# An unexpanded version in dkms.conf registered a second module, irqloop-responder/@PROJECT_VERSION@
# ("added", its source a folder that does not exist), which every later kernel's autoinstall
# would then try to build.
other=$(grep '^irqloop-responder/' "$cache/dkms-test-status-hand.txt" | grep -v "^irqloop-responder/$ver, ")
[[ -z $other ]] || fail "DKMS holds another irqloop-responder besides $ver: $other"
[[ -n $(ls "$root"/lib/modules/"$abi"/updates/dkms/irqloop_responder.ko* 2>/dev/null) ]] ||
  fail "the by-hand route left no module in /lib/modules/$abi/updates/dkms"
in_root dkms remove "irqloop-responder/$ver" --all >>"$cache/dkms-test-hand.log" 2>&1 ||
  fail "dkms remove irqloop-responder/$ver --all"
rm -rf "$root/usr/src/irqloop-responder-$ver"
say "by hand: irqloop-responder/$ver installed for $abi from the copied folder, then removed"
echo "2 passed, 0 failed"
