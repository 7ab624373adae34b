#!/usr/bin/env bash
# The C++ sources follow .clang-format (Debian's clang-format). The kernel C files
# (target-responder/kmod, hw/testbed) follow the kernel's own style and are left out.
# Exit 1 and name each file that differs; exit 4 (SKIPPED) only when clang-format is absent.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "SKIPPED: clang-format is not installed (bash .ci/setup test installs it)"
  exit 4
fi
mapfile -t files < <(find logger hw db target-responder tests -type f \
  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cc' \) \
  -not -path 'target-responder/kmod/*' -not -path 'hw/testbed/*' | sort)
[[ ${#files[@]} -gt 50 ]] || { echo "format: found only ${#files[@]} sources under $root"; exit 1; }
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "format: $f differs from .clang-format (fix: clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
echo "format: ${#files[@]} files checked, $bad differ"
[[ $bad -eq 0 ]]
