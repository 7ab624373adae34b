// SPDX-License-Identifier: MIT
#pragma once

#include "read.hpp"

#include <cstdint>
#include <ostream>
#include <vector>

/**
 * The export formats other tools already read (docs/export-format.md, docs/integration.md):
 * cyclictest's --histogram text (OSADL's plots), cyclictest's --json (Linaro's rt-tests
 * parser, LAVA/KernelCI) and the Prometheus text format.
 */
namespace irqloop::logger
{

/** @brief The bins a cyclictest-style export uses for @p runs when --histogram is not given:
 *  enough 1 us bins for the largest max, so nothing overflows. */
std::int64_t default_histogram_bins(const std::vector<const db::run_record*>& runs);

/**
 * @brief `cyclictest --histogram=N` text: one column per run (as cyclictest's threads), 1 us
 * bins 0..N-1 rebinned from the stored histogram, the # Total/Min/Avg/Max/Overflows lines and
 * the overflow cycle numbers that are known (raw samples or stored exceedances).
 */
void write_cyclictest_hist(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                           std::int64_t bins, std::ostream& out);

/**
 * @brief `cyclictest --json` (file_version 1): each of @p runs (at least one) a thread, in
 * order, as cyclictest-hist's columns, with irqloop's stimuli, lost and disturbed counts beside
 * cyclictest's keys. A run's return code: 1 for a run that did not end complete, 4 for one
 * without samples (run_unfinished_status()), else 3 when its stored gate.result is "fail",
 * else 0; the document's is the first that is not 0. cmdline: the runs' command lines,
 * joined by "; "; sysinfo: the first run's.
 */
void write_rt_tests_json(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                         std::int64_t bins, std::ostream& out);

/** @brief The Prometheus text format, one label set per run. */
void write_prometheus_export(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                             std::ostream& out);

} // namespace irqloop::logger
