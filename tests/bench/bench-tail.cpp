// SPDX-License-Identifier: MIT
// Cost of `irqloop tail`'s fit over a long run's stored tail (issue 25: at most 1 s for a
// 100M-sample run).
//
//   irqloop-bench-tail [samples]      (default 100,000,000)
//
// The tail is made as a run stores it, before the clock starts: the sim board's latency model
// (GPD spikes, shape +0.2, spike_p 1e-3) drawn into the run's histogram, and every draw above
// the 30 us threshold kept as an exceedance with its stimulus number and 10 s window (at
// 10 kHz). Timed: the automatic threshold, the fit with its intervals and checks, the return
// levels 1e-6 ... 1e-12 and P(latency > max) with intervals: what `irqloop tail` computes
// once the rows are read.
//
// Then the block-maxima (GEV) fit over 3600 and 36000 windows' maxima (an hour and a night of 1 s
// windows at 10 kHz), drawn in closed form from the same tail (a window's max M above the
// spikes' start u: P(M <= x) = (1 - zeta S(x))^m for m samples, S the GPD survival), timed
// with the three levels `irqloop tail` prints with its intervals: with every maximum in the
// likelihood, and binned at 0.2 % as tail does from 1000 windows on.
#include "histogram.hpp"
#include "sim/latency-model.hpp"
#include "spec.hpp"
#include "tail-fit.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

using namespace irqloop;

int main(int argc, char** argv)
{
    const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000'000;
    hw::spec s("sim:model=normal,mean=8us,sd=1us,spike_p=1e-3,spike_min=50us,spike_tail=gpd,"
               "spike_scale=10us,spike_shape=0.2,seed=1");
    auto m = hw::latency_model::from_spec(s);
    logger::histogram h;
    analysis::tail_data d;
    d.exact_above_ns = 30'000;
    d.exact_complete = true;
    const std::uint64_t per_window = 100'000; // 10 s at 10 kHz
    for (std::uint64_t seq = 0; seq < n; ++seq) {
        const auto v = std::int64_t(std::llround(m.draw().delay_ns));
        h.record(v);
        if (v > 30'000)
            d.exact.push_back({double(v), seq, seq / per_window});
    }
    d.samples = n;
    d.window_samples.assign((n + per_window - 1) / per_window, per_window);
    h.for_each_bucket([&](std::int64_t lo, std::int64_t hi, std::uint64_t c) {
        d.bins.push_back({double(lo), double(hi), c});
    });

    // Timed twice: from the exact exceedances, and from the histogram's buckets alone (a run
    // whose exceedances were dropped over --max-exceedances).
    for (const bool exact : {true, false}) {
        d.exact_complete = exact;
        const auto t0 = std::chrono::steady_clock::now();
        const auto f = analysis::fit_tail(d);
        double sink = 0;
        for (double p : {1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12})
            sink += analysis::return_level(d, f, p).ci.hi;
        sink += analysis::p_exceed(d, f, double(h.max())).ci.hi;
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("tail fit over %llu samples from %s (%zu stored exceedances, %zu histogram "
                    "buckets): %.3f s; threshold %.0f ns, %llu exceedances, shape %.3f (%d)\n",
                    static_cast<unsigned long long>(n),
                    exact ? "the exact exceedances" : "the histogram alone", d.exact.size(),
                    d.bins.size(), secs, f.params.threshold_ns,
                    static_cast<unsigned long long>(f.exceedances), f.params.xi, sink > 0);
    }

    for (const std::size_t windows : {std::size_t{3600}, std::size_t{36000}}) {
        const double u = 50'000, sigma = 10'000, xi = 0.2, zeta = 1e-3, m = 10'000;
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> unit(0, 1);
        std::vector<double> maxima;
        for (std::size_t b = 0; b < windows; ++b) {
            const double sv = -std::expm1(std::log(unit(rng)) / m) / zeta; // S(M)
            maxima.push_back(std::round(u + sigma * std::expm1(-xi * std::log(sv)) / xi));
        }
        // Every maximum in the likelihood (as before), then binned at 0.2 % with coarser
        // searches (analysis::gev_bin_from: what tail does from 1000 windows on).
        for (const std::size_t bin_from : {std::size_t{0}, analysis::gev_bin_from}) {
            const auto t0 = std::chrono::steady_clock::now();
            const std::clock_t c0 = std::clock();
            const auto g = analysis::fit_gev(maxima, m, 0.95, 10, bin_from);
            double sink = 0;
            std::string levels;
            for (double p : {1e-6, 1e-9, 1e-12}) {
                const auto l = analysis::gev_return_level(maxima, g, p, 0.95, bin_from);
                sink += l.ci.hi;
                char b[96];
                std::snprintf(b, sizeof b, " %.4g [%.4g, %.4g]", l.level_ns / 1e3, l.ci.lo / 1e3,
                              l.ci.hi / 1e3);
                levels += b;
            }
            const double secs =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
            std::printf("GEV fit over %zu window maxima (%.0f samples each), %s, with the levels "
                        "at 1e-6, 1e-9, 1e-12 and their intervals: %.3f s (%.3f s of CPU); "
                        "shape %.4f [%.4f, %.4f]; levels (us)%s (%d)\n",
                        windows, m, bin_from ? "binned at 0.2 %" : "every maximum", secs, cpu,
                        g.params.xi, g.xi_ci.lo, g.xi_ci.hi, levels.c_str(), sink > 0);
        }
    }
    return 0;
}
