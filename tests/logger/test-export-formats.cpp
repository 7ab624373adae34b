// SPDX-License-Identifier: MIT
// The export formats, each checked by its real consumer: Python's JSON parser and jq for the
// JSON export, Debian's cyclictest (rt-tests) for the cyclictest text and JSON, OSADL's plot
// recipe (docs/examples/osadl-latency-plot.sh) with gnuplot, and promtool (Debian prometheus)
// for the Prometheus text, exported and live.
#include "error.hpp"
#include "export-command.hpp"
#include "parse-words.hpp"
#include "plot-command.hpp"
#include "read.hpp"
#include "test-report-fixtures.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <thread>
#include <unistd.h>

using namespace irqloop;
using namespace irqloop::logger::report_test;
using Catch::Matchers::ContainsSubstring;
using irqloop::test::file_text;
using irqloop::test::run_process;

namespace
{

const std::string irqloop_bin = IRQLOOP_BIN;
const std::string source_dir = IRQLOOP_SOURCE_DIR;

process_result irqloop_cmd(std::vector<std::string> args)
{
    args.insert(args.begin(), irqloop_bin);
    return run_process(args);
}

/** @brief A label that is not UTF-8: Latin-1 "café", a lone continuation byte, 0xFF. */
const std::string bad_label = std::string("caf\xe9 \x80 \xff rt");

/**
 * @brief A database with two runs: 1 (label with invalid UTF-8, spikes above 50 us, every
 * sample kept raw, gate.result fail) and 2 (clean label, no raw samples).
 */
void build_db(const std::string& path)
{
    db::store st(path);
    run_spec a = numbered_spec(1, bad_label, 20'000);
    a.target = std::string("board \xc3\x28 rev B"); // an invalid two-byte sequence
    a.raw = true;
    a.interval_ns = 100'000;
    a.m = {5200, 1400, 0.003, 20'000, 90'000, 0.001, 0.001, 0};
    a.extra_metadata = {{"gate.result", "fail"}};
    record_run(st, a);
    run_spec b = numbered_spec(2, "rt-idle", 10'000);
    b.start_unix_ns = epoch_ns + 60'000'000'000;
    b.m = {3100, 900, 0.002, 15'000, 70'000, 0, 0, 0};
    record_run(st, b);
}

// --- cyclictest --histogram text: its grammar -------------------------------------------

/** @brief A field printed with %0Wd: at least W digits, zero-padded only up to W. */
bool padded(const std::string& f, std::size_t w)
{
    if (f.empty() || f.find_first_not_of("0123456789") != std::string::npos)
        return false;
    return f.size() == w || (f.size() > w && f[0] != '0');
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> v;
    std::stringstream s(text);
    for (std::string l; std::getline(s, l);)
        v.push_back(l);
    return v;
}

/** @brief What a cyclictest --histogram text holds, read by its grammar. */
struct hist_text {
    std::vector<std::string> problems; ///< every line that breaks the grammar
    std::vector<std::string> shape;    ///< the line kinds after "# Histogram", in order
    std::size_t columns = 0;
    std::vector<std::vector<std::uint64_t>> bins; ///< [bin][column]
    std::map<std::string, std::vector<std::uint64_t>> footer;
    std::vector<std::vector<std::uint64_t>> overflow_cycles;
    std::vector<std::uint64_t> others;
};

hist_text parse_hist(const std::string& text, std::size_t want_bins)
{
    hist_text h;
    auto bad = [&](const std::string& why, const std::string& l) {
        h.problems.push_back(why + ": '" + l + "'");
    };
    const auto lines = lines_of(text);
    std::size_t i = 0;
    while (i < lines.size() && lines[i] != "# Histogram") {
        if (lines[i].rfind("#", 0) != 0)
            bad("a line before '# Histogram' that is no comment", lines[i]);
        ++i;
    }
    if (i == lines.size()) {
        bad("no '# Histogram' line", "");
        return h;
    }
    ++i;
    // Bin lines: "%06d" index, then one "%06lu" count per thread: a space first, tabs after.
    static const std::regex bin_line(R"(^([0-9]+) ([0-9]+)((\t[0-9]+)*)$)");
    for (; i < lines.size() && !lines[i].empty() && lines[i][0] != '#'; ++i) {
        std::smatch m;
        if (!std::regex_match(lines[i], m, bin_line)) {
            bad("bin line", lines[i]);
            continue;
        }
        std::vector<std::string> f{m[1], m[2]};
        std::stringstream rest(m[3].str());
        for (std::string c; std::getline(rest, c, '\t');)
            if (!c.empty())
                f.push_back(c);
        if (!padded(f[0], 6) || std::stoull(f[0]) != h.bins.size())
            bad("bin index not %06d in order", lines[i]);
        std::vector<std::uint64_t> counts;
        for (std::size_t k = 1; k < f.size(); ++k) {
            if (!padded(f[k], 6))
                bad("count not %06lu", lines[i]);
            counts.push_back(std::stoull(f[k]));
        }
        if (h.bins.empty())
            h.columns = counts.size();
        else if (counts.size() != h.columns)
            bad("column count changes", lines[i]);
        h.bins.push_back(counts);
    }
    h.shape.push_back("bins");
    if (h.bins.size() != want_bins)
        bad("bins: " + std::to_string(h.bins.size()) + ", want " + std::to_string(want_bins), "");
    const std::pair<const char*, std::size_t> footers[] = {{"# Total:", 9},
                                                           {"# Min Latencies:", 5},
                                                           {"# Avg Latencies:", 5},
                                                           {"# Max Latencies:", 5},
                                                           {"# Histogram Overflows:", 5}};
    for (const auto& [head, width] : footers) {
        if (i >= lines.size() || lines[i].rfind(head, 0) != 0) {
            bad(std::string("expected ") + head, i < lines.size() ? lines[i] : "<end>");
            return h;
        }
        const std::string rest = lines[i].substr(std::string(head).size());
        // Each value is " %0Wlu": one space before each, nothing else.
        static const std::regex values(R"(^( [0-9]+)+$)");
        if (!std::regex_match(rest, values))
            bad("values after the key", lines[i]);
        std::vector<std::uint64_t> v;
        for (const auto& f : split_ws(rest)) {
            if (!padded(f, width))
                bad(std::string("value not %0") + std::to_string(width) + "lu", lines[i]);
            v.push_back(std::stoull(f));
        }
        if (v.size() != h.columns)
            bad("one value per column", lines[i]);
        h.footer[head] = v;
        h.shape.push_back(head);
        ++i;
    }
    if (i >= lines.size() || lines[i] != "# Histogram Overflow at cycle number:") {
        bad("expected the overflow heading", i < lines.size() ? lines[i] : "<end>");
        return h;
    }
    h.shape.push_back(lines[i++]);
    static const std::regex thread_line(
        R"(^# Thread ([0-9]+):((?: [0-9]+)*)(?: # ([0-9]+) others)?$)");
    for (std::size_t t = 0; t < h.columns; ++t, ++i) {
        std::smatch m;
        if (i >= lines.size() || !std::regex_match(lines[i], m, thread_line) ||
            std::stoul(m[1]) != t) {
            bad("thread overflow line", i < lines.size() ? lines[i] : "<end>");
            return h;
        }
        std::vector<std::uint64_t> cycles;
        for (const auto& f : split_ws(m[2])) {
            if (!padded(f, 5))
                bad("cycle number not %05lu", lines[i]);
            cycles.push_back(std::stoull(f));
        }
        if (m[3].matched && !padded(m[3], 5))
            bad("others count not %05lu", lines[i]);
        h.overflow_cycles.push_back(cycles);
        h.others.push_back(m[3].matched ? std::stoull(m[3]) : 0);
        h.shape.push_back("# Thread N:");
    }
    if (i >= lines.size() || !lines[i].empty())
        bad("expected the closing empty line", i < lines.size() ? lines[i] : "<end>");
    else
        h.shape.push_back("<empty>");
    if (i + 1 != lines.size())
        bad("lines after the closing empty line", "");
    // The figures agree with each other.
    for (std::size_t c = 0; c < h.columns && h.footer.size() == 5; ++c) {
        std::uint64_t sum = 0;
        for (const auto& b : h.bins)
            sum += b[c];
        if (sum != h.footer["# Total:"][c])
            bad("# Total is not the sum of the bins, column " + std::to_string(c), "");
        const auto shown = h.overflow_cycles[c].size() + h.others[c];
        if (shown != h.footer["# Histogram Overflows:"][c])
            bad("overflow cycles + others != # Histogram Overflows, column " + std::to_string(c),
                "");
    }
    return h;
}

/** @brief Run Debian's cyclictest briefly; "" when it cannot run here (reason in @p why). */
bool real_cyclictest(const temp_dir& dir, int bins, std::string& why)
{
    if (!have("cyclictest")) {
        why = "cyclictest is not installed (apt-get install rt-tests)";
        return false;
    }
    // 1 s, one thread, 1 ms interval: SCHED_OTHER unless it can do better, no -m (mlockall
    // needs a memlock limit a user may not have).
    auto r = run_shell("cd '" + dir.path() + "' && cyclictest -D 1 -q -i 1000 --histogram=" +
                       std::to_string(bins) + " --json=ct.json > ct-hist.txt 2> ct.err");
    if (r.status != 0) {
        why = "cyclictest could not run here: " + file_text(dir / "ct.err");
        return false;
    }
    return true;
}

/** @brief The JSON type of a value, as the rt-tests consumers see it. */
std::string type_of(const nlohmann::json& j)
{
    // nlohmann's own names ("object", "array", "string", "boolean", "null"), but for numbers:
    // the consumers tell an integer from a float.
    if (j.is_number_float())
        return "float";
    if (j.is_number_integer())
        return "integer";
    return j.type_name();
}

/** @brief Every key path with its type; histogram bins become "<bin>" (integers). */
void key_types(const nlohmann::json& j, const std::string& at,
               std::map<std::string, std::string>& out)
{
    out[at] = type_of(j);
    if (!j.is_object())
        return;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const bool bin = at.size() >= 10 && at.compare(at.size() - 10, 10, ".histogram") == 0;
        if (bin) {
            CHECK(it.key().find_first_not_of("0123456789") == std::string::npos);
            out[at + ".<bin>"] = type_of(it.value());
            continue;
        }
        key_types(it.value(), at + "." + it.key(), out);
    }
}

/** @brief Prometheus sample lines: name{labels} value, and the TYPE of each family. */
struct prom_text {
    std::map<std::string, std::string> type;                  ///< family -> type
    std::vector<std::pair<std::string, std::string>> samples; ///< series -> value
    std::vector<std::string> problems;
};

prom_text parse_prom(const std::string& text)
{
    prom_text p;
    static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$)");
    for (const auto& l : lines_of(text)) {
        if (l.rfind("# TYPE ", 0) == 0) {
            const auto f = split_ws(l.substr(7));
            p.type[f.at(0)] = f.at(1);
            continue;
        }
        if (l.rfind("#", 0) == 0)
            continue;
        std::smatch m;
        if (!std::regex_match(l, m, sample)) // a timestamp would be a third field
            p.problems.push_back("not 'name{labels} value': " + l);
        else
            p.samples.push_back({m[1].str() + m[2].str(), m[3]});
    }
    return p;
}

/**
 * @brief irqloop export --db @p db @p args... -o @p file, required to succeed (its output
 * shown when it does not); returns the file's text.
 */
std::string export_text(const std::string& db, std::vector<std::string> args,
                        const std::string& file)
{
    args.insert(args.begin(), {"export", "--db", db});
    args.insert(args.end(), {"-o", file});
    auto r = irqloop_cmd(args);
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    return file_text(file);
}

/** @brief Each case's scratch folder, holding build_db()'s database as x.db. */
struct two_run_db {
    two_run_db() { build_db(db); }
    temp_dir dir;
    const std::string db = dir / "x.db";
};

} // namespace

