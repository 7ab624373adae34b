-- Schema version 4: System Management Interrupts counted per window. Where the logger can read
-- MSR 0x34 (MSR_SMI_COUNT) of the sampler's CPU through /dev/cpu/N/msr, the recorder reads it
-- at each window commit (on its own thread, never the sampler's) and stores the difference.
-- NULL means not counted (no msr driver, no privilege, a VM, an AMD CPU, a failed read, or a
-- run recorded before version 4): reports print "n/a", never 0. Views run_summary and
-- interval_maxima show them (db/views.sql).
ALTER TABLE intervals ADD COLUMN smi_count INTEGER;
ALTER TABLE runs ADD COLUMN smi_count INTEGER;
