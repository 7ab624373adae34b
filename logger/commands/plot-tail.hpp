// SPDX-License-Identifier: MIT
#pragma once
// `plot --kind tail` (issue 25): the diagnostics people judge a tail fit by, for one run.
// The numbers are computed here from tail-fit's data and fit (pure, for tests); the script
// is drawn by plot-command's driver like every other kind.
#include "plot-command.hpp"
#include "read.hpp"
#include "tail-fit.hpp"

#include <string>
#include <vector>

namespace irqloop::logger
{

/** @brief One drawn point of a tail diagnostic; lo/hi are NaN where it has no band. */
struct tail_diag_point final {
    double x = 0;
    double y = 0;
    double lo = 0;
    double hi = 0;
    bool hi_open = false; ///< the band's upper end is not bounded (drawn to the panel's top)
};

/** @brief The three diagnostics of one fit, in ns (and probabilities per sample). */
struct tail_diagnostics final {
    /// mean residual life: x threshold, y mean excess over it, lo/hi its 95 % band
    std::vector<tail_diag_point> mean_excess;
    double threshold_ns = 0;        ///< the fit's threshold, marked on the mean-excess plot
    double threshold_excess_ns = 0; ///< the mean excess at it
    /// QQ: x the fitted GPD's quantile, y the observed exceedance (both latencies)
    std::vector<tail_diag_point> qq;
    /// return levels: x probability per sample, y level, lo/hi the profile interval
    std::vector<tail_diag_point> levels;
    /// the empirical tail: x fraction of samples above, y latency
    std::vector<tail_diag_point> empirical;
};

/**
 * @brief The diagnostics of @p fit on @p data: the mean excess over 60 thresholds from where
 * about ten times the fit's exceedances lie above to where 10 do; the QQ points of the
 * exceedances (exact ones at plotting positions (i - 0.5)/k, or each histogram bucket's upper
 * edge at its cumulative fraction); the return levels with profile intervals every half
 * decade from below the fit's exceedance rate to 1e-12 (1e-6, 1e-9, 1e-12 among them); the
 * empirical fraction above each bucket's upper edge up to 10 times that rate.
 */
tail_diagnostics compute_tail_diagnostics(const analysis::tail_data& data,
                                          const analysis::tail_fit& fit, double confidence = 0.95);

/**
 * @brief `plot --kind tail`: the fit of the one selected run (as `irqloop tail` fits it),
 * drawn as a mean-residual-life plot, a QQ plot and the return-level curve over the empirical
 * tail; --data rows are (run_id, series, x, y, lo, hi).
 * @throws irqloop::error (exit 2) for a selection of more than one run or a run with no fit.
 */
std::string tail_plot_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                             const plot_request& o, plot_outcome& data);

} // namespace irqloop::logger
