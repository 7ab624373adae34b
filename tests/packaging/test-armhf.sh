#!/usr/bin/env bash
# 32-bit ARM (armhf: ARMv7, hard float; the Pi 2 and later under a 32-bit OS, BeagleBone) under
# emulation: cross-build the logger (irqloop), the responder and a short irqloop-tests of the
# [spec], [units] and [gpiomem] areas (linked with the backends, hw/ and base/, alone) with
# Debian's cross toolchain and the :armhf development packages (sudo bash .ci/setup armhf);
# run those areas under qemu-arm, then an armhf 'irqloop run' on the sim board, reported by
# the armhf binary.
#   test-armhf.sh [--areas "spec units gpiomem"] [--build-only | --no-build]
# The test program does not link the logger's libraries (IRQLOOP_TEST_WITHOUT_LOGGER): the
# areas test the backends, and the [gpiomem] case that runs 'irqloop' runs the armhf program.
# No binfmt_misc is needed: the tests start irqloop and irqloop-responder through qemu-arm
# (tests/support/run-process.hpp: the build's CMAKE_CROSSCOMPILING_EMULATOR).
# CTest: 'armhf-build' (--build-only) then 'armhf' (--no-build), label armhf.
# Exit 0 all passed, 1 a failure, 4 SKIPPED (the cross toolchain or :armhf packages absent).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
areas="spec units gpiomem"
sources='/tests/support/(run-process|temp-dir)\.cpp$|/test-(units|spec|gpiomem-[a-z]+)\.cpp$'
build_only=0
no_build=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --areas) areas=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --no-build) no_build=1; shift ;;
    *) echo "usage: test-armhf.sh [--areas \"AREA...\"] [--build-only | --no-build]"; exit 2 ;;
  esac
done
triplet=arm-linux-gnueabihf
bdir=$src/build/armhf-tests
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIPPED: $*"; exit 4; }

for tool in $triplet-g++ $triplet-objdump qemu-arm dpkg-deb apt-get file; do
  command -v "$tool" >/dev/null || skip "'$tool' is missing (run: sudo bash .ci/setup armhf)"
done
for p in libgpiod-dev:armhf libboost-program-options1.74.0:armhf libsqlite3-0:armhf; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
    skip "$p is not installed (run: sudo bash .ci/setup armhf)"
done

if [[ $no_build -eq 1 ]]; then
  [[ -x $bdir/tests/irqloop-tests && -x $bdir/target-responder/user/irqloop-responder &&
     -x $bdir/logger/irqloop ]] ||
    fail "no armhf build in build/armhf-tests (run test-armhf.sh --build-only first)"
else
  # The armhf -dev packages other than libgpiod's are unpacked into build/armhf-dev at the
  # native versions (.ci/cross-dev): libcatch2-dev is not co-installable with the native one,
  # and the others would pull in libc6-dev:armhf and with it libssl3:armhf (.ci/setup armhf).
  # Their headers are the native ones (Multi-Arch: same, identical on every architecture).
  dev=$src/build/armhf-dev
  bash "$src/.ci/cross-dev" --arch armhf --into "$dev" libcatch2-dev \
    libboost-program-options1.74-dev libsqlite3-dev libsqlitecpp-dev ||
    fail "cannot unpack the armhf development packages (.ci/cross-dev)"

  echo "== cross-building irqloop, irqloop-responder and irqloop-tests for armhf in build/armhf-tests"
  args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DIRQLOOP_BUILD_TESTS=ON -DIRQLOOP_BUILD_BENCH=OFF
        -DIRQLOOP_WITH_TESTBED=OFF -DIRQLOOP_MAN_PAGES=OFF -DIRQLOOP_WITH_LIBFTDI=OFF
        -DCMAKE_UNITY_BUILD=ON
        -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=armv7l
        -DCMAKE_C_COMPILER=$triplet-gcc -DCMAKE_CXX_COMPILER=$triplet-g++
        -DCMAKE_LIBRARY_ARCHITECTURE=$triplet -DCMAKE_CROSSCOMPILING_EMULATOR=qemu-arm
        -DCatch2_DIR=$dev/usr/lib/cmake/Catch2 -DCMAKE_PREFIX_PATH=$dev/usr
        -DBoost_NO_BOOST_CMAKE=ON -DBOOST_LIBRARYDIR=$dev/usr/lib/$triplet
        # The test sources of the three areas, linked with hw/ alone.
        "-DIRQLOOP_TEST_SOURCES_ONLY=$sources" -DIRQLOOP_TEST_WITHOUT_LOGGER=ON)
  command -v ccache >/dev/null && args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export PKG_CONFIG_LIBDIR=$dev/usr/lib/$triplet/pkgconfig:/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig
  t0=$SECONDS
  mkdir -p "$bdir"
  if ! { cmake -S "$src" -B "$bdir" "${args[@]}" &&
         cmake --build "$bdir" -j2 --target irqloop irqloop-responder irqloop-tests; } >"$bdir.log" 2>&1; then
    grep -E -B2 -A6 'error:|CMake Error' "$bdir.log" | head -40
    fail "the armhf cross build failed (log: build/armhf-tests.log)"
  fi
  echo "(built in $((SECONDS - t0)) s)"
