#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The real-kernel GPIO testbed: Debian's own kernel under QEMU, our irqloop-wire chip module,
# and irqloop's programs talking to it through the GPIO character device.
#
#   run-testbed.sh --build BUILD_DIR [--scenarios GLOB[,GLOB...]] [--kmod DIR]...
#   run-testbed.sh --build BUILD_DIR --verdict NAME     (result of one scenario of the last boot)
#   run-testbed.sh --list
#
# One boot runs every selected scenario (tests/testbed/scenarios/NAME.sh, in name order) inside
# the guest; files they leave in $TB_OUT come out through virtio-9p into RESULTS/NAME/. A
# scenario may have a host-side check, NAME.host.sh, run after the guest has powered off.
# Exit status: 0 when every selected scenario passed, 1 when one failed or the guest did not
# boot, 2 on bad usage or a missing prerequisite. See docs/testbed.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/runner-lib.sh
. "$here/runner-lib.sh"

usage()
{
    runner_usage run-testbed.sh <<EOF
  --build DIR             CMake build tree holding irqloop, irqloop-responder, irqloop-tests
  --results DIR           where scenario results go (default: BUILD/testbed-results)
  --cache DIR             downloaded kernel and module builds (default: BUILD/testbed-cache)
  --scenarios GLOB[,...]  scenario names to run (default: all), e.g. 'gpio-*,kmod-*'
  --scenario-dir DIR      also take scenarios from DIR (NAME.sh, NAME.host.sh), e.g. your own
  --kmod DIR              also build the Kbuild module in DIR and put its .ko in the guest
                          under \$TB_KMOD_DIR (repeatable)
  --ko FILE               also put this prebuilt module (e.g. the .ko DKMS built from the
                          irqloop-responder-dkms package) in the guest under
                          /lib/modules/ABI/prebuilt/; its vermagic must name the guest kernel
  --guest-modules A,B     also put these modules of the Debian kernel (and what they need) in
                          the guest, not loaded (modprobe them); the modules --kmod modules
                          depend on are added by themselves
  --qemu-arg ARG          one more QEMU argument (repeatable)
  --kernel-suite SUITE    auto (default), bookworm or bookworm-backports
  --flavour F             Debian kernel flavour: amd64 (default) or rt-amd64 (PREEMPT_RT)
  --accel tcg|kvm         default tcg; kvm is opt-in and still runs under the watchdog
  --smp N                 guest CPUs (default 2)
  --mem MiB               guest memory (default 1024)
  --timeout SECONDS       watchdog on the whole boot (default 2400)
  --scenario-timeout SECONDS  per scenario, inside the guest (default 900)
  --keep                  keep the temporary work folder
  --fixture               exit 0 once the guest booted and ran every scenario, whatever their
                          verdicts (CTest's boot fixture; each scenario reports via --verdict)
  --verdict NAME          print and return the result of scenario NAME from the last boot
  --list                  list the scenarios
Environment: TB_ACCEL, TB_SMP, TB_TCG_THREAD (multi|single, default multi).
EOF
}

die() { echo "irqloop: testbed: $*" >&2; exit 2; }

build_dir= results= cache= globs='*' kmods=() prebuilt=() scenario_dirs=("$here/scenarios")
guest_modules= qemu_extra=() suite=auto flavour=amd64 verdict= keep=0 list=0 fixture=0
accel=${TB_ACCEL:-tcg} smp=${TB_SMP:-2} mem=1024 boot_timeout=2400 scenario_timeout=900
# runner_own_option OPTION [VALUE]...: the options of this runner alone (runner_options
# takes the shared ones).
runner_own_option()
{
    case $1 in
    --scenario-dir) scenario_dirs+=("$(cd "$2" && pwd)") || die "--scenario-dir: no folder '$2'" ;;
    --kmod) kmods+=("$(cd "$2" && pwd)") || die "--kmod: no folder '$2'" ;;
    --ko) [[ -f $2 ]] || die "--ko: no file '$2'"; prebuilt+=("$(realpath "$2")") ;;
    --kernel-suite) suite=$2 ;;
    --flavour) flavour=$2 ;;
    --guest-modules) guest_modules+=${guest_modules:+,}$2 ;;
    --qemu-arg) qemu_extra+=("$2") ;;
    --accel) accel=$2 ;;
    --smp) smp=$2 ;;
    --mem) mem=$2 ;;
    --scenario-timeout) scenario_timeout=$2 ;;
    --keep) keep=1; runner_values=0 ;;
    *) runner_unknown_option "$1" ;;
    esac
}
runner_options "$@"

