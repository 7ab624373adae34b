#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/../host-lib.sh"
host_check_run 10000
host_quote_run
