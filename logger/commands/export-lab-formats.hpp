// SPDX-License-Identifier: MIT
#pragma once

#include "read.hpp"

#include <cstdint>
#include <ostream>
#include <vector>

/**
 * The lab formats whose readers are other projects' scripts: OSADL's RT dataset JSON (read by
 * OSADL's plot-rtdataset.py, github.com/osadl/Latencyplot) and the text of
 * `rtla timerlat hist --no-header` (read by Linaro's parse_rtla.py and scripts written for
 * rtla). docs/commands/export.md shows both.
 */
namespace irqloop::logger
{

/**
 * @brief Refuses, before anything is written, a selection these formats cannot hold: a run
 *        without a sample (no curve, no column) for both; for rtla, also a run that cannot
 *        pass (run_unfinished_reason()): rtla's text has no place for a failure, and
 *        Linaro's parse_rtla.py reads every file as a pass.
 * @throws irqloop::error with run_unfinished_status() (4 without a sample, 1 unfinished).
 */
void check_lab_export(const std::vector<const db::run_record*>& runs, bool rtla);

/**
 * @brief OSADL's "RT Dataset" JSON, version 1.0: latency.cores[0] the 1 us classes 0..bins-1,
 *        cores[1..] one run each in order (rebinned as cyclictest-hist), latency.maxima each
 *        run's max in us (rounded up). condition.cyclictest names each curve's run and label;
 *        the "irqloop" key lists the runs. System, processor and kernel are the logger host's
 *        stored uname and hostname.
 */
void write_osadl_rtdataset(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                           std::int64_t bins, std::ostream& out);

/**
 * @brief `rtla timerlat hist --no-header` text: one IRQ and one Thr column per run (irqloop
 *        measures one latency per stimulus; both columns carry it), bucket rows of 1 us with a
 *        count (rows with no count left out, as rtla does), then over:, count:, min:, avg:,
 *        max: and the ALL: block.
 */
void write_rtla_timerlat_hist(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                              std::int64_t bins, std::ostream& out);

} // namespace irqloop::logger
