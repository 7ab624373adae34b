// SPDX-License-Identifier: MIT
// plot: real gnuplot output, checked as XML (SVG) and by signature and size (PNG).
#include "plot.hpp"
#include "test-report-fixtures.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace irqloop::logger;
using namespace irqloop::logger::report_test;

namespace
{

std::string two_run_db(const temp_dir& dir)
{
    const std::string path = dir.file("plot.db");
    irqloop::db::store st(path);
    run_spec a = numbered_spec(301, "rt_idle", 25'000);
    a.m = {5000, 2000, 0.003, 31'000, 90'000, 0, 0, 0};
    record_run(st, a);
    run_spec b = a;
    b.uuid = "00000000-0000-4000-8000-000000000302";
    b.label = "rt-load 'hackbench'";
    b.seed = 302;
    b.start_unix_ns += 30'000'000'000;
    b.m = {6000, 5000, 0.01, 31'000, 200'000, 0, 0, 0};
    record_run(st, b);
    return path;
}

/** @brief The text of every <title> element of an SVG, through xmllint (which also parses it). */
std::vector<std::string> svg_titles(const std::string& svg)
{
    const auto c = run_shell("xmllint --xpath \"//*[local-name()='title']/text()\" '" + svg + "'");
    REQUIRE(c.status == 0);
    std::vector<std::string> out;
    std::istringstream in(c.out);
    std::string line;
    while (std::getline(in, line))
        out.push_back(line);
    return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

TEST_CASE("plot draws SVG histograms, timelines and CDFs that parse as XML with one series per run",
          "[report]")
{
    skip_without_gnuplot_and_xmllint();
    temp_dir dir;
    const std::string db = two_run_db(dir);

    SECTION("histogram: runs overlaid")
    {
        const std::string out = dir.file("hist.svg");
        auto c = run_cmd(plot_command, {"plot", "--db", db, "--kind", "histogram", "-o", out});
        INFO(c.err);
        REQUIRE(c.status == 0);
        REQUIRE(run_shell("xmllint --noout '" + out + "'").status == 0);
        const auto t = svg_titles(out);
        CHECK(contains(t, "rt_idle"));
        CHECK(contains(t, "rt-load 'hackbench'"));
    }
    SECTION("timeline: interval max and avg and the exceedances of each run")
    {
        const std::string out = dir.file("timeline.svg");
        auto c = run_cmd(plot_command, {"plot", "--db", db, "--kind", "timeline", "-o", out});
        INFO(c.err);
        REQUIRE(c.status == 0);
        const auto t = svg_titles(out);
        for (std::string s : {"rt_idle", "rt-load 'hackbench'"}) {
            CHECK(contains(t, s + " max"));
            CHECK(contains(t, s + " avg"));
            CHECK(contains(t, s + " above threshold"));
        }
    }
    SECTION("cdf of one selected run")
    {
        const std::string out = dir.file("cdf.svg");
        auto c = run_cmd(plot_command,
                         {"plot", "--db", db, "--kind", "cdf", "--labels", "rt_idle", "-o", out});
        INFO(c.err);
        REQUIRE(c.status == 0);
        const auto t = svg_titles(out);
        CHECK(contains(t, "rt_idle"));
        CHECK_FALSE(contains(t, "rt-load 'hackbench'"));
    }
    // The script goes to gnuplot on a pipe: nothing but the pictures is left behind.
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.file("")))
        files += e.path().filename().string().find(".db") == std::string::npos;
    CHECK(files == 1);
}

TEST_CASE("plot writes a PNG with the PNG signature and the requested size", "[report]")
{
    if (find_gnuplot().empty())
        SKIP("gnuplot is not installed (apt-get install gnuplot-nox)");
    temp_dir dir;
    const std::string db = two_run_db(dir);
    const std::string out = dir.file("hist.png");
    auto c = run_cmd(plot_command, {"plot", "--db", db, "--kind", "histogram", "--size", "640x480",
                                    "--bin", "1us", "-o", out});
    INFO(c.err);
    REQUIRE(c.status == 0);
    std::ifstream in(out, std::ios::binary);
    unsigned char h[24] = {};
    in.read(reinterpret_cast<char*>(h), sizeof h);
    REQUIRE(in.gcount() == 24);
    const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    CHECK(std::equal(sig, sig + 8, h));
    CHECK(std::string(reinterpret_cast<char*>(h + 12), 4) == "IHDR");
    auto be32 = [&](int o) { return (h[o] << 24) | (h[o + 1] << 16) | (h[o + 2] << 8) | h[o + 3]; };
    CHECK(be32(16) == 640);
    CHECK(be32(20) == 480);
}

TEST_CASE("plot without gnuplot fails with a hint and writes nothing", "[report]")
{
    temp_dir dir;
    const std::string db = two_run_db(dir);
    const std::string out = dir.file("x.svg");
    ::setenv("IRQLOOP_GNUPLOT", "/nonexistent/gnuplot", 1);
    auto c = run_cmd(plot_command, {"plot", "--db", db, "-o", out});
    ::unsetenv("IRQLOOP_GNUPLOT");
    CHECK(c.status == irqloop::exit_failure);
    CHECK(c.err.find("irqloop: plot: cannot run '/nonexistent/gnuplot'") == 0);
    CHECK(c.err.find("(apt-get install gnuplot-nox)") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("plot refuses an output that is neither .svg nor .png", "[report]")
{
    temp_dir dir;
    const std::string db = two_run_db(dir);
    auto c = run_cmd(plot_command, {"plot", "--db", db, "-o", dir.file("x.jpg")});
    CHECK(c.status == irqloop::exit_usage);
    CHECK(c.err.find("name the output file *.svg or *.png") != std::string::npos);
}

TEST_CASE("histogram rebinning of a damaged file's buckets (out of order, below 0, near "
          "INT64_MAX) keeps every sample in range",
          "[report]")
{
    // What fuzz-db found (tests/fuzz/db/report-histogram-out-of-order.db): buckets out of order
    // and below 0 made rebin_linear index past its bins.
    const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 10;
    const std::vector<irqloop::db::bucket_row> b = {
        {8140, 8144, 2}, {-2'091'008, 1, 5}, {-7, -6, 1}, {100, 101, 3}, {big, big + 1, 4}};
    const auto lin = rebin_linear({b[0], b[1], b[2], b[3]}, 1'000'000);
    std::uint64_t n = 0;
    for (const auto& x : lin) {
        n += x.count;
        CHECK(x.hi_ns - x.lo_ns == 1'000'000);
    }
    CHECK(n == 11);
    CHECK(lin.front().lo_ns == -3'000'000); // floor division: -2.09 ms is in [-3 ms, -2 ms)
    CHECK(lin.back().lo_ns == 0);
    const auto rep = rebin_report(b, 24);
    n = 0;
    for (const auto& x : rep)
        n += x.count;
    CHECK(n == 15);
    CHECK(rep.back().count == 4); // the bucket near INT64_MAX, in the last tail bin
}

TEST_CASE("histogram rebinning keeps every sample and uses 1-2-5 widths", "[report]")
{
    const std::vector<irqloop::db::bucket_row> b = {
        {100, 101, 300}, {150, 151, 200}, {2048, 2050, 700}, {90'000, 90'064, 1}};
    CHECK(nice_bin_width(100, 90'064, 400) == 500);
    CHECK(nice_bin_width(0, 10, 400) == 1);
    const auto lin = rebin_linear(b, 500);
    std::uint64_t n = 0;
    for (const auto& x : lin)
        n += x.count;
    CHECK(n == 1201);
    CHECK(lin.front().lo_ns == 0);
    CHECK(lin.back().lo_ns == 90'000);
    const auto rep = rebin_report(b, 24);
    n = 0;
    for (const auto& x : rep)
        n += x.count;
    CHECK(n == 1201);
    CHECK(rep.front().hi_ns - rep.front().lo_ns == 100); // body: p99 is 2.05 us, <= 24 bins
    CHECK(rep.back().count == 1); // the 90 us outlier sits alone in a doubling tail bin
    CHECK(rep.back().hi_ns == 2 * rep.back().lo_ns);
    CHECK(log_bar(0, 100) == "");
    CHECK(log_bar(1, 100).size() == 13);
    CHECK(log_bar(100, 100).size() == 40);
    const auto tail = tail_curve(b);
    CHECK(tail.front().fraction_above == 1.0);
    CHECK(tail.back().fraction_above == 1.0 / 1201);
}

TEST_CASE("plot's default histogram bins follow the data: the demo model's 5-12 us body has at "
          "least 10 non-empty bins, read back from --data",
          "[report]")
{
    temp_dir dir;
    const std::string db = dir.file("demo.db"), data = dir.file("hist.tsv");
    // The model of the demo (bash .ci/demo, docs/commands/report.md's truth example), with a
    // 10 ms tail of its own: a 1-2-5 width over the whole range would put the body in one bin.
    const auto run =
        run_shell(irqloop::test::shell_program(IRQLOOP_BIN) +
                  " run -q --hw 'sim:model=normal,mean=8us,sd=1us,spike_p=1e-3,spike_min=60us,"
                  "spike_max=10ms' -n 20000 -i 20us --priority 0 --no-dma-latency --db " +
                  db + " 2>&1");
    INFO(run.out);
    REQUIRE(run.status == 0);
    const auto c = run_cmd(plot_command, {"plot", "--db", db, "--kind", "histogram", "--script",
                                          "-o", dir.file("h.svg"), "--data", data});
    INFO(c.err);
    REQUIRE(c.status == 0);
    std::ifstream in(data);
    std::string line;
    REQUIRE(std::getline(in, line));
    CHECK(line == "run_id\tlo_ns\thi_ns\tcount\twhat");
    int body = 0;
    std::uint64_t total = 0;
    std::int64_t last_hi = -1;
    while (std::getline(in, line)) {
        if (line.size() > 5 && line.substr(line.size() - 5) == "\tlost")
            continue; // the lost answers, at the timeout (test-max-agrees.cpp)
        std::istringstream f(line);
        long long id = 0, lo = 0, hi = 0;
        unsigned long long n = 0;
        REQUIRE(f >> id >> lo >> hi >> n);
        CHECK(lo < hi);
        CHECK((last_hi < 0 || lo == last_hi)); // contiguous bins
        last_hi = hi;
        total += n;
        if (lo >= 5000 && hi <= 12'000 && n > 0)
            ++body;
    }
    CHECK(body >= 10);
    // Every stored sample is in a bin.
    const auto rep = run_cmd(report_command, {"report", "--db", db, "--format", "csv"});
    REQUIRE(rep.status == 0);
    const auto p = rep.out.find("\nsamples,");
    REQUIRE(p != std::string::npos);
    CHECK(total == std::stoull(rep.out.substr(p + 9)));
    INFO("bins in the body: " << body);
}
