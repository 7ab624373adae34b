// SPDX-License-Identifier: MIT
#include "sampler.hpp"

#include "cycle-clock.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace irqloop::logger
{

namespace
{

// xorshift64*: cheap, allocation-free jitter; the quality needed is "not phase-locked".
std::uint64_t next_random(std::uint64_t& state) noexcept
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
}

// Busy-wait: sleeping would let the CPU enter an idle state whose exit latency lands in the
// next measurement, and a timer wake-up has jitter of its own. Returns the last clock
// reading (at or after t), or 0 when stopped.
std::uint64_t spin_until(std::uint64_t t, const std::atomic<bool>& stop) noexcept
{
    std::uint32_t n = 0;
    std::uint64_t now;
    while ((now = hw::cycles()) < t)
        if ((++n & 0xfff) == 0 && stop.load(std::memory_order_relaxed))
            return 0;
    return now;
}

} // namespace

sampler::sampler(hw::lines& wire, spsc_ring<sample>& ring, const sampler_config& cfg) noexcept
    : wire_(wire), ring_(ring), cfg_(cfg)
{
    if (cfg_.seed == 0)
        cfg_.seed = 1;
}

int sampler::settle(const std::atomic<bool>& stop, bool& changed) noexcept
{
    int level = wire_.sense();
    changed = false;
    std::uint64_t still_since = hw::cycles();
    while (level >= 0 && hw::cycles() - still_since < cfg_.quiet_cycles &&
           !stop.load(std::memory_order_relaxed)) {
        int v = wire_.sense();
        if (v != level) {
            level = v;
            changed = true;
            still_since = hw::cycles();
        }
    }
    return level;
}

int sampler::resync(const std::atomic<bool>& stop, int& driven) noexcept
{
    bool changed = false;
    int level = settle(stop, changed);
    if (level < 0)
        return -1;
    if (changed)
        counters_.late.fetch_add(1, std::memory_order_relaxed);
    if (cfg_.far_end_follows && level != driven) {
        // The target missed the edge: bring the stimulus to the response's level without
        // measuring. A following target answers that edge with the level it already shows.
        wire_.drive(level != 0);
        driven = level;
        level = settle(stop, changed);
        if (level < 0)
            return -1;
    }
    return level;
}

