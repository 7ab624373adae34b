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

/** @brief A run's latencies rebinned into cyclictest's 1 us bins 0..bins-1. */
struct us_histogram final {
    std::vector<std::uint64_t> bins;
    std::uint64_t overflows = 0; ///< samples at or above `bins` us
    std::uint64_t total = 0;     ///< samples in the bins (cyclictest's "# Total")
    std::uint64_t cycles = 0;    ///< every sample: total + overflows
};

/**
 * @brief Rebin the stored log-linear buckets (each at most 0.1 % wide) into 1 us bins. A
 * sample of v ns belongs to bin floor(v / 1000), as cyclictest's integer microseconds do; a
 * bucket whose values span two bins goes to the upper one, so no sample is shown faster than
 * it was.
 */
us_histogram rebin_1us(db::catalog& cat, const db::run_record& r, std::int64_t bins);

/** @brief The run's min and mean in whole us, rounded down; 0 without statistics. */
std::int64_t run_min_us(const db::run_record& r);
std::int64_t run_avg_us(const db::run_record& r);
/** @brief The run's max in whole us, rounded up: never shown below the value measured, nor,
 *  when answers were lost, below the timeout each of them took at least (db::max_at_least_ns). */
std::int64_t run_max_us(const db::run_record& r);

/** @brief The bins a cyclictest-style export uses for @p runs when --histogram is not given:
 *  enough 1 us bins for the largest answered max, so no answered sample overflows. */
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
