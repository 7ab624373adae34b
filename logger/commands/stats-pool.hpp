// SPDX-License-Identifier: MIT
#pragma once

#include "rows.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace irqloop::logger
{

/**
 * @brief The one statistics merge of the reading commands: pools parts of a population whose
 * count, extremes, mean and standard deviation are stored (stats windows, or whole runs).
 *
 * Counts add, extremes combine, and the moments pool exactly: the mean weighted by count, the
 * population variance from the pooled second moments (sum of n * (stddev^2 + mean^2)). Parts
 * without samples add nothing. Percentiles do not pool this way: callers take them from the
 * summed histograms, or report the largest window p99 as such.
 */
class stats_pool final
{
public:
    /** @brief Add a part; @p max_bracket_ns > 0: a disturbed sample holds its max, whose upper
     *  bound @p max_ns is, and the max of the pool is the part's max that proves the most
     *  (max_ns - max_bracket_ns, the rank of db::rank_ns), as the recorder ranks samples. */
    void add(std::uint64_t samples, std::int64_t min_ns, std::int64_t max_ns, double mean_ns,
             double stddev_ns, std::int64_t max_bracket_ns = 0) noexcept;

    /** @brief True until a part with samples was added; the figures below are 0 then. */
    bool empty() const noexcept { return samples_ == 0; }
    std::uint64_t samples() const noexcept { return samples_; }
    std::int64_t min_ns() const noexcept { return min_; }
    std::int64_t max_ns() const noexcept { return max_; }
    /** @brief The bracket of the sample holding max_ns(); 0 when it was measured cleanly. */
    std::int64_t max_bracket_ns() const noexcept { return max_bracket_; }
    double mean_ns() const noexcept;
    double stddev_ns() const noexcept;

private:
    std::uint64_t samples_ = 0;
    std::int64_t min_ = 0, max_ = 0, max_bracket_ = 0;
    double sum_ = 0, sumsq_ = 0;
};

/**
 * @brief Windows [a, b) of @p v as one row: index and start of the first, end of the last;
 * samples, mean, stddev, min and max pooled (stats_pool: the max by what it proves, with its
 * bracket); above_threshold, lost, disturbed and
 * overflows added; p99_ns the largest window p99 (an upper bound of the pooled p99); p50 and
 * p99.9 those of the first window (a merged row does not show them).
 */
db::interval_row merge_windows(const std::vector<db::interval_row>& v, std::size_t a,
                               std::size_t b);

} // namespace irqloop::logger