TEST_CASE_METHOD(
    two_run_db, "export json: invalid UTF-8 in stored text is replaced, and Python and jq parse it",
    "[export]")
{
    const std::string text = export_text(db, {"--what", "all,raw"}, dir / "x.json");
    CHECK(text.find("caf\xe9") == std::string::npos); // no raw Latin-1 byte passed through
    if (!have("python3"))
        SKIP("python3 is not installed");
    auto py = run_shell("python3 -m json.tool '" + dir / "x.json" + "' > /dev/null");
    INFO(py.out);
    CHECK(py.status == 0);
    auto label = run_shell("python3 -c 'import json,sys; d=json.load(open(sys.argv[1], "
                           "encoding=\"utf-8\")); r=d[\"runs\"][0]; "
                           "print(ascii(r[\"label\"]), ascii(r[\"metadata\"][\"target\"]), "
                           "len(r[\"raw\"]))' '" +
                           dir / "x.json" + "'");
    INFO(label.out);
    CHECK(label.out == "'caf\\ufffd \\ufffd \\ufffd rt' 'board \\ufffd( rev B' 20000\n");
    if (have("jq")) {
        auto jq = run_shell("jq -r '.runs[1].label' '" + dir / "x.json" + "'");
        CHECK(jq.status == 0);
        CHECK(jq.out == "rt-idle\n");
    }
}

