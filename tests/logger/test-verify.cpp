// SPDX-License-Identifier: MIT
// irqloop verify (issue 29): captures read (our VCD parser, sigrok sessions through
// sigrok-cli), aligned with a run's stimuli under damage, and compared with each bracket; on
// scripted runs whose every delay is known, and on a real sim run's stored truth.
#include "capture-align.hpp"
#include "capture.hpp"
#include "error.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

using namespace irqloop;
using namespace irqloop::analysis;
using irqloop::test::run_irqloop;
using irqloop::test::run_shell;
using irqloop::test::temp_dir;

namespace
{

// A scripted run: each stimulus's time, its drawn delay (truth, -1: no answer) and what the
// logger measured around it: latency = truth + overhead, bracket >= overhead.
struct scripted_run final {
    std::vector<run_stimulus> run;
    std::vector<std::int64_t> truth_ns;
};

scripted_run make_run(std::uint64_t seed, std::size_t n, std::int64_t jitter_ns)
{
    std::mt19937_64 rng(seed);
    scripted_run s;
    std::int64_t t = 1'790'000'000'000'000'000;
    for (std::size_t i = 0; i < n; ++i) {
        t += 100'000 + (jitter_ns ? std::int64_t(rng() % std::uint64_t(jitter_ns)) : 0);
        const std::int64_t truth = 5'000 + std::int64_t(rng() % 10'000);
        const std::int64_t overhead = 50 + std::int64_t(rng() % 300);
        const std::int64_t bracket = overhead + std::int64_t(rng() % 200);
        if (rng() % 100 == 0) {
            s.run.push_back({i, t, -1, 0});
            s.truth_ns.push_back(-1);
        } else {
            s.run.push_back({i, t, truth + overhead, bracket});
            s.truth_ns.push_back(truth);
        }
    }
    return s;
}

// What an analyzer at @p rate_hz sees of @p s: STIM toggles at each stimulus, RESP toggles at
// each answer; times on the analyzer's clock: (t - t0 - start_ns) * (1 + drift) + lead_ns,
// floored to its samples. Stimuli whose index is in @p drop are not seen (edge and answer);
// @p shift_ns is added to the answers of the indexes in @p shifted.
struct capture_damage final {
    std::int64_t start_ns = 0; ///< the capture starts this long after the run's first stimulus
    std::int64_t lead_ns = 0;  ///< the capture starts this long before it
    double drift_ppm = 0;
    std::set<std::size_t> drop, shifted;
    std::int64_t shift_ns = 0;
};

capture make_capture(const scripted_run& s, double rate_hz, const capture_damage& d)
{
    capture c;
    c.samplerate_hz = rate_hz;
    c.channels = {{"STIM", 0, {}}, {"RESP", 0, {}}};
    const double period_ps = 1e12 / rate_hz;
    auto on_capture = [&](double logger_ns) {
        const double ns =
            (logger_ns - double(d.start_ns)) * (1 + d.drift_ppm * 1e-6) + double(d.lead_ns);
        return std::int64_t(std::floor(ns * 1000 / period_ps) * period_ps);
    };
    int stim = 0, resp = 0;
    for (std::size_t i = 0; i < s.run.size(); ++i) {
        const double t = double(s.run[i].t_ns - s.run[0].t_ns);
        const auto at = on_capture(t);
        stim ^= 1;
        const bool answered = s.truth_ns[i] >= 0;
        if (answered)
            resp ^= 1;
        if (at < 0) { // before the capture: the levels it starts with
            c.channels[0].initial = stim;
            c.channels[1].initial = resp;
            continue;
        }
        if (d.drop.count(i))
            continue;
        c.channels[0].changes.emplace_back(at, stim);
        if (answered) {
            const auto shift = d.shifted.count(i) ? d.shift_ns : 0;
            c.channels[1].changes.emplace_back(on_capture(t + double(s.truth_ns[i] + shift)), resp);
        }
    }
    // A dropped pair leaves the levels as they were; re-derive the changes' levels.
    for (auto& ch : c.channels) {
        int level = ch.initial;
        for (auto& [t, v] : ch.changes)
            v = level ^= 1;
    }
    c.end_ps = on_capture(double(s.run.back().t_ns - s.run[0].t_ns) + 1e6);
    return c;
}

verify_figures align(const scripted_run& s, const capture& c)
{
    const auto edges = capture_stimuli(c, c.channels[0], c.channels[1]);
    return align_capture(s.run, edges, c.resolution_ps(), c.end_ps, 1'000'000);
}

