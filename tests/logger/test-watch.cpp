// SPDX-License-Identifier: MIT
// `irqloop watch` reads a file while `irqloop run` writes it, and ends cleanly without a
// running run.
#include "recorder.hpp"
#include "run-process.hpp"
#include "store.hpp"
#include "synthetic-run.hpp"
#include "temp-dir.hpp"
#include "watch-command.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("watch: sees the counts of a running run grow, then ends cleanly with no running run",
          "[run][cli][watch]")
{
    temp_dir dir;
    const std::string db = dir / "w.db";
    background_process run({IRQLOOP_BIN, "run", "--db", db, "--duration", "6s", "--stats-interval",
                            "200ms", "--progress", "none", "--label", "watched"},
                           dir / "run.log");
    // Wait for the first commit.
    for (int i = 0; i < 100 && !std::filesystem::exists(db); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    auto w = run_process({IRQLOOP_BIN, "watch", "--db", db, "--count", "3", "--refresh", "1s"});
    INFO(w.out << w.err);
    INFO("the run's output so far:\n" << file_text(dir / "run.log"));
    REQUIRE(w.status == 0);
    std::vector<unsigned long long> samples;
    const std::regex re("samples ([0-9]+)  stimuli");
    for (auto it = std::sregex_iterator(w.out.begin(), w.out.end(), re);
         it != std::sregex_iterator(); ++it)
        samples.push_back(std::stoull((*it)[1]));
    REQUIRE(samples.size() == 3);
    CHECK(samples[0] < samples[1]);
    CHECK(samples[1] < samples[2]);
    CHECK_THAT(w.out, ContainsSubstring("run 1 (watched) running"));
    CHECK(run.wait() == 0);
    auto after = run_process({IRQLOOP_BIN, "watch", "--db", db});
    CHECK(after.status == 0);
    CHECK(after.out == "irqloop watch: no running run in " + db + "\n");
    auto missing = run_process({IRQLOOP_BIN, "watch", "--db", dir / "none.db"});
    CHECK(missing.status == 2);
    CHECK_FALSE(std::filesystem::exists(dir / "none.db"));
}

namespace
{

/** @brief @p n answered samples 8 us long, @p period_ns apart from cycle @p t (1 GHz: ns). */
std::vector<irqloop::logger::sample> scripted_samples(std::uint64_t& seq, std::uint64_t& t,
                                                      std::uint64_t n, std::uint64_t period_ns)
{
    std::vector<irqloop::logger::sample> v;
    for (std::uint64_t i = 0; i < n; ++i, t += period_ns) {
        irqloop::logger::sample s{};
        s.seq = seq++;
        s.t0_cycles = t;
        s.latency_cycles = 8000;
        s.bracket_cycles = 40;
        s.max_gap_cycles = 20;
        v.push_back(s);
    }
    return v;
}

} // namespace

TEST_CASE("watch: the rate is the stimuli stored between two commits over the logger's time "
          "between them, kept between commits",
          "[report][watch]")
{
    using namespace irqloop;
    temp_dir dir;
    const std::string path = dir / "w.db";
    constexpr std::int64_t start = 1'767'225'600'000'000'000; // 2026-01-01 UTC
    db::store st(path);
    const std::int64_t id =
        st.begin_run(test::synthetic_run_row("00000000-0000-4000-8000-000000000311", "watched",
                                             start, "irqloop run (scripted)", "scripted"));
    // Windows of 1 s on a 1 GHz synthetic clock whose cycle 0 is the run's start.
    logger::recorder rec(test::synthetic_recorder_config(1'000'000'000, start), &st, id);
    logger::watch_request r;
    r.db = path;
    r.top = 0;
    logger::watch_state state;
    std::uint64_t seq = 0, t = 0;

    // 2.5 s at 1000/s: windows 0 and 1 committed (2000 stimuli at 2 s), the third still open.
    rec.add(scripted_samples(seq, t, 2500, 1'000'000));
    auto o = logger::execute_watch(r, state);
    REQUIRE(o.run != nullptr);
    CHECK(o.run->summary.stimuli == 2000);
    CHECK(o.rate == 1000.0); // the first view: 2000 stimuli over the 2 s since the start
    // No commit since: the stored counts have not moved, and the rate is kept, not 0.
    o = logger::execute_watch(r, state);
    CHECK(o.rate == 1000.0);

    // Then 4000/s from 2.5 s to 4.5 s: window 2 stores 500 + 2000 stimuli, window 3 4000, both
    // committed (at 3 s and 4 s); window 4 is open.
    rec.add(scripted_samples(seq, t, 8000, 250'000));
    o = logger::execute_watch(r, state);
    REQUIRE(o.run != nullptr);
    CHECK(o.run->summary.stimuli == 8500);
    CHECK(o.run->summary.end_unix_ns == start + 4'000'000'000);
    // (8500 - 2000) stimuli over the 2 s between the commits at 2 s and 4 s.
    CHECK(o.rate == 3250.0);
    o = logger::execute_watch(r, state);
    CHECK(o.rate == 3250.0);
}

TEST_CASE("watch: a live log-scale histogram of the last window, from its stored buckets",
          "[report][watch]")
{
    using namespace irqloop;
    temp_dir dir;
    const std::string path = dir / "h.db";
    constexpr std::int64_t start = 1'767'225'600'000'000'000; // 2026-01-01 UTC
    db::store st(path);
    auto row = test::synthetic_run_row("00000000-0000-4000-8000-000000000312", "hist", start,
                                       "irqloop run (scripted)", "scripted");
    row.timeout_ns = 10'000'000;
    const std::int64_t id = st.begin_run(row);
    logger::recorder rec(test::synthetic_recorder_config(1'000'000'000, start), &st, id);
    // Window 0: 1000 samples of 8 us. Window 1: 900 of 5 us, 90 of 9 us, 9 of 120 us, one of
    // 3 ms and 5 lost. Window 2 stays open (the run is running).
    std::vector<logger::sample> v;
    std::uint64_t seq = 0;
    const auto add = [&](std::uint64_t t_ns, std::uint64_t latency_ns, bool lost) {
        logger::sample s{};
        s.seq = seq++;
        s.t0_cycles = t_ns;
        s.latency_cycles = lost ? 0 : latency_ns;
        s.flags = lost ? db::flag_lost : 0u;
        s.bracket_cycles = lost ? 0 : 40;
        s.max_gap_cycles = 20;
        v.push_back(s);
    };
    for (std::uint64_t i = 0; i < 1000; ++i)
        add(i * 1'000'000, 8000, false);
    std::uint64_t t = 1'000'000'000;
    for (std::uint64_t i = 0; i < 1005; ++i, t += 990'000)
        add(t, i < 900 ? 5000 : i < 990 ? 9000 : i < 999 ? 120'000 : 3'000'000, i >= 1000);
    add(2'100'000'000, 8000, false);
    rec.add(v);

    logger::watch_request r;
    r.db = path;
    r.top = 0;
    logger::watch_state state;
    const auto o = logger::execute_watch(r, state);
    REQUIRE(o.run != nullptr);
    REQUIRE(o.window);
    CHECK(o.window->index == 1);
    CHECK(o.window->lost == 5);
    const auto lines =
        logger::window_histogram_lines(o.buckets, o.window->lost, o.run->meta.timeout_ns);
    // The histogram's own buckets (4 per power of two): 5 us in [4.096, 5.120), 9 us in
    // [8.192, 10.240), 120 us in [114.688, 131.072), 3 ms in [2621.440, 3145.728); log10 bars
    // of 40 for the largest count.
    const std::vector<std::string> want = {
        "     4.096 -      5.120         900  " + std::string(40, '#'),
        "...",
        "     8.192 -     10.240          90  " + std::string(30, '#'),
        "...",
        "   114.688 -    131.072           9  " + std::string(20, '#'),
        "...",
        "  2621.440 -   3145.728           1  " + std::string(10, '#'),
        "\xe2\x89\xa5 10000.000 (lost)                5  " + std::string(17, '#'),
    };
    CHECK(lines == want);
    // In the view, under its window's line.
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    logger::present_watch(o, r);
    std::cout.rdbuf(old);
    CHECK_THAT(out.str(), ContainsSubstring(
                              "  window 1: samples 1000  max \xe2\x89\xa5 10000.000 (5 lost) us"));
    CHECK_THAT(out.str(),
               ContainsSubstring("  window 1 histogram (us; its buckets, 4 per power of two; "
                                 "log10 bars):\n    " +
                                 want[0] + "\n"));
}