TEST_CASE_METHOD(
    two_run_db,
    "export cyclictest-hist: the grammar and field widths of real cyclictest --histogram",
    "[export]")
{
    std::string why;
    if (!real_cyclictest(dir, 400, why))
        SKIP(why);
    const std::string real = file_text(dir / "ct-hist.txt");
    const hist_text theirs = parse_hist(real, 400);
    INFO("cyclictest:\n" << real);
    REQUIRE(theirs.problems.empty());

    const std::string ours_text = export_text(
        db, {"--run", "1", "--format", "cyclictest-hist", "--histogram", "50"}, dir / "one.txt");
    const hist_text ours = parse_hist(ours_text, 50);
    INFO("irqloop:\n" << ours_text);
    for (const auto& p : ours.problems)
        FAIL_CHECK(p);
    CHECK(ours.shape == theirs.shape); // one column each: the same lines in the same order
    CHECK(ours_text.find("# rebinned from irqloop's stored histogram") != std::string::npos);

    // The counts against the truth: run 1 kept every sample raw.
    db::catalog cat({db});
    const auto& run = *cat.select({{"1"}, {}, false}).front();
    std::vector<std::uint64_t> exact(50, 0);
    std::uint64_t exact_over = 0;
    cat.for_each_raw(run, [&](const db::sample_row& s) {
        if (s.flags & (db::flag_lost | db::flag_disturbed))
            return;
        const auto bin = std::uint64_t(s.latency_ns / 1000);
        (bin < 50 ? exact[bin] : exact_over) += 1;
    });
    std::uint64_t cum_ours = 0, cum_exact = 0, cum_exact_prev = 0;
    for (std::size_t b = 0; b < 50; ++b) {
        cum_ours += ours.bins[b][0];
        cum_exact_prev = cum_exact;
        cum_exact += exact[b];
        // Never faster than the truth, and at most one bin slower.
        CHECK(cum_ours <= cum_exact);
        CHECK(cum_ours >= cum_exact_prev);
    }
    CHECK(ours.footer.at("# Histogram Overflows:")[0] >= exact_over);
    CHECK(ours.footer.at("# Total:")[0] + ours.footer.at("# Histogram Overflows:")[0] ==
          run.summary.samples);
    CHECK(ours.footer.at("# Max Latencies:")[0] * 1000 >= std::uint64_t(run.summary.max_ns));
    // Every overflow is known by its stimulus number (raw samples), up to 50 of them.
    CHECK(ours.overflow_cycles[0].size() == std::min<std::uint64_t>(50, exact_over));

    // Two runs: two columns, as cyclictest's two threads.
    const hist_text both = parse_hist(
        export_text(db, {"--format", "cyclictest-hist", "--histogram", "50"}, dir / "two.txt"), 50);
    for (const auto& p : both.problems)
        FAIL_CHECK(p);
    CHECK(both.columns == 2);
    // A bin line of two threads: "%06d %06lu\t%06lu".
    CHECK(std::regex_match(lines_of(file_text(dir / "two.txt"))[5],
                           std::regex(R"(^000000 [0-9]{6,}\t[0-9]{6,}$)")));

    // OSADL's plot recipe, unchanged, on both files.
    if (!have("gnuplot"))
        SKIP("gnuplot is not installed (apt-get install gnuplot-nox)");
    const std::string script = source_dir + "/docs/examples/osadl-latency-plot.sh";
    std::vector<std::pair<std::string, std::string>> plots = {{"one.txt", "one.png"},
                                                              {"two.txt", "two.png"}};
    // A machine so slow that every cyclictest sample overflowed 400 us leaves nothing to draw
    // on a log axis (gnuplot refuses that file, as OSADL's script would).
    if (theirs.footer.at("# Total:").at(0) != 0)
        plots.push_back({"ct-hist.txt", "real.png"});
    else
        WARN("cyclictest's own histogram is empty here: its file is not plotted");
    // The reference for "non-trivial": the same script's plot of a one-sample histogram (axes,
    // labels and one step); a plot with curves compresses to more than that.
    {
        std::ofstream t(dir / "tiny.txt");
        t << "# Histogram\n000000 000001\n000001 000000\n# Total: 000000001\n"
             "# Min Latencies: 00000\n# Avg Latencies: 00000\n# Max Latencies: 00001\n"
             "# Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n"
             "# Thread 0:\n\n";
    }
    REQUIRE(run_shell("cd '" + dir.path() + "' && sh '" + script + "' tiny.txt tiny.png").status ==
            0);
    const std::size_t trivial = file_text(dir / "tiny.png").size();
    for (const auto& [in, png] : plots) {
        auto p = run_shell("cd '" + dir.path() + "' && sh '" + script + "' " + in + " " + png);
        INFO(in << ": " << p.out);
        CHECK(p.status == 0);
        const std::string img = file_text(dir / png);
        REQUIRE(img.size() > 24);
        CHECK(img.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
        CHECK(img.compare(12, 4, "IHDR") == 0);
        CHECK(img.size() > trivial + trivial / 10);
    }
    // Each curve carries its run's label, from the export's comment lines; cyclictest's own
    // file keeps OSADL's CPU<N>.
    auto titles = [&](const std::string& in) {
        const std::string cmds = dir / (in + ".gp");
        auto p = run_shell("cd '" + dir.path() + "' && OSADL_PLOT_COMMANDS='" + cmds + "' sh '" +
                           script + "' " + in + " titles.png");
        INFO(p.out);
        REQUIRE(p.status == 0);
        return file_text(cmds);
    };
    const std::string two = titles("two.txt");
    INFO(two);
    CHECK(two.find("title 'caf\xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd rt (run 1)' noenhanced") !=
          std::string::npos);
    CHECK(two.find("title 'rt-idle (run 2)' noenhanced") != std::string::npos);
    CHECK(two.find("CPU") == std::string::npos);
    if (theirs.footer.at("# Total:").at(0) != 0)
        CHECK(titles("ct-hist.txt").find("title 'CPU0' noenhanced") != std::string::npos);
}

TEST_CASE_METHOD(two_run_db, "export rt-tests-json: the keys and types of real cyclictest --json",
                 "[export]")
{
    std::string why;
    if (!real_cyclictest(dir, 1000, why))
        SKIP(why);
    const auto theirs = nlohmann::json::parse(file_text(dir / "ct.json"));
    std::map<std::string, std::string> want;
    key_types(theirs, "", want);

    for (const std::string run : {"1", "2"}) {
        const auto ours = nlohmann::json::parse(
            export_text(db, {"--run", run, "--format", "rt-tests-json", "--histogram", "1000"},
                        dir / ("rt" + run + ".json")));
        std::map<std::string, std::string> got;
        key_types(ours, "", got);
        // The real histogram may be empty on a slow machine; ours never is.
        want.erase(".thread.0.histogram.<bin>");
        got.erase(".thread.0.histogram.<bin>");
        // irqloop's own counts beside cyclictest's keys (what "cycles" leaves out): integers.
        for (const char* k : {"stimuli", "lost", "disturbed"}) {
            CHECK(got[std::string(".thread.0.") + k] == "integer");
            got.erase(std::string(".thread.0.") + k);
        }
        CHECK(got == want);
        for (const auto& [k, v] : ours["thread"]["0"]["histogram"].items())
            CHECK(v.is_number_integer());
        CHECK(ours.contains("cmdline:"));
        CHECK(ours.contains("rt_test_version:"));
        // Run 1's stored gate.result is "fail": cyclictest's return code for a failed run.
        CHECK(ours["return_code"] == (run == "1" ? 3 : 0));
        db::catalog cat({db});
        const auto& rec = *cat.select({{run}, {}, false}).front();
        CHECK(ours["thread"]["0"]["cycles"] == rec.summary.samples);
        CHECK(ours["thread"]["0"]["max"].get<std::int64_t>() * 1000 >= rec.summary.max_ns);
    }
}

namespace
{

/** @brief export --format rt-tests-json of run @p run in @p db, parsed. */
nlohmann::json rt_json(const temp_dir& dir, const std::string& db, const std::string& run)
{
    return nlohmann::json::parse(
        export_text(db, {"--run", run, "--format", "rt-tests-json"}, dir / ("rt" + run + ".json")));
}

/** @brief Linaro's parse_rt_tests_results.py reads a run as a pass when return_code is 0. */
bool linaro_pass(const nlohmann::json& j)
{
    return j.at("return_code").get<int>() == 0;
}

} // namespace

TEST_CASE_METHOD(two_run_db,
                 "export rt-tests-json: several runs are several threads, each with cyclictest's "
                 "thread keys, read as Linaro's parser reads them",
                 "[export]")
{
    std::string why;
    if (!real_cyclictest(dir, 100, why))
        SKIP(why);
    std::map<std::string, std::string> want;
    key_types(nlohmann::json::parse(file_text(dir / "ct.json"))["thread"]["0"], "", want);
    want.erase(".histogram.<bin>");
    const auto two = nlohmann::json::parse(
        export_text(db, {"--format", "rt-tests-json", "--histogram", "100"}, dir / "two.json"));
    REQUIRE(two["num_threads"] == 2);
    db::catalog cat({db});
    const auto runs = cat.select({{}, {}, false});
    REQUIRE(runs.size() == 2);
    // Linaro's parse_rt_tests_results.py: for each of num_threads, thread[str(i)]'s min, avg
    // and max; then return_code 0 or not. Each thread is its run, in selection order.
    for (std::size_t i = 0; i < 2; ++i) {
        const auto& t = two["thread"][std::to_string(i)];
        std::map<std::string, std::string> got;
        key_types(t, "", got);
        got.erase(".histogram.<bin>");
        for (const char* k : {".stimuli", ".lost", ".disturbed"})
            CHECK(got.erase(k) == 1);
        CHECK(got == want);
        CHECK(t["cycles"] == runs[i]->summary.samples);
        CHECK(t["lost"] == runs[i]->summary.lost);
        CHECK(t["max"].get<std::int64_t>() * 1000 >= runs[i]->summary.max_ns);
        CHECK(t["min"].is_number_integer());
        CHECK(t["avg"].is_number());
    }
    // Run 1's stored gate failed: the pair does not pass, whichever thread failed.
    CHECK(two["return_code"] == 3);
    CHECK_FALSE(linaro_pass(two));
    // Run 2 alone passes; --label of a run is one thread, as before.
    const auto one = nlohmann::json::parse(
        export_text(db, {"--run", "2", "--format", "rt-tests-json"}, dir / "one.json"));
    CHECK(one["num_threads"] == 1);
    CHECK(linaro_pass(one));
}

TEST_CASE("export rt-tests-json: a run without samples, or one that did not end complete, has "
          "a non-zero return_code",
          "[export]")
{
    temp_dir dir;
    const std::string db = dir / "rc.db";
    {
        db::store st(db);
        run_spec none = numbered_spec(1, "dead-wire", 200);
        none.m.lost_p = 1.0; // ended complete, every stimulus lost: 0 samples
        record_run(st, none);
        run_spec cut = numbered_spec(2, "cut", 2000);
        cut.status = db::run_status::interrupted;
        cut.start_unix_ns = epoch_ns + 60'000'000'000;
        record_run(st, cut);
        run_spec broke = numbered_spec(3, "broke", 2000);
        broke.status = db::run_status::failed;
        broke.start_unix_ns = epoch_ns + 120'000'000'000;
        record_run(st, broke);
        run_spec cut_gated = numbered_spec(4, "cut-gated", 2000);
        cut_gated.status = db::run_status::interrupted;
        cut_gated.start_unix_ns = epoch_ns + 180'000'000'000;
        cut_gated.extra_metadata = {{"gate.result", "pass"}};
        record_run(st, cut_gated);
        run_spec good = numbered_spec(5, "good", 2000);
        good.start_unix_ns = epoch_ns + 240'000'000'000;
        good.extra_metadata = {{"gate.result", "pass"}};
        record_run(st, good);
    }
    // What `irqloop run` exits with (docs/commands/exit-status.md): 4 for no sample, 1 for a
    // run that did not end complete (the signal's 128 + N is not stored), whatever its gates.
    const auto dead = rt_json(dir, db, "1");
    CHECK(dead["return_code"] == 4);
    CHECK(dead["thread"]["0"]["cycles"] == 0);
    CHECK(rt_json(dir, db, "2")["return_code"] == 1);
    CHECK(rt_json(dir, db, "3")["return_code"] == 1);
    CHECK(rt_json(dir, db, "4")["return_code"] == 1);
    CHECK(rt_json(dir, db, "5")["return_code"] == 0);
    for (const std::string run : {"1", "2", "3", "4"})
        CHECK_FALSE(linaro_pass(rt_json(dir, db, run)));
    CHECK(linaro_pass(rt_json(dir, db, "5")));
}

TEST_CASE("export rt-tests-json: cpu is -1 for a run that was not pinned", "[export]")
{
    temp_dir dir;
    const std::string db = dir / "cpu.db";
    const std::pair<const char*, int> cases[] = {
        {"sched=fifo:80 mlockall=yes cpu=any", -1},
        {"sched=fifo:80 cpu=any(pin refused) mlockall=yes", -1},
        {"sched=other mlockall=no", -1},
        {"sched=fifo:80 mlockall=yes cpu=3", 3},
    };
    {
        db::store st(db);
        unsigned n = 0;
        for (const auto& [rt, cpu] : cases) {
            run_spec r = numbered_spec(++n, "cpu", 500);
            r.rt_settings = rt;
            r.start_unix_ns = epoch_ns + std::int64_t(n) * 60'000'000'000;
            record_run(st, r);
        }
    }
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        INFO(cases[i].first);
        CHECK(rt_json(dir, db, std::to_string(i + 1))["thread"]["0"]["cpu"] == cases[i].second);
    }
}

