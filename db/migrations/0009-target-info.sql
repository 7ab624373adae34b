-- Schema version 9: the target's set-up stored with the run (run --target-info CMD,
-- docs/commands/run.md, "The target's set-up"). One row per run that ran the command, none
-- for a run without one (a run recorded before version 9 has none either).
-- status: 'exited' (exit_code set), 'killed' (by signal, signal set), 'timed_out' (still
-- running at timeout_ns: its process group was killed), 'not_started' (error says why).
-- stdout and stderr hold at most the cap's bytes each; *_bytes counts what the command wrote,
-- so a stream is truncated where its bytes exceed the length of its text.
CREATE TABLE target_info (
    run_id       INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    command      TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('exited', 'killed', 'timed_out', 'not_started')),
    exit_code    INTEGER,
    signal       INTEGER,
    error        TEXT NOT NULL DEFAULT '',
    timeout_ns   INTEGER NOT NULL,
    duration_ns  INTEGER NOT NULL,
    stdout       TEXT NOT NULL,
    stderr       TEXT NOT NULL,
    stdout_bytes INTEGER NOT NULL,
    stderr_bytes INTEGER NOT NULL
);

-- The facts irqloop recognized in the command's stdout (xl info, its xen_commandline, xl
-- sched-*, KVM's module parameters, uname, key=value and key: value lines): one per key, the
-- first occurrence kept, idx from 1 in the order found. source names the parser that found it ('xl info', 'xen cmdline',
-- 'xen default', 'xl sched', 'kvm', 'uname', 'line').
CREATE TABLE target_facts (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    idx    INTEGER NOT NULL,
    value  TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
