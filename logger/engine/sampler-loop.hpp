// SPDX-License-Identifier: MIT
// The sampler's loop, a template over its clock (sampler.hpp): instantiated for the cycle
// counter in sampler.cpp, and for a scripted clock by the tests (tests/support).
#pragma once

#include "sampler.hpp"

#include <algorithm>

namespace irqloop::logger
{

namespace detail
{

// xorshift64*: cheap, allocation-free jitter; the quality needed is "not phase-locked".
inline std::uint64_t next_random(std::uint64_t& state) noexcept
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
}

} // namespace detail

template <class Clock>
basic_sampler<Clock>::basic_sampler(hw::lines& wire, spsc_ring<sample>& ring,
                                    const sampler_config& cfg, Clock clock)
    : wire_(hw::polled(wire)), device_(hw::find<hw::device_timed_wire>(wire)),
      trigger_(hw::find<hw::trigger_line>(wire)), truth_(hw::find<hw::truth_source>(wire)),
      ring_(ring), cfg_(cfg), clock_(clock)
{
    if (cfg_.seed == 0)
        cfg_.seed = 1;
    if (!trigger_) // no line to raise (the run refuses --trigger-line on such a wire)
        cfg_.trigger_above_cycles = 0;
}

// Busy-wait: sleeping would let the CPU enter an idle state whose exit latency lands in the
// next measurement, and a timer wake-up has jitter of its own. Returns the last clock
// reading (at or after t), or 0 when stopped.
template <class Clock>
std::uint64_t basic_sampler<Clock>::spin_until(std::uint64_t t,
                                               const std::atomic<bool>& stop) noexcept
{
    std::uint32_t n = 0;
    std::uint64_t now;
    while ((now = clock_.now()) < t)
        if ((++n & 0xfff) == 0 && stop.load(std::memory_order_relaxed))
            return 0;
    return now;
}

template <class Clock>
int basic_sampler<Clock>::settle(const std::atomic<bool>& stop, bool& changed) noexcept
{
    int level = wire_.sense();
    changed = false;
    std::uint64_t still_since = clock_.now();
    while (level >= 0 && clock_.now() - still_since < cfg_.quiet_cycles &&
           !stop.load(std::memory_order_relaxed)) {
        int v = wire_.sense();
        if (v != level) {
            level = v;
            changed = true;
            still_since = clock_.now();
        }
    }
    return level;
}

template <class Clock>
int basic_sampler<Clock>::resync(const std::atomic<bool>& stop, int& driven) noexcept
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

// The loop for the wire's kind, chosen once: a device-timed wire, or a polled one.
template <class Clock> sampler_end basic_sampler<Clock>::run(const std::atomic<bool>& stop) noexcept
{
    return device_ ? loop<true>(stop) : loop<false>(stop);
}

// The pacing loop, for both kinds of wire: pace, take one step (a polled or a device-timed
// sample), publish it, then follow up (trigger, re-sync after a loss, re-arm).

template <class Clock>
template <bool Device>
sampler_end basic_sampler<Clock>::loop(const std::atomic<bool>& stop) noexcept
{
    std::uint64_t rng = cfg_.seed, seq = 0;
    int driven = 0;
    wire_.drive(false);
    if (resync(stop, driven) < 0)
        return sampler_end::line_failure;
    counters_.late.store(0, std::memory_order_relaxed); // what settled before the first stimulus
    start_ = clock_.now();
    const std::uint64_t end = cfg_.duration_cycles ? start_ + cfg_.duration_cycles : UINT64_MAX;
    std::uint64_t next = start_;
    while (!(cfg_.samples && seq >= cfg_.samples)) {
        const std::uint64_t paced = spin_until(next, stop);
        if (paced == 0 || stop.load(std::memory_order_relaxed))
            return sampler_end::stopped;
        if (paced >= end)
            return sampler_end::done;
        sample s;
        std::uint64_t proven = 0; // the bracket's lower bound, unsaturated
        bool late = false;
        step r;
        if constexpr (Device)
            r = measure_device(driven, s, proven, late);
        else
            r = measure_polled(stop, driven, s, proven);
        if (r == step::failed)
            return sampler_end::line_failure;
        if (r == step::stopped)
            return stop.load() ? sampler_end::stopped : sampler_end::line_failure;
        if (r == step::resynced) {
            next = clock_.now();
            continue;
        }
        s.seq = seq++;
        publish(s);
        if (!follow_up<Device>(stop, s, proven, late, driven))
            return stop.load() ? sampler_end::stopped : sampler_end::line_failure;
        next = s.t0_cycles + cfg_.interval_cycles;
        if (cfg_.jitter_cycles)
            next += detail::next_random(rng) % cfg_.jitter_cycles;
    }
    return sampler_end::done;
}

