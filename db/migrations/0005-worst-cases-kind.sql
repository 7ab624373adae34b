-- Schema version 5: worst_cases tells its runs apart. The view lists the worst samples of
-- every run in the file, floor (calibration) and selftest runs included, while `irqloop worst`
-- reads only measure runs unless a run is named. The run's kind (runs.kind: 'measure',
-- 'floor' or 'selftest'; `irqloop calibrate` writes 'floor') is now a column, so
-- `WHERE kind = 'measure'` selects what `irqloop worst` reads. rank_ns is what irqloop ranks
-- by (db::rank_ns): latency_ns for a clean sample, the proven lower bound lower_ns for a
-- disturbed one, so `ORDER BY rank_ns DESC` is `irqloop worst`'s order. Both are appended, so
-- a query that reads the older columns by position still reads the same ones.
DROP VIEW worst_cases;
CREATE VIEW worst_cases AS
SELECT w.run_id, r.label, r.uuid, w.rank, w.seq, w.unix_ns,
       strftime('%Y-%m-%d %H:%M:%f', w.unix_ns / 1e9, 'unixepoch') AS time_utc,
       w.latency_ns, round(w.latency_ns / 1000.0, 3) AS latency_us, w.gap_ns,
       CASE WHEN w.flags & 1 THEN 'rising' ELSE 'falling' END AS edge,
       (w.flags & 2) != 0 AS disturbed, (w.flags & 4) != 0 AS warmup,
       w.bracket_ns, w.latency_ns - w.bracket_ns AS lower_ns, r.kind,
       CASE WHEN w.flags & 2 THEN w.latency_ns - w.bracket_ns ELSE w.latency_ns END AS rank_ns
FROM worst w JOIN runs r ON r.id = w.run_id;
