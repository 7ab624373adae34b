-- Schema version 6: the truth, where the wire knows it. The simulated board's computed far end
-- (--hw sim, far=computed) draws each delay itself, on the logger's own clock (hw::truth_source),
-- so a sim run stores what it drew beside what the logger measured: truth_ns per raw, worst and
-- exceedance sample (the drawn delay, converted to ns like latency_ns), and truth_max_ns per
-- window (the largest truth_ns of the window's answered samples, clean or disturbed, in the
-- statistics or not; lost samples are left out). NULL where the truth is unknown: a real
-- wire, a drawn loss, a window with no such sample, or a run recorded before version 6.
-- A clean sample satisfies latency_ns - bracket_ns <= truth_ns <= latency_ns. Views
-- worst_cases and interval_maxima show them last (db/views.sql).
ALTER TABLE raw_samples ADD COLUMN truth_ns INTEGER;
ALTER TABLE worst ADD COLUMN truth_ns INTEGER;
ALTER TABLE exceedances ADD COLUMN truth_ns INTEGER;
ALTER TABLE intervals ADD COLUMN truth_max_ns INTEGER;
