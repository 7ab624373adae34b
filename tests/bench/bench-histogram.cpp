// SPDX-License-Identifier: MIT
// Cost of histogram::record() and of reading percentiles back.
//
//   irqloop-bench-histogram [records]      (default 100,000,000)
//
// Values are drawn before the clock starts, into a 1 Mi-entry table read in order, so the
// figure is record() plus one sequential load, not the random generator.
#include "histogram.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using irqloop::logger::histogram;

namespace
{

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0)
{
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

template <typename Dist> std::vector<std::int64_t> table(Dist dist, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> v(1 << 20);
    for (auto& x : v)
        x = std::llround(dist(rng));
    return v;
}

void bench_record(const char* name, const std::vector<std::int64_t>& values, std::uint64_t n)
{
    histogram h;
    const std::size_t mask = values.size() - 1;
    const auto t0 = clock_type::now();
    for (std::uint64_t k = 0; k < n; ++k)
        h.record(values[k & mask]);
    const double s = seconds_since(t0);
    std::printf("record  %-34s %6.2f ns/record  (%llu records in %.2f s, %.0f M/s; "
                "p99 %lld ns, max %lld ns)\n",
                name, s * 1e9 / double(n), static_cast<unsigned long long>(h.count()), s,
                double(n) / s / 1e6, static_cast<long long>(h.value_at_percentile(99)),
                static_cast<long long>(h.max()));
}

} // namespace

int main(int argc, char** argv)
{
    const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000'000;

    // 10 ns .. 10 s, uniform in log: every bucket of the default range gets hit.
    const auto log_uniform = table(
        [](std::mt19937_64& r) {
            return std::exp(
                std::uniform_real_distribution<double>(std::log(10.0), std::log(1e10))(r));
        },
        1);
    // What a soak looks like: about 5 us, a tail to a few hundred us.
    const auto lognormal = table(std::lognormal_distribution<double>(std::log(5000.0), 0.6), 2);
    const std::vector<std::int64_t> constant(1 << 20, 4242);

    bench_record("log-uniform 10 ns..10 s", log_uniform, n);
    bench_record("lognormal median 5 us", lognormal, n);
    bench_record("constant 4242 ns", constant, n);

    // Percentile reads on a histogram filled across the whole range (the slowest walk).
    histogram h;
    for (auto v : log_uniform)
        h.record(v);
    const std::array<double, 8> ps = {50, 90, 99, 99.9, 99.99, 99.999, 99.9999, 100};
    std::array<std::int64_t, ps.size()> out{};
    const int reps = 20'000;
    std::int64_t sink = 0;
    auto t0 = clock_type::now();
    for (int r = 0; r < reps; ++r) {
        h.percentiles(ps, out);
        sink += out[r % out.size()];
    }
    const double per_call = seconds_since(t0) / reps;
    t0 = clock_type::now();
    for (int r = 0; r < reps; ++r)
        sink += h.value_at_percentile(99.9999);
    const double per_single = seconds_since(t0) / reps;
    t0 = clock_type::now();
    double msum = 0;
    for (int r = 0; r < reps; ++r)
        msum += h.mean();
    const double per_mean = seconds_since(t0) / reps;
    histogram other;
    other.merge(h);
    t0 = clock_type::now();
    for (int r = 0; r < reps; ++r)
        other.merge(h);
    const double per_merge = seconds_since(t0) / reps;
    t0 = clock_type::now();
    for (int r = 0; r < reps; ++r)
        other.reset();
    const double per_reset = seconds_since(t0) / reps;

    std::printf("percentiles() of %zu, full range        %8.2f us/call\n", out.size(),
                per_call * 1e6);
    std::printf("value_at_percentile(99.9999)          %8.2f us/call\n", per_single * 1e6);
    std::printf("mean()                                %8.2f us/call\n", per_mean * 1e6);
    std::printf("merge()                               %8.2f us/call\n", per_merge * 1e6);
    std::printf("reset()                               %8.2f us/call\n", per_reset * 1e6);
    std::printf("memory (10 s range)                   %8zu bytes, %zu counters\n",
                h.memory_bytes(), h.bucket_count());
    std::printf("(checksum %lld %.0f %llu)\n", static_cast<long long>(sink), msum,
                static_cast<unsigned long long>(other.count()));
    return 0;
}
