#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/package --from-build packs a tree only when it was configured exactly as the package
# build would be (.ci/debian-env): a tree with other flags, or no tree, is refused before
# cpack runs, so that a package never ships objects built with the wrong flags.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# No tree at all: status 2, and the message names the directory.
rc=0
out=$(bash "$src/.ci/package" --no-setup --from-build "$tmp/none" 2>&1) || rc=$?
[[ $rc -eq 2 ]] || fail "no tree: status $rc, not 2: $out"
[[ $out == *"--from-build $tmp/none: no native CMake tree there"* ]] || fail "no tree: $out"

# A cache written with the package build's arguments, then one of them changed.
mapfile -t want < <(cd "$src" && source .ci/debian-env && deb_env "$(dpkg --print-architecture)" &&
  deb_cmake_args)
[[ ${#want[@]} -ge 8 ]] || fail "deb_cmake_args gave ${#want[@]} arguments"
for a in "${want[@]}"; do
  kv=${a#-D}
  echo "${kv%%=*}:STRING=${kv#*=}"
done | sed 's/^CMAKE_CXX_FLAGS:STRING=\(.*\)$/CMAKE_CXX_FLAGS:STRING=\1 -O0/' >"$tmp/CMakeCache.txt"
rc=0
out=$(bash "$src/.ci/package" --no-setup --from-build "$tmp" 2>&1) || rc=$?
[[ $rc -eq 1 ]] || fail "changed flags: status $rc, not 1: $out"
[[ $out == *"CMAKE_CXX_FLAGS is '"*"-O0', not the package build's"* ]] || fail "changed flags: $out"
[[ ! -e $tmp/packages ]] || fail "cpack ran on a refused tree"
echo "PASS: --from-build refuses a missing tree (2) and a tree with other flags (1)"
