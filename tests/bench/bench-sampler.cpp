// SPDX-License-Identifier: MIT
// Benchmark of the measurement core: sampler bookkeeping per sample, the simulated
// loopback floor, and the sustained rate of the whole pipeline at --interval 0.
// Usage: irqloop-bench-sampler [samples_millions=20] [parts=123]
// parts: which of the three to run, e.g. 1 for the sampler alone (what callgrind counts:
// valgrind runs one thread at a time, so the spinning parts 2 and 3 are for real runs only).
#include "cycle-clock.hpp"
#include "registry.hpp"
#include "run.hpp"
#include "sampler.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace irqloop;

namespace
{

// A wire whose far end answers before the next poll: what is left is the sampler itself.
class instant_lines final : public hw::polled_wire, public hw::lines
{
public:
    void drive(bool high) noexcept override { level_ = high; }
    int sense() noexcept override { return level_; }
    std::string describe() const override { return "instant"; }

private:
    int level_ = 0;
};

double cycles_read_ns(const hw::clock_info& clk)
{
    constexpr int n = 10'000'000;
    std::uint64_t a = hw::cycles();
    for (int i = 0; i < n; ++i)
        (void)hw::cycles();
    return clk.ns(hw::cycles() - a) / n;
}

logger::sampler_config config(const hw::clock_info& clk, std::uint64_t n)
{
    logger::sampler_config c;
    c.samples = n;
    c.timeout_cycles = clk.from_ns(10e6);
    c.gap_limit_cycles = clk.from_ns(1000);
    c.quiet_cycles = clk.from_ns(1e6);
    return c;
}

} // namespace

int main(int argc, char** argv)
{
    const std::uint64_t millions = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20;
    const std::string parts = argc > 2 ? argv[2] : "123";
    if (millions < 1 || millions > 10'000 || parts.find_first_not_of("123") != std::string::npos) {
        std::fprintf(stderr, "irqloop-bench-sampler: bad arguments (usage: irqloop-bench-sampler "
                             "[samples_millions 1..10000] [parts, e.g. 13])\n");
        return 2;
    }
    const auto& clk = hw::process_clock(true);
    const double read_ns = cycles_read_ns(clk);
    std::printf("clock: %s at %.3f MHz, cycles() read %.1f ns\n", clk.source.c_str(), clk.hz / 1e6,
                read_ns);

    if (parts.find('1') != std::string::npos) {
        // 1. Sampler cost beyond the wire: an instant wire, a consumer draining the ring.
        const std::uint64_t n = millions * 1'000'000;
        instant_lines wire;
        logger::spsc_ring<logger::sample> ring(1 << 20);
        logger::sampler s(wire, ring, config(clk, n));
        std::atomic<bool> stop{false}, done{false};
        std::thread consumer([&] {
            // Like the recorder: batches, and a 1 ms sleep when the ring is empty, so that
            // the consumer does not keep the ring's cache lines bouncing.
            std::vector<logger::sample> buf(8192);
            while (!done.load() || ring.size())
                if (ring.pop(buf) < buf.size())
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
        });
        auto t0 = std::chrono::steady_clock::now();
        s.run(stop);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        done.store(true);
        consumer.join();
        double per = secs * 1e9 / static_cast<double>(n);
        // Four clock reads per sample belong to the measurement itself: the pacing check, the
        // stimulus time, the start of the spin, and the one poll's timestamp.
        std::printf(
            "sampler, instant wire: %.1f ns per sample (%.2f M samples/s), of which 4 clock reads "
            "%.1f ns; bookkeeping %.1f ns per sample; overflows %llu\n",
            per, 1e3 / per, 4 * read_ns, per - 4 * read_ns,
            static_cast<unsigned long long>(s.counters().overflows.load()));
    }
    if (parts.find('2') != std::string::npos) {
        // 2. The simulated loopback floor: a zero-delay target on its own thread.
        const std::uint64_t n = 200'000;
        auto wire = hw::open_lines("sim:model=fixed,value=0", hw::role::logger);
        logger::spsc_ring<logger::sample> ring(n + 1);
        logger::sampler s(*wire, ring, config(clk, n));
        wire->start();
        std::atomic<bool> stop{false};
        s.run(stop);
        wire->stop();
        std::vector<logger::sample> out(n);
        out.resize(ring.pop(out));
        std::vector<double> lat;
        for (auto& x : out)
            if (!(x.flags & 8u))
                lat.push_back(clk.ns(x.latency_cycles));
        std::sort(lat.begin(), lat.end());
        std::printf("sim loopback floor (zero-delay model, %zu samples): min %.0f ns, median %.0f "
                    "ns, p99 %.0f ns, "
                    "p99.9 %.0f ns\n",
                    lat.size(), lat.front(), lat[lat.size() / 2], lat[lat.size() * 99 / 100],
                    lat[lat.size() * 999 / 1000]);
    }
    if (parts.find('3') != std::string::npos) {
        // 3. The whole pipeline (sampler, ring, recorder; no store) at --interval 0.
        logger::run_options opt;
        opt.timing.samples = 5'000'000;
        opt.timing.interval_ns = 0;
        opt.rt.priority = 80; // as irqloop run; refused without privileges, then SCHED_OTHER
        opt.rt.mlock = false;
        auto wire = hw::open_lines("sim:model=fixed,value=0", hw::role::logger);
        std::atomic<bool> stop{false};
        auto t0 = std::chrono::steady_clock::now();
        auto r = logger::execute_run(opt, *wire, stop);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("pipeline, sim zero delay, --interval 0: %llu stimuli in %.2f s incl. set-up = "
                    "%.0f k samples/s; "
                    "median %.0f ns; overflows %llu, disturbed %llu\n",
                    static_cast<unsigned long long>(r.summary.stimuli), secs,
                    static_cast<double>(r.summary.stimuli) / secs / 1e3,
                    static_cast<double>(r.summary.p50_ns),
                    static_cast<unsigned long long>(r.summary.overflows),
                    static_cast<unsigned long long>(r.summary.disturbed));
    }
    return 0;
}
