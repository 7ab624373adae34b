#!/usr/bin/env bash
# The C++ sources follow .clang-format (Debian's clang-format). The kernel C files
# (target-responder/kmod, hw/testbed) follow the kernel's own style and are left out.
# Exit 1 and name each file that differs; exit 4 (SKIPPED) only when clang-format is absent.
# One clang-format process checks every file (each still finds its own .clang-format): a
# process per file cost 28 s of CPU on the suite's 2 cores, one costs about 1.5 s.
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
status=0
out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1) || status=$?
# Each violation is reported as FILE:LINE:COL: error: ...; a file is named once.
mapfile -t bad < <(printf '%s\n' "$out" | sed -n -E 's/^(.+):[0-9]+:[0-9]+: error: .*/\1/p' | sort -u)
for f in "${bad[@]}"; do
  echo "format: $f differs from .clang-format (fix: clang-format -i $f)"
done
echo "format: ${#files[@]} files checked, ${#bad[@]} differ"
if [[ $status -ne 0 && ${#bad[@]} -eq 0 ]]; then
  # clang-format failed without naming a file (a crash, an unreadable .clang-format).
  printf '%s\n' "$out" | head -20
  echo "format: clang-format ended with status $status and named no file"
  exit 1
fi
[[ ${#bad[@]} -eq 0 && $status -eq 0 ]]
