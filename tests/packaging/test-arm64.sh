#!/usr/bin/env bash
# The whole program on arm64, under emulation: cross-build irqloop and a short irqloop-tests
# (the test sources of the areas below) with Debian's cross toolchain and the :arm64
# development packages (sudo bash .ci/setup arm64), run the unit, sim, store (db) and report
# areas under qemu-aarch64 (the sampler reads cntvct_el0), then an arm64
# 'irqloop run --samples 20K' on the sim board, reported by the arm64 binary.
#   test-arm64.sh [--areas "units spec ..."] [--build-only | --no-build]
# No binfmt_misc is needed: the tests start the arm64 programs through qemu-aarch64 themselves
# (tests/support/run-process.hpp: the build's CMAKE_CROSSCOMPILING_EMULATOR).
# CTest: 'arm64-build' (--build-only, in parallel with other tests) then 'arm64' (--no-build,
# RUN_SERIAL: the emulated runs spin SCHED_FIFO threads). By hand: IRQLOOP_RT_LOCK=/work/rt.lock
# takes that lock around each spinning step, not the build.
# Exit 0 all passed, 1 a failure, 4 SKIPPED (the cross toolchain or :arm64 packages absent).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
areas="units spec histogram ring clock schematics db report sim"
sources='/tests/(support|db|schematics)/|/test-(units|spec|sim-lines|cycle-clock|spsc-ring|histogram|report-[a-z]+)\.cpp$'
build_only=0
no_build=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --areas) areas=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --no-build) no_build=1; shift ;;
    *) echo "usage: test-arm64.sh [--areas \"AREA...\"] [--build-only | --no-build]"; exit 2 ;;
  esac
done
triplet=aarch64-linux-gnu
bdir=$src/build/arm64-tests
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIPPED: $*"; exit 4; }
# IRQLOOP_RT_LOCK=/work/rt.lock: hold that lock only around the spinning runs, not the build.
rt() { if [[ -n ${IRQLOOP_RT_LOCK:-} ]]; then flock "$IRQLOOP_RT_LOCK" "$@"; else "$@"; fi; }

for tool in $triplet-g++ qemu-aarch64 dpkg-deb apt-get; do
  command -v "$tool" >/dev/null || skip "'$tool' is missing (run: sudo bash .ci/setup arm64)"
done
for p in libgpiod-dev:arm64 libsqlitecpp-dev:arm64 libboost-program-options-dev:arm64 libftdi1-2:arm64 \
         libusb-1.0-0-dev:arm64; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
    skip "$p is not installed (run: sudo bash .ci/setup arm64)"
done

if [[ $no_build -eq 1 ]]; then
  [[ -x $bdir/tests/irqloop-tests && -x $bdir/logger/irqloop ]] ||
    fail "no arm64 build in build/arm64-tests (run test-arm64.sh --build-only first)"
else
# libcatch2-dev and libftdi1-dev are not co-installable with the native ones: their arm64
# packages, at the native versions, are unpacked into build/arm64-dev (.ci/cross-dev).
dev=$src/build/arm64-dev
bash "$src/.ci/cross-dev" --arch arm64 --into "$dev" libcatch2-dev libftdi1-dev ||
  fail "cannot unpack the arm64 development packages (.ci/cross-dev)"
catch2=$dev

echo "== cross-building irqloop and irqloop-tests for arm64 in build/arm64-tests"
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DIRQLOOP_BUILD_TESTS=ON -DIRQLOOP_BUILD_BENCH=OFF
      -DIRQLOOP_WITH_TESTBED=OFF -DIRQLOOP_MAN_PAGES=OFF
      -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64
      -DCMAKE_C_COMPILER=$triplet-gcc -DCMAKE_CXX_COMPILER=$triplet-g++
      -DCMAKE_LIBRARY_ARCHITECTURE=$triplet -DCMAKE_CROSSCOMPILING_EMULATOR=qemu-aarch64
      -DCatch2_DIR=$catch2/usr/lib/cmake/Catch2
      # Only the test sources of the areas run here (half of them): the suite's time.
      "-DIRQLOOP_TEST_SOURCES_ONLY=$sources")
command -v ccache >/dev/null && args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export PKG_CONFIG_LIBDIR=$dev/usr/lib/$triplet/pkgconfig:/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig
if ! { cmake -S "$src" -B "$bdir" "${args[@]}" && cmake --build "$bdir" -j2 --target irqloop irqloop-tests; } \
  >"$bdir.log" 2>&1; then
  grep -E -B2 -A6 'error:|CMake Error' "$bdir.log" | head -40
  fail "the arm64 cross build failed (log: build/arm64-tests.log)"
fi
fi
file "$bdir/logger/irqloop" | sed "s|$src/||"
[[ $build_only -eq 1 ]] && exit 0

fails=0
passes=0
for area in $areas; do
  t0=$SECONDS
  # Only the areas that spin SCHED_FIFO threads (the sim board: sim, report, db's merge
  # test via 'irqloop run') take the lock.
  case $area in
    sim | report | db | run | sampler) lock=rt ;;
    *) lock= ;;
  esac
  # IRQLOOP_TEST_EMULATED: claims about a native loop's speed are left out, with a SKIP line
  # saying which (tests/support/emulation.hpp); what is true on any machine is checked.
  out=$(cd "$bdir/tests" && IRQLOOP_TEST_EMULATED=qemu-aarch64 $lock qemu-aarch64 ./irqloop-tests "[$area]" 2>&1)
  rc=$?
  summary=$(grep -E '^(All tests passed|test cases:)' <<<"$out" | tail -1)
  echo "arm64 [$area]: exit $rc in $((SECONDS - t0)) s: $summary"
  grep -E 'gap limit|floor|disturbed|not checked|step' <<<"$out" | grep -v '^ *CHECK' | sed 's/^/    /' | head -12
  if [[ $rc -eq 0 ]]; then passes=$((passes + 1)); else fails=$((fails + 1)); tail -40 <<<"$out"; fi
done

echo "== arm64: irqloop run --samples 20K on the sim board"
db=$bdir/arm64-sim.db
rm -f "$db" "$db"-*
# The default gap limit, max(1 us, 20 x median poll, 4 x median drive(), 3 x the counter's
# step), follows the emulated loop and clock: 3 us on qemu-user's 1 us cntvct_el0 steps.
t0=$SECONDS
rt qemu-aarch64 "$bdir/logger/irqloop" run --samples 20K --interval 100us --label arm64-sim \
  --db "$db" --progress none >"$bdir/arm64-run.txt" 2>&1
rc=$?
echo "(exit $rc in $((SECONDS - t0)) s)"
sed "s|$src/||" "$bdir/arm64-run.txt"
report=$(qemu-aarch64 "$bdir/logger/irqloop" report --db "$db" --last 2>&1)
echo "$report" | sed "s|$src/||" | sed -n '1,/^== histogram/p' | head -40
if [[ $rc -eq 0 ]] && grep -qE '^status +complete' <<<"$report" &&
   grep -qE 'complete, [1-9][0-9]* samples' "$bdir/arm64-run.txt" && grep -qE '^clock +cntvct' <<<"$report" &&
   grep -qE '^uname .*aarch64' <<<"$report"; then
  passes=$((passes + 1))
  echo "arm64 run: complete, clock cntvct_el0, stored and reported by the arm64 binary"
else
  fails=$((fails + 1))
  echo "arm64 run: exit $rc, or not complete / no sample counted / not on cntvct_el0 / not aarch64"
fi
echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