# scenario_file NAME [SUFFIX]: the first NAME.sh (or NAME.SUFFIX.sh) in the scenario folders.
scenario_file()
{
    local d
    for d in "${scenario_dirs[@]}"; do
        [[ -f $d/$1${2:+.$2}.sh ]] && { echo "$d/$1${2:+.$2}.sh"; return 0; }
    done
    return 1
}

# Scenario NAME is scenarios/NAME.sh; NAME.host.sh files are host-side checks, not scenarios.
all_scenarios()
{
    local d f n
    for d in "${scenario_dirs[@]}"; do
        for f in "$d"/*.sh; do
            [[ -f $f ]] || continue
            n=$(basename "$f" .sh)
            [[ $n == *.host ]] || echo "$n"
        done
    done | sort -u
}

runner_start testbed host
runner_select_scenarios
case $accel in tcg | kvm) ;; *) die "--accel must be tcg or kvm" ;; esac
case $flavour in amd64 | rt-amd64) ;; *) die "--flavour must be amd64 or rt-amd64" ;; esac
runner_need_tools "sudo bash .ci/setup" qemu-system-x86_64 cpio dpkg-deb depmod modprobe busybox
[[ -x /bin/busybox ]] || die "/bin/busybox is missing (apt-get install busybox-static)"

t_start=$(date +%s.%N)
t_phase=$t_start
phase_times=()
# phase NAME: closes the phase that was running, prints its wall time.
phase()
{
    local now
    now=$(date +%s.%N)
    if [[ -n ${phase_name:-} ]]; then
        local dt
        dt=$(printf '%.1f' "$(echo "$now - $t_phase" | bc)")
        phase_times+=("$phase_name ${dt}s")
        echo "testbed: [$dt s] $phase_name"
    fi
    phase_name=$1
    t_phase=$now
}

work=$(mktemp -d "${TMPDIR:-/tmp}/irqloop-testbed.XXXXXX")
qemu_pid=
cleanup()
{
    [[ -n $qemu_pid ]] && kill "$qemu_pid" 2>/dev/null
    if [[ $keep == 1 ]]; then
        echo "testbed: work folder kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
mkdir -p "$cache"
cache=$(cd "$cache" && pwd) # Kbuild's M= must be absolute

# ---------------------------------------------------------------------------------------------
phase "resolve kernel"
export DEBIAN_FRONTEND=noninteractive

# kernel_for SUITE: prints "ABI VERSION" of the linux-image-FLAVOUR candidate in that suite.
kernel_for()
{
    local want=$1 ver abi
    # madison lists every version apt knows with its archive; bookworm covers -security too.
    ver=$(apt-cache madison "linux-image-$flavour" 2>/dev/null |
        awk -F'|' -v s="$want" '
            { v = $2; gsub(/ /, "", v); a = $3 }
            s == "bookworm-backports" && a ~ /bookworm-backports\// { print v; exit }
            s == "bookworm" && a !~ /backports/ { print v; exit }')
    [[ -n $ver ]] || return 1
    abi=$(apt-cache show "linux-image-$flavour=$ver" 2>/dev/null |
        sed -n 's/^Depends:.*linux-image-\([0-9][^ ,]*\) (= .*/\1/p' | head -n1)
    [[ -n $abi ]] || return 1
    echo "$abi $ver"
}

