#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/../host-lib.sh"
host_check_run 5000
min=$(host_sql "SELECT min_ns FROM runs")
[[ $min -ge 50000 ]] || host_fail "minimum $min ns is below the programmed 50000 ns"
host_quote_run
