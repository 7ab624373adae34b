// SPDX-License-Identifier: MIT
#include "cycle-clock.hpp"

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cmath>
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