// Every matched answered pair's (irqloop - analyzer) is the logger's overhead (latency -
// truth) within one analyzer sample, and the bracket holds the analyzer's latency.
void check_every_pair(const scripted_run& s, const capture& c, const verify_figures& f)
{
    const auto edges = capture_stimuli(c, c.channels[0], c.channels[1]);
    const double res_ns = double(c.resolution_ps()) / 1000.0;
    std::size_t k = 0;
    for (const auto& p : f.pairs) {
        const auto& r = s.run[p.run_index];
        if (r.latency_ns < 0)
            continue;
        const double an = double(edges[p.capture_index].answer_ps - edges[p.capture_index].t_ps) /
                          1000.0 / (1 + f.drift_ppm * 1e-6);
        INFO("seq " << r.seq);
        CHECK(std::fabs(double(r.latency_ns) - an - double(r.latency_ns - s.truth_ns[r.seq])) <=
              res_ns);
        REQUIRE(k < f.diffs_ns.size());
        CHECK(std::llabs(f.diffs_ns[k] - (r.latency_ns - s.truth_ns[r.seq])) <=
              std::llround(res_ns) + 1);
        ++k;
    }
}

std::size_t answered(const scripted_run& s)
{
    return std::size_t(
        std::count_if(s.truth_ns.begin(), s.truth_ns.end(), [](std::int64_t t) { return t >= 0; }));
}
} // namespace

