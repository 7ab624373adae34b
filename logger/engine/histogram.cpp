// SPDX-License-Identifier: MIT
#include "histogram.hpp"

#include "error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace irqloop::logger
{

histogram::histogram(std::int64_t highest_ns) : highest_ns_(highest_ns)
{
    if (highest_ns < 1)
        throw error("create the latency histogram",
                    "highest value " + std::to_string(highest_ns) + " ns is not positive",
                    "give a range of at least 1 ns");
    top_ = index_of(highest_ns);
    counts_ = std::make_unique<std::uint64_t[]>(top_ + 1);
}

std::uint64_t histogram::rank_of(double p) const noexcept
{
    p = std::clamp(std::isnan(p) ? 0.0 : p, 0.0, 100.0);
    const double x = p / 100.0 * double(total_);
    // p/100 and the product each round once: a few ulps of x. Within that, x is taken as the
    // integer it was meant to be, so that ceil() does not jump to the next sample.
    const double nearest = std::nearbyint(x);
    const double r = std::fabs(x - nearest) <= 8 * 0x1p-52 * x ? nearest : std::ceil(x);
    return std::clamp<std::uint64_t>(std::uint64_t(r), 1, total_);
}

std::int64_t histogram::value_at_rank(std::uint64_t rank, std::size_t& i,
                                      std::uint64_t& below) const noexcept
{
    if (rank <= below) { // not ascending: start over
        i = 0;
        below = 0;
    }
    while (below + counts_[i] < rank) {
        below += counts_[i];
        ++i;
    }
    return std::clamp(bucket_hi(i) - 1, min_, max_);
}

std::int64_t histogram::value_at_percentile(double p) const noexcept
{
    std::int64_t out = 0;
    percentiles({&p, 1}, {&out, 1});
    return out;
}

void histogram::percentiles(std::span<const double> p, std::span<std::int64_t> out) const noexcept
{
    const std::size_t n = std::min(p.size(), out.size());
    std::size_t i = 0;
    std::uint64_t below = 0;
    for (std::size_t k = 0; k < n; ++k) {
        if (total_ == 0)
            out[k] = 0;
        else if (!(p[k] > 0)) // NaN included
            out[k] = min_;
        else if (p[k] >= 100)
            out[k] = max_;
        else
            out[k] = value_at_rank(rank_of(p[k]), i, below);
    }
}

double histogram::mean() const noexcept
{
    if (total_ == 0)
        return 0;
    double sum = 0;
    for_each_bucket([&](std::int64_t lo, std::int64_t hi, std::uint64_t c) {
        sum += double(c) * (double(lo) + double(hi - 1 - lo) / 2);
    });
    return sum / double(total_);
}

void histogram::merge(const histogram& other) noexcept
{
    if (other.total_ == 0)
        return;
    std::uint64_t beyond = 0;
    for (std::size_t i = 0; i <= other.top_; ++i) {
        if (i <= top_)
            counts_[i] += other.counts_[i];
        else
            beyond += other.counts_[i];
    }
    counts_[top_] += beyond;
    // Other's overflow sits in its top bucket; when that is beyond ours it is already in beyond.
    overflow_ += other.top_ > top_ ? beyond : other.overflow_;
    total_ += other.total_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
}

void histogram::reset() noexcept
{
    std::fill_n(counts_.get(), top_ + 1, 0);
    total_ = 0;
    overflow_ = 0;
    min_ = std::numeric_limits<std::int64_t>::max();
    max_ = std::numeric_limits<std::int64_t>::min();
}

} // namespace irqloop::logger
