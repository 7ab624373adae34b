// SPDX-License-Identifier: MIT
// The reading commands' refusals, through the real binary: message form and exit status.
#include "check-command.hpp"
#include "compare-command.hpp"
#include "doctor-command.hpp"
#include "merge-command.hpp"
#include "report-command.hpp"
#include "test-report-fixtures.hpp"
#include "watch-command.hpp"
#include "worst-command.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

using namespace irqloop::logger;
using namespace irqloop::logger::report_test;

namespace
{

process_result irqloop_cli(const std::string& args)
{
    return run_shell(irqloop::test::shell_program(IRQLOOP_BIN) + " " + args);
}

std::string small_db(const temp_dir& dir)
{
    const std::string path = dir.file("small.db");
    irqloop::db::store st(path);
    record_run(st, numbered_spec(401, "rt-idle", 3000));
    return path;
}

/** @brief Call a command's parse() with @p line split at white space, as argv. */
template <class Parse> auto parse_line(Parse parse, const std::string& line)
{
    auto words = split_ws(line);
    std::vector<char*> argv;
    for (auto& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    return parse(int(words.size()), argv.data());
}

/** @brief The exit status the irqloop::error of @p f carries, or -1 when it throws none. */
template <class F> int refusal_status(F f)
{
    try {
        f();
    } catch (const irqloop::error& e) {
        return e.status();
    }
    return -1;
}

/** @brief What std::cout receives while this lives. */
class cout_capture final
{
public:
    cout_capture() : old_(std::cout.rdbuf(out_.rdbuf())) {}
    ~cout_capture() { std::cout.rdbuf(old_); }
    std::string text() const { return out_.str(); }

private:
    std::ostringstream out_;
    std::streambuf* old_;
};

} // namespace

TEST_CASE("each reading command's parse() opens, creates and prints nothing", "[report]")
{
    temp_dir dir;
    const std::string missing = dir / "missing.db", fresh = dir / "new.db";
    cout_capture out;
    // Every value is checked, and no file looked at: the file named does not exist.
    const auto rep = parse_line(parse_report, "report --run 7 --top 3 --unit ns --db " + missing);
    REQUIRE(rep.request);
    CHECK(rep.request->sel.dbs == std::vector<std::string>{missing});
    CHECK(rep.request->top == 3);
    CHECK(rep.request->unit == latency_unit::ns);
    const auto cmp =
        parse_line(parse_compare, "compare --preset tbm --sort -p9999 --db " + missing);
    REQUIRE(cmp.request);
    CHECK(cmp.request->unit == latency_unit::ns); // the preset's
    CHECK(cmp.request->decimals == 0);
    CHECK(parse_line(parse_check, "check --max 10us --db " + missing).request);
    CHECK(parse_line(parse_worst, "worst --top 2 " + missing).request);
    CHECK(parse_line(parse_watch, "watch --count 1 --db " + missing).request);
    CHECK(parse_line(parse_doctor, "doctor --root " + (dir / "no-tree")).request);
    const auto mrg = parse_line(parse_merge, "merge --db " + fresh + " " + missing);
    REQUIRE(mrg.request);
    CHECK(mrg.request->sources == std::vector<std::string>{missing});
    // compare's --sort and --columns are refused before a file is opened.
    CHECK(refusal_status(
              [&] { parse_line(parse_compare, "compare --sort bogus --db " + missing); }) == 2);
    CHECK(refusal_status([&] {
              parse_line(parse_compare, "compare --columns label,bogus --db " + missing);
          }) == 2);
    CHECK(refusal_status([&] { parse_line(parse_check, "check --db " + missing); }) == 2);
    CHECK(std::filesystem::is_empty(dir.path()));
    CHECK(out.text().empty());
}

TEST_CASE("each reading command's parse() returns the --help text, printing nothing", "[report]")
{
    cout_capture out;
    const std::pair<std::string, std::string> helps[] = {
        {"report", parse_line(parse_report, "report --help").text},
        {"compare", parse_line(parse_compare, "compare -h").text},
        {"check", parse_line(parse_check, "check --help --max 1us").text},
        {"merge", parse_line(parse_merge, "merge --help").text},
        {"worst", parse_line(parse_worst, "worst --help").text},
        {"doctor", parse_line(parse_doctor, "doctor --help").text},
        {"watch", parse_line(parse_watch, "watch --help").text},
    };
    CHECK(out.text().empty());
    for (const auto& [name, text] : helps) {
        INFO(name);
        CHECK(text.find("usage: irqloop " + name) != std::string::npos);
        CHECK(text.find("show this help") != std::string::npos);
    }
    CHECK(!parse_line(parse_watch, "watch --help").request);
}

TEST_CASE("an unknown run id or label is refused, naming what exists", "[report]")
{
    temp_dir dir;
    const std::string db = small_db(dir);
    for (std::string cmd : {"report", "worst", "compare", "export"}) {
        DYNAMIC_SECTION(cmd)
        {
            auto c = irqloop_cli(cmd + " --db " + db + " --run 42");
            CHECK(c.status == 2);
            CHECK(c.out == "irqloop: select run '42': no such run in " + db +
                               " (ids: 1) (list the runs with 'irqloop report --list')\n");
            c = irqloop_cli(cmd + " --db " + db + " --label nope");
            CHECK(c.status == 2);
            CHECK(c.out ==
                  "irqloop: select label 'nope': no run with that label in " + db +
                      " (labels: 'rt-idle') (labels are set with 'irqloop run --label')\n");
        }
    }
    SECTION("a uuid prefix selects, a too-short one does not")
    {
        auto c = irqloop_cli("report --db " + db + " --run 00000000-0000-4000-8000-0000000004");
        CHECK(c.status == 0);
        c = irqloop_cli("report --db " + db + " --run 000");
        CHECK(c.status == 2);
    }
}

TEST_CASE("an empty database and a missing file are refused with a hint", "[report]")
{
    temp_dir dir;
    const std::string empty = dir.file("empty.db");
    {
        irqloop::db::store st(empty);
    }
    for (std::string cmd : {"report", "worst", "compare", "export", "plot -o x.svg"}) {
        DYNAMIC_SECTION(cmd)
        {
            auto c = irqloop_cli(cmd + " --db " + empty);
            CHECK(c.status == 2);
            CHECK(c.out ==
                  "irqloop: read " + empty +
                      ": the database holds no runs (record one with 'irqloop run --db FILE')\n");
            c = irqloop_cli(cmd + " --db " + dir.file("missing.db"));
            CHECK(c.status == 2);
            CHECK(c.out.find("irqloop: open database '" + dir.file("missing.db") +
                             "': no such file") == 0);
            CHECK_FALSE(std::filesystem::exists(dir.file("missing.db")));
        }
    }
}

TEST_CASE("a file that is not an irqloop database is refused by the store, untouched", "[report]")
{
    temp_dir dir;
    const std::string txt = dir.file("notes.db");
    std::ofstream(txt) << "not a database\n";
    auto c = irqloop_cli("report --db " + txt);
    CHECK(c.status != 0);
    CHECK(c.out.rfind("irqloop: open database '" + txt + "': ", 0) == 0);
    std::ifstream in(txt);
    std::string line;
    std::getline(in, line);
    CHECK(line == "not a database");
}

TEST_CASE("a run still running reports as partial, with what was committed", "[report]")
{
    temp_dir dir;
    const std::string db = dir.file("live.db");
    irqloop::db::store st(db); // kept open: its run lock says a writer is alive
    run_spec s;
    s.uuid = "00000000-0000-4000-8000-000000000501";
    s.label = "soak";
    s.status = irqloop::db::run_status::running;
    s.samples = 15'000; // one 10 s interval committed, the second open
    s.seed = 501;
    record_run(st, s);
    auto c = irqloop_cli("report --db " + db + " --unit ns --format csv");
    INFO(c.out);
    CHECK(c.status == 0);
    CHECK(c.out.find("# irqloop report: run 1 'soak' [PARTIAL: running]") == 0);
    CHECK(c.out.find("running (PARTIAL: still being recorded; figures up to the last commit)") !=
          std::string::npos);
    CHECK(c.out.find("samples,10000\n") != std::string::npos);
    auto w = irqloop_cli("worst --db " + db + " --top 1 --format csv");
    CHECK(w.out.find(",partial-run\n") != std::string::npos);
}

TEST_CASE("bad options of the reading commands exit 2 with the option named", "[report]")
{
    temp_dir dir;
    const std::string db = small_db(dir);
    struct bad {
        std::string args, expect;
    };
    for (const auto& b : std::vector<bad>{
             {"report --unit ms", "irqloop: bad --unit: unknown unit 'ms' (use ns or us)\n"},
             {"report --format html",
              "irqloop: bad --format: unknown format 'html' (use text, markdown or csv)\n"},
             {"compare --preset foo", "irqloop: bad --preset: unknown preset 'foo' (use default, "
                                      "opersys, tbm, tbm-target or rt_eval)\n"},
             {"compare --by host",
              "irqloop: bad --by: no selected run has 'host' in its target info (use run or "
              "label: no selected run was made with run --target-info)\n"},
             {"plot --kind pie -o x.svg",
              "irqloop: bad --kind: unknown plot kind 'pie' (use "
              "histogram, timeline, cdf, heatmap, long-term or tail)\n"},
             {"export --format xml",
              "irqloop: bad --format: unknown export format 'xml' (use json, csv, "
              "cyclictest-hist, rt-tests-json, prometheus, junit, lava, osadl-rtdataset, "
              "rtla-timerlat-hist or vcd)\n"},
             {"export --format prometheus --what worst",
              "irqloop: bad --what: --format prometheus has a fixed content (drop --what, or use "
              "--format json or csv)\n"},
             {"export --format csv --histogram 400",
              "irqloop: bad --histogram: --format csv has no 1 us bins (use it with --format "
              "cyclictest-hist, rt-tests-json, osadl-rtdataset or rtla-timerlat-hist)\n"},
             {"export --format cyclictest-hist --histogram 0",
              "irqloop: bad --histogram: '0' is not a number of bins (give 1 to 10000000 bins of "
              "1 us, e.g. --histogram 400)\n"},
             {"export --format csv --what all",
              "irqloop: bad --what: CSV holds one table, 'all' asks for 6 (pick one: --what "
              "intervals, worst, raw, ... (or use --format json))\n"},
             {"export --what raw", "irqloop: export raw samples: the selected runs have none (raw "
                                   "samples are kept only by 'irqloop run --raw')\n"},
         }) {
        DYNAMIC_SECTION(b.args)
        {
            auto c = irqloop_cli(b.args + " --db " + db);
            CHECK(c.status == 2);
            CHECK(c.out == b.expect);
        }
    }
    auto c = irqloop_cli("compare --columns label,bogus --db " + db);
    CHECK(c.status == 2);
    CHECK(c.out.rfind("irqloop: bad --columns: unknown column 'bogus' (known: run,uuid,label,",
                      0) == 0);
}

TEST_CASE("every reading command has --help with units and defaults", "[report]")
{
    for (std::string cmd : {"report", "worst", "compare", "plot", "export"}) {
        DYNAMIC_SECTION(cmd)
        {
            auto c = irqloop_cli(cmd + " --help");
            CHECK(c.status == 0);
            CHECK(c.out.rfind("usage: irqloop " + cmd, 0) == 0);
            CHECK(c.out.find("--db") != std::string::npos);
        }
    }
    auto c = irqloop_cli("--help");
    for (std::string cmd : {"compare", "export", "plot", "report", "worst"})
        CHECK(c.out.find("  " + cmd + " ") != std::string::npos);
}

TEST_CASE("irqloop --help: a command's summary that names values of an option names them all",
          "[report]")
{
    // The summaries of `irqloop --help`: "  NAME  summary".
    const auto top = irqloop_cli("--help");
    REQUIRE(top.status == 0);
    std::map<std::string, std::string> summary;
    static const std::regex entry(R"(^  ([a-z]+) +(.+)$)");
    std::stringstream lines(top.out);
    for (std::string l; std::getline(lines, l);) {
        std::smatch m;
        if (std::regex_match(l, m, entry))
            summary[m[1]] = m[2];
    }
    REQUIRE(summary.size() >= 10);
    // A value is named when it stands as a word (a plural "s" allowed), in any case.
    auto names = [](const std::string& text, const std::string& value) {
        std::string t = text, v = value;
        for (auto* s : {&t, &v})
            for (char& c : *s)
                c = char(std::tolower(static_cast<unsigned char>(c)));
        for (auto at = t.find(v); at != std::string::npos; at = t.find(v, at + 1)) {
            auto word = [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
            };
            const std::size_t end = at + v.size();
            const bool before = at == 0 || !word(t[at - 1]);
            const bool after = end == t.size() || !word(t[end]) ||
                               (t[end] == 's' && (end + 1 == t.size() || !word(t[end + 1])));
            if (before && after)
                return true;
        }
        return false;
    };
    // Each option of a usage line whose values are listed (--format json|csv|...): when the
    // summary names one of them, it names every one.
    static const std::regex choices(R"(--([a-z-]+) ([A-Za-z0-9.-]+(?:\|[A-Za-z0-9.-]+)+))");
    std::size_t held = 0;
    for (const auto& [cmd, text] : summary) {
        const auto help = irqloop_cli(cmd + " --help");
        REQUIRE(help.status == 0);
        const std::string usage = help.out.substr(0, help.out.find('\n'));
        for (std::sregex_iterator it(usage.begin(), usage.end(), choices), end; it != end; ++it) {
            std::vector<std::string> values;
            std::stringstream vs((*it)[2].str());
            for (std::string v; std::getline(vs, v, '|');)
                values.push_back(v);
            const auto named = std::count_if(values.begin(), values.end(),
                                             [&](const std::string& v) { return names(text, v); });
            if (named == 0)
                continue;
            ++held;
            for (const auto& v : values) {
                INFO(cmd << ": '" << text << "' names --" << (*it)[1] << " values but not " << v);
                CHECK(names(text, v));
            }
        }
    }
    CHECK(held >= 3); // export --format, plot --kind, compare --by at least
}

TEST_CASE("every command of irqloop --help has a man page, made by help2man from its --help",
          "[report]")
{
    const auto top = irqloop_cli("--help");
    REQUIRE(top.status == 0);
    std::vector<std::string> cmds;
    static const std::regex entry(R"(^  ([a-z]+) +.+$)");
    std::stringstream lines(top.out);
    for (std::string l; std::getline(lines, l);) {
        std::smatch m;
        if (std::regex_match(l, m, entry))
            cmds.push_back(m[1]);
    }
    REQUIRE(cmds.size() >= 10);
    // The build's list of pages (CMakeLists.txt, man_list) and irqloop(1)'s SEE ALSO.
    const std::string cmake =
        irqloop::test::file_text(std::string(IRQLOOP_SOURCE_DIR) + "/CMakeLists.txt");
    const std::string script = std::string(IRQLOOP_SOURCE_DIR) + "/logger/debian/help2man-page.sh";
    const std::string see_also = irqloop::test::file_text(script);
    for (const auto& c : cmds) {
        INFO(c);
        CHECK(cmake.find("\"irqloop-" + c + "|1|logger|") != std::string::npos);
        CHECK(cmake.find("|$<TARGET_FILE:irqloop>|" + c + "\"") != std::string::npos);
        CHECK(see_also.find(".BR irqloop-" + c + " (1)") != std::string::npos);
    }
    // The page itself, as the build makes it: the command's own option table.
    if (!have("help2man"))
        SKIP("help2man is not installed (apt-get install help2man)");
    temp_dir dir;
    for (const std::string c : {"check", "watch"}) {
        const std::string page = dir / ("irqloop-" + c + ".1.gz");
        auto r = run_shell("sh '" + script + "' '" + page + "' 1 'test page' '" + IRQLOOP_BIN +
                           "' " + c + " && zcat '" + page + "'");
        INFO(r.out);
        REQUIRE(r.status == 0);
        CHECK(r.out.find(".TH IRQLOOP-" + std::string(c == "check" ? "CHECK" : "WATCH")) !=
              std::string::npos);
        CHECK(r.out.find(c == "check" ? "\\fB\\-\\-max\\fR" : "\\fB\\-\\-refresh\\fR") !=
              std::string::npos);
    }
}

TEST_CASE("a run with no committed sample reports dashes, not zeros, and is marked partial",
          "[report]")
{
    temp_dir dir;
    const std::string db = dir.file("nothing.db");
    {
        irqloop::db::store st(db);
        run_spec s;
        s.uuid = "00000000-0000-4000-8000-000000000601";
        s.label = "died-early";
        s.status = irqloop::db::run_status::running;
        s.samples = 0;
        record_run(st, s);
    }
    auto c = irqloop_cli("report --db " + db + " --format csv");
    INFO(c.out);
    CHECK(c.status == 0);
    CHECK(c.out.find("[PARTIAL: running]") != std::string::npos);
    CHECK(c.out.find("min (us),\n") != std::string::npos);
    CHECK(c.out.find("max (us),\n") != std::string::npos);
    CHECK(c.out.find("(no samples)") != std::string::npos);
    CHECK(c.out.find("(no interval committed yet)") != std::string::npos);
    c = irqloop_cli("compare --db " + db + " --preset tbm --format csv");
    CHECK(c.status == 0);
    CHECK(c.out.find("died-early,,,,,0\n") != std::string::npos);
    c = irqloop_cli("plot --db " + db + " -o " + dir.file("x.svg"));
    CHECK(c.status == 2);
    CHECK(c.out ==
          "irqloop: plot histogram: the selected runs have no samples yet (plot a run that "
          "recorded at least one interval)\n");
}

TEST_CASE("a bare run id that repeats across files is refused with the uuid hint", "[report]")
{
    temp_dir dir;
    std::vector<std::string> dbs;
    for (int f = 0; f < 2; ++f) {
        dbs.push_back(dir.file("l" + std::to_string(f) + ".db"));
        irqloop::db::store st(dbs.back());
        run_spec s;
        s.uuid = "00000000-0000-4000-8000-00000000070" + std::to_string(f);
        s.label = "l" + std::to_string(f);
        s.samples = 100;
        s.seed = 700 + std::uint64_t(f);
        record_run(st, s);
    }
    auto c = irqloop_cli("report --db " + dbs[0] + " --db " + dbs[1] + " --run 1");
    CHECK(c.status == 2);
    CHECK(c.out == "irqloop: select run '1': 2 runs match in " + dbs[0] + ", " + dbs[1] +
                       " (ids repeat across files: give the run's uuid)\n");
    c = irqloop_cli("report --db " + dbs[0] + " --db " + dbs[1] +
                    " --run 00000000-0000-4000-8000-000000000701 --format csv");
    CHECK(c.status == 0);
    CHECK(c.out.find("label,l1\n") != std::string::npos);
}
