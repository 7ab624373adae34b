// SPDX-License-Identifier: MIT
#include "latency-model.hpp"

#include "error.hpp"
#include "spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace irqloop::hw
{

latency_model latency_model::from_spec(spec& s)
{
    latency_model m;
    constexpr latency_model::kind kinds[] = {kind::fixed, kind::uniform, kind::normal,
                                             kind::lognormal};
    m.kind_ = kinds[s.take_choice("model", {"fixed", "uniform", "normal", "lognormal"}, "normal",
                                  "the delay's distribution")];
    // A simulated delay of up to 1h: longer ones are refused (the logger's --timeout is at
    // most 1s, and the target thread's wait must end when the run does).
    auto ns = [&](const char* key, double fallback) {
        return static_cast<double>(
            s.take_duration_ns(key, static_cast<std::int64_t>(fallback), 0, max_delay_ns));
    };
    if (m.kind_ == kind::fixed) {
        m.a_ = ns("value", 0);
    } else if (m.kind_ == kind::uniform) {
        m.a_ = ns("min", 0);
        m.b_ = ns("max", 10000);
        if (m.b_ < m.a_)
            throw error("bad backend spec '" + s.text() + "'", "key 'max' is below 'min'");
    } else {
        m.a_ = ns("mean", 8000);
        m.b_ = ns("sd", 1000);
        if (m.kind_ == kind::lognormal && m.a_ <= 0)
            throw error("bad backend spec '" + s.text() + "'",
                        "key 'mean' must be above 0 for a lognormal model");
    }
    auto prob = [&](const char* key) {
        double p = s.take_number(key, 0);
        if (p < 0 || p > 1)
            throw error("bad backend spec '" + s.text() + "'",
                        "key '" + std::string(key) + "' must lie between 0 and 1");
        return p;
    };
    m.spike_p_ = prob("spike_p");
    m.spike_min_ = ns("spike_min", 60000);
    m.spike_max_ = ns("spike_max", 200000);
    if (m.spike_max_ < m.spike_min_)
        throw error("bad backend spec '" + s.text() + "'", "key 'spike_max' is below 'spike_min'");
    m.spike_gpd_ =
        s.take_choice("spike_tail", {"uniform", "gpd"}, "uniform", "the spikes' distribution") == 1;
    if (m.spike_gpd_) {
        m.spike_scale_ = ns("spike_scale", 10000);
        if (!(m.spike_scale_ > 0))
            throw error("bad backend spec '" + s.text() + "'", "key 'spike_scale' must be above 0");
        m.spike_shape_ = s.take_number("spike_shape", 0.2);
        if (!(m.spike_shape_ >= -1 && m.spike_shape_ <= 1))
            throw error("bad backend spec '" + s.text() + "'",
                        "key 'spike_shape' must lie between -1 and 1");
    }
    m.loss_p_ = prob("loss_p");
    m.seed_ = s.take_count("seed", 1);
    m.rng_.seed(m.seed_);
    if (m.kind_ == kind::normal)
        m.normal_ = std::normal_distribution<double>(m.a_, m.b_);
    if (m.kind_ == kind::lognormal) {
        // Parameters of the underlying normal so that the delay has mean a_ and sd b_.
        double var = m.b_ * m.b_, mean2 = m.a_ * m.a_;
        double sigma = std::sqrt(std::log1p(var / mean2));
        double mu = std::log(m.a_) - sigma * sigma / 2;
        m.lognormal_ = std::lognormal_distribution<double>(mu, sigma);
    }
    return m;
}

latency_model::draw_result latency_model::draw() noexcept
{
    if (loss_p_ > 0 && unit_(rng_) < loss_p_)
        return {0, true, false};
    if (spike_p_ > 0 && unit_(rng_) < spike_p_) {
        if (!spike_gpd_)
            return {spike_min_ + (spike_max_ - spike_min_) * unit_(rng_), false, true};
        // Inverse of the generalized Pareto survival function; 1 - u keeps u away from 0.
        const double v = 1.0 - unit_(rng_);
        const double excess =
            std::abs(spike_shape_) < 1e-12
                ? -spike_scale_ * std::log(v)
                : spike_scale_ * std::expm1(-spike_shape_ * std::log(v)) / spike_shape_;
        return {std::min(spike_min_ + excess, double(max_delay_ns)), false, true};
    }
    double d = 0;
    switch (kind_) {
    case kind::fixed:
        d = a_;
        break;
    case kind::uniform:
        d = a_ + (b_ - a_) * unit_(rng_);
        break;
    case kind::normal:
        d = normal_(rng_);
        break;
    case kind::lognormal:
        d = lognormal_(rng_);
        break;
    }
    return {std::max(d, 0.0), false, false};
}

double latency_model::base_mean_ns() const noexcept
{
    switch (kind_) {
    case kind::fixed:
        return a_;
    case kind::uniform:
        return (a_ + b_) / 2;
    default:
        return a_;
    }
}

std::string latency_model::describe() const
{
    static const char* names[] = {"fixed", "uniform", "normal", "lognormal"};
    char buf[256];
    int n = std::snprintf(buf, sizeof buf, "model=%s", names[static_cast<int>(kind_)]);
    switch (kind_) {
    case kind::fixed:
        n += std::snprintf(buf + n, sizeof buf - n, ",value=%.0fns", a_);
        break;
    case kind::uniform:
        n += std::snprintf(buf + n, sizeof buf - n, ",min=%.0fns,max=%.0fns", a_, b_);
        break;
    default:
        n += std::snprintf(buf + n, sizeof buf - n, ",mean=%.0fns,sd=%.0fns", a_, b_);
    }
    if (spike_p_ > 0)
        n += std::snprintf(buf + n, sizeof buf - n, ",spike_p=%g,spike_min=%.0fns,spike_max=%.0fns",
                           spike_p_, spike_min_, spike_max_);
    if (spike_p_ > 0 && spike_gpd_)
        n += std::snprintf(buf + n, sizeof buf - n,
                           ",spike_tail=gpd,spike_scale=%.0fns,spike_shape=%g", spike_scale_,
                           spike_shape_);
    if (loss_p_ > 0)
        n += std::snprintf(buf + n, sizeof buf - n, ",loss_p=%g", loss_p_);
    std::snprintf(buf + n, sizeof buf - n, ",seed=%llu", static_cast<unsigned long long>(seed_));
    return buf;
}

} // namespace irqloop::hw
