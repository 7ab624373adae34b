// SPDX-License-Identifier: MIT
// Built for aarch64 by tests/hw/aarch64/run-clock-test.sh and run under qemu-aarch64: the
// cntvct_el0 path of hw/cycle-clock.cpp compiles, calibrates, and agrees with CNTFRQ_EL0.
#include "cycle-clock.hpp"

#include <cmath>
#include <cstdio>

int main()
{
    using namespace irqloop::hw;
    std::uint64_t frq;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(frq));
    // Emulation is slow and noisy: a looser agreement than on hardware, same code path.
    auto c = calibrate_clock(false, 2000, 100'000'000, 12);
    double rel = std::fabs(c.hz - static_cast<double>(frq)) / static_cast<double>(frq);
    std::printf(
        "source %s, calibrated %.0f Hz, CNTFRQ_EL0 %llu Hz, difference %.4f %%, read %.1f ns\n",
        cycle_source(), c.hz, static_cast<unsigned long long>(frq), rel * 100, c.read_cost_ns);
    std::uint64_t a = cycles(), b = cycles();
    bool ok = std::string_view(cycle_source()) == "cntvct" && b >= a && rel < 0.01;
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
