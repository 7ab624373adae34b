// SPDX-License-Identifier: MIT
// Latency over time (schema version 3): per-window histograms written by the recorder, the
// heatmap and long-term plots, read back from the data behind the plot.
#include "plot.hpp"
#include "read.hpp"
#include "synthetic-run.hpp"
#include "test-report-fixtures.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace irqloop;
using namespace irqloop::logger;
using namespace irqloop::logger::report_test;

namespace
{

constexpr std::int64_t t_anchor = 1'790'000'000'000'000'000;
constexpr std::uint64_t windows = 10, burst_window = 6, burst = 30;
constexpr std::int64_t burst_ns = 150'000;

/**
 * Ten 1 s windows of 200 samples each around 5 us, and in window 6 a burst of 30 samples of
 * 150 us (seeded, so the same every time). Returns the run id.
 */
std::int64_t burst_run(db::store& st, const std::string& uuid, const std::string& label,
                       std::int64_t start_unix_ns)
{
    auto row = test::synthetic_run_row(uuid, label, start_unix_ns, "test", "test");
    row.backend = "sim:model=synthetic";
    row.stats_interval_ns = 1'000'000'000;
    row.metadata = {{"logger.window_histogram", db::window_buckets::scheme}};
    const auto id = st.begin_run(row);
    auto cfg = test::synthetic_recorder_config(1'000'000'000, start_unix_ns);
    cfg.threshold_ns = 100'000;
    cfg.warmup_samples = 0;
    recorder rec(cfg, &st, id);
    std::vector<sample> v;
    std::uint64_t seq = 0;
    std::uint32_t x = 12345; // a small LCG: seeded jitter of the body
    for (std::uint64_t w = 0; w < windows; ++w)
        for (std::uint64_t i = 0; i < 200; ++i) {
            sample s{};
            s.seq = seq++;
            s.t0_cycles = w * 1'000'000'000 + i * 4'000'000 + 1;
            x = x * 1103515245u + 12345u;
            s.latency_cycles = 4'500 + (x >> 16) % 1'000;
            if (w == burst_window && i >= 100 && i < 100 + burst)
                s.latency_cycles = burst_ns;
            s.bracket_cycles = 40;
            v.push_back(s);
        }
    rec.add(v);
    rec.finish(windows * 1'000'000'000 - 1'000'000);
    st.finish_run(id, db::run_status::complete, start_unix_ns + 10'000'000'000);
    return id;
}

struct data_row {
    std::int64_t run_id, idx, start, end, lo, hi, count;
    double x0, x1; ///< the column's span on the picture's x axis, in seconds
};

std::vector<data_row> read_heatmap_data(const std::string& path)
{
    std::ifstream in(path);
    std::string line;
    REQUIRE(std::getline(in, line));
    CHECK(line == "run_id\tidx\tstart_unix_ns\tend_unix_ns\tlo_ns\thi_ns\tcount\tx0_s\tx1_s");
    std::vector<data_row> out;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        data_row r{};
        f >> r.run_id >> r.idx >> r.start >> r.end >> r.lo >> r.hi >> r.count >> r.x0 >> r.x1;
        REQUIRE(f);
        out.push_back(r);
    }
    return out;
}

/** run_cmd with what the command wrote to std::cerr (its notes) added to err. */
process_result run_cmd_err(int (*fn)(int, char**), std::vector<std::string> args)
{
    std::ostringstream err;
    auto* old = std::cerr.rdbuf(err.rdbuf());
    process_result c;
    try {
        c = run_cmd(fn, std::move(args));
    } catch (...) {
        std::cerr.rdbuf(old);
        throw;
    }
    std::cerr.rdbuf(old);
    c.err += err.str();
    return c;
}

/**
 * @brief plot --db @p db @p args... -o @p svg --data @p data, required to succeed and to write
 * an SVG that xmllint parses.
 */
void plot_to(const std::string& db, std::vector<std::string> args, const std::string& svg,
             const std::string& data)
{
    args.insert(args.begin(), {"plot", "--db", db});
    args.insert(args.end(), {"-o", svg, "--data", data});
    auto c = run_cmd(plot_command, std::move(args));
    INFO(c.err);
    REQUIRE(c.status == 0);
    REQUIRE(run_shell("xmllint --noout '" + svg + "'").status == 0);
}

std::string svg_text(const std::string& svg)
{
    const auto c = run_shell("xmllint --xpath \"//*[local-name()='text']//text()\" '" + svg + "'");
    return c.status == 0 ? c.out : std::string();
}

} // namespace

TEST_CASE("window buckets: four per octave, each value in the bucket whose edges hold it", "[db]")
{
    using namespace db::window_buckets;
    for (std::int64_t v : {0LL, 1LL, 3LL, 4LL, 7LL, 8LL, 9LL, 15LL, 16LL, 1000LL, 2047LL, 2048LL,
                           4095LL, 4096LL, 5119LL, 5120LL, 150'000LL, 10'000'000'000LL}) {
        const int b = index_of(v);
        INFO(v << " -> bucket " << b);
        CHECK(lo_ns(b) <= v);
        CHECK(v < hi_ns(b));
        CHECK(hi_ns(b) == lo_ns(b + 1)); // no gap, no overlap
    }
    CHECK(index_of(-5) == 0);
    CHECK(index_of(4096) == 44);
    CHECK(lo_ns(44) == 4096);
    CHECK(hi_ns(44) == 5120);
    for (int b = 4; b < 130; ++b) { // log-spaced: a quarter to a seventh of the lower edge
        const double w = double(hi_ns(b) - lo_ns(b)) / double(lo_ns(b));
        CHECK(w <= 0.25);
        CHECK(w >= 1.0 / 7 - 1e-12);
    }
}

TEST_CASE("per-window histograms: each window's buckets sum to its samples; the view's edges "
          "are the code's",
          "[db][recorder]")
{
    temp_dir dir;
    const auto path = dir.file("w.db");
    std::int64_t id = 0;
    {
        db::store st(path);
        id = burst_run(st, "00000000-0000-4000-8000-000000000a01", "burst", t_anchor);
    }
    db::catalog cat({path});
    const auto& run = *cat.select({{std::to_string(id)}, {}, false}).front();
    CHECK(cat.has_window_histograms(run));
    const auto iv = cat.intervals(run);
    REQUIRE(iv.size() == windows);
    std::map<std::uint64_t, std::uint64_t> sum;
    for (const auto& b : cat.window_histograms(run)) {
        CHECK(b.count > 0); // non-empty buckets only
        sum[b.interval] += b.count;
    }
    for (const auto& w : iv)
        CHECK(sum[w.index] == w.samples);
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    SQLite::Statement q(d, "SELECT bucket, lo_ns, hi_ns FROM window_histograms");
    int rows = 0;
    while (q.executeStep()) {
        const int b = q.getColumn(0).getInt();
        CHECK(q.getColumn(1).getInt64() == db::window_buckets::lo_ns(b));
        CHECK(q.getColumn(2).getInt64() == db::window_buckets::hi_ns(b));
        ++rows;
    }
    CHECK(rows > int(windows));
}

TEST_CASE("heatmap: a seeded spike burst in window k shows in column k, and the SVG parses",
          "[report]")
{
    skip_without_gnuplot_and_xmllint();
    temp_dir dir;
    const auto path = dir.file("h.db");
    {
        db::store st(path);
        burst_run(st, "00000000-0000-4000-8000-000000000a02", "burst", t_anchor);
    }
    const auto svg = dir.file("heat.svg");
    const auto data = dir.file("heat.tsv");
    plot_to(path, {"--kind", "heatmap"}, svg, data);
    const auto rows = read_heatmap_data(data);
    std::uint64_t high = 0, cols = 0;
    std::int64_t last_idx = -1;
    for (const auto& r : rows) {
        if (r.idx != last_idx)
            ++cols;
        last_idx = r.idx;
        if (r.idx + 1 < std::int64_t(windows))
            CHECK(r.end - r.start == 1'000'000'000);
        else // the last window ends with the run, 1 ms early
            CHECK(r.end - r.start == 999'000'000);
        CHECK(r.start == t_anchor + r.idx * 1'000'000'000);
        if (r.hi > 100'000) {
            INFO("a bucket above 100 us in window " << r.idx);
            CHECK(r.idx == std::int64_t(burst_window)); // the burst, in its own column only
            CHECK(r.lo <= burst_ns);
            CHECK(burst_ns < r.hi);
            high += r.count;
        }
    }
    CHECK(high == burst);
    CHECK(cols == windows);
    // The picture itself draws a cell per row: gnuplot writes one path per box.
    std::ifstream in(svg);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    CHECK(text.find("samples in the window and bucket") != std::string::npos);
}

TEST_CASE("heatmap of a run recorded before schema version 3 says so instead of failing",
          "[report][db]")
{
    skip_without_gnuplot_and_xmllint();
    temp_dir dir;
    const auto path = dir.file("v2-sim.db");
    std::filesystem::copy_file(IRQLOOP_SOURCE_DIR "/tests/db/fixtures/v2-sim.db", path);
    const auto svg = dir.file("old.svg");
    const auto data = dir.file("old.tsv");
    auto c = run_cmd_err(plot_command,
                         {"plot", "--db", path, "--kind", "heatmap", "-o", svg, "--data", data});
    INFO(c.err);
    REQUIRE(c.status == 0);
    CHECK(c.err.find("no per-window histograms in this run") != std::string::npos);
    REQUIRE(run_shell("xmllint --noout '" + svg + "'").status == 0);
    CHECK(svg_text(svg).find("no per-window histograms in this run") != std::string::npos);
    CHECK(read_heatmap_data(data).empty());
    // The long-term view needs only the window maxima, which every version stores.
    auto l = run_cmd(plot_command, {"plot", "--db", path, "--kind", "long-term", "-o",
                                    dir.file("old-long.svg"), "--data", dir.file("old-long.tsv")});
    INFO(l.err);
    CHECK(l.status == 0);
}

TEST_CASE("long-term: every window's max over the runs of one label, in time order", "[report]")
{
    skip_without_gnuplot_and_xmllint();
    temp_dir dir;
    const auto path = dir.file("nights.db");
    {
        db::store st(path);
        // Three nights of one label, and one other run that --label leaves out.
        for (int n = 0; n < 3; ++n)
            burst_run(st, "00000000-0000-4000-8000-00000000b00" + std::to_string(n), "nightly",
                      t_anchor + n * 86'400'000'000'000LL);
        burst_run(st, "00000000-0000-4000-8000-00000000b0ff", "other", t_anchor + 3600'000'000'000);
    }
    const auto svg = dir.file("long.svg");
    const auto data = dir.file("long.tsv");
    plot_to(path, {"--kind", "long-term", "--label", "nightly"}, svg, data);
    std::ifstream in(data);
    std::string line;
    REQUIRE(std::getline(in, line));
    CHECK(line == "run_id\tlabel\tidx\tstart_unix_ns\tend_unix_ns\tmax_ns\tsamples\t"
                  "max_bracket_ns\tlost\ttimeout_ns\tx_s");
    int n = 0, bursts = 0;
    std::int64_t last_start = 0;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::int64_t run = 0, idx = 0, start = 0, end = 0, max = 0, samples = 0;
        std::string label;
        f >> run >> label >> idx >> start >> end >> max >> samples;
        REQUIRE(f);
        CHECK(label == "nightly");
        CHECK(start > last_start);
        last_start = start;
        CHECK(samples == 200);
        if (idx == std::int64_t(burst_window))
            CHECK(max == burst_ns);
        else
            CHECK(max < 10'000);
        bursts += max == burst_ns;
        ++n;
    }
    CHECK(n == 3 * int(windows));
    CHECK(bursts == 3);
}

TEST_CASE("timeline, heatmap and long-term: two runs 30 minutes apart are drawn side by side, not "
          "on one wall-clock axis",
          "[report]")
{
    temp_dir dir;
    const auto path = dir.file("apart.db");
    constexpr std::int64_t apart_ns = 1800'000'000'000; // 30 min: scripted start times
    {
        db::store st(path);
        burst_run(st, "00000000-0000-4000-8000-00000000c001", "first", t_anchor);
        burst_run(st, "00000000-0000-4000-8000-00000000c002", "second", t_anchor + apart_ns);
    }
    const auto read_rows = [](const std::string& file) {
        std::ifstream in(file);
        std::vector<std::vector<std::string>> rows;
        for (std::string line; std::getline(in, line);) {
            rows.emplace_back();
            std::istringstream f(line);
            for (std::string cell; std::getline(f, cell, '\t');)
                rows.back().push_back(cell);
        }
        return rows;
    };
    const auto script = [&](std::vector<std::string> args, const std::string& data) {
        args.insert(args.begin(), {"plot", "--db", path, "--script", "-o", dir.file("a.svg")});
        args.insert(args.end(), {"--data", data});
        auto c = run_cmd(plot_command, std::move(args));
        INFO(c.err);
        REQUIRE(c.status == 0);
        return c.out;
    };

    SECTION("timeline: each run from its own start, overlaid")
    {
        const auto s = script({"--kind", "timeline"}, dir.file("t.tsv"));
        CHECK(s.find("set xdata time") == std::string::npos);
        const auto rows = read_rows(dir.file("t.tsv"));
        REQUIRE(rows.size() == 1 + 2 * windows);
        CHECK(rows[0][4] == "x_s");
        for (std::size_t i = 1; i < rows.size(); ++i) {
            const double x = std::stod(rows[i][4]);
            CHECK(x > 0);
            CHECK(x < 10); // seconds since its run's start: both runs on [0, 10 s]
        }
        CHECK(rows[1][4] == rows[1 + windows][4]);
    }
    SECTION("heatmap and long-term: the second run's stretch right after the first's")
    {
        const auto h = script({"--kind", "heatmap"}, dir.file("h.tsv"));
        CHECK(h.find("set xdata time") == std::string::npos);
        double first_end = 0, second_start = 1e300, last = 0;
        for (const auto& r : read_heatmap_data(dir.file("h.tsv"))) {
            if (r.run_id == 1)
                first_end = std::max(first_end, r.x1);
            else
                second_start = std::min(second_start, r.x0);
            last = std::max(last, r.x1);
        }
        CHECK(second_start > first_end);
        CHECK(second_start < first_end + 1.0); // a gap of 3 % of the runs, not 30 minutes
        CHECK(last < 21);
        // Each stretch says which run it is and when it started.
        CHECK(h.find("'first, from 2026-") != std::string::npos);
        CHECK(h.find("'second, from 2026-") != std::string::npos);

        const auto l = script({"--kind", "long-term"}, dir.file("l.tsv"));
        const auto rows = read_rows(dir.file("l.tsv"));
        REQUIRE(rows.size() == 1 + 2 * windows);
        REQUIRE(rows[0][10] == "x_s");
        double max_x = 0;
        for (std::size_t i = 1; i < rows.size(); ++i)
            max_x = std::max(max_x, std::stod(rows[i][10]));
        CHECK(max_x < 21);
        // One tick per run at its start, and the two labels differ (not "12-05 01:47" twice).
        const auto p = l.find("set xtics (");
        REQUIRE(p != std::string::npos);
        const std::string tics = l.substr(p, l.find('\n', p) - p);
        CHECK(tics == "set xtics (\"09-21\\n14:13:20\" 0, \"09-21\\n14:43:20\" 10.6)");
    }
}
