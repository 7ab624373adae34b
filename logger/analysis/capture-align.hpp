// SPDX-License-Identifier: MIT
// A run's samples beside a logic analyzer's capture of the same wire: each stimulus edge the
// analyzer saw on STIM, its answer on RESP, matched to the run's stimuli by order and by the
// two clocks' offset and drift, then each matched latency held against the sample's bracket.
#pragma once

#include "capture.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace irqloop::analysis
{

/** @brief One stimulus of the run, as stored (raw samples with their time, version 7). */
struct run_stimulus final {
    std::uint64_t seq = 0;
    std::int64_t t_ns = 0;       ///< the logger's time of the stimulus (just before the edge)
    std::int64_t latency_ns = 0; ///< the bracket's upper bound; -1 when lost
    std::int64_t bracket_ns = 0; ///< the true latency lies in [latency_ns - bracket_ns, latency_ns]
};

/** @brief One STIM edge of the capture and the RESP change that answered it. */
struct analyzer_stimulus final {
    static constexpr std::int64_t no_answer = -1; ///< RESP did not change before the next edge
    static constexpr std::int64_t cut_short = -2; ///< the capture ended first: unknown
    std::int64_t t_ps = 0;
    std::int64_t answer_ps = no_answer; ///< the first RESP change after t_ps, before the next edge
};

/**
 * @brief Every change of @p stim (an edge either way) with the first change of @p resp after
 * it and no later than the next change of @p stim. The last edge's answer is cut_short when the
 * capture ends without one.
 */
std::vector<analyzer_stimulus> capture_stimuli(const capture& c, const capture_channel& stim,
                                               const capture_channel& resp);

/** @brief A matched sample whose bracket does not hold the analyzer's latency. */
struct outside_sample final {
    std::uint64_t seq = 0;
    std::int64_t latency_ns = 0;
    std::int64_t bracket_ns = 0;
    std::int64_t analyzer_ns = 0; ///< the analyzer's latency on the logger's clock
};

/** @brief One matched pair: a run stimulus and the capture edge it is. */
struct matched_stimulus final {
    std::size_t run_index = 0;     ///< into the run's stimuli
    std::size_t capture_index = 0; ///< into the capture's stimuli
};

/** @brief What verify found. Times are ns on the logger's clock unless named otherwise. */
struct verify_figures final {
    std::int64_t resolution_ps = 0;  ///< one analyzer sample
    std::size_t capture_edges = 0;   ///< STIM edges in the capture
    std::size_t run_stimuli = 0;     ///< stimuli of the run
    std::size_t matched = 0;         ///< pairs
    std::size_t capture_only = 0;    ///< capture edges with no stimulus of the run
    std::size_t run_only = 0;        ///< run stimuli inside the capture's span it did not see
    std::size_t outside_capture = 0; ///< run stimuli before the capture's start or after its end
    std::size_t both_answered = 0;
    std::size_t both_lost = 0;          ///< lost by irqloop, no answer (or one after the timeout)
    std::size_t lost_only_irqloop = 0;  ///< irqloop lost it, the analyzer saw an answer in time
    std::size_t lost_only_analyzer = 0; ///< irqloop answered, the analyzer saw no answer
    std::size_t not_compared = 0;       ///< the capture ended before the answer could come
    double offset_ns = 0; ///< capture time of the run's first stimulus (fit, ns of the analyzer)
    double drift_ppm = 0; ///< (analyzer clock / logger clock - 1) * 1e6, fitted
    /// (irqloop - analyzer) over both_answered pairs: irqloop's latency (the upper bound)
    /// minus the analyzer's.
    std::int64_t diff_min_ns = 0, diff_median_ns = 0, diff_p99_ns = 0, diff_max_ns = 0;
    std::vector<outside_sample> outside; ///< beyond one analyzer sample of the bracket
    std::vector<matched_stimulus> pairs; ///< every match, in order
    std::vector<std::int64_t> diffs_ns;  ///< (irqloop - analyzer) per both_answered pair
};

/**
 * @brief Match @p capture to @p run and compare every matched answer.
 *
 * An anchor is sought among the first capture edges: the run stimulus whose neighbours fall
 * where the capture's do and whose latencies the capture's agree with (both are needed, so a
 * strictly periodic run still aligns, by its latencies). From it, each capture edge is matched
 * to the run stimulus nearest its predicted time (within a quarter of the median interval),
 * the offset following the last match and the drift fitted from the anchor; matches keep
 * order. Offset and drift are then fitted over all matches (least squares).
 *
 * @param timeout_ns the run's timeout: an answer the analyzer saw after it is a loss for both.
 * @throws irqloop::error (exit 2) when the run has fewer than 2 stimuli or nothing aligns (no
 *         anchor whose latencies agree: a capture of another run or of other channels), or
 *         when two anchors fit equally well.
 */
verify_figures align_capture(std::span<const run_stimulus> run,
                             std::span<const analyzer_stimulus> capture, std::int64_t resolution_ps,
                             std::int64_t capture_end_ps, std::int64_t timeout_ns);

} // namespace irqloop::analysis
