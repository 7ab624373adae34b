-- SPDX-License-Identifier: MIT
-- irqloop results store, schema version 1.
-- Every latency and duration is an integer in nanoseconds; instants are Unix time in ns.
-- This file is compiled into irqloop and creates every new file at version 1; later versions
-- are reached through the steps in db/migrations/, so never change this file's meaning.
-- The views are in db/views.sql: irqloop creates them when it brings the file to the current
-- version. `sqlite3 new.db < db/schema.sql` makes a file irqloop accepts (and upgrades).

-- 'IRLP': tells an irqloop file from any other SQLite file (see db/store.hpp).
PRAGMA application_id = 1230130256;
PRAGMA user_version = 1;

-- Facts about the file itself: who created it, with which schema.
CREATE TABLE irqloop_info (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE runs (
    id                  INTEGER PRIMARY KEY,
    uuid                TEXT NOT NULL UNIQUE,
    label               TEXT NOT NULL DEFAULT '',
    kind                TEXT NOT NULL CHECK (kind IN ('measure', 'floor', 'selftest')),
    status              TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    start_unix_ns       INTEGER NOT NULL,
    end_unix_ns         INTEGER,
    command_line        TEXT NOT NULL,
    version             TEXT NOT NULL,
    uname               TEXT NOT NULL,
    hostname            TEXT NOT NULL,
    backend             TEXT NOT NULL,
    clock_source        TEXT NOT NULL,
    clock_hz            REAL NOT NULL,
    clock_read_ns       REAL NOT NULL,
    interval_ns         INTEGER NOT NULL,
    jitter_ns           INTEGER NOT NULL,
    timeout_ns          INTEGER NOT NULL,
    threshold_ns        INTEGER NOT NULL,
    gap_limit_ns        INTEGER NOT NULL,
    stats_interval_ns   INTEGER NOT NULL,
    warmup_samples      INTEGER NOT NULL,
    samples_requested   INTEGER NOT NULL,
    duration_ns         INTEGER NOT NULL,
    rt_settings         TEXT NOT NULL,
    target              TEXT NOT NULL DEFAULT '',
    load                TEXT NOT NULL DEFAULT '',
    -- cumulative summary, rewritten with every interval commit
    samples             INTEGER NOT NULL DEFAULT 0,
    stimuli             INTEGER NOT NULL DEFAULT 0,
    lost                INTEGER NOT NULL DEFAULT 0,
    late                INTEGER NOT NULL DEFAULT 0,
    disturbed           INTEGER NOT NULL DEFAULT 0,
    overflows           INTEGER NOT NULL DEFAULT 0,
    above_threshold     INTEGER NOT NULL DEFAULT 0,
    exceedances_dropped INTEGER NOT NULL DEFAULT 0,
    rising              INTEGER NOT NULL DEFAULT 0,
    falling             INTEGER NOT NULL DEFAULT 0,
    min_ns              INTEGER,
    max_ns              INTEGER,
    warm_max_ns         INTEGER,
    mean_ns             REAL,
    stddev_ns           REAL,
    p50_ns              INTEGER,
    p99_ns              INTEGER,
    p999_ns             INTEGER,
    p9999_ns            INTEGER,
    p999999_ns          INTEGER
);

CREATE INDEX runs_label ON runs (label, start_unix_ns);

-- Backend extras: poll cost, chip labels, port base, ...
CREATE TABLE run_metadata (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE intervals (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx             INTEGER NOT NULL,
    start_unix_ns   INTEGER NOT NULL,
    end_unix_ns     INTEGER NOT NULL,
    samples         INTEGER NOT NULL,
    min_ns          INTEGER,
    max_ns          INTEGER,
    mean_ns         REAL,
    stddev_ns       REAL,
    p50_ns          INTEGER,
    p99_ns          INTEGER,
    p999_ns         INTEGER,
    above_threshold INTEGER NOT NULL,
    lost            INTEGER NOT NULL,
    disturbed       INTEGER NOT NULL,
    overflows       INTEGER NOT NULL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

-- The run's latency histogram so far: non-empty buckets [lo_ns, hi_ns).
CREATE TABLE histogram (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    lo_ns  INTEGER NOT NULL,
    hi_ns  INTEGER NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (run_id, lo_ns)
) WITHOUT ROWID;

-- The top-K worst samples of the run so far (rank 1 is the worst).
CREATE TABLE worst (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank       INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    unix_ns    INTEGER NOT NULL,
    latency_ns INTEGER NOT NULL,
    gap_ns     INTEGER NOT NULL,
    flags      INTEGER NOT NULL,
    PRIMARY KEY (run_id, rank)
) WITHOUT ROWID;

-- Every sample above the run's threshold, up to --max-exceedances.
CREATE TABLE exceedances (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    unix_ns    INTEGER NOT NULL,
    latency_ns INTEGER NOT NULL,
    gap_ns     INTEGER NOT NULL,
    flags      INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
-- For "what happened around 03:20": up to --max-exceedances (1M) rows a run.
CREATE INDEX exceedances_time ON exceedances (run_id, unix_ns);

CREATE TABLE events (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    unix_ns INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    kind    TEXT NOT NULL,
    value   INTEGER NOT NULL,
    detail  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_run ON events (run_id, kind);

-- Every sample, with --raw only. No index and no wall-clock column, for insert speed and size
-- (about 19 bytes a row): filter by run_id, order by seq. A lost sample has latency_ns = -1.
CREATE TABLE raw_samples (
    run_id     INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    latency_ns INTEGER NOT NULL,
    gap_ns     INTEGER NOT NULL,
    flags      INTEGER NOT NULL
);
