#!/usr/bin/env bash
# The gpiomem barrier (hw/gpiomem/gpiomem-barrier.cpp) compiled for each ARM the backend runs
# on, by clang (no sysroot needed: the file includes nothing). ARMv6 (Pi 1, Zero, Raspberry Pi
# OS 32-bit's userland) has no dsb/isb instructions, and the assembler refuses them there: the
# file must use the CP15 barriers below ARMv7. Checks the assembly each target gets.
# Exit 4 (CTest: skipped) without clang.
set -uo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
cc=${IRQLOOP_CLANG:-clang++}
command -v "$cc" >/dev/null || { echo "SKIPPED: $cc not installed (bash .ci/setup test installs clang)"; exit 4; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
# check NAME TARGET MARCH WANT...: compile to assembly; every WANT (an extended regex) appears.
check() {
  local name=$1 target=$2 march=$3
  shift 3
  if ! "$cc" --target="$target" -march="$march" -std=c++20 -O2 -ffreestanding -S \
      -o "$out/$name.s" "$src/hw/gpiomem/gpiomem-barrier.cpp" 2>"$out/$name.err"; then
    cat "$out/$name.err"
    echo "FAIL: $name ($target, -march=$march) does not compile"
    failed=1
    return
  fi
  local want
  for want in "$@"; do
    if ! grep -Eq "$want" "$out/$name.s"; then
      grep -E 'mcr|dsb|isb|dmb' "$out/$name.s"
      echo "FAIL: $name: no '$want' in the assembly"
      failed=1
      return
    fi
  done
  echo "PASS: $name ($target, -march=$march): $(grep -Eo 'mcr[^@]*|dsb[^@]*|isb[^@]*' "$out/$name.s" | tr -s ' \t' ' ' | paste -sd ';' -)"
}
check armv6 armv6-linux-gnueabihf armv6 'mcr[[:space:]]+p15, #?0, r[0-9]+, c7, c10, #?4' \
  'mcr[[:space:]]+p15, #?0, r[0-9]+, c7, c5, #?4'
check armv7 armv7a-linux-gnueabihf armv7-a 'dsb' 'isb'
check aarch64 aarch64-linux-gnu armv8-a 'dsb[[:space:]]+sy' 'isb'
[[ $failed == 0 ]] || exit 1
echo "3 passed, 0 failed"
