-- Schema version 4: System Management Interrupts counted per window. Where the logger can read
-- MSR 0x34 (MSR_SMI_COUNT) of the sampler's CPU through /dev/cpu/N/msr, the recorder reads it
-- at each window commit (on its own thread, never the sampler's) and stores the difference.
-- NULL means not counted (no msr driver, no privilege, a VM, an AMD CPU, a failed read, or a
-- run recorded before version 4): reports print "n/a", never 0.
ALTER TABLE intervals ADD COLUMN smi_count INTEGER;
ALTER TABLE runs ADD COLUMN smi_count INTEGER;

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
       r.max_bracket_ns, r.warm_max_bracket_ns, r.interruptions, r.smi_count
FROM runs r;

DROP VIEW interval_maxima;
CREATE VIEW interval_maxima AS
SELECT i.run_id, r.label, i.idx,
       strftime('%Y-%m-%d %H:%M:%S', i.start_unix_ns / 1000000000, 'unixepoch') AS start_utc,
       i.start_unix_ns, i.end_unix_ns, i.samples, i.min_ns, i.max_ns,
       round(i.max_ns / 1000.0, 3) AS max_us, i.mean_ns, i.stddev_ns, i.p99_ns, i.p999_ns,
       i.above_threshold, i.lost, i.disturbed, i.overflows, i.max_bracket_ns, i.interruptions,
       i.smi_count
FROM intervals i JOIN runs r ON r.id = i.run_id;
