// SPDX-License-Identifier: MIT
#include "stats-pool.hpp"

#include <algorithm>
#include <cmath>

namespace irqloop::logger
{

void stats_pool::add(std::uint64_t samples, std::int64_t min_ns, std::int64_t max_ns,
                     double mean_ns, double stddev_ns, std::int64_t max_bracket_ns) noexcept
{
    if (!samples)
        return;
    if (empty() || min_ns < min_)
        min_ = min_ns;
    // The max proving the most wins (db::rank_ns); a tie goes to the larger upper bound.
    const std::int64_t rank = max_ns - max_bracket_ns, best = max_ - max_bracket_;
    if (empty() || rank > best || (rank == best && max_ns > max_)) {
        max_ = max_ns;
        max_bracket_ = max_bracket_ns;
    }
    samples_ += samples;
    sum_ += mean_ns * double(samples);
    sumsq_ += (stddev_ns * stddev_ns + mean_ns * mean_ns) * double(samples);
}

double stats_pool::mean_ns() const noexcept
{
    return empty() ? 0.0 : sum_ / double(samples_);
}

double stats_pool::stddev_ns() const noexcept
{
    if (empty())
        return 0.0;
    const double m = mean_ns();
    return std::sqrt(std::max(0.0, sumsq_ / double(samples_) - m * m));
}

db::interval_row merge_windows(const std::vector<db::interval_row>& v, std::size_t a, std::size_t b)
{
    db::interval_row m = v[a];
    m.end_unix_ns = v[b - 1].end_unix_ns;
    m.above_threshold = m.lost = m.disturbed = m.overflows = 0;
    m.smi_count = std::uint64_t{0};
    stats_pool pool;
    for (std::size_t i = a; i < b; ++i) {
        const auto& x = v[i];
        m.above_threshold += x.above_threshold;
        m.lost += x.lost;
        m.disturbed += x.disturbed;
        m.overflows += x.overflows;
        if (m.smi_count && x.smi_count) // one window not counted: the group is "n/a"
            *m.smi_count += *x.smi_count;
        else
            m.smi_count.reset();
        if (x.samples && (pool.empty() || x.p99_ns > m.p99_ns))
            m.p99_ns = x.p99_ns;
        pool.add(x.samples, x.min_ns, x.max_ns, x.mean_ns, x.stddev_ns, x.max_bracket_ns);
    }
    m.samples = pool.samples();
    if (!pool.empty()) {
        m.min_ns = pool.min_ns();
        m.max_ns = pool.max_ns();
        m.max_bracket_ns = pool.max_bracket_ns();
        m.mean_ns = pool.mean_ns();
        m.stddev_ns = pool.stddev_ns();
    }
    return m;
}

} // namespace irqloop::logger
