// SPDX-License-Identifier: MIT
// Scripted tails for the tail-fit tests: draws from the simulated board's own latency model
// (hw/sim/latency-model.*), kept as the recorder keeps them (the run's histogram, and every
// sample above the threshold with its stimulus number and window), without a clock or a wire.
#pragma once

#include "histogram.hpp"
#include "sim/latency-model.hpp"
#include "spec.hpp"
#include "tail-fit.hpp"

#include <cmath>
#include <cstdint>
#include <string>

namespace irqloop::tail_test
{

/** @brief @p n draws of the model @p spec_text ("model=...,seed=..."), as a run would store them.
 */
inline analysis::tail_data draw_tail(const std::string& spec_text, std::uint64_t n,
                                     double threshold_ns, std::uint64_t window_samples)
{
    hw::spec s("sim:" + spec_text);
    auto m = hw::latency_model::from_spec(s);
    s.finish();
    logger::histogram h;
    analysis::tail_data d;
    d.samples = 0;
    d.exact_above_ns = threshold_ns;
    d.exact_complete = true;
    for (std::uint64_t seq = 0; seq < n; ++seq) {
        const auto r = m.draw();
        if (r.lost)
            continue;
        const auto v = static_cast<std::int64_t>(std::llround(r.delay_ns));
        h.record(v);
        ++d.samples;
        if (double(v) > threshold_ns)
            d.exact.push_back({double(v), seq, seq / window_samples});
    }
    d.window_samples.assign((n + window_samples - 1) / window_samples, window_samples);
    if (n % window_samples)
        d.window_samples.back() = n % window_samples;
    h.for_each_bucket([&](std::int64_t lo, std::int64_t hi, std::uint64_t c) {
        d.bins.push_back({double(lo), double(hi), c});
    });
    return d;
}

} // namespace irqloop::tail_test
