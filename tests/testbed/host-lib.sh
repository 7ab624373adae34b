# SPDX-License-Identifier: MIT
#
# Host-side checks of a scenario's results, sourced by scenarios/NAME.host.sh. The runner sets
# TB_RESULT to results/NAME/. Lines appended to $TB_RESULT/notes are printed with the verdict.
set -euo pipefail

host_note() { echo "$*" | tee -a "$TB_RESULT/notes"; }
host_fail() { echo "FAIL: $*"; exit 1; }

# host_sql QUERY: one value from the scenario's run.db.
host_sql() { sqlite3 -batch -noheader "$TB_RESULT/run.db" "$1"; }

# host_check_run MIN_SAMPLES: one complete gpiod run with at least MIN_SAMPLES and none lost.
host_check_run()
{
    command -v sqlite3 >/dev/null || host_fail "sqlite3 is missing on the host (apt-get install sqlite3)"
    [[ -f $TB_RESULT/run.db ]] || host_fail "no run.db came out of the guest"
    local n status stimuli samples lost backend
    n=$(host_sql "SELECT count(*) FROM runs")
    [[ $n == 1 ]] || host_fail "expected 1 run in run.db, found $n"
    IFS='|' read -r status stimuli samples lost backend < <(host_sql \
        "SELECT status, stimuli, samples, lost, backend FROM runs")
    echo "run: status $status, $stimuli stimuli, $samples samples, $lost lost, backend $backend"
    [[ $status == complete ]] || host_fail "run status is '$status', not complete"
    [[ $stimuli -ge $1 ]] || host_fail "$stimuli stimuli, expected at least $1"
    [[ $samples == "$stimuli" ]] || host_fail "$samples samples for $stimuli stimuli"
    [[ $lost == 0 ]] || host_fail "$lost responses were lost"
    [[ $backend == gpiod:* ]] || host_fail "backend '$backend' is not gpiod"
}

# host_quote_run: the figures worth quoting, as notes.
host_quote_run()
{
    local p50 min max rate cost
    IFS='|' read -r min p50 max rate < <(host_sql "SELECT round(min_ns/1000.0,1),
        round(p50_ns/1000.0,1), round(max_ns/1000.0,1), round(samples/duration_s)
        FROM run_summary")
    cost=$(host_sql "SELECT value FROM run_metadata WHERE key = 'gpiod.poll_cost_ns'")
    host_note "latency min $min us, median $p50 us, max $max us (TCG: not real latency);" \
        "$rate samples/s; gpiod poll cost $cost ns per read"
}
