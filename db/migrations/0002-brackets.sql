-- Schema version 2: each sample is bracketed by the polls around its answer.
-- bracket_ns is the width between the sample's upper bound (latency_ns) and the lower bound it
-- proves (latency_ns - bracket_ns). Rows written by version 1 have 0: they were measured under
-- the old rule (a sample was flagged when any poll gap of its wait exceeded the gap limit),
-- which the run's metadata key logger.disturbed_rule tells apart ('bracket' from version 2).
-- The views show the new columns (db/views.sql).
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
