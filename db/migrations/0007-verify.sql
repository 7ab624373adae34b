-- Schema version 7: the run beside a logic analyzer (irqloop verify, docs/commands/verify.md).
-- Each raw sample keeps its stimulus's time (unix_ns, the logger's clock, as worst and
-- exceedances have it), which verify aligns with the analyzer's STIM edges; NULL in rows
-- recorded before version 7.
ALTER TABLE raw_samples ADD COLUMN unix_ns INTEGER;

-- One row per `irqloop verify` of a run (idx from 1): the capture, the match counts and the
-- distribution of (irqloop - analyzer) in ns over the samples both sides saw answered (NULL
-- when none). resolution_ps is one analyzer sample; offset_ns is where the run's first
-- stimulus falls on the analyzer's clock, drift_ppm the analyzer clock's rate against the
-- logger's, both fitted.
CREATE TABLE verifications (
    run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx                INTEGER NOT NULL,
    unix_ns            INTEGER NOT NULL,
    capture            TEXT NOT NULL,
    stim               TEXT NOT NULL,
    resp               TEXT NOT NULL,
    samplerate_hz      REAL NOT NULL,
    resolution_ps      INTEGER NOT NULL,
    capture_edges      INTEGER NOT NULL,
    run_stimuli        INTEGER NOT NULL,
    matched            INTEGER NOT NULL,
    capture_only       INTEGER NOT NULL,
    run_only           INTEGER NOT NULL,
    outside_capture    INTEGER NOT NULL,
    both_answered      INTEGER NOT NULL,
    both_lost          INTEGER NOT NULL,
    lost_only_irqloop  INTEGER NOT NULL,
    lost_only_analyzer INTEGER NOT NULL,
    not_compared       INTEGER NOT NULL,
    offset_ns          REAL NOT NULL,
    drift_ppm          REAL NOT NULL,
    diff_min_ns        INTEGER,
    diff_median_ns     INTEGER,
    diff_p99_ns        INTEGER,
    diff_max_ns        INTEGER,
    outside_bracket    INTEGER NOT NULL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

-- The samples of a verification whose bracket does not hold the analyzer's latency (beyond
-- one analyzer sample): every one of them.
CREATE TABLE verification_outside (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    latency_ns  INTEGER NOT NULL,
    bracket_ns  INTEGER NOT NULL,
    analyzer_ns INTEGER NOT NULL,
    PRIMARY KEY (run_id, idx, seq)
) WITHOUT ROWID;