// What follows a published sample: the trigger on a proven latency, the re-sync after a loss,
// and a single-edge target's re-arm. False when the re-sync ended (stopped, or the line failed).
template <class Clock>
template <bool Device>
inline bool basic_sampler<Clock>::follow_up(const std::atomic<bool>& stop, const sample& s,
                                            std::uint64_t proven, bool late, int& driven) noexcept
{
    const bool lost = (s.flags & sample::lost) != 0;
    // The trigger fires on a proven latency: the bracket's lower bound.
    const bool trigger = cfg_.trigger_above_cycles && !lost && proven > cfg_.trigger_above_cycles;
    if (trigger) {
        trigger_->trigger(true);
        counters_.triggers.fetch_add(1, std::memory_order_relaxed);
    }
    if (lost) {
        counters_.lost.store(counters_.lost.load(std::memory_order_relaxed) + 1,
                             std::memory_order_relaxed);
        if (late)
            counters_.late.fetch_add(1, std::memory_order_relaxed);
        if (resync(stop, driven) < 0)
            return false;
    }
    if (!Device && !cfg_.both_edges && driven == 1) {
        // Single-edge target: take the line low again without measuring; the target answers
        // rising edges only.
        spin_until(clock_.now() + cfg_.rearm_cycles, stop);
        wire_.drive(false);
        driven = 0;
        spin_until(clock_.now() + cfg_.rearm_cycles, stop);
    }
    if (trigger) // raised for one sample (a device's next measure() carries it down too)
        trigger_->trigger(false);
    return true;
}

template <class Clock> inline void basic_sampler<Clock>::publish(const sample& s) noexcept
{
    // Plain stores, not locked adds: only this thread writes the counters.
    counters_.stimuli.store(s.seq + 1, std::memory_order_relaxed);
    if (!ring_.try_push(s))
        counters_.overflows.store(counters_.overflows.load(std::memory_order_relaxed) + 1,
                                  std::memory_order_relaxed);
}

