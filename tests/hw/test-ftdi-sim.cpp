// SPDX-License-Identifier: MIT
// The ftdi backend on the chip simulator: the same command building, framing and decoding
// as on a real chip, checked against the simulator's truth.
#include "ftdi/ftdi-lines.hpp"
#include "ftdi/ftdi-sim.hpp"
#include "spec.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>

using namespace irqloop::hw;

namespace
{

struct rig {
    ftdi_sim* sim;
    std::unique_ptr<ftdi_lines> lines;
};

rig make_rig(const std::string& model_spec, ftdi_sim_config c, ftdi_options o)
{
    spec s(model_spec);
    c.model = latency_model::from_spec(s);
    c.out_bit = o.out_bit;
    c.in_bit = o.in_bit;
    c.follow = o.follow;
    if (!c.truth_capacity)
        c.truth_capacity = 1 << 20;
    auto port = std::make_unique<ftdi_sim>(std::move(c));
    ftdi_sim* raw = port.get();
    o.pin_names[0] = "ADBUS4";
    o.pin_names[1] = "ADBUS2";
    rig r{raw, std::make_unique<ftdi_lines>(std::move(port), std::move(o))};
    // Open drove the stimulus low (the pin idled high at reset): let the far end answer that.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return r;
}

/** One sample and the simulated chip's truth of it. */
struct measured {
    device_sample s;
    ftdi_sim::truth truth;
};

/**
 * One measure() of @p level, which must succeed and leave exactly one truth record in @p sim:
 * the sample and that record.
 */
measured measure_one(ftdi_lines& l, const ftdi_sim& sim, bool level, std::int64_t timeout_ns)
{
    const std::size_t before = sim.truths().size();
    measured m;
    REQUIRE(l.measure(level, timeout_ns, m.s) == 0);
    REQUIRE(sim.truths().size() == before + 1);
    m.truth = sim.truths()[before];
    return m;
}

/** Counts of one property run. */
struct tally {
    int exact = 0, bracketed = 0, flagged = 0, lost_true = 0, lost_answered = 0, late = 0,
        aliased = 0, wrong = 0;
};

/**
 * Whether a sample that reads before its truth @p tr (upper bound @p up ns after the edge) took
 * an injected pulse for the answer, which sampling cannot tell apart: the pulse covers the
 * sample at @p up, and the answer came before the first sample after the pulse's end (at most
 * a tick after it). The line then reads at the answer level from that sample on, with no
 * return to idle between them: early by less than the pulse's length and a tick.
 */
bool glitch_aliased(const ftdi_sim::truth& tr, double up, double tick)
{
    if (tr.glitch_ns == 0)
        return false;
    const double g0 = static_cast<double>(tr.glitch_ns - tr.edge_ns),
                 g1 = static_cast<double>(tr.glitch_end_ns - tr.edge_ns),
                 truth = static_cast<double>(tr.answer_ns - tr.edge_ns);
    // 2 ns of slack as below: pin times are whole ns, the backend rounds up.
    return g0 <= up + 2 && up - 2 <= g1 && truth <= g1 + tick + 2;
}

/** Measure @p n samples and hold each against the truth; returns the counts. */
tally check_against_truth(rig& r, int n, std::int64_t timeout_ns, bool follow)
{
    tally t;
    bool level = false;
    const double tick = r.lines->tick_ns();
    for (int i = 0; i < n; ++i) {
        level = !level;
        const auto [s, tr] = measure_one(*r.lines, *r.sim, level, timeout_ns);
        const bool answered = tr.answer_ns != 0;
        const double truth = answered ? static_cast<double>(tr.answer_ns - tr.edge_ns) : -1;
        if (s.late) {
            ++t.late;
            // The far end is out of step: bring it back as the sampler would.
            r.lines->drive(level);
            continue;
        }
        if (s.lost) {
            // Lost is a flag, never a value: the truth is a loss, an answer after the timeout,
            // or one the host could not bound in time (a stall ate the timeout).
            if (!answered || truth > static_cast<double>(timeout_ns))
                ++t.lost_true;
            else
                ++t.lost_answered;
            // As the sampler does after a loss: wait until a late answer has landed, then
            // put a following far end back in step.
            std::this_thread::sleep_for(std::chrono::nanoseconds(timeout_ns));
            if (follow)
                r.lines->drive(level);
            continue;
        }
        REQUIRE(answered);
        const double up = static_cast<double>(s.latency_ns),
                     lo = up - static_cast<double>(s.bracket_ns);
        // 2 ns of slack: the simulator's pin times are whole ns, the backend rounds up.
        const bool within = truth <= up + 2 && truth >= lo - 2;
        if (!within && glitch_aliased(tr, up, tick)) {
            ++t.aliased;
            continue;
        }
        if (!within) {
            ++t.wrong;
            std::printf(
                "WRONG sample %d: truth %.0f outside [%.0f, %.0f] suspect %d bracket %lld\n", i,
                truth, lo, up, s.suspect, (long long)s.bracket_ns);
            UNSCOPED_INFO("sample " << i << ": truth " << truth << " ns outside [" << lo << ", "
                                    << up << "]" << (s.suspect ? " (flagged)" : ""));
            continue;
        }
        if (static_cast<double>(s.bracket_ns) <= std::ceil(tick) && !s.suspect) {
            if (up - truth <= tick + 2)
                ++t.exact;
            else {
                ++t.wrong;
                std::printf("WRONG sample %d: %.0f for truth %.0f\n", i, up, truth);
                UNSCOPED_INFO("sample " << i << ": " << up << " ns for truth " << truth);
            }
        } else if (s.suspect) {
            ++t.flagged;
        } else {
            ++t.bracketed;
        }
    }
    return t;
}

} // namespace