sampler_end sampler::run(const std::atomic<bool>& stop) noexcept
{
    std::uint64_t rng = cfg_.seed;
    int driven = 0;
    wire_.drive(false);
    int baseline = resync(stop, driven);
    if (baseline < 0)
        return sampler_end::line_failure;
    counters_.late.store(0, std::memory_order_relaxed); // what settled before the first stimulus
    if (wire_.device_timed())
        return run_device(stop);

    start_ = hw::cycles();
    const std::uint64_t end = cfg_.duration_cycles ? start_ + cfg_.duration_cycles : UINT64_MAX;
    std::uint64_t next = start_;
    std::uint64_t seq = 0;
    bool triggered = false;

    while (true) {
        if (cfg_.samples && seq >= cfg_.samples)
            return sampler_end::done;
        const std::uint64_t paced = spin_until(next, stop);
        if (paced == 0 || stop.load(std::memory_order_relaxed))
            return sampler_end::stopped;
        if (paced >= end)
            return sampler_end::done;
        // The idle level, read after pacing and just before the edge (but before t0, so its
        // cost stays out of the measurement): a late answer to an earlier edge that lands
        // during the pacing wait is caught here instead of passing for this edge's answer.
        // A following target must show the driven level; if it does not, a late answer or a
        // missed edge has put it out of step, and it is re-synchronised.
        baseline = wire_.sense();
        if (baseline < 0)
            return sampler_end::line_failure;
        if (cfg_.far_end_follows && baseline != driven) {
            counters_.late.fetch_add(1, std::memory_order_relaxed);
            if (resync(stop, driven) < 0)
                return stop.load() ? sampler_end::stopped : sampler_end::line_failure;
            next = hw::cycles();
            continue;
        }
        const std::uint64_t t0 = hw::cycles();

        const bool rising = driven == 0;
        wire_.drive(rising);
        // The end of drive(): the stimulus has left by now. A preemption inside drive() widens
        // the bracket instead of passing for target latency.
        const std::uint64_t t1 = hw::cycles();
        driven = rising ? 1 : 0;
        // Toggling target: any change from the idle level. Following target: the driven
        // level, so that a stale answer to an earlier edge is never taken for this one.
        const int expected = cfg_.far_end_follows ? driven : !baseline;

        // The spin. `start` is the clock just before a poll's read, `t` just after it. When a
        // poll does not see the answer, the answer came after that poll's start: the latest
        // such start is the bracket's lower end. A gap before it cost nothing (the line was
        // read after it and had not changed); it is counted as a logger interruption.
        const std::uint64_t deadline = t0 + cfg_.timeout_cycles;
        std::uint64_t start = t1, t = t1, lower = t1, max_gap = 0, last_gap = 0;
        std::uint32_t interruptions = 0;
        int v;
        while (true) {
            v = wire_.sense();
            t = hw::cycles();
            if (v == expected || v < 0 || t > deadline)
                break;
            // The previous poll was not the last one that missed: its gap lies outside the
            // bracket.
            interruptions += last_gap > cfg_.gap_limit_cycles;
            last_gap = t - start;
            max_gap = last_gap > max_gap ? last_gap : max_gap;
            lower = start;
            start = t;
        }
        if (v < 0)
            return sampler_end::line_failure;

        const bool lost = v != expected;
        if (lost) // no bracket: every gap of the wait was outside one
            interruptions += last_gap > cfg_.gap_limit_cycles;
        // Upper bound t - t0, lower bound lower - t1: the width is the seeing poll, the last
        // poll that did not see (when there was one) and drive() itself.
        const std::uint64_t bracket = (t - t0) - (lower - t1);
        sample s;
        s.seq = seq++;
        s.t0_cycles = t0;
        s.latency_cycles = lost ? 0 : t - t0;
        s.bracket_cycles =
            lost ? 0 : static_cast<std::uint32_t>(std::min<std::uint64_t>(bracket, UINT32_MAX));
        s.max_gap_cycles = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_gap, UINT32_MAX));
        s.interruptions = interruptions;
        s.flags = (rising ? sample::rising : 0u) | (lost ? sample::lost : 0u) |
                  (!lost && bracket > cfg_.gap_limit_cycles ? sample::disturbed : 0u);
        // Plain stores, not locked adds: only this thread writes the counters.
        counters_.stimuli.store(seq, std::memory_order_relaxed);
        if (!ring_.try_push(s))
            counters_.overflows.store(counters_.overflows.load(std::memory_order_relaxed) + 1,
                                      std::memory_order_relaxed);

        // The trigger fires on a proven latency: the bracket's lower bound.
        if (cfg_.trigger_above_cycles && !lost && t - t0 - bracket > cfg_.trigger_above_cycles &&
            !triggered) {
            wire_.trigger(true);
            triggered = true;
            counters_.triggers.fetch_add(1, std::memory_order_relaxed);
        }

        if (lost) {
            counters_.lost.store(counters_.lost.load(std::memory_order_relaxed) + 1,
                                 std::memory_order_relaxed);
            if (resync(stop, driven) < 0)
                return stop.load() ? sampler_end::stopped : sampler_end::line_failure;
        }

        if (!cfg_.both_edges && driven == 1) {
            // Single-edge target: take the line low again without measuring; the target
            // answers rising edges only.
            spin_until(hw::cycles() + cfg_.rearm_cycles, stop);
            wire_.drive(false);
            driven = 0;
            spin_until(hw::cycles() + cfg_.rearm_cycles, stop);
        }
        if (triggered) {
            wire_.trigger(false);
            triggered = false;
        }

        next = t0 + cfg_.interval_cycles;
        if (cfg_.jitter_cycles)
            next += next_random(rng) % cfg_.jitter_cycles;
    }
}

