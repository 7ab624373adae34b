#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds the kernel responder (target-responder/kmod) and the testbed chip (hw/testbed) against
# one Debian kernel's headers:
#   kbuild-check.sh 6.1|6.12|newest [--cache DIR]
#     6.1     linux-headers-amd64 of bookworm (with bookworm-security)
#     6.12    linux-headers-amd64 of bookworm-backports
#     newest  linux-headers-amd64 of Debian unstable: the newest headers Debian's archive offers
# The packages come from the Debian mirror this machine's apt already uses (read from
# `apt-cache policy`; no host name is written here), by `apt-get download`, and are unpacked
# into the cache, never installed: no root needed. Exit status 0 when both modules build,
# 1 when one does not, 4 (SKIPPED, with the reason) when the headers cannot be fetched.
#
# The newest headers are built by a newer gcc than Debian 12 has (the kernel's own flags need
# it, and its modpost/objtool binaries need a newer glibc), so for them this is a compile
# check: every .c file compiled against those headers with bookworm's gcc, with the one flag
# gcc 12 lacks mapped to its older spelling, and modpost not run. A kernel whose compiler is
# installed gets a full build (modpost, vermagic checked).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_root=$(cd "$here/../.." && pwd)
kernel=${1:-}
shift || true
cache=$PWD/kbuild-cache
while [[ $# -gt 0 ]]; do
    case $1 in
    --cache) cache=$2; shift ;;
    *) echo "usage: kbuild-check.sh 6.1|6.12|newest [--cache DIR]" >&2; exit 2 ;;
    esac
    shift
done
case $kernel in 6.1 | 6.12 | newest) ;; *) echo "usage: kbuild-check.sh 6.1|6.12|newest [--cache DIR]" >&2; exit 2 ;; esac

skip() { echo "SKIPPED: kbuild $kernel: $*"; exit 4; }
fail() { echo "FAIL: kbuild $kernel: $*"; exit 1; }
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
export DEBIAN_FRONTEND=noninteractive

# apt options: the machine's own lists for 6.1 and 6.12; a private list of unstable for newest.
apt_opts=(-o APT::Sandbox::User=root)
case $kernel in
6.1) suite_re='^bookworm(-security)?$' ;;
6.12) suite_re='^bookworm-backports$' ;;
newest)
    # The mirror that serves this machine's Debian main archive.
    mirror=$(apt-cache policy 2>/dev/null |
        awk '$3 ~ /^bookworm(-updates|-backports)?\/main$/ && $2 ~ /^https?:/ { print $2; exit }')
    [[ -n $mirror ]] || skip "no Debian mirror for bookworm in this machine's apt sources"
    sid=$cache/apt-unstable
    mkdir -p "$sid/lists/partial" "$sid/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror unstable main" \
        >"$sid/sources.list"
    apt_opts+=(-o "Dir::Etc::SourceList=$sid/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$sid/lists" -o "Dir::Cache=$sid" -o Dir::State::Status=/dev/null
        -o APT::Architecture=amd64 -o APT::Architectures::=amd64)
    # Refreshed at most once a day.
    if [[ -z $(find "$sid/lists" -name '*unstable_InRelease' -mtime -1 2>/dev/null) ]]; then
        apt-get "${apt_opts[@]}" -qq update >"$sid/update.log" 2>&1 ||
            skip "cannot fetch Debian unstable's package list from $mirror: $(tail -n1 "$sid/update.log")"
    fi
    suite_re='^unstable$'
    ;;
esac

# The linux-headers-amd64 version of the wanted suite, then the ABI it depends on.
if [[ $kernel == newest ]]; then
    ver=$(apt-cache "${apt_opts[@]}" show linux-headers-amd64 2>/dev/null |
        sed -n 's/^Version: //p' | sort -V | tail -n1)