# The first suite whose matching headers are installed or installable wins.
pick_kernel()
{
    local s abi ver
    local -a suites=(bookworm bookworm-backports)
    [[ $suite != auto ]] && suites=("$suite")
    for s in "${suites[@]}"; do
        read -r abi ver < <(kernel_for "$s") || continue
        if dpkg-query -W -f='${Version}' "linux-headers-$abi" 2>/dev/null | grep -qx "$ver" ||
            apt-get install -s -qq "linux-headers-$abi=$ver" >/dev/null 2>&1; then
            echo "$abi $ver $s"
            return 0
        fi
    done
    return 1
}

if ! read -r kabi kver ksuite < <(pick_kernel); then
    echo "testbed: no installable kernel headers in the apt lists; refreshing them"
    apt-get update -qq >/dev/null 2>&1 || true
    read -r kabi kver ksuite < <(pick_kernel) ||
        die "cannot find linux-image-$flavour with installable linux-headers (suite: $suite)"
fi
echo "testbed: kernel $kabi (Debian $kver, $ksuite)"
kdir=/usr/src/linux-headers-$kabi

# ---------------------------------------------------------------------------------------------
phase "install headers"
if [[ $(dpkg-query -W -f='${Status} ${Version}' "linux-headers-$kabi" 2>/dev/null) != \
    "install ok installed $kver" ]]; then
    [[ $(id -u) == 0 ]] || die "linux-headers-$kabi=$kver is not installed and we are not root" \
        "(run: sudo apt-get install linux-headers-$kabi=$kver)"
    apt-get install -y -qq --no-install-recommends "linux-headers-$kabi=$kver" >/dev/null ||
        die "cannot install linux-headers-$kabi=$kver"
fi
[[ -d $kdir ]] || die "$kdir is missing after installing linux-headers-$kabi"

# ---------------------------------------------------------------------------------------------
# module_files NAME...: the Debian kernel's module files for NAME... and all they depend on,
# in load order, relative to the cache folder.
module_files()
{
    modprobe -d "$kcache" -S "$kabi" --show-depends -a "$@" |
        awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | sed "s|^$kcache/||"
}

