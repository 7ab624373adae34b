// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace irqloop::hw
{
class spec;

/**
 * @brief The simulated target's response-delay model: a base distribution, an optional
 * mixture of rare spikes, and a probability of losing the response altogether.
 *
 * Spec keys (all optional): model=fixed|uniform|normal|lognormal, value (fixed), min/max
 * (uniform), mean/sd (normal, lognormal: of the delay itself), spike_p, spike_min,
 * spike_max (uniform spikes replacing the base draw with probability spike_p), loss_p,
 * seed. Durations take units (8us). Drawn delays are clamped at 0.
 *
 * spike_tail=gpd (default uniform) makes a spike spike_min plus a generalized Pareto excess
 * of scale spike_scale (default 10us) and shape spike_shape (default 0.2, between -1 and 1;
 * spike_max is then unused): a tail whose exceedance probability is known in closed form,
 * P(delay > x) = spike_p (1 + shape (x - spike_min) / scale)^(-1/shape) above the base
 * (docs/methodology-tail.md). Such a spike is clamped at max_delay_ns.
 */
class latency_model final
{
public:
    /** @brief The outcome of one stimulus. */
    struct draw_result {
        double delay_ns;
        bool lost;
        bool spike;
    };

    /** @brief The longest delay a model key takes (value, min, max, mean, sd, spike_*): 1h. */
    static constexpr std::int64_t max_delay_ns = 3600LL * 1'000'000'000;

    /** @brief Read the model's keys from @p s (leaves other keys for the caller). */
    static latency_model from_spec(spec& s);

    /** @brief Draw one outcome; no allocation. */
    draw_result draw() noexcept;

    /** @brief Canonical description, e.g. "model=normal,mean=8000ns,sd=1000ns,seed=1". */
    std::string describe() const;

    /** @brief Mean delay of the base distribution without spikes (ns). */
    double base_mean_ns() const noexcept;

private:
    enum class kind { fixed, uniform, normal, lognormal };
    kind kind_ = kind::normal;
    double a_ = 8000, b_ = 1000; // fixed: a; uniform: [a,b]; normal/lognormal: mean a, sd b
    double spike_p_ = 0, spike_min_ = 0, spike_max_ = 0, loss_p_ = 0;
    bool spike_gpd_ = false;
    double spike_scale_ = 10000, spike_shape_ = 0.2;
    std::uint64_t seed_ = 1;
    std::mt19937_64 rng_;
    std::normal_distribution<double> normal_;
    std::lognormal_distribution<double> lognormal_;
    std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

} // namespace irqloop::hw
