// SPDX-License-Identifier: MIT
// Benchmark of the recorder's ingest: synthetic samples in, statistics out, no store.
// Usage: irqloop-bench-recorder [samples_millions=50]
#include "recorder.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace irqloop;

int main(int argc, char** argv)
{
    const std::uint64_t n = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 50) * 1'000'000;
    logger::recorder_config cfg;
    cfg.clock.hz = 1e9; // cycles are ns: the conversion still runs, with an exact result
    cfg.clock.source = "synthetic";
    cfg.threshold_ns = 30'000;
    cfg.stats_interval_ns = 10'000'000'000;
    logger::recorder rec(cfg, nullptr, 0);

    // A realistic stream: lognormal around 8 us with rare spikes, 10 us apart.
    std::vector<logger::sample> batch(8192);
    std::mt19937_64 rng(1);
    std::lognormal_distribution<double> lat(std::log(8000.0), 0.15);
    std::vector<std::uint64_t> pool(1 << 16);
    for (auto& v : pool)
        v = static_cast<std::uint64_t>(lat(rng));
    for (std::size_t i = 0; i < 64; ++i)
        pool[i * 997 % pool.size()] = 60'000 + i * 2000;

    auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t seq = 0; seq < n;) {
        std::size_t k = 0;
        for (; k < batch.size() && seq < n; ++k, ++seq) {
            auto& s = batch[k];
            s.seq = seq;
            s.t0_cycles = seq * 10'000;
            s.latency_cycles = pool[seq & (pool.size() - 1)];
            s.max_gap_cycles = 30;
            s.flags = seq & 1;
        }
        rec.add(std::span<const logger::sample>(batch.data(), k));
    }
    rec.finish(n * 10'000);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto s = rec.summary();
    std::printf("recorder ingest: %llu samples in %.2f s = %.2f M samples/s (%.1f ns per sample); "
                "%llu intervals, p99.9 %lld ns, max %lld ns\n",
                static_cast<unsigned long long>(n), secs, static_cast<double>(n) / secs / 1e6,
                secs * 1e9 / static_cast<double>(n),
                static_cast<unsigned long long>(rec.intervals_committed()),
                static_cast<long long>(s.p999_ns), static_cast<long long>(s.max_ns));
    return 0;
}