phase "fetch kernel"
kcache=$cache/kernel-$kabi-$kver
if [[ $(cat "$kcache/ready" 2>/dev/null) != "layout 2" ]]; then
    rm -rf "$kcache"
    mkdir -p "$kcache/dl"
    runner_download "$kcache/dl" "linux-image-$kabi=$kver"
    # vmlinuz and every module (about 400 MB), so that any module can go into the guest.
    dpkg-deb --fsys-tarfile "$kcache"/dl/*.deb |
        tar -x -C "$kcache" --wildcards "./boot/vmlinuz-*" "./lib/modules/*"
    rm -rf "$kcache/dl"
    depmod -b "$kcache" "$kabi"
    # What the guest loads at boot to bring files out: virtio-pci and 9p.
    module_files virtio_pci 9pnet_virtio 9p >"$kcache/load.list"
    echo "layout 2" >"$kcache/ready"
fi
vmlinuz=$kcache/boot/vmlinuz-$kabi

# ---------------------------------------------------------------------------------------------
phase "build modules"
# build_kmod DIR: builds DIR's Kbuild module into the cache, keyed by its sources and the kernel;
# prints the folder holding the .ko files.
build_kmod()
{
    local dir=$1 key out compat=$src_root/target-responder/kmod
    key=$( (
        echo "$kabi $kver"
        sha256sum "$compat/irqloop_compat.h"
        cd "$dir" && find . -type f ! -name '*.ko' ! -name '*.o' ! -name '*.mod*' \
            ! -name '.*.cmd' ! -name 'Module.symvers' ! -name 'modules.order' -print0 |
            sort -z | xargs -0 sha256sum
    ) | sha256sum | cut -c1-16)
    out=$cache/kmod/$(basename "$dir")-$key
    if ! compgen -G "$out/*.ko" >/dev/null; then
        rm -rf "$out"
        mkdir -p "$out"
        cp -r "$dir"/. "$out"/
        make -s -C "$kdir" M="$out" IRQLOOP_COMPAT_DIR="$compat" modules >"$out/build.log" 2>&1 || {
            cat "$out/build.log" >&2
            rm -rf "$out"
            echo "irqloop: testbed: building the module in $dir failed" >&2
            return 1
        }
    fi
    local ko vm
    for ko in "$out"/*.ko; do
        vm=$(modinfo -F vermagic "$ko")
        [[ $vm == "$kabi "* ]] || {
            echo "irqloop: testbed: $ko has vermagic '$vm', expected '$kabi ...'" >&2
            return 1
        }
    done
    echo "$out"
}
wire_out=$(build_kmod "$src_root/hw/testbed") || exit 1
extra_outs=()
for d in ${kmods[@]+"${kmods[@]}"}; do
    extra_outs+=("$(build_kmod "$d")") || exit 1
done

# ---------------------------------------------------------------------------------------------
phase "build initramfs"
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,out,etc,testbed/scenarios,usr/bin}
cp /bin/busybox "$root/bin/busybox"

# add_prog FILE [DEST]: a program plus the shared libraries and loader it needs, stripped.
add_prog()
{
    local f=$1 dest=${2:-$1} lib
    mkdir -p "$root$(dirname "$dest")"
    strip --strip-debug -o "$root$dest" "$f" 2>/dev/null || cp "$f" "$root$dest"
    for lib in $(ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
        [[ -e $root$lib ]] && continue
        mkdir -p "$root$(dirname "$lib")"
        strip --strip-debug -o "$root$lib" "$lib" 2>/dev/null || cp -L "$lib" "$root$lib"
    done
}
for p in irqloop irqloop-responder irqloop-tests; do
    f=$(runner_find_program "$p")
    if [[ -n $f ]]; then
        add_prog "$f" "/usr/bin/$p"
    else
        echo "testbed: note: $p is not built in $build_dir; scenarios needing it will fail"
    fi
done
for p in gpiodetect gpioinfo gpioget gpioset gpiomon sqlite3 trace-cmd; do
    f=$(command -v "$p" || true)
    [[ -n $f ]] && add_prog "$f" "/usr/bin/$p"
done

mkdir -p "$root/lib/modules/$kabi/extra"
cp "$kcache/load.list" "$root/testbed/load.list"
for d in "$wire_out" ${extra_outs[@]+"${extra_outs[@]}"}; do
    cp "$d"/*.ko "$root/lib/modules/$kabi/extra/"
done
for ko in ${prebuilt[@]+"${prebuilt[@]}"}; do
    [[ $(modinfo -F vermagic "$ko") == "$kabi "* ]] ||
        die "--ko $ko has vermagic '$(modinfo -F vermagic "$ko")', the guest runs $kabi"
    mkdir -p "$root/lib/modules/$kabi/prebuilt"
    cp "$ko" "$root/lib/modules/$kabi/prebuilt/"
done
# Debian modules wanted in the guest: the boot set, --guest-modules, and what our modules need.
own=$(for ko in "$root/lib/modules/$kabi/extra"/*.ko; do basename "$ko" .ko | tr - _; done)
wanted=$(
    tr , '\n' <<<"$guest_modules"
    for ko in "$root/lib/modules/$kabi/extra"/*.ko; do modinfo -F depends "$ko" | tr , '\n'; done
)
wanted=$(grep -vxF -f <(echo "$own") <<<"$wanted" | sort -u | grep . || true)
{
    cat "$kcache/load.list"
    [[ -z $wanted ]] || module_files $wanted
} | sort -u | while read -r ko; do
    mkdir -p "$root/$(dirname "$ko")"
    cp "$kcache/$ko" "$root/$ko"
done
cp "$kcache/lib/modules/$kabi"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kabi/"
depmod -b "$root" "$kabi"

cp "$here/guest-init.sh" "$root/init"
cp "$here/guest-mounts.sh" "$here/guest-lib.sh" "$here/guest-loop.sh" "$root/testbed/"
for n in "${scenarios[@]}"; do
    cp "$(scenario_file "$n")" "$root/testbed/scenarios/"
done
printf '%s\n' "${scenarios[@]}" >"$root/testbed/scenarios.list"
cat >"$root/testbed/env" <<EOF
TB_KVER=$kabi
TB_RT=$([[ $flavour == rt-amd64 ]] && echo 1 || echo 0)
TB_SCENARIO_TIMEOUT=$scenario_timeout
EOF
runner_pack_initramfs testbed "$root" "$work/initrd.gz"

# ---------------------------------------------------------------------------------------------
phase "boot and run"
rm -rf "$results"
mkdir -p "$results"
case $accel in
tcg) qaccel=(-accel "tcg,thread=${TB_TCG_THREAD:-multi}" -cpu max) ;;
kvm) qaccel=(-accel kvm -cpu host) ;;
esac
echo "testbed: qemu $accel, $smp CPUs, ${mem} MiB, scenarios: ${scenarios[*]}"
set +e
timeout --kill-after=10 "$boot_timeout" qemu-system-x86_64 "${qaccel[@]}" -smp "$smp" -m "$mem" \
    -nographic -no-reboot -nodefaults -serial stdio \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04 -parallel null \
    -virtfs "local,path=$results,mount_tag=tbout,security_model=none,id=tbout" \
    -kernel "$vmlinuz" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 oops=panic" ${qemu_extra[@]+"${qemu_extra[@]}"} </dev/null >"$results/serial.log" 2>&1 &
qemu_pid=$!
wait "$qemu_pid"
qrc=$?
qemu_pid=
set -e
grep -a '^TB:' "$results/serial.log" || true
# Boot time: the guest's uptime when its init started (kernel boot under TCG, guest clock).
boot_s=$(sed -n 's/.*TB: init at uptime \([0-9.]*\)s.*/\1/p' "$results/serial.log" | head -n1)
[[ -n $boot_s ]] && echo "testbed: $kabi booted to init in ${boot_s} s (guest uptime)" |
    tee "$results/boot-time"

