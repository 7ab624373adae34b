// SPDX-License-Identifier: MIT
#pragma once

#include "histogram.hpp"
#include "rows.hpp"

#include <array>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/**
 * The Prometheus text exposition format (version 0.0.4) of irqloop's figures, written by hand
 * because no Debian library writes it: `irqloop export --format prometheus` from stored runs,
 * and `irqloop run --metrics-file` from the live recorder (node_exporter's textfile collector).
 * Base units (seconds), `_total` on counters only, the latency histogram as cumulative `le`
 * buckets with `_sum` and `_count`, labels label/uuid/backend, no timestamps
 * (docs/integration.md).
 */
namespace irqloop::logger
{

/** @brief The histogram's upper bounds (ns); +Inf follows them. 1-2-5 steps, 1 us to 100 ms. */
inline constexpr std::array<std::int64_t, 16> metrics_le_ns = {
    1'000,   2'000,     5'000,     10'000,    20'000,     50'000,     100'000,    200'000,
    500'000, 1'000'000, 2'000'000, 5'000'000, 10'000'000, 20'000'000, 50'000'000, 100'000'000};

/** @brief One run's figures, as one set of label values. */
struct metrics_run final {
    std::string label, uuid, backend;
    db::summary_row summary;       ///< counters, and figures when has_stats
    bool has_stats = false;        ///< false: no sample in the statistics yet (no figures)
    std::int64_t threshold_ns = 0; ///< --threshold
    std::int64_t timeout_ns = 0;   ///< --timeout: each lost answer took at least this long
    std::int64_t start_unix_ns = 0;
    std::uint64_t windows = 0; ///< stats windows committed
    bool active = false;       ///< still recording
    /// Samples with a value <= metrics_le_ns[i]; a bucket counts only once all of its values
    /// are <= the bound, so a count is never too high (a latency never looks better).
    std::array<std::uint64_t, metrics_le_ns.size()> le_count{};
    std::uint64_t count = 0; ///< every sample in the histogram: the +Inf bucket and _count
    double sum_ns = 0;       ///< sum of those samples (mean x count)
    /// The run's gates, {limit key, passed} (max_us, p99.99_us, lost, overflows; "all" for the
    /// run as a whole): irqloop_gate_pass. Empty: no gate sample for this run.
    std::vector<std::pair<std::string, bool>> gates;

    /** @brief Count one stored or live histogram bucket (values lo_ns <= v < hi_ns). */
    void add_bucket(std::int64_t lo_ns, std::int64_t hi_ns, std::uint64_t n) noexcept;
    /** @brief Every bucket of @p h, and count and sum from it and @p mean_ns. */
    void add_histogram(const histogram& h, double mean_ns);
};

/** @brief @p s with every invalid UTF-8 sequence replaced by U+FFFD. */
std::string valid_utf8(std::string_view s);

/** @brief Write every metric family once, with one sample per run in each. */
void write_prometheus(std::ostream& out, std::span<const metrics_run> runs);

} // namespace irqloop::logger
