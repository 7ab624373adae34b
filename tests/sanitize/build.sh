#!/usr/bin/env bash
# Configure and build one sanitizer build of irqloop with clang, in a build directory of its
# own: the test program (with the logger and the responder it runs) and, for asan, the
# libFuzzer targets (tests/fuzz). CTest runs this as the set-up of the sanitizer and fuzz
# tests (docs/testing.md, "Sanitizers and fuzzing").
#
#   build.sh asan|tsan SOURCE_DIR BUILD_DIR
#
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer (every report fatal), and the
#         coverage instrumentation libFuzzer needs, so that one build serves both
#   tsan  ThreadSanitizer
#
# -O1 with assertions on (no NDEBUG), and line tables only for debug information: the
# sanitizers' stack traces name file and line with them, and the full -g costs compile time on
# the suite's critical path. A unity build (CMake batches of sources) halves the compile time
# again. ccache is used when it is installed.
set -euo pipefail
kind=${1:?usage: build.sh asan|tsan SOURCE_DIR BUILD_DIR}
src=${2:?}
dir=${3:?}
for tool in clang clang++; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool is not installed (bash .ci/setup test, or apt-get install clang libclang-rt-14-dev)"
    exit 4
  fi
done
case "$kind" in
  asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link"
        link="-fsanitize=address,undefined"
        targets=(irqloop-tests irqloop-fuzz) ;;
  tsan) flags="-fsanitize=thread"
        link="-fsanitize=thread"
        targets=(irqloop-tests) ;;
  *) echo "irqloop: sanitizer build: unknown kind '$kind' (asan or tsan)" >&2; exit 2 ;;
esac
flags="$flags -fno-omit-frame-pointer"
# The TSan build's test program holds only the areas CI runs under TSan (sanitize-tsan-unit in
# tests/sanitize/CMakeLists.txt: [ring],[recorder],[soak]) and tests/support: the files that
# carry those tags, found here, so a new file with one of the tags is never left out.
# The ASan build's test program likewise leaves out the files whose every test case is in a
# spinning area ([parport],[report],[run],[sampler],[sim]: CI runs the other areas under ASan,
# sanitize-asan-unit); a file with one quiet test case, or with a tag list not recognised here,
# stays in. The nightly runs over the spinning areas build everything
# (IRQLOOP_SANITIZE_ALL_TESTS=1, tests/sanitize/CMakeLists.txt).
# run-tests.sh --same-as checks that each program holds every test case its areas select in the
# release program, so a file this filter drops by mistake fails the test instead of going untested.
only=()
if [[ ${IRQLOOP_SANITIZE_ALL_TESTS:-0} != 1 ]]; then
  files=()
  for f in "$src"/tests/*/*.cpp; do
    # The Catch2 tag lists in the file ("[a][b]"), one per line.
    tags=$(grep -ohE '"(\[[A-Za-z0-9_.#!-]+\])+"' -- "$f" || true)
    case $kind in
      tsan) grep -qE '\[(ring|recorder|soak)\]' <<<"$tags" && files+=("${f#"$src"/tests/}") ;;
      asan) grep -qvE '\[(parport|report|run|sampler|sim)\]' <<<"$tags" && files+=("${f#"$src"/tests/}") ;;
    esac
  done
  pattern=$(printf '%s\n' "${files[@]}" | sed 's/\./\\./g' | paste -sd'|')
  only=(-DIRQLOOP_TEST_SOURCES_ONLY="/tests/(support/[^/]*|${pattern})\$")
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
mkdir -p "$dir"
start=$(date +%s)
# The flags go into a fresh cache only: a second configure keeps what the first one chose.
if ! cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" -DCMAKE_UNITY_BUILD=ON \
     -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
     -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
     -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
     -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" \
     -DIRQLOOP_BUILD_TESTS=ON -DIRQLOOP_BUILD_BENCH=OFF -DIRQLOOP_MAN_PAGES=OFF \
     -DIRQLOOP_WITH_TESTBED=OFF -DIRQLOOP_SANITIZE_TESTS=OFF \
     -DIRQLOOP_BUILD_FUZZ=$([[ $kind == asan ]] && echo ON || echo OFF) "${only[@]}" \
     >"$dir/configure.log" 2>&1; then
  cat "$dir/configure.log" >&2
  echo "irqloop: $kind build: configure failed (log: $dir/configure.log)" >&2
  exit 1
fi
if ! cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}" >"$dir/build.log" 2>&1; then
  grep -E -B2 -A8 'error:|Error [0-9]' "$dir/build.log" | head -80 >&2
  echo "irqloop: $kind build: failed (log: $dir/build.log)" >&2
  exit 1
fi
echo "irqloop: $kind build done in $(($(date +%s) - start)) s: $dir"