TEST_CASE("export rt-tests-json: lost and disturbed samples are counted beside cycles, and "
          "run --fail-on-lost shows in return_code",
          "[export]")
{
    temp_dir dir;
    const std::string db = dir / "lost.db";
    {
        db::store st(db);
        run_spec r = numbered_spec(1, "lossy", 20'000);
        r.m.lost_p = 0.01;
        r.m.disturbed_p = 0.005;
        record_run(st, r);
    }
    db::catalog cat({db});
    const auto& rec = *cat.select({{"1"}, {}, false}).front();
    REQUIRE(rec.summary.lost > 0);
    REQUIRE(rec.summary.disturbed > 0);
    const auto j = rt_json(dir, db, "1");
    const auto& t = j["thread"]["0"];
    CHECK(t["cycles"] == rec.summary.samples);
    CHECK(t["stimuli"] == rec.summary.stimuli);
    CHECK(t["lost"] == rec.summary.lost);
    CHECK(t["disturbed"] == rec.summary.disturbed);
    CHECK(j["return_code"] == 0); // no gate: lost stimuli alone fail nothing, as in irqloop run

    // A real run with lost stimuli and --fail-on-lost: it exits 3, and so reads the export.
    const std::string live = dir / "live.db";
    const std::string metrics = dir / "metrics.prom";
    auto run =
        irqloop_cmd({"run", "--hw", "sim:model=fixed,value=5us,loss_p=0.01,seed=3", "--samples",
                     "3000", "--interval", "20us", "--timeout", "2ms", "--db", live, "--progress",
                     "none", "--fail-on-lost", "--metrics-file", metrics});
    INFO(run.out << run.err);
    REQUIRE(run.status == 3);
    const auto lj = rt_json(dir, live, "1");
    CHECK(lj["return_code"] == 3);
    CHECK(lj["thread"]["0"]["lost"].get<std::uint64_t>() > 0);
    // Each lost answer took at least the 2 ms timeout: the max is that, not the 5 us answered.
    CHECK(lj["thread"]["0"]["max"] == 2000);
    CHECK_FALSE(linaro_pass(lj));
    // The Prometheus export says the same: the lost limit and the run's gates as a whole fail,
    // and the max is the timeout, in the live file as in the export.
    const std::string prom = export_text(live, {"--format", "prometheus"}, dir / "live.prom");
    const std::regex max_at_timeout(R"(\nirqloop_latency_max_seconds\{[^}]*\} 0\.002\n)");
    CHECK(std::regex_search(prom, max_at_timeout));
    CHECK(std::regex_search(file_text(metrics), max_at_timeout));
    CHECK(std::regex_search(prom, std::regex(R"(\nirqloop_gate_pass\{[^}]*,limit="lost"\} 0\n)")));
    CHECK(std::regex_search(prom, std::regex(R"(\nirqloop_gate_pass\{[^}]*,limit="all"\} 0\n)")));
    if (have("promtool")) {
        auto check = run_shell("promtool check metrics < '" + dir / "live.prom" + "'");
        INFO(check.out);
        CHECK(check.status == 0);
    }
}

TEST_CASE_METHOD(two_run_db,
                 "export prometheus: promtool check metrics passes; units, counters, histogram",
                 "[export]")
{
    const std::string text = export_text(db, {"--format", "prometheus"}, dir / "x.prom");
    INFO(text);
    const prom_text p = parse_prom(text);
    for (const auto& x : p.problems)
        FAIL_CHECK(x);
    for (const auto& [family, type] : p.type) {
        const bool total = family.size() > 6 && family.compare(family.size() - 6, 6, "_total") == 0;
        CHECK(total == (type == "counter")); // _total on counters, and only on them
        if (type != "counter" && (family.find("latency") != std::string::npos ||
                                  family.find("threshold") != std::string::npos))
            CHECK(family.find("_seconds") != std::string::npos); // base units
    }
    // The histogram: cumulative buckets, +Inf equal to _count, per run.
    std::map<std::string, std::vector<double>> buckets;
    std::map<std::string, double> count;
    for (const auto& [series, value] : p.samples) {
        const auto uuid = series.substr(series.find("uuid=\"") + 6, 36);
        if (series.rfind("irqloop_latency_seconds_bucket{", 0) == 0)
            buckets[uuid].push_back(std::stod(value));
        if (series.rfind("irqloop_latency_seconds_count{", 0) == 0)
            count[uuid] = std::stod(value);
        CHECK(series.find("label=\"") != std::string::npos);
        CHECK(series.find("backend=\"") != std::string::npos);
    }
    REQUIRE(buckets.size() == 2);
    for (const auto& [uuid, b] : buckets) {
        for (std::size_t i = 1; i < b.size(); ++i)
            CHECK(b[i] >= b[i - 1]);
        CHECK(b.back() == count[uuid]);
    }
    // The invalid UTF-8 label comes out replaced, not raw.
    CHECK(text.find("label=\"caf\xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd rt\"") != std::string::npos);
    // The gates: run 1's stored gate.result is fail (no limit lines stored); run 2 has none.
    CHECK(p.type.at("irqloop_gate_pass") == "gauge");
    CHECK(std::regex_search(
        text,
        std::regex(
            R"(\nirqloop_gate_pass\{label="caf[^}]*uuid="00000000-0000-4000-8000-000000000001",[^}]*,limit="all"\} 0\n)")));
    CHECK(text.find("uuid=\"00000000-0000-4000-8000-000000000002\",backend=\"sim:model=synthetic\","
                    "limit=") == std::string::npos);

    if (!have("promtool"))
        SKIP("promtool is not installed (apt-get install prometheus)");
    auto check = run_shell("promtool check metrics < '" + dir / "x.prom" + "'");
    INFO(check.out);
    CHECK(check.status == 0);
}

