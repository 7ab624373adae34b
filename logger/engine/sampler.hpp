// SPDX-License-Identifier: MIT
#pragma once

#include "cycle-clock.hpp"
#include "lines.hpp"
#include "sample.hpp"
#include "spsc-ring.hpp"

#include <atomic>
#include <cstdint>

namespace irqloop::logger
{

/** @brief The sampler's settings, all in cycles of hw::cycles(). */
struct sampler_config final {
    std::uint64_t samples = 0;          ///< stop after this many stimuli measured; 0 = no limit
    std::uint64_t duration_cycles = 0;  ///< stop after this long; 0 = no limit
    std::uint64_t interval_cycles = 0;  ///< stimulus period; 0 = as fast as the loop allows
    std::uint64_t jitter_cycles = 0;    ///< uniform random extra delay in [0, jitter)
    std::uint64_t timeout_cycles = 0;   ///< a response later than this is lost
    std::uint64_t gap_limit_cycles = 0; ///< a bracket wider than this flags the sample disturbed
    std::uint64_t quiet_cycles = 0;     ///< after a loss: the response must stay still this long
    std::uint64_t rearm_cycles = 0;     ///< single-edge targets: time the line stays low
    std::uint64_t seed = 1;             ///< jitter random sequence
    bool both_edges = true;             ///< false: only rising edges are measured
    bool far_end_follows = false;       ///< the target sets the response to the stimulus level
    std::uint64_t trigger_above_cycles = 0; ///< raise the trigger line above this; 0 = off
    double cycles_per_ns = 1;               ///< device-timed backends report ns: the conversion
};

/** @brief Counters the sampler keeps; read by other threads while it runs. */
struct sampler_counters final {
    std::atomic<std::uint64_t> stimuli{0}; ///< measured edges driven (samples + lost)
    std::atomic<std::uint64_t> lost{0};
    std::atomic<std::uint64_t> late{0};      ///< lost responses that showed up while re-syncing
    std::atomic<std::uint64_t> overflows{0}; ///< samples dropped because the ring was full
    std::atomic<std::uint64_t> triggers{0};  ///< times the trigger line was raised
};

/** @brief Why run() returned. */
enum class sampler_end { done, stopped, line_failure };

/**
 * @brief The sampler's clock in a real run: the cycle counter, hw::cycles(). The clock is the
 * sampler's template parameter (the clock seam): an empty struct whose now() inlines, so the
 * hot loop costs what it did; tests/support/scripted-time.hpp gives a scripted one, on which
 * every answer, stall and loss falls at an exact cycle.
 */
struct cycle_clock final {
    std::uint64_t now() const noexcept { return hw::cycles(); }
};

/**
 * @brief The hot loop: drive an edge, spin on sense() until the response changes or the
 * deadline passes, push one sample per stimulus into the ring.
 *
 * The response protocol is level based, for two kinds of far end:
 * - a toggling target (lpptest's, the kernel responder) flips the response on each edge:
 *   any change from the idle level read before the edge is the answer;
 * - a following target (the simulated board, irqloop-responder --answer follow) sets the
 *   response to the stimulus level: only that level is the answer, so a late answer to an
 *   earlier edge can never pass for this one.
 * A missed edge costs one lost sample, never a hang. After a loss the sampler waits until
 * the response has been still for quiet_cycles (a change meanwhile counts as late); a
 * following target that missed the edge is brought back in step with an unmeasured edge.
 *
 * Each sample is bracketed by the polls around its answer: the upper bound (the reported
 * latency) runs from t0, just before drive(), to the poll that saw the answer; the lower bound
 * from the end of drive() to the start of the last poll that did not see it. The sample is
 * flagged disturbed only when that bracket is wider than gap_limit_cycles: a logger
 * interruption earlier in the wait costs nothing (the line was read after it and had not
 * changed) and is counted in the sample's interruptions, never held against it. A preemption
 * inside drive() widens the bracket, so it can no longer pass for target latency.
 *
 * A device-timed backend (hw::device_timed_wire, e.g. an FTDI chip) measures each
 * sample itself: the sampler paces, calls measure() and stores the latency (an upper bound)
 * with its bracket as the sample's gap; a bracket above the gap limit flags it disturbed.
 * Both kinds share one pacing loop (run()); only the per-sample step differs.
 *
 * A wire that knows each edge's true latency (hw::truth_source, the simulated board) has it
 * stored in the sample, beside what was measured.
 *
 * run() neither allocates nor throws; a line failure ends the loop and is left in the lines'
 * sticky error. A full ring drops the sample and counts an overflow; the sampler never waits
 * for the consumer.
 */
template <class Clock> class basic_sampler final
{
public:
    /** @throws irqloop::error when @p wire cannot be driven and sensed (hw::polled()). */
    basic_sampler(hw::lines& wire, spsc_ring<sample>& ring, const sampler_config& cfg,
                  Clock clock = Clock{});

    /** @brief Measure until done or @p stop becomes true. */
    sampler_end run(const std::atomic<bool>& stop) noexcept;

    const sampler_counters& counters() const noexcept { return counters_; }

    /** @brief Cycle count at which run() began: interval 0 starts here. */
    std::uint64_t start_cycles() const noexcept { return start_; }

private:
    /** @brief What one step did: a sample to publish (answered or lost), a re-sync, a failure. */
    enum class step { sample, resynced, stopped, failed };
    // The pacing loop, one instantiation per kind of wire (device-timed or polled), so that
    // the polled loop carries no test of the wire's kind and no device state per sample.
    template <bool Device> sampler_end loop(const std::atomic<bool>& stop) noexcept;
    template <bool Device>
    [[gnu::always_inline]] bool follow_up(const std::atomic<bool>& stop, const sample& s,
                                          std::uint64_t proven, bool late, int& driven) noexcept;
    // Inlined into run(): a call would cost the loop ~20 instructions a sample in register
    // saves and restores, a quarter of what the sampler itself costs (irqloop-bench-sampler).
    [[gnu::always_inline]] step measure_polled(const std::atomic<bool>& stop, int& driven,
                                               sample& s, std::uint64_t& proven) noexcept;
    // Out of line and cold: a device-timed wire waits on a USB round trip a sample, so its
    // call costs nothing there, while its body inlined would crowd the polled loop.
    [[gnu::noinline, gnu::cold]] step measure_device(int& driven, sample& s, std::uint64_t& proven,
                                                     bool& late) noexcept;
    [[gnu::always_inline]] void publish(const sample& s) noexcept;
    std::uint64_t spin_until(std::uint64_t t, const std::atomic<bool>& stop) noexcept;
    int settle(const std::atomic<bool>& stop, bool& changed) noexcept;
    int resync(const std::atomic<bool>& stop, int& driven) noexcept;

    // The wire's capabilities, found once before the run: the polled pair (every wire), the
    // device timing, the trigger line and the truth where it has them.
    hw::polled_wire& wire_;
    hw::device_timed_wire* device_;
    hw::trigger_line* trigger_;
    const hw::truth_source* truth_;
    spsc_ring<sample>& ring_;
    sampler_config cfg_;
    Clock clock_;
    sampler_counters counters_;
    std::uint64_t start_ = 0;
};

/** @brief The sampler of a real run, on the cycle counter. */
using sampler = basic_sampler<cycle_clock>;
extern template class basic_sampler<cycle_clock>;

/**
 * @brief Measure the typical gap between two polls of @p wire (median of @p polls), in
 * cycles: the resolution of a quiet sample, and the basis of the default gap limit.
 */
std::uint64_t measure_poll_cycles(hw::lines& wire, int polls = 20000) noexcept;

/**
 * @brief Measure the typical cost of drive() (median of @p drives), driving the line to
 * the level it already has so that the far end sees no edge.
 */
std::uint64_t measure_drive_cycles(hw::lines& wire, bool level, int drives = 2000) noexcept;

/**
 * @brief Measure the cycle counter's step: the smallest interval at which two successive
 * reads of @p read can differ, in counts. Each of 32 tries starts at a change of the counter
 * and takes the mean step over the next 16 changes; the smallest mean is kept, so that a
 * preemption inside a try does not count.
 *
 * A few tens of counts on a TSC (each read differs from the last by the read's own cost); a
 * tick or two on a Raspberry Pi's 54 MHz cntvct_el0; 62.5 counts, 1 us, on qemu-user's
 * cntvct_el0, which QEMU 7.2 derives from gettimeofday(). 0 when the counter did not move
 * within a million reads.
 */
double measure_clock_step_cycles(std::uint64_t (*read)() noexcept = hw::cycles) noexcept;

/** @brief The automatic gap limit (`irqloop run --gap-limit auto`) and the term that set it. */
struct gap_limit_choice final {
    std::int64_t ns = 0;
    const char* rule = ""; ///< "1 us", "20 x poll", "4 x drive()", "3 x clock step", "device"
};

/**
 * @brief The automatic gap limit: max(1 us, 20 x @p poll_ns, 4 x @p drive_ns, 3 x
 * @p clock_step_ns rounded up, @p device_bracket_ns); on a tie the earlier term names the
 * rule.
 *
 * A quiet sample's bracket spans drive() and the two polls around the answer: a few of each,
 * and at least 1 us. A counter that steps coarsely reads a span up to one step longer than it
 * was (its two ends fall in different steps), and reads a poll or drive() shorter than a step
 * as 0. So below 3 steps the limit would flag quiet brackets: at a 1 us step (qemu-user) a
 * bracket of the rule's own 1 us reads as up to 2 steps, and the steps themselves are 62 or
 * 63 ticks. On a TSC or a Pi's counter the step is tens of ns and never sets the limit.
 */
gap_limit_choice auto_gap_limit(double poll_ns, double drive_ns, double clock_step_ns,
                                std::int64_t device_bracket_ns = 0) noexcept;

} // namespace irqloop::logger
