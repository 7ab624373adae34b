#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# dts-validate.sh SRC OUT CACHE: every device-tree overlay of the kernel responder
# (SRC/target-responder/kmod/dts/*.dtso), applied with fdtoverlay onto its board's base DTB from
# Debian's newest kernel packages, validates with dt-validate against the responder's binding
# (SRC/target-responder/kmod/dts/bindings/) and dt-schema's core schemas. Then each fixture
# overlay of SRC/tests/testbed/dts-fixtures/ (a deliberately wrong property) must fail with the
# message its "// expect:" line names.
#
# Ours and theirs: the base trees have warnings of their own (core schemas against nodes the
# kernel's bindings describe). The base DTB is validated alone too, and only the error lines the
# merged tree adds count (their file name stripped, compared as sets). dt-validate -M must also
# say the responder node (/irqloop-responder) matched the binding, so a binding that silently
# matches nothing cannot pass.
#
# Base DTBs: linux-image-arm64 (bcm2711-rpi-4-b, bcm2712-rpi-5-b) and linux-image-armmp
# (am335x-boneblack) from Debian unstable, through a private apt state in CACHE/apt (this
# machine's Debian mirror, .ci/debian-mirror; arm64 and armhf lists only; the host's apt is not
# touched), extracted into CACHE/base-<version>/ and reused from then on: once cached the test
# makes no network access. IRQLOOP_DTS_REFRESH=1 resolves the newest version again.
#
# Exit 0 (pass), 1 (fail), 4 (SKIPPED: dt-validate missing, or no base DTB obtainable, with the
# reason printed).
set -euo pipefail
src=$1 out=$2 cache=$3
dts=$src/target-responder/kmod/dts
bindings=$dts/bindings
fixtures=$src/tests/testbed/dts-fixtures

skip() { echo "SKIPPED: $*"; exit 4; }
fail() { echo "FAIL: $*"; exit 1; }

for t in dtc fdtoverlay fdtget; do
    command -v $t >/dev/null || fail "$t is missing (apt-get install device-tree-compiler; .ci/setup)"
done
for t in dt-validate dt-mk-schema dt-doc-validate; do
    command -v $t >/dev/null || skip "$t is missing (apt-get install dt-schema; .ci/setup test group)"
done

# The overlay -> base DTB table: every shipped overlay must be listed (an unlisted one fails).
declare -A base_of=([irqloop-rpi4]=bcm2711-rpi-4-b.dtb [irqloop-rpi5]=bcm2712-rpi-5-b.dtb
                    [irqloop-bbb]=am335x-boneblack.dtb)

rm -rf "$out"
mkdir -p "$out" "$cache"

