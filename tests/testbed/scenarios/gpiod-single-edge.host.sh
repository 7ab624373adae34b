#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host side of gpiod-single-edge: the responder's split file came out and holds both segments,
# one per answered edge, ordered min <= p50 <= p99 <= max, the first above 0.
. "$(dirname "$0")/../host-lib.sh"
f=$TB_RESULT/rising.csv
[[ -f $f ]] || host_fail "split file rising.csv did not come out of the guest"
cat "$f"
for seg in irq_to_wake wake_to_response; do
    IFS=, read -r name count min p50 p99 p999 max mean < <(grep "^$seg," "$f") ||
        host_fail "no $seg row"
    ((count >= 5000)) || host_fail "$seg: $count edges, expected at least 5000"
    ((min <= p50 && p50 <= p99 && p99 <= p999 && p999 <= max)) || host_fail "$seg: figures out of order"
    [[ $seg != irq_to_wake ]] || ((min > 0)) || host_fail "irq_to_wake minimum $min ns: no kernel timestamp"
done
host_note "split (TCG: ordering only): $(grep -E '^(irq_to_wake|wake_to_response),' "$f" |
    awk -F, '{ printf "%s p50 %.1f us; ", $1, $4 / 1000 }')"
echo "PASS: split.csv holds both segments"