# ---------------------------------------------------------------------------------------------
phase "check results"
# isa-debug-exit makes QEMU exit with (code << 1) | 1: 1 or 3 mean the guest ran to the end.
booted=0
case $qrc in
1 | 3) booted=1 ;;
124 | 137) echo "testbed: FAIL: the guest did not finish within ${boot_timeout}s (watchdog)" ;;
*) echo "testbed: FAIL: QEMU ended with status $qrc before the guest finished" ;;
esac
if [[ $booted == 0 ]]; then
    runner_serial_tail
fi

failed=0
for n in "${scenarios[@]}"; do
    d=$results/$n
    mkdir -p "$d"
    if [[ ! -f $d/status ]]; then
        v=fail
        echo "did not run (guest boot failed or ended early)" >>"$d/log"
    else
        read -r s <"$d/status"
        case $s in 0) v=pass ;; 4) v=skip ;; *) v=fail ;; esac
        if [[ $v == pass ]] && host=$(scenario_file "$n" host); then
            if ! TB_RESULT=$d bash "$host" >"$d/host.log" 2>&1; then
                v=fail
            fi
        fi
    fi
    runner_verdict testbed "$n" "$v"
    [[ -f $d/notes ]] && sed 's/^/testbed:     /' "$d/notes"
done
phase ""
echo "testbed: phases: ${phase_times[*]}"
[[ $booted == 1 && ($failed == 0 || $fixture == 1) ]] && exit 0
exit 1
