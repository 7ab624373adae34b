// SPDX-License-Identifier: MIT
// Benchmark of the ftdi backend: the window decoder's cost per sample (against a plain scan
// of the same bytes), the simulated chip's sample rate, and the resolution and window of
// each chip at a few TCKs. Usage: irqloop-bench-ftdi [samples=5000]
#include "ftdi/ftdi-decode.hpp"
#include "ftdi/ftdi-lines.hpp"
#include "ftdi/ftdi-sim.hpp"
#include "spec.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace irqloop::hw;

namespace
{

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void decoder_cost()
{
    // Windows as the chip returns them: idle up to a random sample, then the answer.
    constexpr std::size_t bytes = 768; // the FT232H default window
    constexpr int windows = 256, rounds = 400;
    std::mt19937_64 rng(1);
    std::vector<std::vector<std::uint8_t>> w(windows, std::vector<std::uint8_t>(bytes));
    for (auto& v : w) {
        const std::size_t at = rng() % (bytes * 8);
        for (std::size_t i = 0; i < bytes * 8; ++i)
            if (i >= at)
                v[i / 8] |= static_cast<std::uint8_t>(0x80u >> (i % 8));
    }
    volatile std::int64_t sink = 0;
    double t = now_s();
    for (int r = 0; r < rounds; ++r)
        for (auto& v : w)
            sink =
                sink + ftdi_decode(v.data(), bytes, ftdi_bit_order::msb_first, false, true).first;
    const double decode_ns = (now_s() - t) / (rounds * windows) * 1e9;
    // Baseline: touching every byte once (what any decoder must at least do).
    t = now_s();
    for (int r = 0; r < rounds; ++r)
        for (auto& v : w) {
            unsigned acc = 0;
            for (std::uint8_t b : v)
                acc += b;
            sink = sink + acc;
        }
    const double scan_ns = (now_s() - t) / (rounds * windows) * 1e9;
    std::printf(
        "decoder: %.0f ns per %zu-byte window (%zu samples); a plain sum of the bytes: %.0f ns; "
        "ratio %.2f\n",
        decode_ns, bytes, bytes * 8, scan_ns, decode_ns / scan_ns);
}

void sim_rate(const char* chip, int samples)
{
    spec sp(std::string("ftdi:sim=") + chip + ",model=normal,mean=8us,sd=1us");
    ftdi_spec x = take_ftdi_spec(sp, role::logger);
    sp.finish();
    auto wire = open_ftdi(x);
    device_timed_wire* l = find<device_timed_wire>(*wire);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    device_sample s;
    bool level = false;
    int lost = 0;
    const double t = now_s();
    for (int i = 0; i < samples; ++i) {
        level = !level;
        if (l->measure(level, 10'000'000, s) < 0) {
            std::printf("line failure\n");
            return;
        }
        lost += s.lost;
    }
    const double dt = now_s() - t;
    std::printf("sim %-8s %d samples in %.2f s: %.0f samples/s (%d lost), USB frames of %s\n", chip,
                samples, dt, samples / dt, lost, std::strcmp(chip, "ft232r") ? "125 us" : "1 ms");
}

void resolution_table()
{
    std::printf("resolution and default window (3/4 of the FIFO) per chip and TCK:\n");
    std::printf("  %-8s %-8s %-9s %-12s %s\n", "chip", "TCK", "tick", "window", "window time");
    for (auto chip : {ftdi_chip::ft232h, ftdi_chip::ft2232h, ftdi_chip::ft4232h})
        for (unsigned d : {0u, 2u, 29u}) {
            const double tick = mpsse::tick_ns(d);
            const std::size_t w = ftdi_chip_fifo(chip) * 3 / 4;
            std::printf("  %-8s %5.1f MHz %6.1f ns %5zu bytes %8.1f us\n", ftdi_chip_name(chip),
                        1e3 / tick, tick, w, static_cast<double>(w) * 8 * tick / 1e3);
        }
    std::printf("  %-8s syncbb   %6.1f ns %5d bytes %8.1f us (baud 62500 x 16, experimental)\n",
                "ft232r", 1000.0, 62, 62.0);
}

} // namespace

int main(int argc, char** argv)
{
    const int samples = argc > 1 ? std::atoi(argv[1]) : 5000;
    decoder_cost();
    for (const char* chip : {"ft232h", "ft2232h", "ft232r"})
        sim_rate(chip, std::strcmp(chip, "ft232r") ? samples : samples / 10);
    resolution_table();
    return 0;
}
