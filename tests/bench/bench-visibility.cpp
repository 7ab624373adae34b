// SPDX-License-Identifier: MIT
// Probe of the machine, not of irqloop: how late does a store made on one CPU become visible
// to a reader spinning on another? On bare metal the answer is tens of nanoseconds. On some
// virtual machines (seen on this project's 2-vCPU CI guests) a store is now and then seen
// tens of microseconds after the writer's own clock read that follows it, while the reader
// polled without a gap. The simulated board answers with exactly such a store, so on those
// machines the simulation's recorded answer time is only a lower estimate of when the
// answer reached the logger; the [sim] tests quote this probe's figures for their margins.
// Usage: irqloop-bench-visibility [rounds=200000]
#include "cycle-clock.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace irqloop;

namespace
{

alignas(64) std::atomic<std::uint64_t> go{0};
alignas(64) std::atomic<std::uint64_t> answer{0};
alignas(64) std::atomic<std::uint64_t> stamp{0};

void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

} // namespace

int main(int argc, char** argv)
{
    const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 200'000;
    if (rounds < 1 || rounds > 1'000'000'000) {
        std::fprintf(stderr, "irqloop-bench-visibility: rounds: out of range (1..1e9)\n");
        return 2;
    }
    if (std::thread::hardware_concurrency() < 2) {
        std::printf("SKIPPED: one CPU, nothing to probe\n");
        return 4;
    }
    const auto& clk = hw::process_clock(true);
    const std::uint64_t delay = clk.from_ns(8000), one_us = clk.from_ns(1000);
    std::thread writer([&] {
        pin(1);
        for (std::uint64_t i = 1; i <= static_cast<std::uint64_t>(rounds); ++i) {
            while (go.load(std::memory_order_acquire) != i) {
            }
            const std::uint64_t until = hw::cycles() + delay;
            while (hw::cycles() < until) {
            }
            answer.store(i, std::memory_order_release);
            stamp.store(hw::cycles(), std::memory_order_release); // clock read after the store
        }
    });
    pin(0);
    long gapped = 0, late = 0;
    std::uint64_t worst = 0;
    for (std::uint64_t i = 1; i <= static_cast<std::uint64_t>(rounds); ++i) {
        go.store(i, std::memory_order_release);
        std::uint64_t start = hw::cycles(), t = start, max_gap = 0;
        while (true) {
            const std::uint64_t v = answer.load(std::memory_order_acquire);
            const std::uint64_t t2 = hw::cycles();
            max_gap = std::max(max_gap, t2 - t);
            if (v == i)
                break;
            start = t2; // the clock just before the next read: a miss after it proves "later"
            t = t2;
        }
        std::uint64_t s;
        while ((s = stamp.exchange(0, std::memory_order_acq_rel)) == 0) {
        }
        if (max_gap > one_us) { // the reader itself was interrupted: proves nothing
            ++gapped;
            continue;
        }
        if (start > s + one_us) { // a read after `start` missed a store made before `s`
            ++late;
            worst = std::max(worst, start - s);
        }
    }
    writer.join();
    std::printf("rounds %ld (8 us answers, writer on CPU 1, reader on CPU 0); reader interrupted "
                "%ld; store seen more than 1 us after the writer's clock read: %ld (%.4f%%), "
                "worst %.1f us\n",
                rounds, gapped, late, 100.0 * late / double(rounds - gapped),
                clk.ns(worst) / 1000.0);
    return 0;
}
