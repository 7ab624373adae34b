// SPDX-License-Identifier: MIT
#include "sampler.hpp"

#include "sampler-loop.hpp"

#include "cycle-clock.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace irqloop::logger
{

template class basic_sampler<cycle_clock>;

std::uint64_t measure_poll_cycles(hw::lines& l, int polls) noexcept
{
    hw::polled_wire* wire = hw::find<hw::polled_wire>(l);
    if (!wire)
        return 0;
    std::array<std::uint32_t, 4096> gaps{};
    std::size_t n = 0;
    std::uint64_t last = hw::cycles();
    for (int i = 0; i < polls; ++i) {
        (void)wire->sense();
        std::uint64_t t = hw::cycles();
        gaps[n++ % gaps.size()] =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(t - last, UINT32_MAX));
        last = t;
    }
    n = std::min(n, gaps.size());
    std::nth_element(gaps.begin(), gaps.begin() + n / 2, gaps.begin() + n);
    return gaps[n / 2];
}

std::uint64_t measure_drive_cycles(hw::lines& l, bool level, int drives) noexcept
{
    hw::polled_wire* wire = hw::find<hw::polled_wire>(l);
    if (!wire)
        return 0;
    std::array<std::uint32_t, 4096> costs{};
    std::size_t n = 0;
    for (int i = 0; i < drives; ++i) {
        std::uint64_t a = hw::cycles();
        wire->drive(level);
        std::uint64_t b = hw::cycles();
        costs[n++ % costs.size()] =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(b - a, UINT32_MAX));
    }
    n = std::min(n, costs.size());
    std::nth_element(costs.begin(), costs.begin() + n / 2, costs.begin() + n);
    return costs[n / 2];
}

double measure_clock_step_cycles(std::uint64_t (*read)() noexcept) noexcept
{
    constexpr int tries = 32, changes = 16;
    constexpr long max_reads = 1'000'000; // per try: a counter that never moves ends it
    double best = 0;
    for (int t = 0; t < tries; ++t) {
        long reads = 0;
        std::uint64_t last = read(), v = last;
        while (v == last && reads++ < max_reads)
            v = read();
        if (v == last)
            return 0;
        // From a change on: whole steps only.
        const std::uint64_t first = v;
        int seen = 0;
        last = v;
        while (seen < changes && reads++ < max_reads) {
            v = read();
            if (v != last) {
                ++seen;
                last = v;
            }
        }
        if (seen < changes)
            return 0;
        const double step = static_cast<double>(last - first) / changes;
        if (best == 0 || step < best)
            best = step;
    }
    return best;
}

gap_limit_choice auto_gap_limit(double poll_ns, double drive_ns, double clock_step_ns,
                                std::int64_t device_bracket_ns) noexcept
{
    // Each term is bounded (0 to 1 h; NaN reads as 0) before it becomes an integer.
    auto ns = [](double v) {
        return v > 0 ? static_cast<std::int64_t>(std::min(v, 3.6e12)) : std::int64_t{0};
    };
    // Rounded up: 3 x 999.997 ns (qemu's 62.5 ticks at the calibrated rate) is 3 us, not 2999 ns.
    const double steps = 3 * clock_step_ns;
    gap_limit_choice c{1000, "1 us"};
    const std::pair<std::int64_t, const char*> terms[] = {
        {ns(20 * poll_ns), "20 x poll"},
        {ns(4 * drive_ns), "4 x drive()"},
        {ns(steps > 0 ? std::ceil(steps) : 0), "3 x clock step"},
        {device_bracket_ns, "device"}};
    for (const auto& [v, rule] : terms)
        if (v > c.ns)
            c = {v, rule};
    return c;
}

} // namespace irqloop::logger