TEST_CASE("ftdi sim: open syncs the MPSSE past a previous program's leftovers", "[ftdi]")
{
    ftdi_sim_config c;
    ftdi_options o;
    auto r = make_rig("sim:model=fixed,value=5us", c, o);
    CHECK(r.sim->bad_opcodes() >= 2); // 0xAA and 0xAB echoed
    CHECK(r.lines->tick_ns() == mpsse::tick_ns(0));
    CHECK(r.sim->tick_ns() == r.lines->tick_ns()); // the backend turned the divide-by-5 off
    CHECK(r.lines->window_bytes() == 768);
    CHECK(r.lines->sense() == 0);
}

TEST_CASE("ftdi sim: a fixed delay is measured within one tick at every TCK", "[ftdi]")
{
    for (double tck : {30e6, 10e6, 1e6}) {
        ftdi_sim_config c;
        ftdi_options o;
        o.tck_hz = tck;
        auto r = make_rig("sim:model=fixed,value=7300ns", c, o);
        INFO("tck " << tck);
        bool level = false;
        for (int i = 0; i < 50; ++i) {
            device_sample s;
            level = !level;
            REQUIRE(r.lines->measure(level, 10'000'000, s) == 0);
            REQUIRE_FALSE(s.lost);
            CHECK_FALSE(s.suspect);
            CHECK(s.latency_ns >= 7300);
            CHECK(static_cast<double>(s.latency_ns) <= 7300 + r.lines->tick_ns() + 1);
        }
    }
}

