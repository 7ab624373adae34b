// SPDX-License-Identifier: MIT
#include "cycle-clock.hpp"
#include "emulation.hpp"
#include "sampler.hpp"

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

using namespace irqloop::hw;

TEST_CASE("the cycle clock calibrates to two estimates within 100 ppm", "[clock]")
{
    auto c = calibrate_clock(true);
    INFO("source " << c.source << ", " << c.hz << " Hz, read " << c.read_cost_ns << " ns, "
                   << c.agreement_ppm << " ppm after " << c.rounds << " rounds");
    CHECK(c.agreement_ppm <= 100);
    CHECK(c.hz > 1e6);
    CHECK(c.read_cost_ns > 0);
    CHECK(c.read_cost_ns < 1000);
    CHECK(c.source == cycle_source());
}

TEST_CASE("cycles converted with the calibrated rate track CLOCK_MONOTONIC_RAW", "[clock]")
{
    const auto& c = process_clock(true);
    std::uint64_t c0 = cycles();
    std::int64_t m0 = monotonic_raw_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::uint64_t c1 = cycles();
    std::int64_t m1 = monotonic_raw_ns();
    double measured = c.ns(c1 - c0);
    double truth = static_cast<double>(m1 - m0);
    // 200 ms; the bracketing of two reads is a few us at worst: 0.1 % is generous.
    CHECK(std::fabs(measured - truth) / truth < 1e-3);
}

TEST_CASE("the cycle counter never goes backwards on one thread", "[clock]")
{
    std::uint64_t last = cycles();
    for (int i = 0; i < 1'000'000; ++i) {
        std::uint64_t now = cycles();
        REQUIRE(now >= last);
        last = now;
    }
}

namespace
{

// Coarse counters driven by the number of reads, not by time, so that their step holds on
// any machine: made from CLOCK_MONOTONIC_RAW, they read 5 steps per change in a fresh-clone
// CI run under ASan, where one clock read took about 5 us.
// - a counter of ns in 1 us steps, moving every 4th read. Its first 400 reads move 5 steps at
//   a time, as a try that is preempted or read slowly sees: the smallest mean is kept;
// - one like qemu-user's cntvct_el0 (62.5 MHz from a microsecond clock: steps of 62 and 63),
//   its microsecond moving every 3rd read.
std::uint64_t reads_us = 0, reads_qemu = 0;
std::uint64_t microsecond_clock() noexcept
{
    const std::uint64_t r = ++reads_us;
    const std::uint64_t steps = r < 400 ? 5 * (r / 4) : 500 + (r - 400) / 4;
    return steps * 1000;
}
std::uint64_t qemu_like_counter() noexcept
{
    return ++reads_qemu / 3 * 125 / 2;
}

} // namespace

TEST_CASE("the counter's step is measured, and a coarse one sets the automatic gap limit",
          "[clock]")
{
    using irqloop::logger::auto_gap_limit;
    using irqloop::logger::measure_clock_step_cycles;
    // Whole steps: a try that was preempted reads a longer mean step, the smallest is kept.
    reads_us = reads_qemu = 0;
    CHECK(measure_clock_step_cycles(microsecond_clock) == 1000.0);
    CHECK(reads_us > 400); // the slow tries were among those measured
    CHECK(measure_clock_step_cycles(qemu_like_counter) == 62.5); // 1000 ticks per 16 us
    // On such a counter the poll and drive() read 0 ns: the step sets the limit, 3 steps.
    auto coarse = auto_gap_limit(0, 0, 1e9 / 62.5e6 * 62.5);
    CHECK(coarse.ns == 3000);
    CHECK(std::strcmp(coarse.rule, "3 x clock step") == 0);
    // Whole steps, rounded up: qemu's 62.5 ticks at a calibrated rate a little off 62.5 MHz.
    CHECK(auto_gap_limit(0, 0, 999.997).ns == 3000);
    // The other terms as before: the figures of docs/backends (sim, gpiomem, kernel responder).
    auto sim = auto_gap_limit(20.03, 30.04, 21);
    CHECK(sim.ns == 1000);
    CHECK(std::strcmp(sim.rule, "1 us") == 0);
    CHECK(auto_gap_limit(112, 60, 21).ns == 2240);
    CHECK(std::strcmp(auto_gap_limit(112, 60, 21).rule, "20 x poll") == 0);
    CHECK(std::strcmp(auto_gap_limit(50, 8000, 21).rule, "4 x drive()") == 0);
    CHECK(auto_gap_limit(0, 0, 0, 5000).ns == 5000);
    CHECK(std::strcmp(auto_gap_limit(0, 0, 0, 5000).rule, "device") == 0);
    // Nonsense in, the 1 us floor out (never a negative or undefined limit).
    CHECK(auto_gap_limit(-5, std::nan(""), -1).ns == 1000);

    // This machine's own counter: it moves; natively its step (about the cost of a read)
    // never sets the limit. Under qemu-user it is 1 us, and the limit is 3 us.
    const auto& clk = process_clock(true);
    const double step_ns = clk.ns(1) * measure_clock_step_cycles();
    const auto own = auto_gap_limit(0, 0, step_ns);
    WARN("this counter (" << clk.source << "): step " << step_ns << " ns, gap limit " << own.ns
                          << " ns (" << own.rule << ")");
    CHECK(step_ns > 0);
    if (const auto& why = irqloop::test::emulated(); !why.empty())
        SKIP("native claim not checked (" << why << "): the counter's step below 333 ns (here "
                                          << step_ns << " ns)");
    CHECK(step_ns < 1000.0 / 3);
    CHECK(own.ns == 1000);
}

#if defined(__aarch64__)
TEST_CASE("cntvct_el0 runs at the architectural frequency", "[clock]")
{
    std::uint64_t frq;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(frq));
    auto c = calibrate_clock();
    CHECK(std::fabs(c.hz - static_cast<double>(frq)) / static_cast<double>(frq) < 1e-3);
}
#else
TEST_CASE("cntvct_el0 runs at the architectural frequency", "[clock]")
{
    SKIP("not an aarch64 machine: the cntvct_el0 path is compiled only there");
}
#endif