TEST_CASE_METHOD(two_run_db,
                 "docs/grafana/irqloop-dashboard.json: every panel's PromQL passes promtool, on "
                 "metric names the export writes",
                 "[export]")
{
    const auto dash =
        nlohmann::json::parse(file_text(source_dir + "/docs/grafana/irqloop-dashboard.json"));
    const prom_text p = parse_prom(export_text(db, {"--format", "prometheus"}, dir / "x.prom"));
    std::set<std::string> written;
    for (const auto& [series, value] : p.samples)
        written.insert(series.substr(0, series.find('{')));
    // Every irqloop_ name a query reads is one the export writes (run 1 has gates).
    static const std::regex metric(R"(\birqloop_[a-z_]+)");
    auto reads_written = [&](const std::string& expr) {
        for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
            INFO(expr);
            CHECK(written.count(it->str()) == 1);
        }
    };
    // The panels' queries as recording rules, with $label as Grafana fills it for "All".
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& panel : dash.at("panels"))
        for (const auto& t : panel.at("targets")) {
            const std::string expr = replace_all(t.at("expr").get<std::string>(), "$label", ".*");
            reads_written(expr);
            rules.push_back(
                {{"record", "irqloop:dashboard_panel_" + std::to_string(rules.size() + 1)},
                 {"expr", expr}});
        }
    for (const auto& v : dash.at("templating").at("list"))
        if (v.contains("definition"))
            reads_written(v.at("definition").get<std::string>());
    REQUIRE(rules.size() >= 5);
    // JSON is YAML: promtool reads the rule file as written.
    const nlohmann::json file = {
        {"groups", nlohmann::json::array({{{"name", "irqloop-dashboard"}, {"rules", rules}}})}};
    std::ofstream(dir / "dashboard-rules.yml") << file.dump(2) << '\n';
    if (!have("promtool"))
        SKIP("promtool is not installed (apt-get install prometheus)");
    auto check = run_shell("promtool check rules '" + dir / "dashboard-rules.yml" + "'");
    INFO(check.out);
    CHECK(check.status == 0);
    CHECK(check.out.find("SUCCESS: " + std::to_string(rules.size()) + " rules found") !=
          std::string::npos);
}

TEST_CASE("run --metrics-file: rewritten at each window, promtool passes while the run writes it",
          "[export]")
{
    if (!have("promtool"))
        SKIP("promtool is not installed (apt-get install prometheus)");
    temp_dir dir;
    const std::string prom = dir / "irqloop.prom";
    // Copy the file while the run rewrites it (every 100 ms window), keeping each copy that
    // differs from the one before and says the run is active; then every copy must pass
    // promtool (checked after the run: promtool takes a second or more on a loaded machine).
    const std::string d = dir.path();
    const std::string script =
        "'" + irqloop_bin + "' run --duration 3s --interval 100us --stats-interval 100ms " +
        "--label live --db '" + d + "/r.db' --progress none --metrics-file '" + prom +
        "' & pid=$!\n"
        "cd '" +
        d +
        "' && n=0 && touch last.prom\n"
        "while kill -0 $pid 2>/dev/null; do\n"
        "  if cp irqloop.prom now.prom 2>/dev/null && ! cmp -s now.prom last.prom &&\n"
        "     grep -q '^irqloop_run_active{.*} 1$' now.prom; then\n"
        "    n=$((n + 1)); cp now.prom snap-$n.prom; cp now.prom last.prom\n"
        "  fi\n"
        "  sleep 0.05\n"
        "done\n"
        "wait $pid || exit 12\n"
        "for f in snap-*.prom; do promtool check metrics < $f || exit 11; done\n"
        "echo live-checks $n\n";
    auto r = run_shell(script);
    INFO(r.out);
    REQUIRE(r.status == 0);
    const auto n = std::stoi(r.out.substr(r.out.rfind("live-checks ") + 12));
    CHECK(n >= 2);
    const std::string text = file_text(prom);
    INFO(text);
    CHECK(text.find("irqloop_run_active{label=\"live\",") != std::string::npos);
    CHECK(std::regex_search(text, std::regex(R"(\nirqloop_run_active\{[^}]*\} 0\n)")));
    CHECK(!std::filesystem::exists(prom + ".tmp"));
    auto final_check = run_shell("promtool check metrics < '" + prom + "'");
    INFO(final_check.out);
    CHECK(final_check.status == 0);
    // The last file holds the run's final figures, as the store does.
    db::catalog cat({dir / "r.db"});
    const auto& run = cat.runs().front();
    std::smatch m;
    REQUIRE(
        std::regex_search(text, m, std::regex(R"(\nirqloop_samples_total\{[^}]*\} ([0-9]+)\n)")));
    CHECK(std::stoull(m[1]) == run.summary.samples);
    REQUIRE(
        std::regex_search(text, m, std::regex(R"(\nirqloop_stimuli_total\{[^}]*\} ([0-9]+)\n)")));
    CHECK(std::stoull(m[1]) == run.summary.stimuli);
    CHECK(text.find("uuid=\"" + run.meta.uuid + "\"") != std::string::npos);

    // A path that cannot be written is refused before the first stimulus.
    auto bad = irqloop_cmd({"run", "--duration", "1s", "--no-db", "--progress", "none",
                            "--metrics-file", dir / "no/such/dir/x.prom"});
    CHECK(bad.status == 1);
    CHECK(bad.err.find("write metrics file") != std::string::npos);
}

