-- Schema version 2: each sample is bracketed by the polls around its answer.
-- bracket_ns is the width between the sample's upper bound (latency_ns) and the lower bound it
-- proves (latency_ns - bracket_ns). Rows written by version 1 have 0: they were measured under
-- the old rule (a sample was flagged when any poll gap of its wait exceeded the gap limit),
-- which the run's metadata key logger.disturbed_rule tells apart ('bracket' from version 2).
ALTER TABLE worst ADD COLUMN bracket_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE exceedances ADD COLUMN bracket_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE raw_samples ADD COLUMN bracket_ns INTEGER NOT NULL DEFAULT 0;

-- Logger interruptions: poll gaps above the gap limit outside any sample's bracket. They say
-- how healthy the logger was; they are not held against a sample. NULL: not counted (v1).
ALTER TABLE intervals ADD COLUMN interruptions INTEGER;
ALTER TABLE runs ADD COLUMN interruptions INTEGER;

-- When a maximum is a disturbed sample whose proven lower bound beat every clean one, the
-- maximum is its upper bound and this is its bracket; 0 when the maximum was measured clean.
ALTER TABLE intervals ADD COLUMN max_bracket_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_bracket_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN warm_max_bracket_ns INTEGER NOT NULL DEFAULT 0;

DROP VIEW run_summary;
CREATE VIEW run_summary AS
SELECT r.id, r.uuid, r.label, r.kind, r.status,
       datetime(r.start_unix_ns / 1000000000, 'unixepoch') AS start_utc,
       datetime(r.end_unix_ns / 1000000000, 'unixepoch') AS end_utc,
       round((r.end_unix_ns - r.start_unix_ns) / 1e9, 3) AS duration_s,
       r.backend, r.hostname, r.samples, r.stimuli, r.lost, r.late, r.disturbed, r.overflows,
       r.min_ns, round(r.mean_ns) AS avg_ns, r.max_ns, r.warm_max_ns, round(r.stddev_ns) AS stddev_ns,
       r.p50_ns, r.p99_ns, r.p999_ns, r.p9999_ns, r.p999999_ns,
       r.threshold_ns, r.above_threshold, r.exceedances_dropped,
       CASE WHEN r.stimuli > r.lost THEN round(100.0 * r.above_threshold / (r.stimuli - r.lost), 6) END AS pct_above,
       round(r.min_ns / 1000.0, 3) AS min_us, round(r.mean_ns / 1000.0, 3) AS avg_us,
       round(r.max_ns / 1000.0, 3) AS max_us, round(r.warm_max_ns / 1000.0, 3) AS warm_max_us,
       round(r.stddev_ns / 1000.0, 3) AS stddev_us, r.target, r.load,
       r.max_bracket_ns, r.warm_max_bracket_ns, r.interruptions
FROM runs r;

DROP VIEW worst_cases;
CREATE VIEW worst_cases AS
SELECT w.run_id, r.label, r.uuid, w.rank, w.seq, w.unix_ns,
       strftime('%Y-%m-%d %H:%M:%f', w.unix_ns / 1e9, 'unixepoch') AS time_utc,
       w.latency_ns, round(w.latency_ns / 1000.0, 3) AS latency_us, w.gap_ns,
       CASE WHEN w.flags & 1 THEN 'rising' ELSE 'falling' END AS edge,
       (w.flags & 2) != 0 AS disturbed, (w.flags & 4) != 0 AS warmup,
       w.bracket_ns, w.latency_ns - w.bracket_ns AS lower_ns
FROM worst w JOIN runs r ON r.id = w.run_id;

DROP VIEW interval_maxima;
CREATE VIEW interval_maxima AS
SELECT i.run_id, r.label, i.idx,
       strftime('%Y-%m-%d %H:%M:%S', i.start_unix_ns / 1000000000, 'unixepoch') AS start_utc,
       i.start_unix_ns, i.end_unix_ns, i.samples, i.min_ns, i.max_ns,
       round(i.max_ns / 1000.0, 3) AS max_us, i.mean_ns, i.stddev_ns, i.p99_ns, i.p999_ns,
       i.above_threshold, i.lost, i.disturbed, i.overflows, i.max_bracket_ns, i.interruptions
FROM intervals i JOIN runs r ON r.id = i.run_id;
