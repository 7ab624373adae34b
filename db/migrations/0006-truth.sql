-- Schema version 6: the truth, where the wire knows it. The simulated board's computed far end
-- (--hw sim, far=computed) draws each delay itself, on the logger's own clock (hw::truth_source),
-- so a sim run stores what it drew beside what the logger measured: truth_ns per raw, worst and
-- exceedance sample (the drawn delay, converted to ns like latency_ns), and truth_max_ns per
-- window (the largest truth_ns of the window's answered samples, clean or disturbed, in the
-- statistics or not; lost samples are left out). NULL where the truth is unknown: a real
-- wire, a drawn loss, a window with no such sample, or a run recorded before version 6.
-- A clean sample satisfies latency_ns - bracket_ns <= truth_ns <= latency_ns.
ALTER TABLE raw_samples ADD COLUMN truth_ns INTEGER;
ALTER TABLE worst ADD COLUMN truth_ns INTEGER;
ALTER TABLE exceedances ADD COLUMN truth_ns INTEGER;
ALTER TABLE intervals ADD COLUMN truth_max_ns INTEGER;

-- Both views gain the new column last, so a query that reads the older columns by position
-- still reads the same ones.
DROP VIEW worst_cases;
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

DROP VIEW interval_maxima;
CREATE VIEW interval_maxima AS
SELECT i.run_id, r.label, i.idx,
       strftime('%Y-%m-%d %H:%M:%S', i.start_unix_ns / 1000000000, 'unixepoch') AS start_utc,
       i.start_unix_ns, i.end_unix_ns, i.samples, i.min_ns, i.max_ns,
       round(i.max_ns / 1000.0, 3) AS max_us, i.mean_ns, i.stddev_ns, i.p99_ns, i.p999_ns,
       i.above_threshold, i.lost, i.disturbed, i.overflows, i.max_bracket_ns, i.interruptions,
       i.smi_count, i.truth_max_ns
FROM intervals i JOIN runs r ON r.id = i.run_id;
