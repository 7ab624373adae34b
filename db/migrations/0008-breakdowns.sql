-- Schema version 8: irqloop explain --store keeps each explained sample's breakdown with its
-- run (docs/commands/explain.md). One row per sample (a later explain of the same sample
-- replaces it): the trace it came from (its name as given, its size in bytes and the FNV-1a
-- 64-bit hash of its bytes, 16 hex digits), the alignment's figures (pairs, residual in ns of the
-- clock fit, drift), the sample's latency and CPU, and the largest blocker in its window on the
-- target's clock (kind, name, whole duration and the part before the handler; NULL when the
-- window held none). The task is the first task seen running there (NULL: none traced).
CREATE TABLE breakdowns (
    run_id               INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq                  INTEGER NOT NULL,
    unix_ns              INTEGER NOT NULL,
    trace                TEXT NOT NULL,
    trace_bytes          INTEGER NOT NULL,
    trace_hash           TEXT NOT NULL,
    trace_events         INTEGER NOT NULL,
    paired               INTEGER NOT NULL,
    residual_ns          REAL NOT NULL,
    drift_ppm            REAL NOT NULL,
    latency_ns           INTEGER NOT NULL,
    cpu                  INTEGER NOT NULL,
    blocker_kind         TEXT,
    blocker_name         TEXT,
    blocker_ns           INTEGER,
    blocker_in_window_ns INTEGER,
    blocker_complete     INTEGER,
    task                 TEXT,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- The parts of a stored breakdown in the order explain prints them (idx from 1): what each
-- covers, its length in ns, the clock it was taken on ('logger' or 'target') and whether it
-- was measured there (1) or inferred (0).
CREATE TABLE breakdown_parts (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    idx      INTEGER NOT NULL,
    part     TEXT NOT NULL,
    ns       INTEGER NOT NULL,
    clock    TEXT NOT NULL,
    measured INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq, idx)
) WITHOUT ROWID;