TEST_CASE("ftdi sim: an answer later than the window is bracketed by the host clock", "[ftdi]")
{
    ftdi_sim_config c;
    ftdi_options o;
    o.window = 64; // 512 samples, 17 us at 30 MHz
    auto r = make_rig("sim:model=fixed,value=300us", c, o);
    device_sample s;
    REQUIRE(r.lines->measure(true, 10'000'000, s) == 0);
    REQUIRE_FALSE(s.lost);
    CHECK(s.latency_ns >= 300'000);
    CHECK(s.latency_ns - s.bracket_ns <= 300'000);
    CHECK(s.bracket_ns > 1000); // host-proven, coarse: the sampler flags it disturbed
    CHECK(r.lines->chained() == 1);
}

TEST_CASE("ftdi sim: no answer before the timeout is lost", "[ftdi]")
{
    ftdi_sim_config c;
    ftdi_options o;
    o.window = 64;
    auto r = make_rig("sim:model=fixed,value=8us,loss_p=1", c, o);
    device_sample s;
    REQUIRE(r.lines->measure(true, 2'000'000, s) == 0);
    CHECK(s.lost);
    CHECK(s.latency_ns == 0);
}

TEST_CASE("ftdi sim: a window larger than the FIFO is refused", "[ftdi]")
{
    ftdi_sim_config c;
    ftdi_options o;
    o.window = 1024;
    CHECK_THROWS_WITH(make_rig("sim:model=fixed,value=8us", c, o),
                      Catch::Matchers::ContainsSubstring("exceeds the ft232h's FIFO"));
}

TEST_CASE("ftdi sim property: random latencies, phases and USB hiccups; every sample within a tick "
          "of the truth, flagged, or a pulse taken for the answer",
          "[ftdi]")
{
    std::mt19937_64 rng(20261201);
    const double tcks[] = {30e6, 15e6, 10e6, 6e6, 1e6};
    tally sum;
    std::uint64_t pauses = 0, stalls = 0, zeros = 0, partials = 0, glitches = 0, chained = 0;
    int runs = 0;
    for (int run = 0; run < 8; ++run) {
        ftdi_sim_config c;
        c.chip = run % 2 ? ftdi_chip::ft2232h : ftdi_chip::ft232h;
        c.seed = rng();
        c.glitch_p = 0.03;
        c.stall_p = 0.05;
        c.stall_max_ns = 3'000'000;
        c.zero_p = 0.1;
        c.partial_p = 0.2;
        ftdi_options o;
        o.tck_hz = tcks[rng() % 5];
        o.order = rng() % 2 ? ftdi_bit_order::msb_first : ftdi_bit_order::lsb_first;
        o.neg_edge = rng() % 2;
        o.follow = run % 4 != 3;
        const std::size_t fifo = ftdi_chip_fifo(c.chip);
        // Windows up to the whole FIFO: the echo bytes then overflow it, and the engine
        // pauses after the window's last sample when the host is slow.
        o.window = run % 3 == 0 ? fifo - 1 : 16 + rng() % (fifo - 16);
        const double window_ns =
            static_cast<double>(o.window) * 8 * 2 * 1e9 / 60e6 * std::ceil(30e6 / o.tck_hz);
        char model[160];
        std::snprintf(
            model, sizeof model, "sim:model=uniform,min=0,max=%.0fns,loss_p=0.02,seed=%llu",
            std::min(1.5 * window_ns, 1.5e6), static_cast<unsigned long long>(rng() % 1000 + 1));
        auto r = make_rig(model, c, o);
        // The sim's geometry is the nominal one, which the backend uses without calibration.
        REQUIRE(std::abs(r.lines->offset_ns() - r.sim->first_sample_offset_ns(o.neg_edge)) < 1);
        INFO("run " << run << " " << r.lines->describe());
        const tally t = check_against_truth(r, 600, 2'000'000, o.follow);
        CHECK(t.wrong == 0);
        sum.exact += t.exact;
        sum.bracketed += t.bracketed;
        sum.flagged += t.flagged;
        sum.lost_true += t.lost_true;
        sum.lost_answered += t.lost_answered;
        sum.late += t.late;
        sum.aliased += t.aliased;
        sum.wrong += t.wrong;
        pauses += r.sim->pauses();
        stalls += r.sim->stalls();
        zeros += r.sim->zero_reads();
        partials += r.sim->partial_reads();
        glitches += r.sim->glitches();
        chained += r.lines->chained();
        ++runs;
    }
    // The counts quoted in the closing note.
    std::printf(
        "ftdi property: %d runs: %d within a tick, %d host-bracketed (chained windows), "
        "%d flagged (glitch/framing), %d lost (truly), %d lost (answer not bounded in time), "
        "%d stale baseline, %d a pulse taken for the answer, %d wrong | injected: %llu stalls, "
        "%llu zero reads, %llu partial reads, %llu FIFO-full pauses, %llu glitches; %llu "
        "chained samples\n",
        runs, sum.exact, sum.bracketed, sum.flagged, sum.lost_true, sum.lost_answered, sum.late,
        sum.aliased, sum.wrong, static_cast<unsigned long long>(stalls),
        static_cast<unsigned long long>(zeros), static_cast<unsigned long long>(partials),
        static_cast<unsigned long long>(pauses), static_cast<unsigned long long>(glitches),
        static_cast<unsigned long long>(chained));
    CHECK(sum.wrong == 0);
    // The hiccups really happened (a property test that injects nothing proves nothing).
    CHECK(stalls > 0);
    CHECK(zeros > 0);
    CHECK(partials > 0);
    CHECK(pauses > 0);
    CHECK(glitches > 0);
    CHECK(sum.bracketed > 0);
    CHECK(sum.exact > 1000);
}

TEST_CASE("ftdi sim: a pulse just before the answer reads as the answer, early by less than the "
          "pulse and a tick",
          "[ftdi]")
{
    // The limit of any sampled line: a pulse that covers a sample, with the answer before the
    // first sample after the pulse, leaves the line at the answer level from that sample on.
    // Nothing tells it from the answer: the latency reads early by less than the pulse's length
    // and a tick (docs/backends/ftdi.md, Limits).
    ftdi_sim_config c;
    c.glitch_p = 1; // a pulse of 40-140 ns somewhere before every answer
    c.seed = 7;
    ftdi_options o;
    o.tck_hz = 10e6; // samples 100 ns apart: the pulse often covers one
    auto r = make_rig("sim:model=fixed,value=400ns", c, o);
    const tally t = check_against_truth(r, 300, 2'000'000, o.follow);
    std::printf("ftdi pulses: 300 samples: %d within a tick, %d flagged, %d a pulse taken for the "
                "answer\n",
                t.exact, t.flagged, t.aliased);
    CHECK(t.wrong == 0);
    CHECK(t.aliased > 0); // a few pulses end less than a tick before the answer's sample
    CHECK(t.flagged > 0); // most others left idle and came back within the window
    CHECK(t.exact + t.aliased + t.flagged == 300);
}

TEST_CASE("ftdi sim: a FIFO smaller than the window pauses the engine and hides time", "[ftdi]")
{
    // Why the backend keeps each window within the chip's FIFO: here the simulated FIFO is
    // made smaller than the backend believes, the host stalls before reading, the engine
    // pauses mid-window, and the answer reads early. Nothing is dropped: the frame is whole.
    ftdi_sim_config c;
    c.fifo = 256;
    c.stall_p = 1;
    c.stall_max_ns = 0; // set below: a fixed 2 ms stall
    ftdi_options o;
    o.window = 700;
    c.stall_max_ns = 2'000'000;
    auto r = make_rig("sim:model=fixed,value=150us", c, o);
    int early = 0;
    for (int i = 0; i < 20; ++i) {
        device_sample s;
        REQUIRE(r.lines->measure(i % 2 == 0, 10'000'000, s) == 0);
        REQUIRE_FALSE(s.lost); // pause, not drop: the frame arrived whole
        if (s.latency_ns < 150'000)
            ++early;
    }
    CHECK(r.sim->pauses() > 0);
    CHECK(early > 0);
    CHECK(r.lines->framing_errors() == 0);
}

TEST_CASE("ftdi sim: sync bit-bang on an FT232R, read before write", "[ftdi]")
{
    // baud 62500 x 16: a 1 us tick; the window is one 64-byte packet less its status bytes.
    for (double jitter : {0.0, 0.05}) {
        spec sp("ftdi:sim=ft232r,model=fixed,value=20300ns,jitter=" + std::to_string(jitter));
        ftdi_spec x = take_ftdi_spec(sp, role::logger);
        sp.finish();
        x.sim_config.truth_capacity = 1000;
        auto port = std::make_unique<ftdi_sim>(x.sim_config);
        ftdi_sim* sim = port.get();
        ftdi_lines l(std::move(port), x.options);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        CHECK(l.window_bytes() == 62);
        // Measured at open: within 5 % of baud x 16 (the simulated chip's true tick here).
        // With the erratum's jitter it has read up to 12 % high (open issue, notes/ftdi.md):
        // latencies then stay above the truth, bounded by the calibrated upper tick.
        if (jitter == 0)
            CHECK(std::abs(l.tick_ns() - 1000) <= 50);
        const double up = std::max(1000.0, l.tick_upper_ns());
        INFO("jitter " << jitter);
        bool level = false;
        for (int i = 0; i < 40; ++i) {
            level = !level;
            const auto [s, t] = measure_one(l, *sim, level, 10'000'000);
            REQUIRE_FALSE(s.lost);
            const double truth = static_cast<double>(t.answer_ns - t.edge_ns);
            // Read byte k is taken (k - 1) ticks after the edge: latency within a tick, give
            // or take the erratum's accumulated jitter.
            const double slack = jitter * 21 * 1000 + 1;
            CHECK(static_cast<double>(s.latency_ns) >= truth - slack);
            CHECK(static_cast<double>(s.latency_ns) <= (truth + slack) * up / 1000 + up);
        }
        CHECK(l.framing_errors() == 0);
    }
}

TEST_CASE("ftdi sim: the trigger pin named by --trigger-line is driven", "[ftdi]")
{
    ftdi_sim_config c;
    ftdi_options o;
    auto r = make_rig("sim:model=fixed,value=5us", c, o);
    CHECK_THROWS_WITH(r.lines->open_trigger("ADBUS4"),
                      Catch::Matchers::ContainsSubstring("out= or in="));
    CHECK_THROWS_WITH(r.lines->open_trigger("ADBUS1"),
                      Catch::Matchers::ContainsSubstring("not a free pin"));
    REQUIRE_NOTHROW(r.lines->open_trigger("ADBUS5"));
    r.lines->trigger(true);
    REQUIRE(r.lines->sense() >= 0); // a round trip: the chip has executed the pin write
    CHECK(r.sim->low_direction() & 0x20);
    CHECK(r.sim->low_value() & 0x20);
    r.lines->trigger(false);
    REQUIRE(r.lines->sense() >= 0);
    CHECK_FALSE(r.sim->low_value() & 0x20);
    CHECK_THAT(r.lines->describe(), Catch::Matchers::ContainsSubstring("trigger=ADBUS5"));
}

TEST_CASE("ftdi sim: syncbb calibrates an FT232R tick that is off its nominal one at open",
          "[ftdi]")
{
    // TN_120: the FT232R's bit-bang clock is not what baud x 16 says. The simulated chip runs
    // at baud x 19.2 (a 833 ns tick) and at baud x 12.8 (1250 ns) while the backend assumes
    // x 16 (1000 ns): the tick measured at open must find the true one, and no latency may
    // read below the simulated truth.
    for (double mult : {19.2, 12.8}) {
        spec sp("ftdi:sim=ft232r,model=uniform,min=3us,max=30us,seed=7,multiplier=" +
                std::to_string(mult));
        ftdi_spec x = take_ftdi_spec(sp, role::logger);
        sp.finish();
        x.sim_config.truth_capacity = 1000;
        auto port = std::make_unique<ftdi_sim>(x.sim_config);
        ftdi_sim* sim = port.get();
        const auto t0 = std::chrono::steady_clock::now();
        ftdi_lines l(std::move(port), x.options);
        const double open_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const double truth_tick = sim->syncbb_tick_ns();
        std::printf("syncbb calibration, multiplier %.1f: true tick %.3f ns, measured %.3f ns "
                    "(bounds %.3f..%.3f, %+.2f %%), nominal 1000 ns; open took %.2f s\n",
                    mult, truth_tick, l.tick_ns(), l.tick_lower_ns(), l.tick_upper_ns(),
                    100.0 * (l.tick_ns() / truth_tick - 1), open_s);
        INFO("multiplier " << mult << ": true tick " << truth_tick << ", measured " << l.tick_ns()
                           << " [" << l.tick_lower_ns() << ", " << l.tick_upper_ns() << "]");
        CHECK(std::abs(l.tick_ns() / truth_tick - 1) <= 0.05);
        CHECK(l.tick_upper_ns() >= truth_tick);
        CHECK(l.tick_lower_ns() <= truth_tick);
        bool has_source = false;
        for (const auto& [k, v] : l.metadata())
            if (k == "ftdi.tick_source")
                has_source = v.find("measured at open") != std::string::npos;
        CHECK(has_source);
        bool level = false;
        int below = 0, n = 0, wide = 0;
        for (int i = 0; i < 60; ++i) {
            level = !level;
            const auto [s, t] = measure_one(l, *sim, level, 10'000'000);
            if (s.lost)
                continue;
            const double truth = static_cast<double>(t.answer_ns - t.edge_ns);
            ++n;
            // Never below the truth (1 ns: the simulator's whole-ns pin times); the bracket
            // holds it; within two true ticks above it.
            if (static_cast<double>(s.latency_ns) < truth - 1)
                ++below;
            CHECK(static_cast<double>(s.latency_ns - s.bracket_ns) <= truth + 1);
            if (static_cast<double>(s.latency_ns) > truth + 2 * truth_tick)
                ++wide;
        }
        std::printf("  %d samples: %d below the truth, %d more than 2 ticks above it\n", n, below,
                    wide);
        CHECK(n >= 55);
        CHECK(below == 0);
        CHECK(wide == 0);
        CHECK(l.framing_errors() == 0);
    }
}
