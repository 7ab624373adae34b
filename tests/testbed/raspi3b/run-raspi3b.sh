#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The raspi3b testbed: Debian's arm64 kernel on QEMU's Raspberry Pi 3B model (-M raspi3b, the
# BCM2837 and its BCM2835-style GPIO block), with the device tree of the same kernel package
# (bcm2837-rpi-3-b.dtb), a busybox-static:arm64 initramfs, and irqloop cross-compiled for
# aarch64 (static). It is where the gpiomem backend meets a real pinctrl-bcm2835 driver.
#
#   run-raspi3b.sh --build BUILD_DIR [--scenarios GLOB[,GLOB...]] [--fixture]
#   run-raspi3b.sh --build BUILD_DIR --prepare
#   run-raspi3b.sh --build BUILD_DIR --verdict NAME
#   run-raspi3b.sh --list
#
# Debian's kernel has no /dev/gpiomem (a Raspberry Pi OS driver). The guest boots with
# iomem=relaxed, so that /dev/mem may map the GPIO block that pinctrl-bcm2835 owns: a
# testbed-only access path (gpiomem:dev=/dev/mem). QEMU's raspi3b machine does not stop on
# power-off: the guest prints a marker after its last scenario and this runner stops QEMU.
#
# There is no virtio here (no 9p share): each scenario's output comes back on the serial
# console, every line prefixed with "TBL NAME: ", and its exit status as "TBS NAME RC".
# Exit status: 0 when every selected scenario passed (or skipped), 1 when one failed or the
# guest did not come up, 2 on bad usage or a missing prerequisite. See docs/testbed.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../runner-lib.sh
. "$here/../runner-lib.sh"

usage()
{
    runner_usage run-raspi3b.sh <<EOF
  --build DIR             the host's CMake build tree (results and caches go below it)
  --results DIR           where scenario results go (default: BUILD/raspi3b-results)
  --cache DIR             downloaded packages, kernel, arm64 build (default: BUILD/raspi3b-cache)
  --scenarios GLOB[,...]  scenario names to run (default: all)
  --timeout SECONDS       watchdog on the whole boot (default 900)
  --lock FILE             hold flock FILE during the boot only (e.g. a machine-wide lock
                          shared with other real-time runs), not while building
  --prepare               fetch the packages and cross-build irqloop into the cache, then
                          exit: the boot after it only checks that the build is current
  --fixture               exit 0 once the guest ran every scenario, whatever their verdicts
  --verdict NAME          print and return the result of scenario NAME from the last boot
  --list                  list the scenarios
EOF
}

die() { echo "irqloop: raspi3b testbed: $*" >&2; exit 2; }

build_dir= results= cache= globs='*' verdict= list=0 fixture=0 boot_timeout=900 lock= prepare=0
# runner_own_option OPTION [VALUE]...: --lock and --prepare (runner_options takes the others).
runner_own_option()
{
    case $1 in
    --lock) lock=$2 ;;
    --prepare) prepare=1; runner_values=0 ;;
    *) runner_unknown_option "$1" ;;
    esac
}
runner_options "$@"

