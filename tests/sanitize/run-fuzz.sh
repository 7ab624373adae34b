#!/usr/bin/env bash
# Run one libFuzzer target of tests/fuzz for a bounded time: first every input of its seed
# corpus and regression inputs (tests/fuzz/TARGET/), then new mutations until the time is up.
# Prints libFuzzer's figures at the end (exec/s, cov:, ft:, corpus size). Fails on a crash, a
# sanitizer report, a leak, a timeout (10 s per input) or an allocation over 2 GB; the input
# is kept as an artifact, to be fixed and then added to tests/fuzz/TARGET/ as a regression.
#
#   run-fuzz.sh TARGET SOURCE_DIR ASAN_BUILD_DIR SECONDS
set -euo pipefail
t=${1:?usage: run-fuzz.sh TARGET SOURCE_DIR ASAN_BUILD_DIR SECONDS}
src=${2:?}
dir=${3:?}
secs=${4:?}
bin=$dir/tests/fuzz/irqloop-fuzz-$t
[[ -x $bin ]] || { echo "irqloop: fuzz: no $bin (tests/sanitize/build.sh asan)" >&2; exit 1; }
seeds=$src/tests/fuzz/$t
work=$dir/fuzz-work/$t
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048
      -print_final_stats=1 -artifact_prefix="$work/artifacts/")

if [[ $t == cli ]]; then
  # The harness takes its commands from logger::command_table(), the list irqloop's --help
  # prints; its dictionary is every command's options, as their --help lists them today.
  irqloop=$dir/logger/irqloop
  cmds=$("$irqloop" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1}')
  [[ -n $cmds ]] || { echo "irqloop: fuzz-cli: '$irqloop --help' lists no commands" >&2; exit 1; }
  for c in $cmds; do
    echo "\"$c\""
    "$irqloop" "$c" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | sed 's/.*/"&"/'
  done | sort -u >"$work/cli.dict"
  args+=(-dict="$work/cli.dict")
fi

start=$(date +%s)
status=0
"$bin" "${args[@]}" "$work/corpus" "$seeds" >"$work/fuzz.log" 2>&1 || status=$?
tail -n 40 "$work/fuzz.log" | grep -vE '^#[0-9]+\s+(NEW|REDUCE|pulse)' || true
seconds=$(($(date +%s) - start))
if [[ $status -ne 0 ]]; then
  echo "irqloop: fuzz-$t: libFuzzer ended with status $status after $seconds s; input(s):" >&2
  ls -la "$work/artifacts" >&2
  echo "(reproduce: $bin ARTIFACT; once fixed, copy it to tests/fuzz/$t/ as a regression input)" >&2
  exit 1
fi
done_line=$(grep -E '^#[0-9]+\s+DONE' "$work/fuzz.log" | tail -1)
execs=$(grep -oE 'stat::average_exec_per_sec:\s*[0-9]+' "$work/fuzz.log" | grep -oE '[0-9]+$' || echo '?')
echo "irqloop: fuzz-$t: ${seconds} s, ${execs} exec/s; ${done_line#*DONE   }"
