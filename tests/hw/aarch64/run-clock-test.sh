#!/usr/bin/env bash
# Cross-compile the cycle clock for aarch64 and run it under qemu-aarch64 (CTest label
# 'clock'). Exit 4 (CTest: skipped) when the cross compiler or qemu-user is missing.
set -euo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
cxx=aarch64-linux-gnu-g++
for tool in "$cxx" qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool not installed (bash .ci/setup installs g++-aarch64-linux-gnu and qemu-user)"
    exit 4
  fi
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$cxx" -std=c++20 -O2 -static -I"$src/hw" -I"$src/hw/base" -o "$out/clock" \
  "$src/tests/hw/aarch64/clock-main.cpp" "$src/hw/cycle-clock.cpp" "$src/hw/base/error.cpp"
file_kind=$(od -An -tx1 -j18 -N2 "$out/clock" | tr -d ' ')
[[ $file_kind == b700 ]] || { echo "FAIL: not an aarch64 ELF (e_machine $file_kind)"; exit 1; }
qemu-aarch64 "$out/clock"