# ---- base DTBs -------------------------------------------------------------------------------
base=$(ls -d "$cache"/base-*/ 2>/dev/null | sort -V | tail -n1 || true)
base=${base%/}
if [[ -z $base || ! -f $base/ready || ${IRQLOOP_DTS_REFRESH:-0} == 1 ]]; then
    # The machine's own Debian mirror, as .ci/setup takes it: no archive host is written here.
    mirror=$(bash "$src/.ci/debian-mirror" 2>/dev/null) ||
        skip "no Debian mirror in this machine's apt sources to fetch the boards' base DTBs from (.ci/debian-mirror)"
    key=/usr/share/keyrings/debian-archive-keyring.gpg
    [[ -f $key ]] || skip "no $key to check Debian's archive (apt-get install debian-archive-keyring)"
    a=$cache/apt
    rm -rf "$a"
    mkdir -p "$a/lists/partial" "$a/archives/partial" "$a/dl"
    : >"$a/status"
    echo "deb [signed-by=$key] $mirror unstable main" >"$a/sources.list"
    opts=(-o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts=/nonexistent
          -o Dir::State::Lists="$a/lists" -o Dir::State::status="$a/status" -o Dir::Cache="$a"
          -o Dir::Cache::archives="$a/archives" -o APT::Architecture=arm64
          -o APT::Architectures::=arm64 -o APT::Architectures::=armhf -o Acquire::Languages=none -qq)
    echo "fetching Debian unstable's arm64 and armhf package lists from $mirror (once)"
    apt-get "${opts[@]}" update >"$a/update.log" 2>&1 ||
        skip "cannot fetch Debian unstable's package lists from $mirror: $(tail -n1 "$a/update.log")"
    ver=""
    for flavour in arm64:arm64 armmp:armhf; do
        arch=${flavour#*:}
        deps=$(apt-cache "${opts[@]}" depends "linux-image-$flavour" 2>/dev/null || true)
        image=$(sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*\).*/\1/p' <<<"$deps" | head -n1)
        [[ -n $image ]] || skip "Debian unstable names no linux-image-${flavour%%:*} for $arch"
        abi=${image#linux-image-}
        # Newer kernels keep the DTBs in linux-base-ABI (linux-image-ABI depends on it); older
        # ones in the image package itself.
        pkg=$image
        deps=$(apt-cache "${opts[@]}" depends "$image:$arch" 2>/dev/null || true)
        grep -q "Depends: linux-base-$abi" <<<"$deps" && pkg=linux-base-$abi
        (cd "$a/dl" && apt-get "${opts[@]}" download "$pkg:$arch" >>"$a/update.log" 2>&1) ||
            skip "cannot download $pkg:$arch: $(tail -n1 "$a/update.log")"
        ver=$ver${ver:+,}$abi
    done
    base=$cache/base-$ver
    rm -rf "$base"
    mkdir -p "$base/x"
    for deb in "$a"/dl/*.deb; do
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$base/x" --wildcards '*.dtb'
        basename "$deb" >>"$base/packages"
    done
    for b in "${base_of[@]}"; do
        f=$(find "$base/x" -name "$b" | sort | head -n1)
        [[ -n $f ]] || fail "Debian's kernel packages ($(tr '\n' ' ' <"$base/packages")) have no $b"
        cp "$f" "$base/$b"
    done
    rm -rf "$base/x" "$a"
    echo ready >"$base/ready"
fi
echo "base DTBs from $(tr '\n' ' ' <"$base/packages")(cached in ${base#"$cache"/})"

# ---- the binding -----------------------------------------------------------------------------
echo "\$ dt-doc-validate -u bindings bindings/irqloop,responder.yaml"
dt-doc-validate -u "$bindings" "$bindings"/*.yaml >"$out/doc.log" 2>&1 || true
[[ -s $out/doc.log ]] && { cat "$out/doc.log"; fail "the binding does not meet dt-schema's meta-schema"; }
dt-mk-schema -j -o "$out/processed.json" "$bindings" 2>"$out/mk.log" ||
    { cat "$out/mk.log"; fail "dt-mk-schema could not process $bindings"; }

# apply OVERLAY BASE.dtb NAME: compiles OVERLAY and applies it onto the base, as $out/NAME.dtb.
apply()
{
    local f=$1 b=$2 n=$3
    dtc -@ -q -I dts -O dtb -o "$out/$n.dtbo" "$f" || fail "dtc could not compile $f"
    fdtoverlay -i "$base/$b" -o "$out/$n.dtb" "$out/$n.dtbo" 2>"$out/$n.ovl" ||
        { cat "$out/$n.ovl"; fail "fdtoverlay could not apply $n onto $b"; }
    [[ $(fdtget -t s "$out/$n.dtb" /irqloop-responder compatible 2>/dev/null) == irqloop,responder ]] ||
        fail "$n onto $b: no /irqloop-responder node compatible with \"irqloop,responder\""
    [[ -f $out/base-$b ]] || cp "$base/$b" "$out/base-$b"
}

# The shipped overlays (kind ok) and the fixtures (kind bad), each with its base DTB.
names=()
declare -A board_of=() kind_of=() file_of=()
for f in "$dts"/*.dtso; do
    name=$(basename "$f" .dtso)
    [[ -n ${base_of[$name]:-} ]] || fail "$name.dtso has no base DTB in dts-validate.sh's table (add its board)"
    names+=("$name") board_of[$name]=${base_of[$name]} kind_of[$name]=ok file_of[$name]=$f
done
n=${#names[@]}
[[ $n -gt 0 ]] || fail "no .dtso in $dts"
for f in "$fixtures"/*.dtso; do
    name=$(basename "$f" .dtso)
    board=${name#bad-}
    board=irqloop-${board%%-*}
    [[ -n ${base_of[$board]:-} ]] || fail "fixture $name: no board ${board#irqloop-} in the table"
    names+=("$name") board_of[$name]=${base_of[$board]} kind_of[$name]=bad file_of[$name]=$f
done
m=$((${#names[@]} - n))
[[ $m -gt 0 ]] || fail "no fixture in $fixtures"
for name in "${names[@]}"; do
    echo "\$ dtc -@ -I dts -O dtb -o $name.dtbo $name.dtso && fdtoverlay -i ${board_of[$name]} -o $name.dtb $name.dtbo"
    apply "${file_of[$name]}" "${board_of[$name]}" "$name"
done

# One dt-validate run over the bases and every merged tree (the schema loads once).
echo "\$ dt-validate -M -s processed.json base-*.dtb irqloop-*.dtb bad-*.dtb"
(cd "$out" && dt-validate -M -s processed.json base-*.dtb "${names[@]/%/.dtb}") >"$out/validate.log" 2>&1 ||
    { cat "$out/validate.log"; fail "dt-validate failed"; }
# lines FILE: FILE's error lines (continuation lines and -M's matches dropped), file name stripped.
lines()
{
    grep -v '^[[:space:]]' "$out/validate.log" | grep -v ': matched on schema(s)$' |
        sed -n "s|^\(.*/\)\?$1: ||p" | sort -u
}
for name in "${names[@]}"; do
    b=${board_of[$name]}
    lines "base-$b" >"$out/base-$b.lines"
    lines "$name.dtb" | comm -13 "$out/base-$b.lines" - >"$out/$name.ours" || true
    grep -A1 -E "^(.*/)?$name\.dtb: /irqloop-responder: matched on schema\(s\)" "$out/validate.log" |
        grep -qF 'http://devicetree.org/schemas/irqloop,responder.yaml#' ||
        fail "$name: dt-validate did not match /irqloop-responder to the binding"
    echo "$name onto $b: $(wc -l <"$out/base-$b.lines") lines of the base's own, $(wc -l <"$out/$name.ours") of ours"
    if [[ ${kind_of[$name]} == ok ]]; then
        [[ -s $out/$name.ours ]] && { cat "$out/$name.ours"; fail "$name does not validate"; }
        continue
    fi
    # A fixture must fail, with each message its "// expect:" lines name.
    expect=$(sed -n 's|^// expect: ||p' "${file_of[$name]}")
    [[ -n $expect ]] || fail "fixture $name has no '// expect:' line"
    [[ -s $out/$name.ours ]] || fail "fixture $name validated clean: the binding lets a wrong property through"
    sed 's/^/  /' "$out/$name.ours"
    while IFS= read -r e; do
        grep -qF -- "$e" "$out/$name.ours" || fail "fixture $name failed, but not with: $e"
    done <<<"$expect"
done
echo "PASS: $n overlays validate on their boards' base DTBs; $m wrong fixtures fail as expected"
