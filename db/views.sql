-- SPDX-License-Identifier: MIT
-- irqloop results store: every view, as the current schema version defines it.
-- Views hold no data, so they are defined once, here, and not in db/schema.sql nor in the
-- steps of db/migrations/: irqloop drops and re-creates each of them in the transaction that
-- brings a file to the current version (the last migration step a file takes, a new file
-- included; db/migrate.hpp). A file already at the current version keeps the views it has.
-- Compiled into irqloop like db/schema.sql; `sqlite3 file.db < db/views.sql` re-creates them
-- in a file of the current version by hand.
--
-- A new column goes last in its view, so that a query that reads the older columns by
-- position still reads the same ones. A view that a step must change under (a column it reads
-- renamed or dropped) is dropped by that step; it comes back here.

-- One line per run: the figures published latency tables use, in ns and us.
-- Version 2: pct_above counts every answered stimulus (a disturbed sample can be above by its
-- lower bound); max_bracket_ns, warm_max_bracket_ns, interruptions. Version 4: smi_count.
DROP VIEW IF EXISTS run_summary;
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
       r.max_bracket_ns, r.warm_max_bracket_ns, r.interruptions, r.smi_count
FROM runs r;

-- Worst samples with the run's label and wall-clock time (UTC, millisecond precision).
-- Version 2: bracket_ns, lower_ns. Version 5: the run's kind (`WHERE kind = 'measure'` is what
-- `irqloop worst` reads unless a run is named) and rank_ns, what irqloop ranks by
-- (db::rank_ns: latency_ns for a clean sample, lower_ns for a disturbed one). Version 6: truth_ns.
DROP VIEW IF EXISTS worst_cases;
CREATE VIEW worst_cases AS
SELECT w.run_id, r.label, r.uuid, w.rank, w.seq, w.unix_ns,
       strftime('%Y-%m-%d %H:%M:%f', w.unix_ns / 1e9, 'unixepoch') AS time_utc,
       w.latency_ns, round(w.latency_ns / 1000.0, 3) AS latency_us, w.gap_ns,
       CASE WHEN w.flags & 1 THEN 'rising' ELSE 'falling' END AS edge,
       (w.flags & 2) != 0 AS disturbed, (w.flags & 4) != 0 AS warmup,
       w.bracket_ns, w.latency_ns - w.bracket_ns AS lower_ns, r.kind,
       CASE WHEN w.flags & 2 THEN w.latency_ns - w.bracket_ns ELSE w.latency_ns END AS rank_ns,
       w.truth_ns
FROM worst w JOIN runs r ON r.id = w.run_id;

-- Per-interval maxima, with each interval's wall-clock start.
-- Version 2: max_bracket_ns, interruptions. Version 4: smi_count. Version 6: truth_max_ns.
DROP VIEW IF EXISTS interval_maxima;
CREATE VIEW interval_maxima AS
SELECT i.run_id, r.label, i.idx,
       strftime('%Y-%m-%d %H:%M:%S', i.start_unix_ns / 1000000000, 'unixepoch') AS start_utc,
       i.start_unix_ns, i.end_unix_ns, i.samples, i.min_ns, i.max_ns,
       round(i.max_ns / 1000.0, 3) AS max_us, i.mean_ns, i.stddev_ns, i.p99_ns, i.p999_ns,
       i.above_threshold, i.lost, i.disturbed, i.overflows, i.max_bracket_ns, i.interruptions,
       i.smi_count, i.truth_max_ns
FROM intervals i JOIN runs r ON r.id = i.run_id;

-- Version 3: each window's latency histogram (table interval_histograms) with the bounds
-- [lo_ns, hi_ns) of its buckets (db::window_buckets; db/migrations/0003-window-histograms.sql).
DROP VIEW IF EXISTS window_histograms;
CREATE VIEW window_histograms AS
SELECT h.run_id, r.label, h.idx, i.start_unix_ns, i.end_unix_ns, h.bucket,
       CASE WHEN h.bucket < 4 THEN h.bucket
            ELSE (4 + h.bucket % 4) << (h.bucket / 4 - 1) END AS lo_ns,
       CASE WHEN h.bucket < 4 THEN h.bucket + 1
            ELSE (5 + h.bucket % 4) << (h.bucket / 4 - 1) END AS hi_ns,
       h.count
FROM interval_histograms h
JOIN intervals i ON i.run_id = h.run_id AND i.idx = h.idx
JOIN runs r ON r.id = h.run_id;
