-- Schema version 10: a stored breakdown says whether the tracer dropped events inside its
-- sample's window (irqloop explain reads the tracer's notes of lost events as gaps:
-- docs/commands/explain.md, "Events the tracer dropped"). dropped_events: 0 when no note of a
-- drop on the sample's CPU overlaps its window, K > 0 when the notes that do count K events, -1
-- when one of them gives no count; NULL for a breakdown stored before version 10, of which
-- nothing is known.
ALTER TABLE breakdowns ADD COLUMN dropped_events INTEGER;
