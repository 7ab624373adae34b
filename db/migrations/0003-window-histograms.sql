-- Schema version 3: a compact latency histogram per stats window, for the heatmap (latency over
-- time: when did the distribution move?). The recorder writes one row per non-empty bucket of
-- each window it commits, from the window's samples in the statistics (the same samples as the
-- window's min, mean and percentiles).
--
-- Buckets are log-spaced, four per octave: bucket b holds [lo, hi) with
--   b < 4:  lo = b, hi = b + 1 (ns);
--   b >= 4: lo = (4 + b % 4) << (b / 4 - 1), hi = (5 + b % 4) << (b / 4 - 1),
-- so each bucket is 1/4 to 1/7 of its lower edge wide (e.g. b = 44: [4096, 5120) ns). The
-- window_histograms view adds lo_ns and hi_ns. A run recorded before version 3 has no rows here;
-- its run metadata lacks logger.window_histogram.
CREATE TABLE interval_histograms (
    run_id INTEGER NOT NULL,
    idx    INTEGER NOT NULL,
    bucket INTEGER NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (run_id, idx, bucket),
    FOREIGN KEY (run_id, idx) REFERENCES intervals (run_id, idx) ON DELETE CASCADE
) WITHOUT ROWID;