fi

# What runs is 32-bit ARM code: the ELF headers, and the barrier the gpiomem backend's
# register writes end with (hw/gpiomem/gpiomem-barrier.cpp: dsb; isb on ARMv7).
for bin in logger/irqloop tests/irqloop-tests target-responder/user/irqloop-responder; do
  desc=$(file -b "$bdir/$bin")
  echo "$bin: ${desc%%, BuildID*}"
  grep -q 'ELF 32-bit LSB.*ARM, EABI5' <<<"$desc" || fail "$bin is not a 32-bit ARM EABI5 program"
done
barrier=$($triplet-objdump -d -C --no-show-raw-insn "$bdir/tests/irqloop-tests" |
  sed -n '/<irqloop::hw::gpiomem_complete()>:$/,/^$/p')
echo "gpiomem_complete():"
sed 's/^/    /' <<<"$barrier"
grep -Eq $'\tdsb\t' <<<"$barrier" && grep -Eq $'\tisb\t' <<<"$barrier" ||
  fail "irqloop::hw::gpiomem_complete() has no dsb and isb in the armhf build"
[[ $build_only -eq 1 ]] && exit 0

fails=0
passes=0
for area in $areas; do
  t0=$SECONDS
  out=$(cd "$bdir/tests" && IRQLOOP_TEST_EMULATED=qemu-arm qemu-arm ./irqloop-tests "[$area]" 2>&1)
  rc=$?
  summary=$(grep -E '^(All tests passed|test cases:)' <<<"$out" | tail -1)
  echo "armhf [$area]: exit $rc in $((SECONDS - t0)) s: $summary"
  grep -E -A2 'SKIPPED:' <<<"$out" | grep -vE '^--$|explicitly with message' | sed "s|$src/||; s/^ */    /" | head -6
  if [[ $rc -eq 0 ]]; then passes=$((passes + 1)); else fails=$((fails + 1)); tail -40 <<<"$out"; fi
done
echo "$passes passed, $fails failed"

# The logger itself on armhf: a short run on the sim board, stored and reported by the armhf
# program (the sampler's clock there, and the store's 64-bit figures on a 32-bit target).
echo "== armhf: irqloop run --samples 2K on the sim board"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/armhf.db
qemu-arm "$bdir/logger/irqloop" run --samples 2K --interval 200us --label armhf-sim --db "$db" \
  --progress none >"$tmp/run.txt" 2>&1
rc=$?
sed "s|$src/||" "$tmp/run.txt"
report=$(qemu-arm "$bdir/logger/irqloop" report --db "$db" --last 2>&1)
echo "$report" | sed -n '1,/^== histogram/p' | grep -E '^(status|samples|clock|uname|max|min) ' | head -8
if [[ $rc -eq 0 ]] && grep -qE '^status +complete' <<<"$report" &&
   grep -qE 'complete, [1-9][0-9]* samples' "$tmp/run.txt" && grep -qE '^uname .*armv[0-9]' <<<"$report"; then
  echo "armhf run: complete, stored and reported by the armhf binary"
else
  echo "armhf run: exit $rc, or not complete / no sample counted / not on armv7"
  fails=$((fails + 1))
fi
[[ $fails -eq 0 ]]
