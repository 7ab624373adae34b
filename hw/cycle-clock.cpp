// SPDX-License-Identifier: MIT
#include "cycle-clock.hpp"

#include "error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace irqloop::hw
{

const char* cycle_source() noexcept
{
#if defined(__x86_64__)
    return "tsc";
#elif defined(__aarch64__)
    return "cntvct";
#else
    return "monotonic_raw";
#endif
}

bool tsc_invariant() noexcept
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d & (1u << 8)) != 0;
#else
    return true;
#endif
}

namespace
{

struct stamp {
    std::uint64_t cyc;
    std::int64_t ns;
};

// A cycle reading paired with the raw clock, bracketed tightly so a preemption between the
// two reads cannot skew the pair; keeps the tightest of a few tries.
stamp paired_read()
{
    stamp best{};
    std::int64_t best_width = INT64_MAX;
    for (int i = 0; i < 16; ++i) {
        std::int64_t a = monotonic_raw_ns();
        std::uint64_t c = cycles();
        std::int64_t b = monotonic_raw_ns();
        if (b - a < best_width) {
            best_width = b - a;
            best = {c, a + (b - a) / 2};
        }
    }
    return best;
}

double read_cost_ns(double hz)
{
    std::vector<std::uint64_t> costs;
    costs.reserve(64);
    for (int r = 0; r < 64; ++r) {
        std::uint64_t a = cycles();
        for (int i = 0; i < 100; ++i)
            (void)cycles();
        std::uint64_t b = cycles();
        costs.push_back(b - a);
    }
    std::sort(costs.begin(), costs.end());
    return static_cast<double>(costs[costs.size() / 2]) / 101.0 * 1e9 / hz;
}

} // namespace

clock_info calibrate_clock(bool force, double tolerance_ppm, std::int64_t window_ns, int max_rounds)
{
    clock_info info;
    info.source = cycle_source();
    info.invariant = tsc_invariant();
    if (!info.invariant && !force)
        throw error("calibrate the cycle clock", "the TSC is not invariant on this CPU",
                    "its rate changes with frequency scaling; pass --force-tsc to use it anyway");

    double prev = 0;
    for (int round = 1; round <= max_rounds; ++round) {
        stamp a = paired_read();
        std::this_thread::sleep_for(std::chrono::nanoseconds(window_ns));
        stamp b = paired_read();
        double hz = static_cast<double>(b.cyc - a.cyc) * 1e9 / static_cast<double>(b.ns - a.ns);
        info.rounds = round;
        if (prev > 0) {
            double ppm = std::fabs(hz - prev) / prev * 1e6;
            info.agreement_ppm = ppm;
            if (ppm <= tolerance_ppm) {
                info.hz = (hz + prev) / 2;
                info.read_cost_ns = read_cost_ns(info.hz);
                return info;
            }
        }
        prev = hz;
        // A disagreement usually means a preemption inside the window: widen it.
        window_ns = window_ns * 3 / 2;
    }
    char why[128];
    std::snprintf(why, sizeof why, "rate estimates still differ by %.0f ppm after %d rounds",
                  info.agreement_ppm, max_rounds);
    throw error("calibrate the cycle clock", why,
                "the machine is too busy or the clock is unstable; retry on a quieter machine",
                exit_failure);
}

const clock_info& process_clock(bool force)
{
    static const clock_info info = calibrate_clock(force);
    return info;
}

} // namespace irqloop::hw