sampler_end sampler::run_device(const std::atomic<bool>& stop) noexcept
{
    // The backend times the sample on its own clock; the host paces and bookkeeps.
    std::uint64_t rng = cfg_.seed, seq = 0;
    int driven = 0;
    start_ = hw::cycles();
    const std::uint64_t end = cfg_.duration_cycles ? start_ + cfg_.duration_cycles : UINT64_MAX;
    const auto timeout_ns =
        static_cast<std::int64_t>(static_cast<double>(cfg_.timeout_cycles) / cfg_.cycles_per_ns);
    std::uint64_t next = start_;
    while (true) {
        if (cfg_.samples && seq >= cfg_.samples)
            return sampler_end::done;
        const std::uint64_t paced = spin_until(next, stop);
        if (paced == 0 || stop.load(std::memory_order_relaxed))
            return sampler_end::stopped;
        if (paced >= end)
            return sampler_end::done;
        const bool rising = driven == 0;
        const std::uint64_t t0 = hw::cycles();
        hw::device_sample d;
        if (wire_.measure(rising, timeout_ns, d) < 0)
            return sampler_end::line_failure;
        driven = rising ? 1 : 0;
        const double bracket = static_cast<double>(d.bracket_ns) * cfg_.cycles_per_ns;
        sample s;
        s.seq = seq++;
        s.t0_cycles = t0;
        s.latency_cycles = d.lost ? 0
                                  : static_cast<std::uint64_t>(static_cast<double>(d.latency_ns) *
                                                               cfg_.cycles_per_ns);
        // The device's bracket; a suspect sample (a glitch, a host stall the device could not
        // rule out) proves nothing, so its bracket is its whole latency.
        s.bracket_cycles =
            d.lost ? 0
                   : static_cast<std::uint32_t>(std::min<double>(
                         d.suspect ? static_cast<double>(s.latency_cycles) : bracket, UINT32_MAX));
        s.max_gap_cycles = 0; // no host polls: the device samples without gaps
        s.interruptions = 0;
        const bool disturbed =
            d.suspect || (!d.lost && bracket > static_cast<double>(cfg_.gap_limit_cycles));
        s.flags = (rising ? sample::rising : 0u) | (d.lost ? sample::lost : 0u) |
                  (disturbed ? sample::disturbed : 0u);
        counters_.stimuli.store(seq, std::memory_order_relaxed);
        if (!ring_.try_push(s))
            counters_.overflows.store(counters_.overflows.load(std::memory_order_relaxed) + 1,
                                      std::memory_order_relaxed);
        if (cfg_.trigger_above_cycles && !d.lost &&
            s.latency_cycles - s.bracket_cycles > cfg_.trigger_above_cycles) {
            // Raised for one sample: the next measure() carries the level back down.
            wire_.trigger(true);
            wire_.trigger(false);
            counters_.triggers.fetch_add(1, std::memory_order_relaxed);
        }
        if (d.lost) {
            counters_.lost.store(counters_.lost.load(std::memory_order_relaxed) + 1,
                                 std::memory_order_relaxed);
            if (d.late)
                counters_.late.fetch_add(1, std::memory_order_relaxed);
            if (resync(stop, driven) < 0)
                return stop.load() ? sampler_end::stopped : sampler_end::line_failure;
        }
        next = t0 + cfg_.interval_cycles;
        if (cfg_.jitter_cycles)
            next += next_random(rng) % cfg_.jitter_cycles;
    }
}

std::uint64_t measure_poll_cycles(hw::lines& wire, int polls) noexcept
{
    std::array<std::uint32_t, 4096> gaps{};
    std::size_t n = 0;
    std::uint64_t last = hw::cycles();
    for (int i = 0; i < polls; ++i) {
        (void)wire.sense();
        std::uint64_t t = hw::cycles();
        gaps[n++ % gaps.size()] =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(t - last, UINT32_MAX));
        last = t;
    }
    n = std::min(n, gaps.size());
    std::nth_element(gaps.begin(), gaps.begin() + n / 2, gaps.begin() + n);
    return gaps[n / 2];
}

std::uint64_t measure_drive_cycles(hw::lines& wire, bool level, int drives) noexcept
{
    std::array<std::uint32_t, 4096> costs{};
    std::size_t n = 0;
    for (int i = 0; i < drives; ++i) {
        std::uint64_t a = hw::cycles();
        wire.drive(level);
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
