#!/usr/bin/env bash
# No getenv() in the programs' code (logger/ hw/ db/ target-responder/) outside the allow-list
# tests/style/getenv-allow.txt (issue 32). irqloop-rt runs with file capabilities, in secure
# mode: what it takes from the environment is read with secure_getenv(), which returns NULL
# there, so that a user of group irqloop cannot steer the capable process through a variable.
# Each allow-list line is "PATH REASON": a file that may call getenv(), and why. Exit 1 naming
# each getenv() outside the list, each entry without a reason, each entry whose file has none.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
allow=${2:-$root/tests/style/getenv-allow.txt}
cd "$root"
[[ -r $allow ]] || { echo "getenv: no allow-list at $allow"; exit 1; }
declare -A allowed=()
status=0
while IFS= read -r line || [[ -n $line ]]; do
  [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
  read -r path reason <<<"$line"
  if [[ -z ${reason:-} ]]; then
    echo "getenv: allow-list entry '$path' gives no reason"; status=1
  fi
  allowed[$path]=1
done <"$allow"
mapfile -t files < <(find logger hw db target-responder -type f \
  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cc' -o -name '*.c' -o -name '*.h' \) | sort)
[[ ${#files[@]} -gt 50 ]] || { echo "getenv: found only ${#files[@]} sources under $root"; exit 1; }
# getenv( not preceded by a name character: std::getenv, ::getenv, getenv; not secure_getenv.
pattern='(^|[^A-Za-z0-9_])getenv[[:space:]]*\('
hits=$(grep -nE "$pattern" "${files[@]}" || true)
declare -A used=()
while IFS= read -r hit; do
  [[ -z $hit ]] && continue
  file=${hit%%:*}
  used[$file]=1
  if [[ -z ${allowed[$file]:-} ]]; then
    echo "getenv: $hit (use secure_getenv, or add '$file REASON' to ${allow#"$root"/})"
    status=1
  fi
done <<<"$hits"
for path in "${!allowed[@]}"; do
  [[ -n ${used[$path]:-} ]] ||
    { echo "getenv: allow-list entry '$path' calls no getenv(): remove the entry"; status=1; }
done
echo "getenv: ${#files[@]} files checked, ${#allowed[@]} allowed, $(grep -c . <<<"$hits" || true) getenv() calls"
exit $status