TEST_CASE("run --metrics-file: the last write carries the run's gates (irqloop_gate_pass), a "
          "run without gates none",
          "[export][gates]")
{
    temp_dir dir;
    const std::string prom = dir / "gates.prom";
    // The sim board's default model answers in 8 us: a 1 us max fails, no loss passes.
    auto r =
        irqloop_cmd({"run", "--no-db", "--samples", "2000", "--interval", "100us", "--progress",
                     "none", "--fail-above", "1us", "--fail-on-lost", "--metrics-file", prom});
    INFO(r.out << r.err);
    CHECK(r.status == 3);
    const std::string text = file_text(prom);
    INFO(text);
    CHECK(
        std::regex_search(text, std::regex(R"(\nirqloop_gate_pass\{[^}]*,limit="max_us"\} 0\n)")));
    CHECK(std::regex_search(text, std::regex(R"(\nirqloop_gate_pass\{[^}]*,limit="lost"\} 1\n)")));
    CHECK(std::regex_search(text, std::regex(R"(\nirqloop_gate_pass\{[^}]*,limit="all"\} 0\n)")));
    if (have("promtool")) {
        auto check = run_shell("promtool check metrics < '" + prom + "'");
        INFO(check.out);
        CHECK(check.status == 0);
    }
    // Without a gate there is no verdict to carry: the family is declared, with no sample.
    auto plain = irqloop_cmd({"run", "--no-db", "--samples", "200", "--interval", "100us",
                              "--progress", "none", "--metrics-file", prom});
    CHECK(plain.status == 0);
    CHECK(file_text(prom).find("\nirqloop_gate_pass{") == std::string::npos);
}

