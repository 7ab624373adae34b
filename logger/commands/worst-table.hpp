// SPDX-License-Identifier: MIT
#pragma once

#include "read.hpp"
#include "table.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace irqloop::logger
{

/** @brief One worst sample and the run it belongs to. */
struct worst_entry final {
    const db::run_record* run = nullptr;
    db::sample_row sample;
    std::string cause; ///< a disturbed sample's known cause (disturbed_cause()), or empty
};

/**
 * @brief What the run's stored facts say stopped the logger around a disturbed sample, or empty
 * when they say nothing (a clean sample, no matching fact). The rule (docs/methodology.md,
 * "Causes"), which names a match, never a proof:
 * - RT throttling: the run's preflight stored sched.rt_throttling FAIL "on: R us of every P us"
 *   and the sample's bracket lies within 10 % of the pause P - R: "bracket 49.985 ms matches RT
 *   throttling (sched_rt_runtime_us 950000 of 1000000, preflight FAIL)";
 * - SMI: the window holding the sample (by its time, in @p intervals) counted SMIs (MSR 0x34):
 *   "2 SMIs counted in its window".
 * Both can apply; they are joined with "; ".
 */
std::string disturbed_cause(const db::run_record& r, const db::sample_row& s,
                            const std::vector<db::interval_row>& intervals);

/** @brief The pause RT throttling stops a SCHED_FIFO thread for, from the run's stored preflight
 *  (P - R of "FAIL on: R us of every P us"), with R and P; none when not stored as on. */
struct rt_throttling_pause final {
    std::int64_t runtime_us = 0, period_us = 0;
    std::int64_t pause_ns() const noexcept { return (period_us - runtime_us) * 1000; }
};
std::optional<rt_throttling_pause> stored_rt_throttling(const db::run_record& r);

/** @brief Which columns beyond the sample's own: report shows one run, worst many. */
enum class worst_columns {
    sample_only,  ///< rank, seq, time, latency, bracket, edge, flags
    with_run,     ///< and run, label after rank; flags also say partial-run
    with_run_file ///< with_run, and the run's file last (several --db files)
};

/**
 * @brief A sample's latency in @p unit; a disturbed sample's is its upper bound, followed by
 * its bracket: "2001.2 (bracket 25.1)" (the true latency lies within that width below it).
 */
std::string latency_with_bracket(const db::sample_row& s, latency_unit unit);

/**
 * @brief One line on a run's max and lost answers, as worst's header and watch's summary print
 * it: "run 3 'idle': max 70.123 us, lost 0", "max 2001.200 us (bracket 25.100)", or with lost
 * answers that no sample outlasted "max ≥ 10000.000 us (12 lost)" (format_max).
 */
std::string run_max_line(const db::run_record& r, latency_unit unit);

/**
 * @brief The one worst-samples table of report and worst: rank from 1 in the given order (by
 * what each sample proves, db::rank_ns), latencies in @p unit; each sample's bracket (the width
 * its true latency lies in, below the latency); flags "disturbed, proves X" (with "above the
 * timeout by its bracket" when its upper bound passes the run's timeout) / "warmup" (/
 * "partial-run"); edge rising or falling.
 */
void print_worst_table(const std::vector<worst_entry>& rows, worst_columns cols, latency_unit unit,
                       table_format fmt, std::ostream& out);

} // namespace irqloop::logger
