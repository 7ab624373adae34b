// SPDX-License-Identifier: MIT
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>

namespace irqloop::logger
{

/**
 * @brief A log-linear latency histogram in nanoseconds with bounded memory and a fixed
 *        relative error; the recorder's source of percentiles.
 *
 * Layout (see docs/methodology-histogram.md). Values 0..2047 ns each have their own counter,
 * so they are exact. Above that, every power-of-two range [2^k, 2^(k+1)), k >= 11, is cut
 * into 1024 equal buckets of width 2^(k-10). A bucket is therefore never wider than 1/1024
 * of its lowest value: reporting any value of a bucket for any other value of the same bucket
 * is wrong by less than relative_error() = 1/1024 (about 0.098%). The bucket index is a
 * count-leading-zeros, a shift and an add: no loop, no floating point, no table.
 *
 * Memory is one array of 64-bit counters allocated by the constructor, about 24,700 of them
 * (193 KiB) for the default 10 s range; it never grows with the number of samples.
 *
 * Values above highest_ns() are counted in overflow(), land in the top bucket (so they take
 * part in count(), percentiles and mean() as values about highest_ns()) and still set max()
 * exactly. Negative values are recorded as 0 (a clock that went backwards is the caller's
 * business; the histogram must not index out of range).
 *
 * record() is safe from the hot path: noexcept, no allocation, O(1). The class is not
 * thread-safe: one thread records, others read only after handing over (e.g. at the end of
 * an interval). Move-only; a moved-from histogram may only be destroyed or assigned to.
 */
class histogram final
{
public:
    /** @brief Counters per power-of-two range above the exact region: sets the error bound. */
    static constexpr int sub_bits = 10;
    /** @brief Values below this are exact: one counter per nanosecond. */
    static constexpr std::int64_t exact_below_ns = std::int64_t{2} << sub_bits;

