// SPDX-License-Identifier: MIT
#pragma once

#include "read.hpp"
#include "table.hpp"

#include <ostream>
#include <vector>

namespace irqloop::logger
{

/** @brief One worst sample and the run it belongs to. */
struct worst_entry final {
    const db::run_record* run = nullptr;
    db::sample_row sample;
};

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
