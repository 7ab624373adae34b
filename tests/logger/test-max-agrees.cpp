// SPDX-License-Identifier: MIT
// One seeded run with lost, disturbed and throttled samples (issue 31): every table that shows
// a max shows the same max and the lost count, in report, worst, watch's final summary, the
// timeline, every compare preset and the exports. Golden outputs of each.
#include "read.hpp"
#include "synthetic-run.hpp"
#include "test-report-fixtures.hpp"
#include "version.hpp"
#include "watch-command.hpp"
#include "worst-table.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>
#include <unistd.h>

using namespace irqloop;
using namespace irqloop::logger;
using namespace irqloop::logger::report_test;
using Catch::Matchers::ContainsSubstring;

namespace
{

/**
 * @brief The run: 30,000 stimuli 1 ms apart in three 10 s windows, timeout 10 ms; 1 % lost,
 * 0.3 % disturbed by short stalls, rare answers up to 9.996 ms, and one sample (seq 21417)
 * the logger was stopped around for RT throttling's 50 ms: its upper bound 59.737 ms is above
 * the timeout, its bracket 49.985 ms, so it proves 9.752 ms; the run's preflight stored RT
 * throttling on (950000 us of every 1000000). The lost answers prove more than any sample: the
 * max is "≥ 10 ms".
 */
run_spec lossy_spec()
{
    run_spec s = numbered_spec(31, "lossy", 30'000);
    s.target = "imx8mp PREEMPT_RT 6.6"; // no --load: an idle run
    s.m = {5200, 1400, 0.002, 20'000, 9'995'701, 0.01, 0.003, 0};
    s.stalled = {{21'417, 59'736'769, 49'984'734}};
    // What run's preflight stores on a machine with RT throttling on (preflight.cpp).
    s.extra_metadata = {
        {"preflight.sched.rt_throttling", "FAIL on: 950000 us of every 1000000 us"}};
    return s;
}

temp_dir& lossy_dir()
{
    static temp_dir dir;
    return dir;
}

/** @brief The file, built once: "lossy.db" in lossy_dir(). */
void lossy_db()
{
    static const bool built = [] {
        db::store st(lossy_dir().file("lossy.db"));
        record_run(st, lossy_spec());
        return true;
    }();
    (void)built;
}

/** @brief Run @p f from inside lossy_dir() (a relative --db keeps column widths fixed). */
template <class F> auto in_lossy_dir(F f)
{
    lossy_db();
    char cwd[4096];
    REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
    REQUIRE(::chdir(lossy_dir().file("").c_str()) == 0);
    struct back {
        const char* to;
        ~back() { (void)::chdir(to); }
    } b{cwd};
    return f();
}

process_result run_line(const std::string& line)
{
    auto args = split_ws(line);
    args.push_back("--db");
    args.push_back("lossy.db");
    const std::string& name = args.at(0);
    auto fn = name == "report"    ? report_command
              : name == "worst"   ? worst_command
              : name == "compare" ? compare_command
                                  : export_command;
    auto c = in_lossy_dir([&] { return run_cmd(fn, args); });
    c.out = replace_all(c.out, std::string("\"irqloop ") + irqloop::version + "\"",
                        "\"irqloop <VERSION>\"");
    return c;
}

/** @brief What watch prints once the run it showed has ended: its final summary. */
std::string watch_final_summary()
{
    return in_lossy_dir([] {
        watch_request r;
        r.db = "lossy.db";
        watch_state state;
        state.watching = lossy_spec().uuid; // the run was on screen, and has ended since
        state.checked = true;
        const auto o = execute_watch(r, state);
        REQUIRE(o.ended != nullptr);
        std::ostringstream out;
        auto* old = std::cout.rdbuf(out.rdbuf());
        try {
            present_watch(o, r);
        } catch (...) {
            std::cout.rdbuf(old);
            throw;
        }
        std::cout.rdbuf(old);
        return out.str();
    });
}

struct golden_line {
    const char* file;
    const char* line;
};

const golden_line lossy_cases[] = {
    {"lossy-report.txt", "report --timeline-rows 0 --top 5"},
    {"lossy-worst.txt", "worst --top 8"},
    {"lossy-compare.txt", "compare"},
    {"lossy-compare-tbm.txt", "compare --preset tbm"},
    {"lossy-compare-opersys.md", "compare --preset opersys --format markdown"},
    {"lossy-compare-rt-eval.txt", "compare --preset rt_eval"},
    {"lossy-export.json", "export --what summary,intervals"},
    {"lossy-export-summary.csv", "export --format csv --what summary"},
};

/** @brief @p ns in us with 3 decimals, as the CI formats write a figure. */
std::string us3(double ns)
{
    char b[48];
    std::snprintf(b, sizeof b, "%.3f", ns / 1000.0);
    return b;
}

/** @brief The run as stored: its summary and timeout. */
db::run_record stored_run()
{
    lossy_db();
    db::catalog cat({lossy_dir().file("lossy.db")});
    REQUIRE(cat.runs().size() == 1);
    return cat.runs().front();
}

} // namespace

TEST_CASE("a run with lost, disturbed and throttled samples: the golden tables", "[report]")
{
    for (const auto& gc : lossy_cases) {
        DYNAMIC_SECTION(gc.file)
        {
            const auto c = run_line(gc.line);
            INFO(c.err);
            REQUIRE(c.status == 0);
            check_golden(gc.file, c.out);
        }
    }
    SECTION("watch's final summary")
    {
        check_golden("lossy-watch.txt", watch_final_summary());
    }
}

TEST_CASE("a run with lost answers: every max agrees, every table with a max shows the lost count",
          "[report]")
{
    const auto run = stored_run();
    const auto& s = run.summary;
    // The fixture is what it claims: lost, disturbed, and the throttled sample above the
    // timeout, which proves less than the timeout.
    REQUIRE(s.lost > 100);
    REQUIRE(s.disturbed > 50);
    REQUIRE(run.meta.timeout_ns == 10'000'000);
    REQUIRE(s.max_ns - s.max_bracket_ns < run.meta.timeout_ns);
    const std::string lost = "(" + std::to_string(s.lost) + " lost)";
    const std::string ge = "\xe2\x89\xa5 "; // ≥

    SECTION("report: the summary, the run list and the timeline")
    {
        const auto c = run_line("report --timeline-rows 0");
        REQUIRE(c.status == 0);
        CHECK(std::regex_search(c.out, std::regex("\nmax \\(us\\) +" + ge + "10000\\.000 \\(" +
                                                  std::to_string(s.lost) + " lost\\)\n")));
        // The answered samples' max still shows, below it: the stored one.
        const std::string answered =
            replace_all(format_latency(double(s.max_ns), latency_unit::us), ".", "\\.");
        CHECK(std::regex_search(c.out, std::regex("\nmax answered \\(us\\) +" + answered + "\n")));
        // Every interval that lost answers says so in its max, and the lost column adds up.
        std::uint64_t lost_in_rows = 0;
        std::istringstream lines(c.out.substr(c.out.find("== timeline ==")));
        std::string l;
        std::getline(lines, l);
        std::getline(lines, l); // the header
        CHECK_THAT(l, ContainsSubstring("max (us)"));
        CHECK_THAT(l, ContainsSubstring("lost"));
        std::getline(lines, l); // the rule
        int rows = 0;
        while (std::getline(lines, l) && !l.empty()) {
            ++rows;
            const auto p = l.find(" lost)");
            REQUIRE(p != std::string::npos);
            const auto open = l.rfind('(', p);
            lost_in_rows += std::stoull(l.substr(open + 1, p - open - 1));
            CHECK_THAT(l, ContainsSubstring(ge + "10000.000 ("));
        }
        CHECK(rows == 3);
        CHECK(lost_in_rows == s.lost);
        CHECK_THAT(c.out, ContainsSubstring("<== run max"));
        const auto list = run_line("report --list");
        CHECK_THAT(list.out, ContainsSubstring("lost"));
        CHECK_THAT(list.out, ContainsSubstring(ge + "10000.000 " + lost));
    }
    SECTION("worst's header and watch's final summary")
    {
        const std::string line = "run 1 'lossy': max " + ge + "10000.000 us " + lost;
        CHECK_THAT(run_line("worst --top 3").out, ContainsSubstring(line + "\n"));
        CHECK_THAT(watch_final_summary(), ContainsSubstring("  " + line + "\n"));
    }
    SECTION("worst ranks by what a sample proves, and says why a latency passes the timeout")
    {
        const auto w = run_line("worst --top 20 --format csv");
        REQUIRE(w.status == 0);
        std::istringstream in(w.out);
        std::string l;
        std::getline(in, l);
        CHECK(l == "rank,run,label,seq,time (UTC),latency (us),bracket (us),edge,flags");
        double last = 1e300;
        int rows = 0, above_timeout = 0;
        while (std::getline(in, l) && l.rfind('#', 0) != 0) {
            std::vector<std::string> f;
            std::istringstream cells(l);
            for (std::string c; std::getline(cells, c, ',');)
                f.push_back(c);
            REQUIRE(f.size() >= 8);
            const double latency = std::stod(f[5]), bracket = std::stod(f[6]);
            const std::string flags = f.size() > 8 ? f[8] : "";
            // Disturbed: "disturbed, proves X" in one quoted field, split here at its comma.
            const double proves = flags.find("disturbed") != std::string::npos
                                      ? std::stod(f[9].substr(f[9].find("proves ") + 7))
                                      : latency;
            if (flags.find("disturbed") != std::string::npos)
                CHECK(proves == Catch::Approx(latency - bracket).margin(0.0015));
            CHECK(proves <= last);
            last = proves;
            ++rows;
            if (latency > 10000.0) {
                ++above_timeout;
                CHECK_THAT(l, ContainsSubstring("above the timeout by its bracket"));
            }
        }
        CHECK(rows == 20);
        CHECK(above_timeout == 1); // the throttled sample, ranked by the 9.752 ms it proves
    }
    SECTION("every compare preset has a lost column and the same max")
    {
        const auto def = run_line("compare").out;
        CHECK_THAT(def, ContainsSubstring(ge + "10000.000 " + lost));
        const auto tbm = run_line("compare --preset tbm").out;
        CHECK_THAT(tbm, ContainsSubstring("LOST"));
        CHECK_THAT(tbm, ContainsSubstring(ge + "10000000 " + lost));
        const auto ops = run_line("compare --preset opersys").out;
        CHECK_THAT(ops, ContainsSubstring("Lost"));
        CHECK_THAT(ops, ContainsSubstring(ge + "10000.0 " + lost));
        // An idle run (no --load) reads "None", as the published opersys/OSADL table does.
        CHECK_THAT(ops, ContainsSubstring("None"));
        const auto rt = run_line("compare --preset rt_eval").out;
        CHECK_THAT(rt, ContainsSubstring("  lost  "));
        CHECK_THAT(rt, ContainsSubstring(ge + "10000000 " + lost)); // the global max at the end
    }
    SECTION("the exports carry the same max, bracket and lost count")
    {
        // The max a format gives as one number is what the lost answers prove, the timeout
        // (as the gates compare and the tables' "≥" shows); never the largest answered one.
        const auto j = nlohmann::json::parse(run_line("export --what summary,intervals").out);
        CHECK(j["format_version"] == 2);
        const auto& sum = j["runs"][0]["summary"];
        CHECK(sum["max_ns"] == run.meta.timeout_ns);
        CHECK(sum["max_answered_ns"] == s.max_ns);
        CHECK(sum["max_bracket_ns"] == s.max_bracket_ns);
        CHECK(sum["lost"] == s.lost);
        std::size_t lossy_windows = 0;
        for (const auto& w : j["runs"][0]["intervals"]) {
            REQUIRE(w["max_answered_ns"].is_number());
            if (w["lost"].get<std::uint64_t>() > 0) {
                ++lossy_windows;
                CHECK(w["max_ns"].get<std::int64_t>() >= run.meta.timeout_ns);
            } else {
                CHECK(w["max_ns"] == w["max_answered_ns"]);
            }
        }
        CHECK(lossy_windows == 3);
        const auto csv = run_line("export --format csv --what summary").out;
        CHECK_THAT(csv, ContainsSubstring("," + std::to_string(run.meta.timeout_ns) + "," +
                                          std::to_string(s.max_ns) + ","));
        CHECK_THAT(csv, ContainsSubstring("," + std::to_string(s.lost) + ","));
    }
    SECTION("every lab and CI format gives the timeout as the max, never the answered one")
    {
        const std::string bound_us = "10000", answered_us = std::to_string((s.max_ns + 999) / 1000);
        REQUIRE(answered_us != bound_us);
        const auto hist = run_line("export --format cyclictest-hist").out;
        CHECK_THAT(hist, ContainsSubstring("# Max Latencies: " + bound_us + "\n"));
        CHECK_THAT(hist, ContainsSubstring("; " + std::to_string(s.lost) +
                                           " answers lost, each at least the 10000 us timeout: "
                                           "its Max is at least that, and they are in no bin\n"));
        const auto rt = nlohmann::json::parse(run_line("export --format rt-tests-json").out);
        CHECK(rt["thread"]["0"]["max"] == 10000);
        CHECK(rt["thread"]["0"]["lost"] == s.lost);
        const auto osadl = nlohmann::json::parse(run_line("export --format osadl-rtdataset").out);
        CHECK(osadl.dump().find("\"maxima\":[10000]") != std::string::npos);
        // rtla's ALL block repeats the max: both show the bound.
        const auto rtla = run_line("export --format rtla-timerlat-hist").out;
        CHECK(std::regex_search(rtla, std::regex("\nmax: +10000 +10000 \n")));
        CHECK(rtla.find(" " + answered_us + " ") == std::string::npos);
        CHECK(std::regex_search(run_line("export --format prometheus").out,
                                std::regex("\nirqloop_latency_max_seconds\\{[^}]*\\} 0\\.01\n")));
        const auto j_run = run_line("export --format junit --max 1s");
        INFO(j_run.err);
        const auto& junit = j_run.out;
        CHECK_THAT(junit, ContainsSubstring("<property name=\"max_us\" value=\"10000.000\" />"));
        CHECK_THAT(junit, ContainsSubstring("<property name=\"max_answered_us\" value=\"" +
                                            us3(double(s.max_ns)) + "\" />"));
        const auto lava = run_line("export --format lava").out;
        CHECK_THAT(lava, ContainsSubstring("run1.max_us RESULT=pass "
                                           "MEASUREMENT=10000.000 UNITS=us>"));
        CHECK_THAT(lava, ContainsSubstring("run1.max_answered_us RESULT=pass "
                                           "MEASUREMENT=" +
                                           us3(double(s.max_ns)) + " UNITS=us>"));
    }
}

namespace
{

/** @brief plot @p args --script on the lossy run: the script, and what --data wrote. */
std::pair<std::string, std::vector<std::vector<std::string>>>
lossy_plot(std::vector<std::string> args)
{
    args.insert(args.begin(), {"plot", "--db", "lossy.db", "--script", "-o", "p.svg"});
    args.insert(args.end(), {"--data", "plot.tsv"});
    return in_lossy_dir([&] {
        const auto c = run_cmd(plot_command, args);
        INFO(c.err);
        REQUIRE(c.status == 0);
        std::ifstream in("plot.tsv");
        std::vector<std::vector<std::string>> rows;
        for (std::string line; std::getline(in, line);) {
            rows.emplace_back();
            std::istringstream f(line);
            for (std::string cell; std::getline(f, cell, '\t');)
                rows.back().push_back(cell);
            if (!line.empty() && line.back() == '\t')
                rows.back().push_back("");
        }
        return std::make_pair(c.out, rows);
    });
}

/** @brief The lines of the script's inline data block $@p name. */
std::vector<std::string> script_block(const std::string& script, const std::string& name)
{
    const auto p = script.find("\n$" + name + " << EOD\n");
    REQUIRE(p != std::string::npos);
    std::istringstream in(script.substr(script.find('\n', p + 1) + 1));
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l) && l != "EOD";)
        out.push_back(l);
    return out;
}

/** @brief Column @p k (from 0) of a data block line, as a number. */
double column(const std::string& line, std::size_t k)
{
    std::istringstream f(line);
    double v = 0;
    for (std::size_t i = 0; i <= k; ++i)
        REQUIRE(f >> v);
    return v;
}

} // namespace

TEST_CASE("the pictures follow the one rule on a run with lost, disturbed and throttled samples",
          "[report]")
{
    const auto run = stored_run();
    const auto& s = run.summary;
    const std::string ge = "\xe2\x89\xa5 ";            // ≥
    const double answered_us = double(s.max_ns) / 1e3; // what the answered max proves: clean
    REQUIRE(s.max_bracket_ns == 0);
    const double timeout_us = double(run.meta.timeout_ns) / 1e3;
    const auto report = run_line("report --timeline-rows 0");
    REQUIRE(report.status == 0);

    SECTION("gnuplot draws every kind of it")
    {
        skip_without_gnuplot_and_xmllint();
        for (const char* kind : {"histogram", "timeline", "cdf", "heatmap", "long-term"}) {
            INFO(kind);
            const auto c = in_lossy_dir([&] {
                return run_cmd(plot_command, {"plot", "--db", "lossy.db", "--kind", kind, "-o",
                                              std::string(kind) + ".svg"});
            });
            INFO(c.err);
            CHECK(c.status == 0);
        }
    }

    SECTION("timeline: the max line at what each window proves, the throttled max as its bracket, "
            "a marker at the timeout for each window that lost answers")
    {
        const auto [script, rows] = lossy_plot({"--kind", "timeline"});
        REQUIRE(rows.size() == 4);
        CHECK(rows[0][11] == "figure");
        std::uint64_t lost = 0;
        for (std::size_t i = 1; i < rows.size(); ++i) {
            // Each window's max as drawn is the one report's timeline prints.
            INFO(rows[i][11]);
            CHECK(rows[i][11].rfind(ge + "10000.000 (", 0) == 0);
            CHECK_THAT(report.out, ContainsSubstring("  " + rows[i][11] + "  "));
            lost += std::stoull(rows[i][9]);
        }
        CHECK(lost == s.lost);
        // The max line: its highest point is report's "max answered", never an upper bound.
        double line_max = 0;
        for (const auto& l : script_block(script, "iv0"))
            line_max = std::max(line_max, column(l, 1));
        CHECK(line_max == Catch::Approx(answered_us).margin(5e-4));
        // The throttled window: drawn at the 9.752 ms it proves, its bracket up to 59.737 ms.
        const auto dist = script_block(script, "dist0");
        REQUIRE(dist.size() == 1);
        CHECK(column(dist[0], 1) == Catch::Approx(9752.035).margin(5e-4));
        CHECK(column(dist[0], 3) == Catch::Approx(59736.769).margin(5e-4));
        // The samples above the threshold: clean ones at their latency, the throttled one at
        // what it proves; none above the answered max.
        double clean_max = 0;
        for (const auto& l : script_block(script, "ex0"))
            clean_max = std::max(clean_max, column(l, 1));
        CHECK(clean_max == Catch::Approx(answered_us).margin(5e-4));
        bool throttled = false;
        for (const auto& l : script_block(script, "exd0")) {
            CHECK(column(l, 1) <= answered_us);
            throttled |= column(l, 3) == Catch::Approx(59736.769).margin(5e-4);
        }
        CHECK(throttled);
        // Lost answers: one marker per window at the timeout, labelled as report labels it, so
        // the highest max drawn is report's "≥ 10000.000".
        const auto markers = script_block(script, "lost0");
        REQUIRE(markers.size() == 3);
        for (const auto& l : markers) {
            CHECK(column(l, 1) == timeout_us);
            CHECK_THAT(l, ContainsSubstring("\"" + ge + "10000.000 ("));
        }
        CHECK(std::regex_search(report.out, std::regex("\nmax \\(us\\) +" + ge + "10000\\.000 \\(" +
                                                       std::to_string(s.lost) + " lost\\)\n")));
        CHECK_THAT(script, ContainsSubstring("lost answers: " + ge + "timeout (" +
                                             std::to_string(s.lost) + " lost)"));
    }
    SECTION("histogram and cdf: the lost answers at the timeout, both axes showing body and tail")
    {
        const auto [script, rows] = lossy_plot({"--kind", "histogram"});
        REQUIRE(!rows.empty());
        CHECK(rows[0] == std::vector<std::string>{"run_id", "lo_ns", "hi_ns", "count", "what"});
        std::uint64_t answered = 0, lost = 0;
        for (std::size_t i = 1; i < rows.size(); ++i) {
            REQUIRE(rows[i].size() == 5);
            if (rows[i][4] == "lost") {
                CHECK(rows[i][1] == std::to_string(run.meta.timeout_ns));
                CHECK(rows[i][2].empty()); // no upper end
                lost += std::stoull(rows[i][3]);
            } else {
                CHECK(rows[i][4] == "answered");
                answered += std::stoull(rows[i][3]);
            }
        }
        CHECK(lost == s.lost);
        CHECK(answered == s.samples);
        CHECK_THAT(script, ContainsSubstring("lost (" + std::to_string(s.lost) + ")"));
        // 5 us to 10 ms: a log latency axis, so the body is not a line at 0.
        CHECK_THAT(script, ContainsSubstring("set logscale x\n"));
        const auto linear = lossy_plot({"--kind", "histogram", "--linear"}).first;
        CHECK_THAT(linear, !ContainsSubstring("set logscale x"));

        const auto cdf = in_lossy_dir([] {
            return run_cmd(plot_command, split_ws("plot --db lossy.db --kind "
                                                  "cdf --script -o c.svg"));
        });
        REQUIRE(cdf.status == 0);
        const auto curve = script_block(cdf.out, "run0");
        // The curve ends at the timeout on the lost share of the stimuli, not at 0.
        CHECK(column(curve.back(), 0) == timeout_us);
        CHECK(column(curve.back(), 1) ==
              Catch::Approx(double(s.lost) / double(s.samples + s.lost)).epsilon(1e-6));
        CHECK_THAT(cdf.out, ContainsSubstring("lost (" + std::to_string(s.lost) + ")"));
        CHECK_THAT(cdf.out, ContainsSubstring("set logscale x\n"));
    }
    SECTION("heatmap and long-term: the windows that lost answers marked at the timeout")
    {
        const auto heat = lossy_plot({"--kind", "heatmap"}).first;
        CHECK(script_block(heat, "lost").size() == 3);
        CHECK_THAT(heat, ContainsSubstring(ge + "timeout (" + std::to_string(s.lost) + " lost)"));
        const auto [script, rows] = lossy_plot({"--kind", "long-term"});
        REQUIRE(rows.size() == 4);
        CHECK(rows[0][8] == "lost");
        std::uint64_t lost = 0;
        for (std::size_t i = 1; i < rows.size(); ++i)
            lost += std::stoull(rows[i][8]);
        CHECK(lost == s.lost);
        double line_max = 0;
        for (const auto& l : script_block(script, "max0"))
            line_max = std::max(line_max, column(l, 1));
        CHECK(line_max == Catch::Approx(answered_us).margin(5e-4));
        CHECK(script_block(script, "lost0").size() == 3);
        CHECK(script_block(script, "dist0").size() == 1);
    }
}

TEST_CASE("a disturbed sample's cause is named where the run's stored facts match it, and only "
          "there",
          "[report]")
{
    const std::string rt = "bracket 49.985 ms matches RT throttling (sched_rt_runtime_us 950000 of "
                           "1000000, preflight FAIL)";
    SECTION("the rule, on its own")
    {
        db::run_record r;
        r.meta.metadata = {
            {"preflight.sched.rt_throttling", "FAIL on: 950000 us of every 1000000 us"}};
        db::sample_row s;
        s.unix_ns = 1500;
        s.flags = db::flag_disturbed;
        s.latency_ns = 59'736'769;
        s.bracket_ns = 49'984'734;
        CHECK(disturbed_cause(r, s, {}) == rt);
        // Within 10 % of the 50 ms pause, and not beyond.
        s.bracket_ns = 45'000'000;
        CHECK(disturbed_cause(r, s, {}) == "bracket 45.000 ms matches RT throttling "
                                           "(sched_rt_runtime_us 950000 of 1000000, preflight "
                                           "FAIL)");
        s.bracket_ns = 44'999'999;
        CHECK(disturbed_cause(r, s, {}).empty());
        s.bracket_ns = 10'000; // a short stall: nothing the run knows of
        CHECK(disturbed_cause(r, s, {}).empty());
        // SMIs counted in the sample's window; none counted, or no counter, say nothing.
        db::interval_row w;
        w.start_unix_ns = 1000;
        w.end_unix_ns = 2000;
        w.smi_count = 2;
        CHECK(disturbed_cause(r, s, {w}) == "2 SMIs counted in its window");
        s.bracket_ns = 49'984'734;
        CHECK(disturbed_cause(r, s, {w}) == rt + "; 2 SMIs counted in its window");
        w.smi_count = 0;
        CHECK(disturbed_cause(r, s, {w}) == rt);
        w.smi_count.reset();
        CHECK(disturbed_cause(r, s, {w}) == rt);
        w.smi_count = 1;
        w.start_unix_ns = 1501; // another window's SMI
        CHECK(disturbed_cause(r, s, {w}) == rt);
        // RT throttling off, or not checked: no cause; a clean sample has none.
        r.meta.metadata = {{"preflight.sched.rt_throttling", "OK off (sched_rt_runtime_us -1)"}};
        CHECK(disturbed_cause(r, s, {}).empty());
        r.meta.metadata.clear();
        CHECK(disturbed_cause(r, s, {}).empty());
        r.meta.metadata = {
            {"preflight.sched.rt_throttling", "FAIL on: 950000 us of every 1000000 us"}};
        s.flags = 0;
        CHECK(disturbed_cause(r, s, {}).empty());
    }
    SECTION("on the throttled sample's line in worst and report, and in report's notes")
    {
        const auto w = run_line("worst --top 3");
        REQUIRE(w.status == 0);
        std::istringstream lines(w.out);
        int named = 0;
        for (std::string l; std::getline(lines, l);) {
            if (l.find(" 21417 ") != std::string::npos)
                CHECK_THAT(l, ContainsSubstring("disturbed, proves 9752.035 (above the timeout by "
                                                "its bracket); " +
                                                rt));
            named += l.find("RT throttling") != std::string::npos;
        }
        CHECK(named == 1);
        const auto rep = run_line("report --top 5");
        REQUIRE(rep.status == 0);
        CHECK_THAT(rep.out, ContainsSubstring("; " + rt + "\n"));
        CHECK_THAT(rep.out,
                   ContainsSubstring("note: RT throttling: 1 stored disturbed sample (seq 21417) "
                                     "has a bracket within 10 % of its pause, 50.000 ms"));
        // The 99 other disturbed samples (short stalls) are named nothing.
        const auto all = run_line("worst --top 50");
        std::size_t n = 0;
        for (std::size_t p = 0; (p = all.out.find("RT throttling", p)) != std::string::npos; ++p)
            ++n;
        CHECK(n == 1);
    }
}

namespace
{

/**
 * @brief A scripted run through the recorder: 1000 stimuli 1 ms apart, warm-up 100, every
 * answer 8 us but seq 500's 20 us, timeout 10 ms; the stimuli @p lost lost; the recorder keeps
 * at most @p max_events lost events. Returns the file.
 */
std::string warm_run(const temp_dir& dir, const std::string& name,
                     const std::vector<std::uint64_t>& lost, std::uint64_t max_events = 100'000,
                     std::uint64_t* recorder_after = nullptr)
{
    const std::string path = dir.file(name);
    db::store st(path);
    constexpr std::int64_t start = epoch_ns;
    auto row = test::synthetic_run_row("00000000-0000-4000-8000-000000000" + name.substr(0, 3),
                                       "warm", start, "irqloop run (scripted)", "scripted");
    row.timeout_ns = 10'000'000;
    row.warmup_samples = 100;
    const auto id = st.begin_run(row);
    auto cfg = test::synthetic_recorder_config(10'000'000'000, start);
    cfg.warmup_samples = 100;
    cfg.max_events = max_events;
    recorder rec(cfg, &st, id);
    std::vector<sample> v;
    for (std::uint64_t seq = 0; seq < 1000; ++seq) {
        sample s{};
        s.seq = seq;
        s.t0_cycles = seq * 1'000'000 + 1;
        const bool l = std::find(lost.begin(), lost.end(), seq) != lost.end();
        s.flags = l ? std::uint32_t(db::flag_lost) : 0u;
        s.latency_cycles = l ? 0 : seq == 500 ? 20'000 : 8000;
        s.bracket_cycles = l ? 0 : 40;
        s.max_gap_cycles = 20;
        v.push_back(s);
    }
    rec.add(v);
    rec.finish(1000 * 1'000'000);
    if (recorder_after) // what run's own summary line counts (exact, not capped)
        *recorder_after = rec.lost_after_warmup();
    st.finish_run(id, db::run_status::complete, start + 1'000'000'000);
    return path;
}

/** @brief The "warm max (us)" row of report on @p path. */
std::string report_warm_max(const std::string& path)
{
    const auto c = run_cmd(report_command, {"report", "--db", path});
    REQUIRE(c.status == 0);
    const auto p = c.out.find("\nwarm max (us)");
    REQUIRE(p != std::string::npos);
    const auto line = c.out.substr(p + 1, c.out.find('\n', p + 1) - p - 1);
    return line.substr(line.find_first_not_of(' ', std::string("warm max (us)").size()));
}

} // namespace

TEST_CASE("WARM MAX with lost answers: '≥ timeout' only when the stored events prove a loss after "
          "the warm-up",
          "[report]")
{
    temp_dir dir;
    const std::string ge = "\xe2\x89\xa5 ";
    const auto warm = [&](const std::string& path) {
        db::catalog cat({path});
        const auto& r = cat.runs().front();
        return std::make_pair(r, lost_after_warmup(r, cat.events(r)));
    };
    SECTION("lost only in the warm-up: WARM MAX is exact")
    {
        const auto path = warm_run(dir, "001.db", {10, 11, 12});
        const auto [r, w] = warm(path);
        CHECK(r.summary.lost == 3);
        CHECK(w.known);
        CHECK(w.after == 0);
        CHECK(report_warm_max(path) == "20.000");
    }
    SECTION("lost after the warm-up, a burst across its end included: at least the timeout")
    {
        std::uint64_t counted = 0;
        const auto path = warm_run(dir, "002.db", {10, 98, 99, 100, 101, 700}, 100'000, &counted);
        const auto [r, w] = warm(path);
        CHECK(w.known);
        CHECK(w.after == 3); // 100, 101 and 700
        CHECK(counted == 3);
        CHECK(report_warm_max(path) == ge + "10000.000 (3 lost after the warm-up)");
        CHECK(format_warm_max(r, w, latency_unit::ns) ==
              ge + "10000000 (3 lost after the warm-up)");
    }
    SECTION("events over the recorder's cap: the place of the rest is unknown")
    {
        // Only the first burst (seq 10, in the warm-up) is stored as an event.
        auto path = warm_run(dir, "003.db", {10, 300, 700}, 1);
        auto [r, w] = warm(path);
        CHECK_FALSE(w.known);
        CHECK(w.after == 0);
        CHECK(report_warm_max(path) == "20.000 (3 lost, warm-up unknown)");
        // Only the first, seq 300, after the warm-up: it proves at least that one.
        path = warm_run(dir, "005.db", {300, 700}, 1);
        std::tie(r, w) = warm(path);
        CHECK_FALSE(w.known);
        CHECK(w.after == 1);
        CHECK(report_warm_max(path) == ge + "10000.000 (at least 1 lost after the warm-up)");
        // The recorder counts every one, capped events or not (run's summary line).
        std::uint64_t counted = 0;
        warm_run(dir, "006.db", {300, 700}, 1, &counted);
        CHECK(counted == 2);
    }
    SECTION("every answer after the warm-up lost: no sample there, yet at least the timeout")
    {
        std::vector<std::uint64_t> lost;
        for (std::uint64_t seq = 100; seq < 1000; ++seq)
            lost.push_back(seq);
        std::uint64_t counted = 0;
        const auto path = warm_run(dir, "004.db", lost, 100'000, &counted);
        const auto [r, w] = warm(path);
        CHECK_FALSE(r.summary.has_warm_max);
        CHECK(w.known);
        CHECK(w.after == 900);
        CHECK(counted == 900);
        CHECK(report_warm_max(path) == ge + "10000.000 (900 lost after the warm-up)");
    }
}
