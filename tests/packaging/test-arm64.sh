#!/usr/bin/env bash
# The whole program on arm64, under emulation: cross-build irqloop and irqloop-tests with
# Debian's cross toolchain and the :arm64 development packages (sudo bash .ci/setup arm64), run
# the unit, sim, store (db) and report areas under qemu-aarch64 (the sampler reads cntvct_el0),
# then an arm64 'irqloop run --samples 20K' on the sim board, reported by the arm64 binary.
#   test-arm64.sh [--areas "units spec ..."]
# Spins SCHED_FIFO threads: run alone (by hand: IRQLOOP_RT_LOCK=/work/rt.lock, taken per run). Not in the default CI
# suite (a second full cross build and emulated runs: about 15 minutes on 2 cores); CTest runs
# it with -DIRQLOOP_TEST_ARM64=ON (label arm64).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
areas="units spec histogram ring clock schematics db report sim"
[[ ${1:-} == --areas ]] && areas=$2
triplet=aarch64-linux-gnu
bdir=$src/build/arm64-tests
fail() { echo "FAIL: $*"; exit 1; }
# IRQLOOP_RT_LOCK=/work/rt.lock: hold that lock only around the spinning runs, not the build.
rt() { if [[ -n ${IRQLOOP_RT_LOCK:-} ]]; then flock "$IRQLOOP_RT_LOCK" "$@"; else "$@"; fi; }

for tool in $triplet-g++ qemu-aarch64 dpkg-deb apt-get; do
  command -v "$tool" >/dev/null || fail "'$tool' is missing (run: sudo bash .ci/setup arm64)"
done
for p in libgpiod-dev:arm64 libsqlitecpp-dev:arm64 libboost-program-options-dev:arm64; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
    fail "$p is not installed (run: sudo bash .ci/setup arm64)"
done

# Catch2 3 for arm64: libcatch2-dev is not co-installable with the native one, so its arm64
# package (whose files are in /usr/lib, not in a multiarch folder) is unpacked into the build
# tree: same version as the native one, from backports.
catch2=$bdir/catch2-arm64
if [[ ! -f $catch2/usr/lib/cmake/Catch2/Catch2Config.cmake ]]; then
  mkdir -p "$bdir/dl" "$catch2"
  ver=$(dpkg-query -W -f='${Version}' libcatch2-dev 2>/dev/null) ||
    fail "libcatch2-dev is not installed (run: sudo bash .ci/setup test)"
  (cd "$bdir/dl" && rm -f ./*.deb && apt-get download -qq -o APT::Sandbox::User=root "libcatch2-dev:arm64=$ver") ||
    fail "cannot download libcatch2-dev:arm64=$ver"
  dpkg-deb -x "$bdir"/dl/libcatch2-dev_*_arm64.deb "$catch2"
fi

echo "== cross-building irqloop and irqloop-tests for arm64 in build/arm64-tests"
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DIRQLOOP_BUILD_TESTS=ON -DIRQLOOP_BUILD_BENCH=OFF
      -DIRQLOOP_WITH_TESTBED=OFF -DIRQLOOP_MAN_PAGES=OFF
      -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64
      -DCMAKE_C_COMPILER=$triplet-gcc -DCMAKE_CXX_COMPILER=$triplet-g++
      -DCMAKE_LIBRARY_ARCHITECTURE=$triplet -DCMAKE_CROSSCOMPILING_EMULATOR=qemu-aarch64
      -DCatch2_DIR=$catch2/usr/lib/cmake/Catch2)
command -v ccache >/dev/null && args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export PKG_CONFIG_LIBDIR=/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig
if ! { cmake -S "$src" -B "$bdir" "${args[@]}" && nice cmake --build "$bdir" -j2 --target irqloop irqloop-tests; } \
  >"$bdir.log" 2>&1; then
  grep -E -B2 -A6 'error:|CMake Error' "$bdir.log" | head -40
  fail "the arm64 cross build failed (log: build/arm64-tests.log)"
fi
file "$bdir/logger/irqloop" | sed "s|$src/||"

fails=0
passes=0
for area in $areas; do
  out=$(cd "$bdir/tests" && rt qemu-aarch64 ./irqloop-tests "[$area]" 2>&1)
  rc=$?
  summary=$(grep -E '^(All tests passed|test cases:)' <<<"$out" | tail -1)
  echo "arm64 [$area]: exit $rc: $summary"
  if [[ $rc -eq 0 ]]; then passes=$((passes + 1)); else fails=$((fails + 1)); tail -40 <<<"$out"; fi
done

echo "== arm64: irqloop run --samples 20K on the sim board"
db=$bdir/arm64-sim.db
rm -f "$db" "$db"-*
# --gap-limit 1ms: under emulation consecutive polls are microseconds apart, and the default
# (max(1us, 20 x median poll)) would flag every sample disturbed.
rt qemu-aarch64 "$bdir/logger/irqloop" run --samples 20K --interval 100us --gap-limit 1ms --label arm64-sim \
  --db "$db" --progress none >"$bdir/arm64-run.txt" 2>&1
rc=$?
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