TEST_CASE_METHOD(
    two_run_db,
    "export prometheus: node_exporter's textfile collector reads it without a scrape error",
    "[export]")
{
    const std::string exporter = "/usr/bin/prometheus-node-exporter";
    if (!std::filesystem::exists(exporter))
        SKIP("prometheus-node-exporter is not installed (apt-get install "
             "prometheus-node-exporter)");
    if (!have("python3"))
        SKIP("python3 is not installed");
    std::filesystem::create_directory(dir / "textfile");
    REQUIRE(irqloop_cmd({"export", "--db", db, "--format", "prometheus", "-o",
                         dir / "textfile/irqloop.prom"})
                .status == 0);
    // A port of our own, away from the exporter's 9100.
    const int port = 20000 + int(::getpid() % 20000);
    const std::string addr = "127.0.0.1:" + std::to_string(port);
    irqloop::test::background_process ne(
        {exporter, "--collector.disable-defaults", "--collector.textfile",
         "--collector.textfile.directory=" + dir / "textfile", "--web.listen-address=" + addr},
        dir / "ne.log");
    process_result scrape;
    for (int i = 0; i < 100; ++i) { // up to 10 s for it to listen
        scrape = run_shell("python3 -c \"import urllib.request; print(urllib.request.urlopen("
                           "'http://" +
                           addr + "/metrics', timeout=5).read().decode())\"");
        if (scrape.status == 0)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    INFO(scrape.out << file_text(dir / "ne.log"));
    REQUIRE(scrape.status == 0);
    CHECK(scrape.out.find("\nnode_textfile_scrape_error 0\n") != std::string::npos);
    CHECK(scrape.out.find("irqloop_samples_total{") != std::string::npos);
    CHECK(scrape.out.find("uuid=\"00000000-0000-4000-8000-000000000002\"") != std::string::npos);
}

// --- parse_export and parse_plot: pure (command.hpp) -------------------------------------

namespace
{

/** @brief Each of @p cases refused by @p parse with irqloop::error and status 2. */
template <class Parse>
void check_refused(Parse parse, const std::vector<std::vector<std::string>>& cases)
{
    for (const auto& args : cases) {
        CAPTURE(args);
        try {
            parse_words(parse, args);
            FAIL("accepted");
        } catch (const error& e) {
            CHECK(e.status() == exit_usage);
        }
    }
}

} // namespace

TEST_CASE("export and plot parse their arguments into a request, and touch no file", "[export]")
{
    temp_dir dir;
    const std::string db_path = dir / "none.db", out = dir / "out.json", svg = dir / "p.svg",
                      data = dir / "p.tsv";
    SECTION("--help is text, not a request")
    {
        const auto e = parse_words(logger::parse_export, {"export", "--help"});
        CHECK_FALSE(e.request);
        CHECK(e.text.rfind("usage: irqloop export --format json|csv|", 0) == 0);
        CHECK(e.text.find("--histogram arg") != std::string::npos);
        const auto p = parse_words(logger::parse_plot, {"plot", "--help"});
        CHECK_FALSE(p.request);
        CHECK(p.text.rfind("usage: irqloop plot --kind histogram|", 0) == 0);
    }
    SECTION("a request holds the typed values; neither the database nor -o is created")
    {
        const auto e = parse_words(logger::parse_export, {"export", "--db", db_path, "--format",
                                                          "csv", "--what", "worst", "-o", out});
        REQUIRE(e.request);
        CHECK(e.request->format == logger::export_format::csv);
        CHECK(e.request->what == std::set<std::string>{"worst"});
        CHECK(e.request->sel.dbs == std::vector<std::string>{db_path});
        const auto j = parse_words(logger::parse_export,
                                   {"export", "--db", db_path, "--what", "intervals,raw"});
        REQUIRE(j.request);
        CHECK(j.request->what == std::set<std::string>{"intervals", "raw", "summary"});
        const auto h = parse_words(logger::parse_export,
                                   {"export", "--format", "cyclictest-hist", "--histogram", "400"});
        REQUIRE(h.request);
        CHECK(h.request->bins == 400);
        CHECK(h.request->sel.dbs == std::vector<std::string>{"irqloop.db"});
        const auto p =
            parse_words(logger::parse_plot, {"plot", "--db", db_path, "--kind", "heatmap", "-o",
                                             svg, "--data", data, "--size", "640x480"});
        REQUIRE(p.request);
        CHECK(p.request->kind == logger::plot_kind::heatmap);
        CHECK(p.request->width == 640);
        CHECK(p.request->height == 480);
        for (const auto& f : {db_path, out, svg, data})
            CHECK_FALSE(std::filesystem::exists(f));
    }
    SECTION("bad values are refused at parse, with status 2")
    {
        const std::vector<std::vector<std::string>> bad_export = {
            {"export", "--format", "xml"},
            {"export", "--format", "prometheus", "--what", "raw"},
            {"export", "--format", "json", "--histogram", "10"},
            {"export", "--format", "cyclictest-hist", "--histogram", "0"},
            {"export", "--format", "csv", "--what", "worst,raw"},
            {"export", "--what", "nothing"},
            {"export", "--format", "json", "--max", "100us"},
        };
        check_refused(logger::parse_export, bad_export);
        const std::vector<std::vector<std::string>> bad_plot = {
            {"plot", "--kind", "pie", "-o", svg},
            {"plot", "--kind", "histogram"},
            {"plot", "-o", dir / "p.pdf"},
            {"plot", "--kind", "cdf", "-o", svg, "--data", data},
            {"plot", "-o", svg, "--size", "10x10"},
        };
        check_refused(logger::parse_plot, bad_plot);
        CHECK_FALSE(std::filesystem::exists(svg));
    }
}

// --- OSADL's RT dataset JSON and rtla's timerlat hist text ----------------------------------

namespace
{

/**
 * @brief A checkout of another project's scripts, named by the environment variable @p var
 *        (CI cannot fetch it: the case is skipped with the reason then); @p file must be in it.
 */
std::string consumer_checkout(const char* var, const std::string& file, std::string& why)
{
    const char* dir = std::getenv(var);
    if (dir == nullptr || *dir == '\0') {
        why = std::string(var) + " is not set: it names a checkout holding " + file +
              " (not fetched into the build; see docs/commands/export.md)";
        return {};
    }
    if (!std::filesystem::is_regular_file(std::string(dir) + "/" + file)) {
        why = std::string(var) + "=" + dir + " holds no " + file;
        return {};
    }
    return dir;
}

/** @brief A run without sample and an interrupted run, beside build_db()'s two. */
void add_unfinished_runs(const std::string& path)
{
    db::store st(path);
    run_spec none = numbered_spec(3, "no-answer", 200);
    none.start_unix_ns = epoch_ns + 120'000'000'000;
    none.m.lost_p = 1.0; // every stimulus lost: no sample
    record_run(st, none);
    run_spec cut = numbered_spec(4, "cut", 2000);
    cut.start_unix_ns = epoch_ns + 180'000'000'000;
    cut.status = db::run_status::interrupted;
    record_run(st, cut);
}

} // namespace

TEST_CASE_METHOD(two_run_db,
                 "export osadl-rtdataset: OSADL's RT dataset, one core per run, plotted by "
                 "OSADL's own plot-rtdataset.py",
                 "[export]")
{
    const auto j = nlohmann::json::parse(
        export_text(db, {"--format", "osadl-rtdataset", "--histogram", "60"}, dir / "rt.json"));
    CHECK(j["format"]["name"] == "RT Dataset");
    CHECK(j["format"]["version"] == "1.0");
    for (const char* k : {"hostname"})
        CHECK(j["system"][k].is_string());
    for (const char* k : {"family", "vendor", "type"})
        CHECK(j["processor"][k].is_string());
    CHECK(j["kernel"]["version"] == "6.1.0-rt");
    CHECK(j["timestamps"]["origin"].get<std::string>().find('T') == 10);
    const auto& cores = j["latency"]["cores"];
    REQUIRE(cores.size() == 3); // the classes, then runs 1 and 2
    REQUIRE(cores[0].size() == 60);
    for (std::size_t b = 0; b < 60; ++b)
        CHECK(cores[0][b] == b);
    db::catalog cat({db});
    const auto runs = cat.select({{}, {}, false});
    REQUIRE(runs.size() == 2);
    std::uint64_t most = 0;
    for (std::size_t i = 0; i < 2; ++i) {
        REQUIRE(cores[i + 1].size() == 60);
        std::uint64_t sum = 0;
        for (const auto& c : cores[i + 1])
            sum += c.get<std::uint64_t>();
        // Every sample is in a class or counted as over the 60 us.
        CHECK(sum + j["irqloop"]["runs"][i]["overflows"].get<std::uint64_t>() ==
              runs[i]->summary.samples);
        CHECK(j["latency"]["maxima"][i].get<std::int64_t>() * 1000 >= runs[i]->summary.max_ns);
        CHECK(j["irqloop"]["runs"][i]["run"] == runs[i]->id);
        most = std::max<std::uint64_t>(most, runs[i]->summary.samples);
    }
    CHECK(j["condition"]["cycles"] == most);
    // Each curve's run and label, and the -a list OSADL's script numbers the curves by, last.
    const std::string cond = j["condition"]["cyclictest"];
    CHECK_THAT(cond, ContainsSubstring("Core #0 is run 1 \"caf\\xe9 \\x80 \\xff rt\""));
    CHECK_THAT(cond, ContainsSubstring("Core #1 is run 2 \"rt-idle\""));
    CHECK(std::regex_match(cond, std::regex(".* -a0-1 [^-]*")));

    // Nothing to draw: a run without a sample is refused (4) before a file is made.
    add_unfinished_runs(db);
    auto none = irqloop_cmd({"export", "--db", db, "--format", "osadl-rtdataset", "--run", "3",
                             "-o", dir / "none.json"});
    CHECK(none.status == 4);
    CHECK_THAT(none.err, ContainsSubstring("run 3 (" + db + ") has no sample"));
    CHECK_FALSE(std::filesystem::exists(dir / "none.json"));

    // OSADL's plot-rtdataset.py, unchanged, with Debian's python3 and matplotlib.
    std::string why;
    const std::string osadl =
        consumer_checkout("IRQLOOP_OSADL_LATENCYPLOT", "src/plot-rtdataset.py", why);
    if (osadl.empty())
        SKIP(why);
    if (run_shell("/usr/bin/python3 -c 'import matplotlib'").status != 0)
        SKIP("python3-matplotlib is not installed (bash .ci/setup test)");
    // Matplotlib without a display, and SVG text kept as text (not glyph paths) so that the
    // plot's words can be read back; the script itself is run as it is.
    std::ofstream(dir / "matplotlibrc") << "backend: Agg\nsvg.fonttype: none\n";
    for (const std::string plot : {"rt.svg", "rt.png"}) {
        auto p = run_shell("cd '" + dir.path() + "' && MATPLOTLIBRC='" + dir / "matplotlibrc" +
                           "' /usr/bin/python3 '" + osadl + "/src/plot-rtdataset.py' -v rt.json " +
                           plot);
        INFO(p.out);
        REQUIRE(p.status == 0);
        CHECK_THAT(p.out, ContainsSubstring("Successfully wrote"));
    }
    const std::string svg = file_text(dir / "rt.svg");
    INFO(svg.substr(0, 200));
    // The legend names each core with its max; the x label says which run and label each is.
    for (std::size_t i = 0; i < 2; ++i)
        CHECK_THAT(svg, ContainsSubstring(">Core #" + std::to_string(i) + ":   " +
                                          std::to_string(j["latency"]["maxima"][i].get<int>()) +
                                          " &#181;s</text>"));
    CHECK_THAT(svg, ContainsSubstring("Core #1 is run 2 \"rt-idle\" ("));
    CHECK_THAT(svg, ContainsSubstring(">Latency histogram of logger1 with irqloop target "));
    CHECK(file_text(dir / "rt.png").compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
}

namespace
{

/** @brief rtla timerlat hist --no-header's lines, read by their shapes. */
struct rtla_text {
    std::vector<std::string> problems;
    std::vector<std::string> keys; ///< the named rows, in order
    std::map<std::string, std::vector<std::uint64_t>> rows;
    std::map<std::uint64_t, std::vector<std::uint64_t>> buckets;
};

rtla_text parse_rtla_text(const std::string& text)
{
    rtla_text t;
    // "%-6d" then "%9d " per column; "name: " padded to 6, then "%9llu " per column.
    static const std::regex bucket(R"(^([0-9]+) *((?: {0,8}[0-9]+ )+)$)");
    static const std::regex named(R"(^(over: |count:|min:  |avg:  |max:  )((?:[ 0-9]{9} )+)$)");
    bool all = false;
    for (const auto& l : lines_of(text)) {
        std::smatch m;
        if (l == "ALL:        IRQ       Thr") {
            all = true;
            t.keys.push_back("ALL:");
            continue;
        }
        if (std::regex_match(l, m, named)) {
            std::vector<std::uint64_t> v;
            for (const auto& f : split_ws(m[2]))
                v.push_back(std::stoull(f));
            std::string k = m[1];
            k = k.substr(0, k.find(':') + 1);
            t.keys.push_back(k);
            t.rows[(all ? "ALL " : "") + k] = v;
        } else if (!all && t.keys.empty() && std::regex_match(l, m, bucket) && m[1].length() <= 6 &&
                   (l.size() - 6) % 10 == 0) {
            std::vector<std::uint64_t> v;
            for (const auto& f : split_ws(m[2]))
                v.push_back(std::stoull(f));
            t.buckets[std::stoull(m[1])] = v;
        } else {
            t.problems.push_back("not a line of rtla timerlat hist: '" + l + "'");
        }
    }
    return t;
}

} // namespace

TEST_CASE_METHOD(two_run_db,
                 "export rtla-timerlat-hist: rtla's text, an IRQ and a Thr column per run, read "
                 "by Linaro's parse_rtla.py and parse_rt_tests_results.py",
                 "[export]")
{
    const std::string text =
        export_text(db, {"--format", "rtla-timerlat-hist", "--histogram", "60"}, dir / "rtla.txt");
    INFO(text);
    const auto t = parse_rtla_text(text);
    for (const auto& p : t.problems)
        FAIL_CHECK(p);
    CHECK(t.keys == std::vector<std::string>{"over:", "count:", "min:", "avg:", "max:", "ALL:",
                                             "count:", "min:", "avg:", "max:"});
    db::catalog cat({db});
    const auto runs = cat.select({{}, {}, false});
    REQUIRE(runs.size() == 2);
    std::uint64_t prev = 0;
    bool first = true;
    for (const auto& [b, v] : t.buckets) {
        REQUIRE(v.size() == 4);
        CHECK(v[0] == v[1]);     // run 1: IRQ and Thr
        CHECK(v[2] == v[3]);     // run 2
        CHECK(v[0] + v[2] != 0); // rtla leaves out a row without a count
        CHECK((first || b > prev));
        CHECK(b < 60);
        prev = b;
        first = false;
    }
    for (std::size_t i = 0; i < 2; ++i) {
        std::uint64_t sum = 0;
        for (const auto& [b, v] : t.buckets)
            sum += v[2 * i];
        CHECK(sum + t.rows.at("over:")[2 * i] == t.rows.at("count:")[2 * i]);
        CHECK(t.rows.at("count:")[2 * i] == runs[i]->summary.samples);
        CHECK(t.rows.at("min:")[2 * i] == std::uint64_t(runs[i]->summary.min_ns / 1000));
        CHECK(t.rows.at("max:")[2 * i] * 1000 >= std::uint64_t(runs[i]->summary.max_ns));
    }
    CHECK(t.rows.at("ALL count:")[0] == runs[0]->summary.samples + runs[1]->summary.samples);

    // A run that cannot pass is refused: rtla's text has no place for it, and parse_rtla.py
    // reads every file as a pass. Its status is check's: 4 without a sample, 1 interrupted.
    add_unfinished_runs(db);
    for (const auto& [run, status] : {std::pair<std::string, int>{"3", 4}, {"4", 1}}) {
        const std::string out = dir / ("refused" + run + ".txt");
        auto r = irqloop_cmd(
            {"export", "--db", db, "--format", "rtla-timerlat-hist", "--run", run, "-o", out});
        INFO(r.err);
        CHECK(r.status == status);
        CHECK_THAT(r.err, ContainsSubstring("run " + run + " (" + db + ")"));
        CHECK_FALSE(std::filesystem::exists(out));
        auto check = irqloop_cmd({"check", "--db", db, "--run", run, "--lost", "1000000"});
        CHECK(check.status == status);
    }

    // Linaro's test definition: parse_rtla.py -t timerlat -r FILE -o JSON, then
    // parse_rt_tests_results.py rtla-timerlat JSON, unchanged, with Debian's python3.
    std::string why;
    const std::string linaro = consumer_checkout("IRQLOOP_LINARO_TEST_DEFINITIONS",
                                                 "automated/linux/rtla/parse_rtla.py", why);
    if (linaro.empty())
        SKIP(why);
    auto parsed =
        run_shell("cd '" + dir.path() + "' && /usr/bin/python3 '" + linaro +
                  "/automated/linux/rtla/parse_rtla.py' -t timerlat -r rtla.txt -o "
                  "rtla.json && /usr/bin/python3 '" +
                  linaro + "/automated/lib/parse_rt_tests_results.py' rtla-timerlat rtla.json");
    INFO(parsed.out);
    REQUIRE(parsed.status == 0);
    const auto j = nlohmann::json::parse(file_text(dir / "rtla.json"));
    CHECK(j["num_threads"] == 2);
    CHECK(j["num_irqs"] == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        const auto& r = *runs[i];
        const std::string id = std::to_string(i);
        for (const char* kind : {"thread", "irq"}) {
            const auto& c = j[kind][id];
            CHECK(c["count"] == r.summary.samples);
            CHECK(c["min"] == r.summary.min_ns / 1000);
            std::uint64_t sum = c["over"].get<std::uint64_t>();
            for (const auto& [b, n] : c["histogram"].items())
                sum += n.get<std::uint64_t>();
            CHECK(sum == r.summary.samples);
        }
        for (const char* k : {"min", "avg", "max"}) {
            const auto v = std::to_string(j["thread"][id][k].get<std::int64_t>());
            CHECK_THAT(parsed.out,
                       ContainsSubstring("t" + id + "-" + k + "-latency pass " + v + " us\n"));
            CHECK_THAT(parsed.out,
                       ContainsSubstring("i" + id + "-" + k + "-latency pass " + v + " us\n"));
        }
    }
    CHECK_THAT(parsed.out, ContainsSubstring("rtla-timerlat pass\n"));
}