else
    ver=$(apt-cache madison linux-headers-amd64 2>/dev/null | awk -F'|' -v re="$suite_re" '
        { v = $2; gsub(/ /, "", v); split($3, a, " "); split(a[2], s, "/")
          if (s[1] ~ re) { print v; exit } }')
fi
[[ -n $ver ]] || skip "apt knows no linux-headers-amd64 in ${suite_re//[\^\$()?]/} (add that suite to apt's sources)"
abi=$(apt-cache "${apt_opts[@]}" show "linux-headers-amd64=$ver" 2>/dev/null |
    sed -n 's/^Depends:.*linux-headers-\([0-9][^ ,]*-amd64\) (= .*/\1/p' | head -n1)
[[ -n $abi ]] || fail "cannot read the ABI from linux-headers-amd64=$ver"
deps=$(apt-cache "${apt_opts[@]}" show "linux-headers-$abi=$ver" 2>/dev/null |
    sed -n 's/^Depends: //p' | head -n1 | tr ',' '\n' |
    sed -n 's/^ *\(linux-\(headers\|kbuild\)-[^ ]*\).*/\1/p')
echo "kbuild $kernel: linux-headers-$abi (Debian $ver)"

root=$cache/$abi-$ver
if [[ ! -f $root/ready ]]; then
    rm -rf "$root"
    mkdir -p "$root/dl"
    (cd "$root/dl" && apt-get "${apt_opts[@]}" -qq download "linux-headers-$abi=$ver" $deps \
        >"$root/download.log" 2>&1) ||
        skip "cannot download linux-headers-$abi=$ver: $(grep -m1 -E '^(E|W):' "$root/download.log")"
    for d in "$root"/dl/*.deb; do dpkg-deb -x "$d" "$root"; done
    rm -rf "$root/dl"
    # The headers' Makefile points at /usr/src by absolute path: point it at the cache.
    sed -i "s|/usr/src/|$root/usr/src/|g" "$root/usr/src/linux-headers-$abi/Makefile"
    touch "$root/ready"
fi
kdir=$root/usr/src/linux-headers-$abi
[[ -f $kdir/Makefile ]] || fail "$kdir/Makefile missing after unpacking"

# The compiler the kernel was built with, if this machine has it.
cc_text=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"/\1/p' "$kdir/.config")
cc_major=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' "$kdir/.config")
echo "kbuild $kernel: built by $cc_text"
make_args=()
full=1
if ! command -v "gcc-$cc_major" >/dev/null; then
    full=0
    own=$(gcc -dumpversion)
    echo "kbuild $kernel: gcc-$cc_major is not on this machine: compile check with gcc $own" \
        "(the kernel's own modpost and objtool are not run)"
    wrap=$root/gcc-compat
    cat >"$wrap" <<'EOF'
#!/bin/bash
# gcc with the kernel flags that a newer gcc added mapped to what this gcc knows.
args=(-Wno-attributes)
for a in "$@"; do
    case $a in
    -fmin-function-alignment=*) args+=("-falign-functions=${a#*=}") ;;
    *) args+=("$a") ;;
    esac
done
exec gcc "${args[@]}"
EOF
    chmod +x "$wrap"
    make_args=(CC="$wrap" objtool=true)
else
    make_args=(CC="gcc-$cc_major")
fi

status=0
for spec in "target-responder/kmod:irqloop_responder" "hw/testbed:irqloop-wire"; do
    dir=${spec%%:*} mod=${spec#*:}
    out=$cache/build-$abi/$(basename "$dir")
    rm -rf "$out"
    mkdir -p "$out"
    cp -r "$src_root/$dir"/. "$out"/
    if [[ $full == 1 ]]; then target=modules; else target=$mod.o; fi
    if make -s -C "$kdir" M="$out" IRQLOOP_COMPAT_DIR="$src_root/target-responder/kmod" \
        "${make_args[@]}" "$target" >"$out/build.log" 2>&1; then
        if [[ $full == 1 ]]; then
            vm=$(modinfo -F vermagic "$out/$mod.ko")
            [[ $vm == "$abi "* ]] || { echo "$mod.ko: vermagic '$vm' is not $abi"; status=1; continue; }
            echo "kbuild $kernel: $mod.ko built, vermagic $vm"
        else
            # (not nm | grep -q: with pipefail, grep's early exit would fail nm)
            syms=$(nm "$out/$mod.o")
            grep -q ' T init_module$' <<<"$syms" ||
                { echo "$mod.o has no init_module"; status=1; continue; }
            echo "kbuild $kernel: $mod.o compiled against $abi ($(stat -c %s "$out/$mod.o") bytes)"
        fi
    else
        grep -vE 'pahole|built with|You are using|Skipping BTF' "$out/build.log" | head -n 40
        echo "kbuild $kernel: $dir does not build against $abi"
        status=1
    fi
done
[[ $status == 0 ]] && echo "PASS: kbuild $kernel: both modules against $abi" || fail "see above"
