// SPDX-License-Identifier: MIT
// Tail estimates by extreme-value theory (issue 25; docs/methodology-tail.md): a generalized
// Pareto distribution (GPD) fitted by maximum likelihood to the excesses over a threshold,
// profile-likelihood intervals, the automatic threshold rule, and the checks that say whether
// the data allow a fit at all. Plain vectors in, plain structs out: nothing here knows the
// store, the commands or the recorder, so tests feed it scripted data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace irqloop::analysis
{

/** @brief One histogram bucket: values lo_ns <= v < hi_ns, count of them. */
struct tail_bin final {
    double lo_ns = 0;
    double hi_ns = 0;
    std::uint64_t count = 0;
};

/** @brief One stored exceedance: its latency, its stimulus number and its window. */
struct tail_exceedance final {
    double value_ns = 0;
    std::uint64_t seq = 0;
    std::uint64_t window = 0; ///< index of the --stats-interval window it fell in
};

/**
 * @brief What a run stores about its tail, as the fit reads it.
 *
 * The exceedances are exact but the recorder keeps only those above the run's threshold and
 * at most --max-exceedances of them. They are used for a fit threshold u only when they are
 * complete above u (exact_complete and u >= exact_above_ns); otherwise the fit reads the
 * histogram's buckets above u as interval-censored data (the bucket is known, the value within
 * it is not), and u is a bucket edge.
 */
struct tail_data final {
    std::uint64_t samples = 0;                 ///< n: samples in the statistics
    std::vector<tail_bin> bins;                ///< the run's histogram, ascending, non-empty bins
    std::vector<tail_exceedance> exact;        ///< stored exceedances, any order
    double exact_above_ns = 0;                 ///< every sample above this is in exact...
    bool exact_complete = false;               ///< ...when true (none was dropped over the cap)
    std::vector<std::uint64_t> window_samples; ///< samples per window, by window index
    std::vector<double> window_max_ns;         ///< each window's max (block maxima), same index
};

/** @brief A generalized Pareto tail above threshold u: P(X > x) = zeta (1 + xi
 * (x-u)/sigma)^(-1/xi). */
struct gpd_params final {
    double threshold_ns = 0; ///< u
    double sigma_ns = 0;     ///< scale, > 0
    double xi = 0;           ///< shape: > 0 heavy (no bound), < 0 bounded, 0 exponential
    double zeta = 0;         ///< exceedance probability per sample: k / n

    /** @brief P(X > x) per sample for x >= u under these parameters. */
    double p_exceed(double x_ns) const noexcept;
    /** @brief The level exceeded with probability p per sample (p < zeta). */
    double return_level(double p) const noexcept;
    /** @brief The upper end point u - sigma/xi (xi < 0); +inf otherwise. */
    double end_point() const noexcept;
};

/**
 * @brief A two-sided interval from the profile likelihood. An end the profile never crosses
 * within the searched range is open: lo_open (the range's low end was reached) or hi_open
 * (infinite for a level, e.g. a heavy tail with few exceedances).
 */
struct tail_interval final {
    double lo = 0;
    double hi = 0;
    bool lo_open = false;
    bool hi_open = false;
    bool covers(double v) const noexcept { return (lo_open || v >= lo) && (hi_open || v <= hi); }
};

/** @brief A check's verdict, with what cannot be claimed when it fails. */
struct tail_check final {
    std::string name; ///< "exceedances", "independence", "stationarity", "shape"
    bool passed = false;
    bool assessed = true; ///< false: the data cannot tell (says why in detail)
    std::string detail;   ///< the figure behind the verdict, and what it means
};

/** @brief One return level: probability per sample, estimate, interval. */
struct tail_level final {
    double p = 0;
    double level_ns = 0;
    tail_interval ci;
};

/** @brief The fit's options. */
struct tail_options final {
    double confidence = 0.95;
    std::optional<double> threshold_ns;   ///< override of the automatic rule
    std::uint64_t min_exceedances = 50;   ///< fewer: no fit claimed
    std::uint64_t max_exceedances = 1000; ///< the automatic rule's lowest candidate keeps this many
    double min_extremal_index = 0.7;      ///< below: exceedances come in clusters
    double stationarity_alpha = 0.01;     ///< exceedance rates across segments differ at this level
    bool scale_interval = true;           ///< compute the scale's profile interval (costs time)
};

/** @brief The outcome of fit_tail(). */
struct tail_fit final {
    bool fitted = false; ///< false: no fit (too few exceedances, or it failed)
    gpd_params params;
    std::uint64_t exceedances = 0; ///< k above the chosen threshold
    bool from_histogram = false;   ///< interval-censored buckets, not exact values
    std::string threshold_rule;    ///< how the threshold was chosen, in words
    double log_likelihood = 0;
    tail_interval xi_ci;
    tail_interval sigma_ci;
    std::optional<tail_interval> end_point_ci; ///< when the shape is negative
    double extremal_index = 1; ///< Ferro-Segers intervals estimator, 1 when not assessed
    std::vector<tail_check> checks;
    /** @brief Every check passed or could not be assessed, and a fit exists. */
    bool trustworthy() const noexcept;
};

/**
 * @brief Fit the tail of @p data: threshold (automatic unless overridden; the automatic rule
 * looks at or above exact_above_ns, the run's own threshold, where its tail starts), GPD by maximum
 * likelihood, profile intervals for shape and scale (and end point when bounded), and the
 * checks. Never throws for poor data: a failed check or fitted == false says why.
 */
tail_fit fit_tail(const tail_data& data, const tail_options& opt = {});

/** @brief A fit at exactly threshold @p u (no rule, no checks); for tests and the rule. */
tail_fit fit_gpd_at(const tail_data& data, double u, const tail_options& opt = {});

/** @brief The return level at probability @p p per sample with its profile interval. */
tail_level return_level(const tail_data& data, const tail_fit& fit, double p,
                        double confidence = 0.95);

/** @brief P(X > x) per sample with its profile interval (lo/hi are probabilities). */
tail_level p_exceed(const tail_data& data, const tail_fit& fit, double x_ns,
                    double confidence = 0.95);

/**
 * @brief A generalized extreme-value distribution of the maximum of a block of @p
 * block_samples samples: P(M <= x) = exp(-(1 + xi (x - mu) / sigma)^(-1/xi)).
 */
struct gev_params final {
    double mu_ns = 0;    ///< location
    double sigma_ns = 0; ///< scale, > 0
    double xi = 0;       ///< shape, as the GPD's: > 0 heavy, < 0 bounded
    double block_samples = 1;

    /** @brief The level a block's max exceeds with probability @p q. */
    double block_level(double q) const noexcept;
    /**
     * @brief The level exceeded with probability @p p per sample: the block's level at
     * P(M <= x) = (1 - p)^block_samples (the samples taken as independent).
     */
    double return_level(double p) const noexcept;
};

/** @brief The outcome of fit_gev(): a second, independent estimate from the window maxima. */
struct gev_fit final {
    bool fitted = false;
    gev_params params;
    std::size_t blocks = 0;
    double log_likelihood = 0;
    tail_interval xi_ci;
    std::string detail; ///< why there is no fit, or which windows were used
};

/**
 * @brief The block maxima of @p data: the maxima of its windows, leaving out a window with
 * fewer than half the median window's samples (a run's last, partial window), and their mean
 * block size in samples. Empty when fewer than 2 windows have samples.
 */
std::vector<double> block_maxima(const tail_data& data, double& block_samples);

/// From this many maxima on, fit_gev() and gev_return_level() bin them at 0.2 % and search
/// more coarsely (docs/methodology-tail.md, "Cost"); 0: never.
constexpr std::size_t gev_bin_from = 1000;

/**
 * @brief A GEV fit by maximum likelihood to @p maxima (blocks of @p block_samples samples),
 * with the shape's profile-likelihood interval. At least @p min_blocks maxima are needed.
 * From @p bin_from maxima on, they are binned at 0.2 % (gev_bin_from).
 */
gev_fit fit_gev(const std::vector<double>& maxima, double block_samples, double confidence = 0.95,
                std::size_t min_blocks = 10, std::size_t bin_from = gev_bin_from);

/**
 * @brief The level exceeded with probability @p p per sample under the GEV fit, with its
 * profile-likelihood interval. With block_samples 1, @p p is the block's own probability.
 */
tail_level gev_return_level(const std::vector<double>& maxima, const gev_fit& fit, double p,
                            double confidence = 0.95, std::size_t bin_from = gev_bin_from);

/**
 * @brief Ferro and Segers' intervals estimator of the extremal index from the stimulus numbers
 * of the exceedances (sorted here); 1 means independent, 1/theta is the mean cluster size.
 * Returns nothing for fewer than 3 exceedances.
 */
std::optional<double> extremal_index(std::vector<std::uint64_t> seqs);

/**
 * @brief Samples needed in all to show that P(X > level) <= p at @p confidence from the data
 * alone, when none of them exceeds the level: ln(1 - confidence) / ln(1 - p).
 */
double samples_to_show(double p, double confidence = 0.95);

} // namespace irqloop::analysis
