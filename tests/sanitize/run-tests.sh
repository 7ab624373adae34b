#!/usr/bin/env bash
# Run test areas of irqloop-tests from a sanitizer build (tests/sanitize/build.sh), and with
# --runs also `irqloop run` on the simulated board (a complete run, then one stopped by
# SIGINT). Fails on any sanitizer report, also from the irqloop processes the tests start and
# that exit with a status the test expected: every report goes to a log file (log_path), and
# the logs must stay empty.
#
#   run-tests.sh asan|tsan BUILD_DIR [--runs] [--reports-only] [--same-as PROGRAM]
#                [CATCH2 TEST SPEC...]
#
# --same-as PROGRAM: first check that the sanitizer build's test program lists the same test
# cases for the spec as PROGRAM (the release irqloop-tests). The sanitizer builds compile only
# the test files their areas need (build.sh); this fails if one was left out.
# --reports-only: failed test cases are printed but only a sanitizer report fails the script
# (for the spinning areas under TSan, whose instrumented polls disturb most samples).
#
# Suppressions: tests/sanitize/<kind>.supp, each entry with its reason.
# IRQLOOP_TEST_SCALE (read by the tests, tests/support/test-scale.hpp) is set to 0.1 under
# tsan: sample counts of the spinning tests shrink tenfold, the checks stay the same.
set -euo pipefail
kind=${1:?usage: run-tests.sh asan|tsan BUILD_DIR [--runs] [--reports-only] [TEST SPEC...]}
dir=${2:?}
shift 2
runs=0
reports_only=0
same_as=
while [[ ${1:-} == --* ]]; do
  case $1 in
    --runs) runs=1 ;;
    --reports-only) reports_only=1 ;;
    --same-as) same_as=${2:?--same-as needs the release test program}; shift ;;
    *) echo "irqloop: run-tests.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
here=$(cd "$(dirname "$0")" && pwd)
tests=$dir/tests/irqloop-tests
irqloop=$dir/logger/irqloop
[[ -x $tests && -x $irqloop ]] || { echo "irqloop: $kind: no build in $dir (tests/sanitize/build.sh)" >&2; exit 1; }
logs=$(mktemp -d "${TMPDIR:-/tmp}/irqloop-$kind-XXXXXX")
trap 'rm -rf "$logs"' EXIT
supp=$here/$kind.supp
case "$kind" in
  asan)
    export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:strict_string_checks=1"
    export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
    [[ -f $supp ]] && export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"
    ;;
  tsan)
    export TSAN_OPTIONS="log_path=$logs/tsan:second_deadlock_stack=1:history_size=4"
    [[ -f $supp ]] && TSAN_OPTIONS+=":suppressions=$supp"
    export IRQLOOP_TEST_SCALE=0.1
    ;;
  *) echo "irqloop: run-tests.sh: unknown kind '$kind' (asan or tsan)" >&2; exit 2 ;;
esac

rc=0
start=$(date +%s)
if [[ -n $same_as && $# -gt 0 ]]; then
  # Catch2 lists the selected test cases' names, one per line, at quiet verbosity.
  # Sorted: the order follows the link order of the files, which the unity batches change.
  "$same_as" --list-tests --verbosity quiet "$@" 2>&1 | sort >"$logs/release-list" ||
    { cat "$logs/release-list"; echo "irqloop: $kind: cannot list $same_as's test cases" >&2; exit 1; }
  "$tests" --list-tests --verbosity quiet "$@" 2>&1 | sort >"$logs/$kind-list" ||
    { cat "$logs/$kind-list"; echo "irqloop: $kind: cannot list $tests's test cases" >&2; exit 1; }
  if ! diff -u "$logs/release-list" "$logs/$kind-list" >"$logs/list-diff"; then
    cat "$logs/list-diff"
    echo "irqloop: $kind: the $kind test program selects other test cases than the release one for $* (build.sh's file filter left a file out; the diff is above)" >&2
    exit 1
  fi
  echo "== $kind: the same $(grep -c . "$logs/release-list") test cases as $same_as for $*"
  rm -f "$logs/release-list" "$logs/$kind-list" "$logs/list-diff"
fi
if [[ $# -gt 0 ]]; then
  echo "== $kind: irqloop-tests $*"
  status=0
  # The output goes to a file first: a failure is printed before the whole output, so that a log
  # cut to its first lines (a CI summary) still shows what failed.
  mkdir -p "$logs/out"
  "$tests" "$@" >"$logs/out/catch2.txt" 2>&1 || status=$?
  if grep -q "FAILED:" "$logs/out/catch2.txt"; then
    echo "== $kind: the failed checks (the whole output follows)"
    grep -E -B 12 -A 10 "FAILED:|^WRONG " "$logs/out/catch2.txt" | head -n 200
    echo "== $kind: the whole output"
  fi
  cat "$logs/out/catch2.txt"
  # Catch2 exits 42 when test cases failed; a crash or any other status always counts.
  if [[ $status -eq 42 && $reports_only == 1 ]]; then
    echo "irqloop: $kind: irqloop-tests: failed cases above; --reports-only: not counted"
  elif [[ $status -ne 0 ]]; then
    rc=$status
  fi
fi

if [[ $runs == 1 ]]; then
  # The threads of a real run: sampler, recorder, main (progress, stop flag), the simulated
  # far end's thread (far=thread: the computed far end has none); a short complete run, then
  # one that SIGINT ends while it measures.
  work=$logs/run
  mkdir -p "$work"
  spec='sim:model=normal,mean=8us,sd=1us,spike_p=1e-3,spike_min=50us,spike_max=80us,seed=3,far=thread'
  echo "== $kind: irqloop run -n 20K (complete), then -D 1h stopped by SIGINT"
  # --gap-limit 1ms: under TSan the poll loop's gaps pass the automatic 1 us limit, and a run with
  # every sample disturbed ends with no sample (exit 4); what is checked here is races, not timing.
  if ! "$irqloop" run -n 20K -i 50us --gap-limit 1ms --stats-interval 100ms --raw --hw "$spec" \
       --db "$work/t.db" --label complete --progress log >"$work/run1.out" 2>&1; then
    cat "$work/run1.out"; echo "irqloop: $kind: the complete run failed" >&2; rc=1
  fi
  "$irqloop" run -D 1h -i 50us --gap-limit 1ms --stats-interval 100ms --hw "$spec" --db "$work/t.db" \
    --label stopped --progress log >"$work/run2.out" 2>&1 &
  pid=$!
  sleep 3
  kill -INT "$pid"
  status=0
  wait "$pid" || status=$?
  if [[ $status -ne 130 ]]; then
    cat "$work/run2.out"; echo "irqloop: $kind: the SIGINT run ended with $status, not 130" >&2; rc=1
  fi
  "$irqloop" report --db "$work/t.db" --list >"$work/list.out" 2>&1 || { cat "$work/list.out"; rc=1; }
  if ! grep -q complete "$work/list.out" || ! grep -q interrupted "$work/list.out"; then
    cat "$work/list.out"; echo "irqloop: $kind: the runs are not stored as complete and interrupted" >&2; rc=1
  fi
fi

reports=$(find "$logs" -maxdepth 1 -type f | sort)
if [[ -n $reports ]]; then
  for f in $reports; do echo "---- $f"; cat "$f"; done
  echo "irqloop: $kind: $(echo "$reports" | wc -l) sanitizer report file(s), see above" >&2
  rc=1
fi
echo "irqloop: $kind: done in $(($(date +%s) - start)) s, status $rc"
exit $rc