TEST_CASE("verify: a VCD in sigrok's shape is read: channels by name, the sample rate from its "
          "comment, each change of level once",
          "[verify]")
{
    std::istringstream in("$date Fri Dec  4 21:08:24 2026 $end\n$version libsigrok 0.5.2 $end\n"
                          "$comment\n  Acquisition with 2/13 channels at 24 MHz\n$end\n"
                          "$timescale 100 ps $end\n$scope module libsigrok $end\n"
                          "$var wire 1 ! D0 $end\n$var wire 1 \" D1 $end\n$upscope $end\n"
                          "$enddefinitions $end\n#0 1! 0\"\n#417 0! 1\"\n#1667 1! 0\"\n"
                          "#2083 1\"\n#2500 1!\n#16667\n");
    const auto c = parse_vcd(in, "demo.vcd");
    REQUIRE(c.channels.size() == 2);
    CHECK(c.samplerate_hz == 24e6);
    CHECK(c.resolution_ps() == 41'667);
    CHECK(c.end_ps == 1'666'700);
    const auto* d0 = c.find("D0");
    REQUIRE(d0);
    CHECK(d0->initial == 1);
    CHECK(d0->changes == std::vector<std::pair<std::int64_t, int>>{{41'700, 0}, {166'700, 1}});
    const auto* d1 = c.find("D1");
    REQUIRE(d1);
    CHECK(d1->changes ==
          std::vector<std::pair<std::int64_t, int>>{{41'700, 1}, {166'700, 0}, {208'300, 1}});
    CHECK_FALSE(c.find("D2"));
}

TEST_CASE("verify: a VCD cut short, without definitions or with an unknown identifier is refused "
          "with what, why and a hint",
          "[verify]")
{
    const std::string head =
        "$timescale 1 ns $end\n$var wire 1 ! STIM $end\n$enddefinitions $end\n";
    auto refused = [](const std::string& text) {
        std::istringstream in(text);
        try {
            (void)parse_vcd(in, "x.vcd");
        } catch (const irqloop::error& e) {
            CHECK(e.status() == exit_usage);
            return e.why();
        }
        return std::string("accepted");
    };
    CHECK(refused(head + "#0 0!\n#100 1") == "the file is cut short (its last line has no end)");
    CHECK(refused("$timescale 1 ns $end\n$var wire 1 ! STIM $end\n") ==
          "no $enddefinitions: the file is cut short or is not a VCD");
    CHECK(refused(head + "#0 0!\n#10 1?\n") == "unknown identifier '?' on line 5");
    CHECK(refused(head + "#10 0!\n#5 1!\n") == "time goes backwards on line 5");
    CHECK(refused("hello\n").find("is not a VCD header") != std::string::npos);
    CHECK(refused(head + "#0 0!\n") == "accepted");
}

TEST_CASE("verify: write_vcd and parse_vcd keep every change", "[verify]")
{
    const auto s = make_run(1, 200, 10'000);
    const auto c = make_capture(s, 100e6, {});
    std::stringstream io;
    write_vcd(io, c, 10'000);
    const auto back = parse_vcd(io, "round.vcd");
    REQUIRE(back.channels.size() == 2);
    CHECK(back.samplerate_hz == 100e6);
    CHECK(back.channels[0].changes == c.channels[0].changes);
    CHECK(back.channels[1].changes == c.channels[1].changes);
}

TEST_CASE("verify: a whole capture of a scripted run matches every sample; each difference is "
          "the logger's overhead within one analyzer sample",
          "[verify]")
{
    const auto s = make_run(2, 3000, 10'000);
    for (double rate : {24e6, 100e6}) {
        INFO("rate " << rate);
        const auto c = make_capture(s, rate, {0, 2'000'000, 0, {}, {}, 0});
        const auto f = align(s, c);
        CHECK(f.matched == 3000);
        CHECK(f.capture_only == 0);
        CHECK(f.run_only == 0);
        CHECK(f.outside_capture == 0);
        CHECK(f.both_answered == answered(s));
        CHECK(f.both_lost == 3000 - answered(s));
        CHECK(f.lost_only_irqloop == 0);
        CHECK(f.lost_only_analyzer == 0);
        CHECK(f.outside.empty());
        CHECK(std::fabs(f.offset_ns - 2'000'000) <= double(c.resolution_ps()) / 1000.0);
        CHECK(std::fabs(f.drift_ppm) < 0.5);
        check_every_pair(s, c, f);
    }
}

TEST_CASE("verify: a capture that starts 1 s into the run still matches; the stimuli before it "
          "are counted outside the capture, exactly",
          "[verify]")
{
    const auto s = make_run(3, 12'000, 10'000); // 1.26 s
    const auto c = make_capture(s, 24e6, {1'000'000'000, 0, 0, {}, {}, 0});
    const auto before = std::size_t(std::count_if(s.run.begin(), s.run.end(), [&](const auto& r) {
        return r.t_ns - s.run[0].t_ns < 1'000'000'000;
    }));
    REQUIRE(before > 9000);
    const auto f = align(s, c);
    CHECK(f.matched == 12'000 - before);
    CHECK(f.outside_capture == before);
    CHECK(f.run_only == 0);
    CHECK(f.capture_only == 0);
    CHECK(f.outside.empty());
    check_every_pair(s, c, f);
}

TEST_CASE("verify: a capture with 1 % of its edges removed still matches; the run's stimuli it "
          "lacks are counted exactly",
          "[verify]")
{
    const auto s = make_run(4, 4000, 10'000);
    capture_damage d;
    std::mt19937_64 rng(44);
    while (d.drop.size() < 40) { // in pairs, so the levels stay as a real line's
        const auto i = 1 + rng() % 3990;
        if (d.drop.count(i) || d.drop.count(i + 1) || d.drop.count(i - 1))
            continue;
        d.drop.insert(i);
        d.drop.insert(i + 1);
    }
    const auto c = make_capture(s, 24e6, d);
    const auto f = align(s, c);
    CHECK(f.matched == 4000 - 40);
    CHECK(f.run_only == 40);
    CHECK(f.capture_only == 0);
    CHECK(f.outside.empty());
    for (const auto& p : f.pairs)
        CHECK(d.drop.count(p.run_index) == 0);
    check_every_pair(s, c, f);
}

TEST_CASE("verify: a capture whose clock runs 50 ppm fast still matches; the drift is fitted",
          "[verify]")
{
    const auto s = make_run(5, 6000, 10'000); // 0.63 s: 31 us apart by the end
    for (double ppm : {50.0, -50.0}) {
        const auto c = make_capture(s, 24e6, {0, 5'000'000, ppm, {}, {}, 0});
        const auto f = align(s, c);
        CHECK(f.matched == 6000);
        CHECK(f.run_only == 0);
        CHECK(f.capture_only == 0);
        CHECK(f.outside.empty());
        CHECK(std::fabs(f.drift_ppm - ppm) < 0.2);
        check_every_pair(s, c, f);
    }
}

TEST_CASE("verify: a strictly periodic run aligns by its latencies, even from mid-run", "[verify]")
{
    const auto s = make_run(6, 3000, 0);
    const auto c = make_capture(s, 100e6, {100'000'000, 0, 0, {}, {}, 0});
    const auto f = align(s, c);
    CHECK(f.outside_capture == 1000); // stimuli 0..999 come before 100 ms
    CHECK(f.matched == 2000);
    REQUIRE(!f.pairs.empty());
    CHECK(f.pairs.front().run_index == 1000);
    CHECK(f.outside.empty());
}

TEST_CASE("verify: RESP edges shifted by 2 us on 10 samples: exactly those 10 are outside their "
          "brackets",
          "[verify]")
{
    const auto s = make_run(7, 3000, 10'000);
    capture_damage d;
    d.lead_ns = 1'000'000;
    d.shift_ns = 2'000;
    for (std::size_t i = 100; d.shifted.size() < 10; i += 271)
        if (s.truth_ns[i] >= 0)
            d.shifted.insert(i);
    const auto c = make_capture(s, 24e6, d);
    const auto f = align(s, c);
    CHECK(f.matched == 3000);
    std::set<std::size_t> out;
    for (const auto& o : f.outside)
        out.insert(o.seq);
    CHECK(out == d.shifted);
    CHECK(f.outside.size() == 10);
}

TEST_CASE("verify: a capture of another run aligns with nothing and is refused, even when the "
          "two runs' stimuli fall at the same times",
          "[verify]")
{
    for (std::int64_t jitter : {10'000, 0}) {
        INFO("jitter " << jitter);
        const auto s = make_run(8, 3000, jitter);
        const auto other = make_run(9, 3000, jitter);
        const auto c = make_capture(other, 24e6, {0, 1'000'000, 0, {}, {}, 0});
        try {
            (void)align(s, c);
            FAIL("aligned");
        } catch (const irqloop::error& e) {
            CHECK(e.status() == exit_usage);
            CHECK(e.why().find("nothing aligns") != std::string::npos);
        }
    }
}
