// SPDX-License-Identifier: MIT
#pragma once

#include "rows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irqloop::logger
{

/**
 * Data preparation shared by `report` (text histogram) and `plot` (gnuplot), and the gnuplot
 * driver itself. The stored histogram has ~1024 buckets per octave (0.1% wide); people read
 * latency histograms in fixed-width bins (OSADL: 1 us), so buckets are regrouped here.
 */

/** @brief A display bin [lo_ns, hi_ns) with the samples of every stored bucket starting in it. */
struct bin final {
    std::int64_t lo_ns = 0;
    std::int64_t hi_ns = 0;
    std::uint64_t count = 0;
};

/**
 * @brief The smallest "nice" width (1, 2 or 5 times a power of ten, in ns, >= 1) with which
 *        [lo_ns, hi_ns] needs at most @p max_bins bins.
 */
std::int64_t nice_bin_width(std::int64_t lo_ns, std::int64_t hi_ns, std::size_t max_bins);

/**
 * @brief Regroup stored buckets into consecutive bins of @p width_ns aligned on multiples of
 *        the width, from the first non-empty one to the last, empty bins included.
 *        A stored bucket counts in the bin holding its lo_ns.
 */
std::vector<bin> rebin_linear(const std::vector<db::bucket_row>& buckets, std::int64_t width_ns);

/**
 * @brief The report's text histogram: linear bins of a nice width over the body (up to the
 *        p99 bucket, at most @p body_bins bins), then doubling bins (2x, 4x, ... the body's
 *        end) for the tail up to the maximum, so a long tail stays a few lines. Empty tail
 *        bins are dropped; empty body bins are kept (a gap in the distribution is information).
 */
std::vector<bin> rebin_report(const std::vector<db::bucket_row>& buckets,
                              std::size_t body_bins = 24);

/**
 * @brief A bar whose length grows with log10(count): 0 for count 0, 1 for count 1, @p width
 *        for @p max_count. Log scale, so a single 1-in-10^8 outlier stays visible.
 */
std::string log_bar(std::uint64_t count, std::uint64_t max_count, std::size_t width = 40);

/** @brief One point of the CDF plot: latency and the fraction of samples above it. */
struct tail_point final {
    double latency_ns = 0;
    double fraction_above = 0;
};

/**
 * @brief The complementary CDF from stored buckets: one point per bucket at its upper bound,
 *        with the fraction of samples at or above it; the last (0) point is dropped, as a log
 *        axis cannot show it. @p lost answers (none before @p timeout_ns) count among the
 *        samples, above every bucket: the fractions are of the stimuli answered or lost, and
 *        the curve ends at the timeout on the lost share instead of dropping to 0.
 */
std::vector<tail_point> tail_curve(const std::vector<db::bucket_row>& buckets,
                                   std::uint64_t lost = 0, std::int64_t timeout_ns = 0);

/** @brief Output type, from the file name: ".svg" or ".png". */
enum class plot_format { svg, png };

/** @throws irqloop::error (exit 2) unless @p path ends in .svg or .png. */
plot_format plot_format_of(std::string_view path);

/**
 * @brief Find gnuplot: $IRQLOOP_GNUPLOT when set (an empty value means "none", for tests),
 *        else `gnuplot` on $PATH. Empty when not found.
 */
std::string find_gnuplot();

/**
 * @brief Run gnuplot with @p script on its standard input (inline data blocks, no temporary
 *        files) and wait for it.
 * @throws irqloop::error (exit 1) when gnuplot is missing (hint: apt-get install gnuplot-nox),
 *         cannot be started, or exits non-zero (its stderr is passed through, and a partial
 *         output file is removed).
 */
void run_gnuplot(const std::string& script, const std::string& output_path);

/** @brief Quote a string for a gnuplot script (single quotes, '' for a quote). */
std::string gnuplot_quote(std::string_view s);

} // namespace irqloop::logger