// One polled sample: the idle level, the edge, the spin on sense() to the answer or the
// deadline, and the bracket.
template <class Clock>
inline typename basic_sampler<Clock>::step
basic_sampler<Clock>::measure_polled(const std::atomic<bool>& stop, int& driven, sample& s,
                                     std::uint64_t& proven) noexcept
{
    // The idle level, read after pacing and just before the edge (but before t0, so its
    // cost stays out of the measurement): a late answer to an earlier edge that lands
    // during the pacing wait is caught here instead of passing for this edge's answer.
    // A following target must show the driven level; if it does not, a late answer or a
    // missed edge has put it out of step, and it is re-synchronised.
    const int baseline = wire_.sense();
    if (baseline < 0)
        return step::failed;
    if (cfg_.far_end_follows && baseline != driven) {
        counters_.late.fetch_add(1, std::memory_order_relaxed);
        return resync(stop, driven) < 0 ? step::stopped : step::resynced;
    }
    const std::uint64_t t0 = clock_.now();
    const bool rising = driven == 0;
    wire_.drive(rising);
    // The end of drive(): the stimulus has left by now. A preemption inside drive() widens
    // the bracket instead of passing for target latency.
    const std::uint64_t t1 = clock_.now();
    driven = rising ? 1 : 0;
    // Toggling target: any change from the idle level. Following target: the driven
    // level, so that a stale answer to an earlier edge is never taken for this one.
    const int expected = cfg_.far_end_follows ? driven : !baseline;

    // The spin. `start` is the clock just before a poll's read, `t` just after it. When a
    // poll does not see the answer, the answer came after that poll's start: the latest
    // such start is the bracket's lower end. A gap before it cost nothing (the line was
    // read after it and had not changed); it is counted as a logger interruption.
    // The deadline runs from t1, the end of drive(): the edge had left by then, so an answer
    // missing at t1 + timeout proves a latency of at least the timeout. From t0, a logger
    // stall inside drive() before the edge left would eat the timeout and pass a real answer
    // for a lost one (seen: 1 in 12 sim runs beside two CPU hogs).
    const std::uint64_t deadline = t1 + cfg_.timeout_cycles;
    std::uint64_t start = t1, t = t1, lower = t1, max_gap = 0, last_gap = 0;
    std::uint32_t interruptions = 0;
    int v;
    while (true) {
        v = wire_.sense();
        t = clock_.now();
        // Lost only when a poll that began after the deadline still missed: a poll that read
        // the line in time and was then interrupted past the deadline proves nothing, and the
        // next poll looks again (a logger stall never passes for a lost answer).
        if (v == expected || v < 0 || start > deadline)
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
        return step::failed;

    const bool lost = v != expected;
    if (lost) // no bracket: every gap of the wait was outside one
        interruptions += last_gap > cfg_.gap_limit_cycles;
    // Upper bound t - t0, lower bound lower - t1: the width is the seeing poll, the last
    // poll that did not see (when there was one) and drive() itself.
    const std::uint64_t bracket = (t - t0) - (lower - t1);
    proven = lost ? 0 : lower - t1;
    s.t0_cycles = t0;
    s.latency_cycles = lost ? 0 : t - t0;
    s.bracket_cycles =
        lost ? 0 : static_cast<std::uint32_t>(std::min<std::uint64_t>(bracket, UINT32_MAX));
    s.max_gap_cycles = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_gap, UINT32_MAX));
    s.interruptions = static_cast<std::uint16_t>(
        std::min<std::uint32_t>(interruptions, sample::max_interruptions));
    s.flags = static_cast<std::uint16_t>(
        (rising ? sample::rising : 0u) | (lost ? sample::lost : 0u) |
        (!lost && bracket > cfg_.gap_limit_cycles ? sample::disturbed : 0u));
    s.set_truth(truth_ ? truth_->last_truth_cycles() : -1);
    return step::sample;
}

// One device-timed sample: the backend times it on its own clock; the host bookkeeps.
template <class Clock>
typename basic_sampler<Clock>::step basic_sampler<Clock>::measure_device(int& driven, sample& s,
                                                                         std::uint64_t& proven,
                                                                         bool& late) noexcept
{
    const auto timeout_ns =
        static_cast<std::int64_t>(static_cast<double>(cfg_.timeout_cycles) / cfg_.cycles_per_ns);
    const bool rising = driven == 0;
    const std::uint64_t t0 = clock_.now();
    hw::device_sample d;
    if (device_->measure(rising, timeout_ns, d) < 0)
        return step::failed;
    driven = rising ? 1 : 0;
    const double bracket = static_cast<double>(d.bracket_ns) * cfg_.cycles_per_ns;
    s.t0_cycles = t0;
    s.latency_cycles =
        d.lost ? 0
               : static_cast<std::uint64_t>(static_cast<double>(d.latency_ns) * cfg_.cycles_per_ns);
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
    s.flags =
        static_cast<std::uint16_t>((rising ? sample::rising : 0u) | (d.lost ? sample::lost : 0u) |
                                   (disturbed ? sample::disturbed : 0u));
    s.truth = sample::no_truth;
    proven = d.lost ? 0 : s.latency_cycles - s.bracket_cycles;
    late = d.lost && d.late;
    return step::sample;
}

} // namespace irqloop::logger