all_scenarios()
{
    local f
    for f in "$here"/scenarios/*.sh; do
        basename "$f" .sh
    done | sort
}

runner_start raspi3b
runner_select_scenarios
runner_need_tools "sudo bash .ci/setup test" \
    qemu-system-aarch64 aarch64-linux-gnu-g++ cpio dpkg-deb apt-get cmake gzip
# grep -x, not -qx: dpkg writes a line at a time, and with pipefail grep -q's early exit would
# fail the check on a machine with arm64 and then armhf (stop 45's CI)
dpkg --print-foreign-architectures | grep -x arm64 >/dev/null ||
    die "dpkg has no arm64 architecture (run: sudo bash .ci/setup test)"

t_start=$(date +%s)
phase()
{
    echo "raspi3b: [$(($(date +%s) - t_start)) s] $*"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/irqloop-raspi3b.XXXXXX")
qemu_pid=
cleanup()
{
    [[ -n $qemu_pid ]] && kill "$qemu_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$cache"
export DEBIAN_FRONTEND=noninteractive

# ---------------------------------------------------------------------------------------------
phase "resolve and fetch the arm64 packages"
# fetch PKG=VERSION...: .deb files into the cache (one download per version).
fetch()
{
    local p
    for p in "$@"; do
        local name=${p%%=*} ver=${p#*=}
        compgen -G "$cache/deb/${name%%:*}_${ver//:/%3a}_*.deb" >/dev/null && continue
        mkdir -p "$cache/deb"
        runner_download "$cache/deb" "$p"
    done
}
candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)'; }
kpkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*\).*/\1/p' | head -n1)
[[ -n $kpkg ]] || die "apt knows no linux-image-arm64:arm64 (run: apt-get update)"
kver=$(candidate "$kpkg:arm64") || die "no candidate for $kpkg:arm64"
bbver=$(candidate busybox-static:arm64) || die "no candidate for busybox-static:arm64"
fetch "$kpkg:arm64=$kver" "busybox-static:arm64=$bbver"
kabi=${kpkg#linux-image-}
echo "raspi3b: kernel $kabi (Debian $kver), busybox $bbver"

kdir=$cache/kernel-$kabi-$kver
if [[ ! -f $kdir/ready ]]; then
    rm -rf "$kdir"
    mkdir -p "$kdir"
    dpkg-deb --fsys-tarfile "$cache"/deb/"${kpkg}"_"${kver//:/%3a}"_arm64.deb |
        tar -x -C "$kdir" "./boot/vmlinuz-$kabi" \
            "./usr/lib/linux-image-$kabi/broadcom/bcm2837-rpi-3-b.dtb"
    touch "$kdir/ready"
fi
image=$kdir/boot/vmlinuz-$kabi
dtb=$kdir/usr/lib/linux-image-$kabi/broadcom/bcm2837-rpi-3-b.dtb
[[ -f $image && -f $dtb ]] || die "the kernel package lacks vmlinuz or bcm2837-rpi-3-b.dtb"

# ---------------------------------------------------------------------------------------------
phase "cross-build irqloop for aarch64 (static)"
abuild=$cache/build-arm64
if [[ ! -f $abuild/CMakeCache.txt ]]; then
    launcher=()
    command -v ccache >/dev/null &&
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    cmake -S "$src_root" -B "$abuild" -DCMAKE_TOOLCHAIN_FILE="$here/aarch64-static.cmake" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g0 -DNDEBUG" \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g0 -DNDEBUG" \
        -DIRQLOOP_BUILD_TESTS=OFF -DIRQLOOP_BUILD_BENCH=ON \
        "${launcher[@]}" >"$cache/cmake-arm64.log" 2>&1 || {
        tail -n 30 "$cache/cmake-arm64.log" >&2
        rm -rf "$abuild"
        die "configuring the aarch64 build failed (the :arm64 packages: sudo bash .ci/setup test)"
    }
fi
cmake --build "$abuild" -j2 --target irqloop irqloop-bench-gpiomem >"$cache/build-arm64.log" 2>&1 || {
    grep -E 'error|Error' "$cache/build-arm64.log" | head -n 30 >&2
    echo "irqloop: raspi3b testbed: the aarch64 build failed (log: $cache/build-arm64.log)" >&2
    exit 1
}

if [[ $prepare == 1 ]]; then
    phase "prepared: the packages and the aarch64 build are in $cache"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
phase "build the initramfs"
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,usr/bin,testbed/scenarios}
dpkg-deb --fsys-tarfile "$cache"/deb/busybox-static_"${bbver//:/%3a}"_arm64.deb |
    tar -x -O ./bin/busybox >"$root/bin/busybox"
chmod 0755 "$root/bin/busybox"
for p in logger/irqloop tests/irqloop-bench-gpiomem; do
    aarch64-linux-gnu-strip -o "$root/usr/bin/$(basename "$p")" "$abuild/$p"
done
cp "$here/guest-init.sh" "$root/init"
cp "$here/../guest-mounts.sh" "$here/../guest-lib.sh" "$root/testbed/"
for n in "${scenarios[@]}"; do
    cp "$here/scenarios/$n.sh" "$root/testbed/scenarios/"
done
printf '%s\n' "${scenarios[@]}" >"$root/testbed/scenarios.list"
runner_pack_initramfs raspi3b "$root" "$work/initrd.gz"

# ---------------------------------------------------------------------------------------------
phase "boot and run: ${scenarios[*]}"
rm -rf "$results"
mkdir -p "$results"
serial=$results/serial.log
if [[ -n $lock ]]; then
    exec {lock_fd}>>"$lock" || die "cannot open the lock file '$lock'"
    echo "raspi3b: waiting for $lock"
    flock "$lock_fd"
    phase "got $lock"
fi
qemu-system-aarch64 -M raspi3b -m 1G -nographic -no-reboot -serial stdio -monitor none \
    -kernel "$image" -dtb "$dtb" -initrd "$work/initrd.gz" \
    -append "console=ttyAMA0 loglevel=3 iomem=relaxed panic=-1" </dev/null >"$serial" 2>&1 &
qemu_pid=$!
# The guest prints "TB: END" after its last scenario; the machine cannot power itself off.
finished=0
deadline=$(($(date +%s) + boot_timeout))
while kill -0 "$qemu_pid" 2>/dev/null; do
    if grep -aq '^TB: END' "$serial"; then
        finished=1
        break
    fi
    [[ $(date +%s) -lt $deadline ]] || break
    sleep 1
done
kill "$qemu_pid" 2>/dev/null || true
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=
grep -a '^TB:' "$serial" || true

# ---------------------------------------------------------------------------------------------
phase "check results"
if [[ $finished == 0 ]]; then
    echo "raspi3b: FAIL: the guest did not reach its end marker within ${boot_timeout}s"
    runner_serial_tail
fi
failed=0
for n in "${scenarios[@]}"; do
    d=$results/$n
    mkdir -p "$d"
    # Scenario lines carry their prefix; kernel messages in between do not.
    sed -n "s/^TBL $n: //p" "$serial" | tr -d '\r' >"$d/log"
    rc=$(sed -n "s/^TBS $n \([0-9]*\).*/\1/p" "$serial" | tr -d '\r' | tail -n1)
    case $rc in
    0) v=pass ;;
    4) v=skip ;;
    '') v=fail; echo "did not run (the guest did not come up or ended early)" >>"$d/log" ;;
    *) v=fail ;;
    esac
    runner_verdict raspi3b "$n" "$v"
    sed -n 's/^NOTE: /raspi3b:     /p' "$d/log"
done
phase "done"
[[ $finished == 1 && ($failed == 0 || $fixture == 1) ]] && exit 0
exit 1
