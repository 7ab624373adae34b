#!/bin/bash
# SPDX-License-Identifier: MIT
# Host side of kmod-measure: the database that came out of the guest holds both runs, whole.
set -euo pipefail
db=$TB_RESULT/kmod.db
[[ -f $db ]] || { echo "FAIL: $db did not come out of the guest"; exit 1; }
sqlite3 -batch "$db" "PRAGMA integrity_check" | grep -qx ok || { echo "FAIL: $db is damaged"; exit 1; }
rows=$(sqlite3 -batch -separator ' ' "$db" \
    "SELECT label, status, stimuli, lost, p50_ns FROM runs ORDER BY id")
echo "$rows"
for spec in "kmod 100000" "user-event 20000"; do
    read -r label n <<<"$spec"
    grep -q "^$label complete $n 0 [0-9]" <<<"$rows" ||
        { echo "FAIL: no complete run '$label' with $n stimuli and 0 lost"; exit 1; }
done
echo "PASS: both runs on the host, complete, 0 lost"