    /**
     * @brief Allocate the counters covering [0, highest_ns].
     * @param highest_ns The largest value tracked without overflow, >= 1; default 10 s.
     * @throws irqloop::error when highest_ns < 1; std::bad_alloc.
     */
    explicit histogram(std::int64_t highest_ns = 10'000'000'000);

    histogram(histogram&&) noexcept = default;
    histogram& operator=(histogram&&) noexcept = default;
    histogram(const histogram&) = delete;
    histogram& operator=(const histogram&) = delete;

    /** @brief Count one value. Hot path: noexcept, no allocation, a handful of ns. */
    void record(std::int64_t value_ns) noexcept { record_n(value_ns, 1); }

    /** @brief Count @p n occurrences of one value; n == 0 changes nothing (not even min/max). */
    void record_n(std::int64_t value_ns, std::uint64_t n) noexcept
    {
        if (n == 0) [[unlikely]]
            return;
        if (value_ns < 0) [[unlikely]]
            value_ns = 0;
        std::size_t i = index_of(value_ns);
        if (value_ns > highest_ns_) [[unlikely]] {
            overflow_ += n;
            i = top_;
        }
        counts_[i] += n;
        total_ += n;
        if (value_ns < min_)
            min_ = value_ns;
        if (value_ns > max_)
            max_ = value_ns;
    }

    /** @brief Values recorded, overflow included. */
    std::uint64_t count() const noexcept { return total_; }
    /** @brief Values recorded above highest_ns() (they sit in the top bucket). */
    std::uint64_t overflow() const noexcept { return overflow_; }
    /** @brief Smallest value recorded, exact (negatives as 0); 0 when empty. */
    std::int64_t min() const noexcept { return total_ ? min_ : 0; }
    /** @brief Largest value recorded, exact even above highest_ns(); 0 when empty. */
    std::int64_t max() const noexcept { return total_ ? max_ : 0; }
    /** @brief The constructor's argument: the top of the range tracked without overflow. */
    std::int64_t highest_ns() const noexcept { return highest_ns_; }

    /**
     * @brief The value at percentile @p p, p in [0, 100] (clamped into it; NaN reads as 0).
     *
     * The rank is ceil(p/100 * count()), at least 1, taken as the exact integer when the
     * product is an integer up to floating-point noise (p99.9 of 1000 samples is the 999th,
     * not the 1000th). The result is the highest value equivalent to the bucket holding the
     * sample of that rank, clamped to [min(), max()]: never below the true sample, above it
     * by less than relative_error() of it, and p0 == min(), p100 == max() exactly.
     * @return 0 when empty.
     */
    std::int64_t value_at_percentile(double p) const noexcept;

    /**
     * @brief value_at_percentile() for many percentiles in one pass over the counters.
     *
     * @p p should be ascending; an entry lower than its predecessor is still answered
     * correctly, at the cost of its own pass. Fills min(p.size(), out.size()) entries.
     */
    void percentiles(std::span<const double> p, std::span<std::int64_t> out) const noexcept;

    /**
     * @brief Mean from bucket midpoints: within relative_error()/2 of the true mean for
     *        values inside the range. The recorder keeps the exact mean itself. 0 when empty.
     */
    double mean() const noexcept;

    /**
     * @brief Add another histogram's counts, overflow, min and max to this one.
     *
     * Meant for histograms of the same highest_ns(). Otherwise counts beyond this one's top
     * bucket go into the top bucket and are counted as overflow, so count() stays the sum.
     */
    void merge(const histogram& other) noexcept;

    /** @brief Back to empty; the counters stay allocated. */
    void reset() noexcept;

    /** @brief The bound on relative error: 1/1024 (a bucket's width over its lowest value). */
    static constexpr double relative_error() noexcept { return 1.0 / (1 << sub_bits); }

    /**
     * @brief Call fn(lo_ns, hi_ns, count) for every non-empty bucket in ascending order;
     *        the bucket holds the values lo_ns <= v < hi_ns.
     *
     * record_n(lo_ns, count) on a histogram of the same range rebuilds the same counters,
     * which is how a stored histogram is read back (min/max then become bucket bounds).
     */
    template <typename F> void for_each_bucket(F&& fn) const
    {
        for (std::size_t i = 0; i <= top_; ++i)
            if (counts_[i] != 0)
                fn(bucket_lo(i), bucket_hi(i), counts_[i]);
    }

    /** @brief Number of counters: the layout is fully described by highest_ns(). */
    std::size_t bucket_count() const noexcept { return top_ + 1; }
    /** @brief Bytes held: the counters plus the object itself. */
    std::size_t memory_bytes() const noexcept
    {
        return bucket_count() * sizeof(std::uint64_t) + sizeof(*this);
    }

    /** @brief The bucket holding @p value_ns (>= 0), in any histogram whose range covers it. */
    static constexpr std::size_t index_of(std::int64_t value_ns) noexcept
    {
        const auto v = static_cast<std::uint64_t>(value_ns);
        // ORing in the exact-region mask makes every value below 2048 share shift 0,
        // so the exact region and the log ranges need no branch between them.
        const int shift = 63 - std::countl_zero(v | std::uint64_t(exact_below_ns - 1)) - sub_bits;
        return (std::size_t(shift) << sub_bits) + std::size_t(v >> shift);
    }

    /** @brief The lowest value of bucket @p i. */
    static constexpr std::int64_t bucket_lo(std::size_t i) noexcept
    {
        if (i < std::size_t(exact_below_ns))
            return std::int64_t(i);
        const int shift = int(i >> sub_bits) - 1;
        const std::uint64_t sub = (i & ((std::size_t{1} << sub_bits) - 1)) | (1u << sub_bits);
        return std::int64_t(sub << shift);
    }

    /** @brief One past the highest value of bucket @p i (saturates at INT64_MAX). */
    static constexpr std::int64_t bucket_hi(std::size_t i) noexcept
    {
        const std::int64_t lo = bucket_lo(i);
        const std::int64_t width =
            i < std::size_t(exact_below_ns) ? 1 : std::int64_t{1} << (int(i >> sub_bits) - 1);
        return lo > std::numeric_limits<std::int64_t>::max() - width
                   ? std::numeric_limits<std::int64_t>::max()
                   : lo + width;
    }

private:
    std::int64_t value_at_rank(std::uint64_t rank, std::size_t& i,
                               std::uint64_t& below) const noexcept;
    std::uint64_t rank_of(double p) const noexcept;

    std::unique_ptr<std::uint64_t[]> counts_;
    std::size_t top_ = 0; // index of the last counter
    std::int64_t highest_ns_ = 0;
    std::uint64_t total_ = 0;
    std::uint64_t overflow_ = 0;
    std::int64_t min_ = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_ = std::numeric_limits<std::int64_t>::min();
};

} // namespace irqloop::logger
