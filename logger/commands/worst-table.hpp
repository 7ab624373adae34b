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
    std::string why; ///< its stored breakdown's largest blocker (irqloop explain --store), or empty
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

/** @brief The lost answers after the warm-up, as far as the run's stored "lost" events tell. */
struct warm_lost final {
    std::uint64_t after = 0; ///< lost answers certainly after the warm-up (seq >= warm-up)
    bool known = false;      ///< the events hold every lost answer: @p after is exact
};

/**
 * @brief Count the lost answers after the warm-up from @p events (the run's events; each "lost"
 * one is a burst of value consecutive lost stimuli from seq). Exact when the events add up to
 * the run's lost count; otherwise (events over the recorder's cap, a burst still open at the
 * last commit) a lower bound, and known is false.
 */
warm_lost lost_after_warmup(const db::run_record& r, const std::vector<db::event_row>& events);

/**
 * @brief WARM MAX as every table prints it, in @p unit: the max after the warm-up ("9894.023",
 * with its bracket when disturbed); with lost answers after the warm-up that no sample outlasts
 * "≥ 10000.000 (286 lost after the warm-up)" ("at least 286" when not every lost answer is
 * accounted for); with lost answers of unknown place and none proven after the warm-up
 * "9894.023 (289 lost, warm-up unknown)". "—" without a sample after the warm-up, unless lost
 * answers after it prove "≥ 10000.000 (N lost after the warm-up)". @p shift_ns
 * is subtracted from the latencies and the timeout (report's floor-corrected column).
 */
std::string format_warm_max(const db::run_record& r, const warm_lost& w, latency_unit unit,
                            std::int64_t shift_ns = 0);

/**
 * @brief The one worst-samples table of report and worst: rank from 1 in the given order (by
 * what each sample proves, db::rank_ns), latencies in @p unit; each sample's bracket (the width
 * its true latency lies in, below the latency); flags "disturbed, proves X" (with "above the
 * timeout by its bracket" when its upper bound passes the run's timeout) / "warmup" (/
 * "partial-run"); edge rising or falling. A "why" column (each sample's stored breakdown,
 * breakdown-store.hpp's why_text(); blank where none) only when a listed sample has one.
 */
void print_worst_table(const std::vector<worst_entry>& rows, worst_columns cols, latency_unit unit,
                       table_format fmt, std::ostream& out);

} // namespace irqloop::logger
