// SPDX-License-Identifier: MIT
// Gates: evaluate_gates() on hand-picked runs at and next to each limit, `irqloop check` over
// several runs, the outcome stored as gate.* metadata; and seeded sim runs with `run --fail-*`.
#include "gates.hpp"
#include "run-process.hpp"
#include "store.hpp"
#include "temp-dir.hpp"
#include "test-campaign-file.hpp"
#include "test-report-fixtures.hpp"

#include <SQLiteCpp/Database.h>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <fstream>
#include <iterator>
#include <regex>
#include <tuple>

using namespace irqloop;
using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;
using irqloop::logger::histogram;

namespace
{

/** @brief Figures of a hand-made run. */
struct fig {
    std::uint64_t samples = 1000;
    std::int64_t min_ns = 5'000, max_ns = 80'000, max_bracket_ns = 0;
    std::int64_t p99_ns = 20'000, p9999_ns = 40'000;
    std::uint64_t lost = 0, overflows = 0, disturbed = 0;
    std::vector<db::bucket_row> buckets;
    db::run_status status = db::run_status::complete; ///< how the run ended
};

/** @brief A complete measurement run with @p f as its summary, in @p db; returns its id. */
std::int64_t add_run(const std::string& db, const std::string& label, const fig& f,
                     std::int64_t start = 1'700'000'000'000'000'000)
{
    db::store st(db);
    db::run_row r;
    static int n = 0;
    r.uuid = "0000gate-" + std::to_string(++n) + "-" + label;
    r.label = label;
    r.kind = db::run_kind::measure;
    r.start_unix_ns = start + n;
    r.backend = "sim";
    r.threshold_ns = 30'000;
    r.timeout_ns = 10'000'000;
    r.metadata = {{"logger.keep_disturbed", "no"}};
    const auto id = st.begin_run(r);
    db::interval_commit c;
    c.interval.start_unix_ns = r.start_unix_ns;
    c.interval.end_unix_ns = r.start_unix_ns + 1'000'000'000;
    c.interval.samples = f.samples;
    c.summary.samples = f.samples;
    c.summary.stimuli = f.samples + f.lost + f.disturbed;
    c.summary.lost = f.lost;
    c.summary.overflows = f.overflows;
    c.summary.disturbed = f.disturbed;
    c.summary.min_ns = f.min_ns;
    c.summary.max_ns = f.max_ns;
    c.summary.max_bracket_ns = f.max_bracket_ns;
    c.summary.warm_max_ns = f.max_ns;
    c.summary.mean_ns = double(f.min_ns);
    c.summary.p50_ns = f.min_ns;
    c.summary.p99_ns = f.p99_ns;
    c.summary.p999_ns = f.p9999_ns;
    c.summary.p9999_ns = f.p9999_ns;
    c.summary.p999999_ns = f.max_ns;
    c.summary.end_unix_ns = c.interval.end_unix_ns;
    c.histogram = f.buckets;
    st.commit_interval(id, c);
    st.finish_run(id, f.status, c.interval.end_unix_ns);
    return id;
}

const db::run_record& only(db::catalog& cat, std::int64_t id)
{
    db::run_selector s;
    s.runs.push_back(std::to_string(id));
    return *cat.select(s).front();
}

/** @brief A run of figures @p f alone in a fresh file, and the catalog that reads it. */
struct lone_run {
    temp_dir dir;
    const std::string db = dir / "g.db";
    const std::int64_t id;
    db::catalog cat{std::vector<std::string>{db}};
    const db::run_record& r = only(cat, id);

    lone_run(const std::string& label, const fig& f) : id(add_run(db, label, f)) {}

    /** @brief evaluate_gates() of @p lim on the run. */
    logger::gate_outcome gates(const logger::gate_limits& lim)
    {
        return logger::evaluate_gates(cat, r, lim);
    }
};

std::string us(std::int64_t ns)
{
    return std::to_string(ns) + "ns";
}

/** @brief ci-consumers.py @p args: its output; skipped when the consumer is not installed
 *  (status 4), required to succeed otherwise. */
process_result consume(const std::string& consumers, const std::string& args)
{
    auto r = run_shell("/usr/bin/python3 '" + consumers + "' " + args);
    INFO(r.out);
    if (r.status == 4)
        SKIP(r.out);
    REQUIRE(r.status == 0);
    return r;
}

} // namespace

TEST_CASE("gates: each limit passes at its value and fails one step below it", "[gates]")
{
    fig f;
    f.lost = 3;
    f.overflows = 2;
    lone_run one("a", f);
    // The max is held on a run that lost nothing: a lost answer fails it at any limit (below).
    fig c = f;
    c.lost = 0;
    lone_run clean("c", c);

    logger::gate_limits at;
    at.percentiles = {{99, f.p99_ns}, {99.99, f.p9999_ns}};
    at.lost = f.lost;
    at.overflows = f.overflows;
    const auto pass = one.gates(at);
    REQUIRE(pass.lines.size() == 4);
    CHECK(pass.pass());
    for (const auto& l : pass.lines)
        CHECK(l.pass);
    logger::gate_limits max_at;
    max_at.max_ns = f.max_ns;
    CHECK(clean.gates(max_at).pass());

    logger::gate_limits below;
    below.max_ns = f.max_ns - 1;
    below.percentiles = {{99, f.p99_ns - 1}, {99.99, f.p9999_ns - 1}};
    below.lost = f.lost - 1;
    below.overflows = f.overflows - 1;
    const auto fail = one.gates(below);
    CHECK(fail.failed() == 5);
    logger::gate_limits max_below;
    max_below.max_ns = f.max_ns - 1;
    const auto clean_fail = clean.gates(max_below);
    CHECK(clean_fail.failed() == 1);

    // The line: value, limit, PASS or FAIL.
    const auto text = logger::format_gate_lines(fail);
    CHECK_THAT(logger::format_gate_lines(clean_fail),
               ContainsSubstring("  gate max              80.000 us  limit       79.999 us  "
                                 "FAIL\n"));
    CHECK_THAT(text, ContainsSubstring("  gate p99.99           40.000 us  limit       39.999 us  "
                                       "FAIL\n"));
    CHECK_THAT(text, ContainsSubstring("  gate lost                  3     limit            2     "
                                       "FAIL\n"));
    CHECK_THAT(logger::format_gate_lines(pass),
               ContainsSubstring("  gate overflows             2     limit            2     "
                                 "PASS\n"));
}

TEST_CASE("gates: a disturbed max fails by its upper bound; a proven lower bound is never hidden",
          "[gates]")
{
    fig f;
    f.max_ns = 120'000; // upper bound of the highest-ranking sample, disturbed
    f.max_bracket_ns = 30'000;
    f.disturbed = 4;
    lone_run one("d", f);
    logger::gate_limits lim;
    // The lower bound (90 us) is under the limit, the upper bound is not: not proven under.
    lim.max_ns = 100'000;
    auto g = one.gates(lim);
    REQUIRE(g.lines.size() == 1);
    CHECK_FALSE(g.pass());
    CHECK_THAT(g.lines[0].note, ContainsSubstring("bracket 30.000 us: proven >= 90.000 us"));
    // Proven above the limit: fails whatever the bracket.
    lim.max_ns = 80'000;
    CHECK_FALSE(one.gates(lim).pass());
    // At the upper bound: passes.
    lim.max_ns = 120'000;
    CHECK(one.gates(lim).pass());
    // The percentiles are of the statistics and say that the disturbed samples are not in them.
    lim.percentiles = {{99, 20'000}};
    g = one.gates(lim);
    CHECK(g.pass());
    CHECK(g.lines[1].note == "4 disturbed samples not in the percentiles");
}

TEST_CASE("gates: a run without samples fails its latency limits as n/a", "[gates]")
{
    lone_run one("dead", fig{.samples = 0, .lost = 100});
    const auto g = one.gates({.max_ns = 1'000'000'000, .percentiles = {{99.99, 1'000'000'000}}});
    REQUIRE(g.lines.size() == 2);
    CHECK(g.failed() == 2);
    CHECK_THAT(logger::format_gate_lines(g), ContainsSubstring("n/a"));
    // A P(>X) limit on it: named and keyed as on a fitted run, failed with no value.
    const auto p = one.gates({.p_exceed = {{12'500, 1e-9}}});
    REQUIRE(p.lines.size() == 1);
    CHECK(p.lines[0].name == "P(>12.5us)");
    CHECK(p.lines[0].key == "p_exceed_12.5us");
    CHECK(p.lines[0].probability);
    CHECK(p.lines[0].limit == 1e-9);
    CHECK(!p.lines[0].has_value);
    CHECK(!p.lines[0].refused);
    CHECK(p.lines[0].note == "no samples in the statistics");
    CHECK(p.failed() == 1);
}

TEST_CASE("gates: a percentile that is not stored comes from the histogram by the same rule",
          "[gates]")
{
    fig f;
    // 900 samples at 5 us, 90 at 10 us, 10 at 20 us (exact buckets: 1 ns wide below 2048 ns,
    // so use the real bucket bounds of a histogram for the larger values).
    f.samples = 1000;
    f.min_ns = 1000;
    f.max_ns = 1900;
    f.buckets = {{1000, 1001, 900}, {1500, 1501, 90}, {1900, 1901, 10}};
    lone_run one("h", f);
    logger::gate_limits lim;
    lim.percentiles = {{90, 1000}, {90.1, 1499}, {99.5, 1900}, {99, 1500}};
    const auto g = one.gates(lim);
    REQUIRE(g.lines.size() == 4);
    CHECK(g.lines[0].value == 1000); // rank 900 is the last 1000 ns sample
    CHECK(g.lines[0].pass);
    CHECK(g.lines[1].value == 1500); // rank 901: the first 1500 ns sample
    CHECK_FALSE(g.lines[1].pass);
    CHECK(g.lines[2].value == 1900);
    CHECK(g.lines[2].pass);
    CHECK(g.lines[3].value == double(f.p99_ns)); // stored: the summary's own figure
    // `run --fail-*` evaluates the same limits on the outcome it holds, its run histogram in
    // memory, without reading the file: the same lines, value for value.
    histogram h;
    for (const auto& b : f.buckets)
        h.record_n(b.lo_ns, b.count);
    const auto held = logger::evaluate_gates(one.r, lim, h);
    REQUIRE(held.lines.size() == g.lines.size());
    for (std::size_t i = 0; i < g.lines.size(); ++i) {
        CHECK(held.lines[i].value == g.lines[i].value);
        CHECK(held.lines[i].pass == g.lines[i].pass);
    }
    CHECK(logger::percentile_name(99.99) == "p99.99");
    CHECK(logger::percentile_name(99.9999) == "p99.9999");
    CHECK(logger::percentile_name(90) == "p90");
}

TEST_CASE("gates: limits are parsed strictly", "[gates]")
{
    logger::gate_limit_args t;
    t.max = "100";
    CHECK_THROWS_WITH(logger::parse_gate_limits(t), ContainsSubstring("has no unit"));
    t.max = "0";
    CHECK(logger::parse_gate_limits(t).max_ns == 0);
    t.max = "100us";
    t.p = {"p99.99=50us", "99=0.1ms"};
    t.lost = "0";
    const auto l = logger::parse_gate_limits(t);
    CHECK(l.max_ns == 100'000);
    REQUIRE(l.percentiles.size() == 2);
    CHECK(l.percentiles[0] == std::pair<double, std::int64_t>{99.99, 50'000});
    CHECK(l.percentiles[1] == std::pair<double, std::int64_t>{99, 100'000});
    CHECK(l.lost == 0u);
    CHECK_FALSE(l.overflows);
    for (const char* bad : {"100=1us", "0=1us", "99.9", "x=1us", "99=1", "99=-1us"})
        CHECK_THROWS(logger::parse_percentile_limit(bad, "--p"));
}

TEST_CASE("gates: a lost answer fails the max at any limit, its value the timeout it proves",
          "[gates]")
{
    // The largest answered sample is 80 us; 2 answers never came within the 10 ms timeout.
    fig f;
    f.lost = 2;
    lone_run one("lost", f);
    for (const std::int64_t limit :
         {std::int64_t(80'000), std::int64_t(10'000'000), std::int64_t(3'600'000'000'000)}) {
        logger::gate_limits lim;
        lim.max_ns = limit;
        const auto g = one.gates(lim);
        REQUIRE(g.lines.size() == 1);
        const auto& l = g.lines[0];
        CHECK_FALSE(l.pass);
        CHECK(l.has_value);
        CHECK(l.value == 10'000'000); // the proven bound, not the 80 us answered
        CHECK_THAT(l.note, ContainsSubstring("2 lost, each at least the 10000.000 us timeout"));
        CHECK_THAT(l.note, ContainsSubstring("largest answered 80.000 us"));
    }
    // A run that answered nothing and lost some: the same bound, not "no samples".
    fig none;
    none.samples = 0;
    none.lost = 5;
    lone_run dead("dead-lost", none);
    logger::gate_limits lim;
    lim.max_ns = 1'000'000'000;
    const auto g = dead.gates(lim);
    REQUIRE(g.lines.size() == 1);
    CHECK_FALSE(g.lines[0].pass);
    CHECK(g.lines[0].value == 10'000'000);
    CHECK_THAT(logger::format_gate_lines(g),
               ContainsSubstring("  gate max           10000.000 us  limit  1000000.000 us  "
                                 "FAIL  (5 lost, each at least the 10000.000 us timeout: the max "
                                 "is at least that, above it unknown)\n"));
}

TEST_CASE("gates: the outcome stored as gate.* metadata reads back", "[gates]")
{
    temp_dir dir;
    const std::string db = dir / "g.db";
    fig f;
    f.lost = 1;
    const auto id = add_run(db, "m", f);
    logger::gate_limits lim;
    lim.max_ns = 100'000;
    lim.percentiles = {{99.99, 30'000}};
    lim.lost = 0;
    {
        db::catalog cat({db});
        CHECK_FALSE(logger::stored_gates(only(cat, id)));
        logger::store_gate_outcome(db, id, logger::evaluate_gates(cat, only(cat, id), lim));
    }
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    SQLite::Statement q(d, "SELECT key || '=' || value FROM run_metadata WHERE key LIKE 'gate.%' "
                           "ORDER BY key");
    std::vector<std::string> kv;
    while (q.executeStep())
        kv.push_back(q.getColumn(0).getString());
    CHECK(kv == std::vector<std::string>{
                    "gate.lost=1 0 fail",
                    "gate.max_us=10000.000 100.000 fail 1 lost, each at least the 10000.000 us "
                    "timeout: the max is at least that, above it unknown; largest answered "
                    "80.000 us",
                    "gate.p99.99_us=40.000 30.000 fail", "gate.result=fail"});
    db::catalog cat({db});
    const auto back = logger::stored_gates(only(cat, id));
    REQUIRE(back);
    REQUIRE(back->lines.size() == 3);
    CHECK(back->lines[0].name == "max");
    CHECK(back->lines[0].value == 10'000'000); // what the lost answer proves
    CHECK_FALSE(back->lines[0].pass);
    CHECK_THAT(back->lines[0].note, ContainsSubstring("largest answered 80.000 us"));
    CHECK(back->lines[1].name == "p99.99");
    CHECK(back->lines[1].limit == 30'000);
    CHECK(back->lines[2].name == "lost");
    CHECK_FALSE(back->lines[2].pass);
    CHECK(back->failed() == 3);
}

TEST_CASE("check: over several runs it fails when any run fails, with one line per limit",
          "[gates][cli]")
{
    temp_dir dir;
    const std::string db = dir / "g.db";
    fig good, bad;
    bad.max_ns = 100'001;
    add_run(db, "night", good);
    const auto bad_id = add_run(db, "night", bad);
    add_run(db, "night", good);

    auto all = run_process({IRQLOOP_BIN, "check", "--db", db, "--label", "night", "--max", "100us",
                            "--p", "99.99=50us", "--lost", "0", "--overflows", "0"});
    INFO(all.out << all.err);
    CHECK(all.status == 3);
    CHECK(std::count(all.out.begin(), all.out.end(), '\n') == 3 * 5 + 1);
    CHECK_THAT(all.out, ContainsSubstring("run " + std::to_string(bad_id) +
                                          " (night): complete, 1000 samples: FAIL\n"
                                          "  gate max             100.001 us  limit      100.000 "
                                          "us  FAIL\n"));
    CHECK_THAT(all.out, ContainsSubstring("check: FAIL: 1 of 3 runs failed (run " +
                                          std::to_string(bad_id) + ")\n"));

    // The same limits just above the bad run's max: every run passes.
    auto ok = run_process({IRQLOOP_BIN, "check", "--db", db, "--max", "100.001us", "--p",
                           "99.99=40us", "--lost", "0"});
    INFO(ok.out << ok.err);
    CHECK(ok.status == 0);
    CHECK_THAT(ok.out, ContainsSubstring("check: PASS: 3 runs, every limit met\n"));
    // --last: only the newest run (a good one).
    CHECK(run_process({IRQLOOP_BIN, "check", "--db", db, "--last", "--max", "100us"}).status == 0);

    // Bad input is 2, not 3: no limit, a limit without its unit, a run that does not exist.
    CHECK(run_process({IRQLOOP_BIN, "check", "--db", db}).status == 2);
    CHECK(run_process({IRQLOOP_BIN, "check", "--db", db, "--max", "100"}).status == 2);
    CHECK(run_process({IRQLOOP_BIN, "check", "--db", db, "--run", "99", "--max", "1us"}).status ==
          2);
    // A check never writes: the file has no gate.* rows afterwards.
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    CHECK(d.execAndGet("SELECT count(*) FROM run_metadata WHERE key LIKE 'gate.%'").getInt() == 0);
}

TEST_CASE("run --fail-*: seeded sim runs just under and over each limit exit 3 and 0",
          "[run][cli][gates-run]")
{
    temp_dir dir;
    const std::string db = dir / "g.db";
    // Spikes of exactly 200 us and losses: the truth puts the max at >= 200 us (a reported
    // figure is never below it) and the lost count above 0.
    const std::string hw =
        "sim:model=fixed,value=5us,spike_p=2e-3,spike_min=200us,spike_max=200us,loss_p=2e-3,"
        "seed=7";
    auto over = run_process({IRQLOOP_BIN,      "run",
                             "--hw",           hw,
                             "--samples",      "20k",
                             "--interval",     "20us",
                             "--timeout",      "2ms",
                             "--db",           db,
                             "--label",        "over",
                             "--progress",     "none",
                             "--fail-above",   "199.999us",
                             "--fail-p",       "99.99=199.999us",
                             "--fail-on-lost", "--fail-on-overflow"});
    INFO(over.out << over.err);
    REQUIRE(over.status == 3);
    CHECK(std::regex_search(over.out, std::regex("\n  gate max +[0-9.]+ us  limit      199.999 us"
                                                 "  FAIL")));
    CHECK(std::regex_search(over.out, std::regex("\n  gate p99.99 +[0-9.]+ us  limit      "
                                                 "199.999 us  FAIL")));
    CHECK(std::regex_search(over.out, std::regex("\n  gate lost +[1-9][0-9]*     limit       "
                                                 "     0     FAIL\n")));
    CHECK(std::regex_search(over.out, std::regex("\n  gate overflows +[0-9]+     limit       "
                                                 "     0     (PASS|FAIL)\n")));
    CHECK_THAT(over.out, ContainsSubstring("  gates: FAIL ("));

    // The stored figures, and the outcome stored with them.
    db::catalog cat({db});
    const auto& r = cat.runs().back();
    CHECK(r.summary.max_ns >= 200'000);
    CHECK(r.summary.lost > 0);
    std::string result;
    for (const auto& [k, v] : r.meta.metadata)
        if (k == "gate.result")
            result = v;
    CHECK(result == "fail");

    // Just under and just over each figure of that run, through check: 0 at the value, 3 one
    // step below it.
    const auto& s = r.summary;
    auto at = run_process({IRQLOOP_BIN, "check", "--db", db, "--label", "over", "--p",
                           "99.99=" + us(s.p9999_ns), "--lost", std::to_string(s.lost),
                           "--overflows", std::to_string(s.overflows)});
    INFO(at.out);
    CHECK(at.status == 0);
    // The max is not met at the largest answered sample, nor at any limit: the lost answers
    // prove it at least the 2 ms timeout, and above that nothing is known.
    for (const auto& limit : {us(s.max_ns), std::string("2ms"), std::string("1s")}) {
        const auto m =
            run_process({IRQLOOP_BIN, "check", "--db", db, "--label", "over", "--max", limit});
        INFO(m.out);
        CHECK(m.status == 3);
        CHECK_THAT(m.out, ContainsSubstring("  gate max            2000.000 us  limit "));
        CHECK_THAT(m.out, ContainsSubstring(" lost, each at least the 2000.000 us timeout: the "
                                            "max is at least that, above it unknown; largest "
                                            "answered "));
    }
    for (const char* l : {"p99.99", "lost", "overflows"}) {
        auto one = [&](std::string opt, std::string v) {
            return run_process({IRQLOOP_BIN, "check", "--db", db, "--label", "over", opt, v});
        };
        if (std::string(l) == "p99.99")
            CHECK(one("--p", "99.99=" + us(s.p9999_ns - 1)).status == 3);
        if (std::string(l) == "lost")
            CHECK(one("--lost", std::to_string(s.lost - 1)).status == 3);
    }

    // A clean seeded run under generous limits (the timeout bounds every answered sample):
    // exit 0 and gate.result pass.
    auto under =
        run_process({IRQLOOP_BIN,         "run",   "--hw",       "sim:model=fixed,value=5us,seed=7",
                     "--samples",         "5k",    "--interval", "20us",
                     "--timeout",         "2ms",   "--db",       db,
                     "--label",           "under", "--progress", "none",
                     "--fail-above",      "1s",    "--fail-p",   "99.99=1s",
                     "--fail-on-overflow"});
    INFO(under.out << under.err);
    CHECK(under.status == 0);
    CHECK_THAT(under.out, ContainsSubstring("  gates: PASS (0 of 3 limits failed)\n"));
    auto stored = run_process({"/usr/bin/sqlite3", db,
                               "SELECT value FROM run_metadata JOIN runs ON runs.id = run_id "
                               "WHERE label = 'under' AND key = 'gate.result'"});
    CHECK(stored.out == "pass\n");
    // --no-db: the gates still decide the status; only stored percentiles are allowed.
    auto nodb = run_process({IRQLOOP_BIN, "run", "--no-db", "--hw", hw, "--samples", "5k",
                             "--interval", "20us", "--timeout", "2ms", "--progress", "none",
                             "--fail-above", "199.999us"});
    CHECK(nodb.status == 3);
    CHECK(run_process({IRQLOOP_BIN, "run", "--no-db", "--samples", "10", "--fail-p", "95=1ms"})
              .status == 2);
}

namespace
{

/** @brief Three gated runs: two pass; one fails max and p99.99. Returns the file. */
std::string gated_file(const temp_dir& dir)
{
    const std::string db = dir / "ci.db";
    fig good, bad;
    bad.max_ns = 150'000;
    bad.max_bracket_ns = 20'000;
    bad.p9999_ns = 60'000;
    logger::gate_limits lim;
    lim.max_ns = 100'000;
    lim.percentiles = {{99.99, 50'000}};
    lim.lost = 0;
    // A label that is not UTF-8 (a raw 0xff byte) and one with XML's special characters.
    for (const auto& [label, f] : std::vector<std::pair<std::string, fig>>{
             {"idle", good}, {"load \xff<&>\"", bad}, {"idle", good}}) {
        const auto id = add_run(db, label, f);
        db::catalog cat({db});
        logger::store_gate_outcome(db, id, logger::evaluate_gates(cat, only(cat, id), lim));
    }
    return db;
}

const std::string consumers = std::string(IRQLOOP_SOURCE_DIR) + "/tests/logger/ci-consumers.py";

} // namespace

TEST_CASE("export --format junit: a testsuite per run, a testcase per limit, read by junitparser",
          "[gates]")
{
    temp_dir dir;
    const std::string db = gated_file(dir), xml = dir / "junit.xml";
    auto e = run_process({IRQLOOP_BIN, "export", "--format", "junit", "--db", db, "-o", xml});
    INFO(e.out << e.err);
    if (!IRQLOOP_HAVE_PUGIXML) {
        CHECK(e.status == 1);
        SKIP("built without pugixml");
    }
    REQUIRE(e.status == 0);
    auto lint = run_shell("xmllint --noout '" + xml + "'");
    INFO(lint.out);
    CHECK(lint.status == 0);
    const auto parsed = consume(consumers, "junit '" + xml + "'");
    CHECK_THAT(parsed.out, ContainsSubstring("suites 3 tests 9 failures 2\n"));
    CHECK_THAT(parsed.out, ContainsSubstring("suite idle (run 1) tests 3 failures 0\n"));
    // The invalid byte is replaced (U+FFFD), the special characters escaped, not dropped.
    CHECK_THAT(parsed.out,
               ContainsSubstring("suite load \xEF\xBF\xBD<&>\" (run 2) tests 3 failures 2\n"));
    std::ifstream in(xml);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    CHECK_THAT(text, ContainsSubstring("<failure type=\"limit\" message=\"max 150.000 us is above "
                                       "the limit 100.000 us\">max 150.000 us, limit 100.000 us "
                                       "(upper bound of a disturbed sample, bracket 20.000 us: "
                                       "proven &gt;= 130.000 us)"));

    // Limits given to export are evaluated instead of the stored ones: all pass at 1 s.
    auto loose = run_shell(std::string(IRQLOOP_BIN) + " export --format junit --db '" + db +
                           "' --max 1s | /usr/bin/python3 '" + consumers + "' junit /dev/stdin");
    INFO(loose.out);
    CHECK_THAT(loose.out, ContainsSubstring("suites 3 tests 3 failures 0\n"));
    // A run with no gates and no limits given: refused (2), not an empty suite.
    const std::string plain = dir / "plain.db";
    add_run(plain, "x", fig{});
    CHECK(run_process({IRQLOOP_BIN, "export", "--format", "junit", "--db", plain}).status == 2);
    CHECK(run_process({IRQLOOP_BIN, "export", "--format", "csv", "--db", plain, "--max", "1us"})
              .status == 2);
}

TEST_CASE("export --format lava: LAVA's grammar and lava-dispatcher's own signal code", "[gates]")
{
    temp_dir dir;
    const std::string db = gated_file(dir), lines = dir / "lava.txt";
    auto e = run_process({IRQLOOP_BIN, "export", "--format", "lava", "--db", db, "-o", lines});
    INFO(e.out << e.err);
    REQUIRE(e.status == 0);
    // Per run: 8 latency figures, 4 counts, 3 limits and the gate as a whole.
    auto grammar = run_shell("/usr/bin/python3 '" + consumers + "' lava-grammar '" + lines + "'");
    INFO(grammar.out);
    CHECK(grammar.status == 0);
    CHECK(grammar.out == "lines 48\n");
    std::ifstream in(lines);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    CHECK_THAT(text, ContainsSubstring("<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=load______.run2.gate."
                                       "max_us RESULT=fail MEASUREMENT=150.000 UNITS=us>\n"));
    CHECK_THAT(text, ContainsSubstring("<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=idle.run1.gate "
                                       "RESULT=pass>\n"));
    CHECK_THAT(text, ContainsSubstring("<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=idle.run1.lost "
                                       "RESULT=pass MEASUREMENT=0 UNITS=count>\n"));

    // The grammar check itself refuses what LAVA would: it can fail.
    const std::string bad = dir / "bad.txt";
    std::ofstream(bad) << "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=passed>\n";
    CHECK(run_shell("/usr/bin/python3 '" + consumers + "' lava-grammar '" + bad + "'").status == 1);
    std::ofstream(bad) << "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=pass MEASUREMENT=1e3 "
                          "UNITS=us>\n";
    CHECK(run_shell("/usr/bin/python3 '" + consumers + "' lava-grammar '" + bad + "'").status == 1);

    // Debian's lava-dispatcher, unpacked (not installed), parses every line as a result.
    const std::string lava = std::string(IRQLOOP_BINARY_DIR) + "/lava-dispatcher";
    auto fetch = run_shell("'" + std::string(IRQLOOP_SOURCE_DIR) +
                           "/tests/logger/fetch-lava.sh' '" + lava + "'");
    INFO(fetch.out);
    if (fetch.status == 4)
        SKIP(fetch.out);
    REQUIRE(fetch.status == 0);
    const auto real = consume(consumers, "lava-dispatcher '" + lines + "' '" + lava + "'");
    CHECK_THAT(real.out, ContainsSubstring("results 48 fail 3 measurements 45\n"));
    CHECK_THAT(real.out, ContainsSubstring("\nload______.run2.gate.max_us fail 150.0 us\n"));
    // Our test definition example passes lava_common's schema.
    auto def = run_shell("/usr/bin/python3 '" + consumers + "' lava-testdef '" +
                         std::string(IRQLOOP_SOURCE_DIR) + "/docs/lava/irqloop-latency.yaml' '" +
                         lava + "'");
    INFO(def.out);
    CHECK(def.status == 0);
}

namespace
{

/** @brief fetch-lava.sh into the build tree: the unpacked lava-dispatcher, or SKIP. */
std::string lava_dir()
{
    const std::string lava = std::string(IRQLOOP_BINARY_DIR) + "/lava-dispatcher";
    auto fetch = run_shell("'" + std::string(IRQLOOP_SOURCE_DIR) +
                           "/tests/logger/fetch-lava.sh' '" + lava + "'");
    INFO(fetch.out);
    if (fetch.status == 4)
        SKIP(fetch.out);
    REQUIRE(fetch.status == 0);
    return lava;
}

} // namespace

TEST_CASE("check: a run without samples, or one that did not end complete, fails whatever its "
          "limits, with the status of the CI exports' return code",
          "[gates][cli]")
{
    temp_dir dir;
    const std::string db = dir / "c.db";
    fig none; // ended complete, every stimulus disturbed: no sample in the statistics
    none.samples = 0;
    none.disturbed = 500;
    fig cut; // samples well under the limits, but stopped by a signal
    cut.status = db::run_status::interrupted;
    fig good;
    const auto none_id = add_run(db, "none", none);
    const auto cut_id = add_run(db, "cut", cut);
    add_run(db, "good", good);
    auto check = [&](const std::string& label, std::vector<std::string> limits) {
        std::vector<std::string> a{IRQLOOP_BIN, "check", "--db", db, "--label", label};
        a.insert(a.end(), limits.begin(), limits.end());
        return run_process(a);
    };
    // Held only to counts it meets (0 lost): before, a 0-sample run passed with 0.
    auto n = check("none", {"--lost", "0", "--overflows", "0"});
    INFO(n.out << n.err);
    CHECK(n.status == 4);
    CHECK_THAT(n.out, ContainsSubstring("run " + std::to_string(none_id) +
                                        " (none): complete, 0 samples: FAIL\n"));
    CHECK_THAT(n.out, ContainsSubstring("  run cannot pass: it has no sample in the statistics "
                                        "(500 stimuli, 0 lost, 500 disturbed)\n"));
    // An interrupted run with samples under every limit: before, it passed with 0.
    auto c = check("cut", {"--max", "1s", "--lost", "0"});
    INFO(c.out << c.err);
    CHECK(c.status == 1);
    CHECK_THAT(c.out, ContainsSubstring("run " + std::to_string(cut_id) +
                                        " (cut): interrupted, 1000 samples: FAIL\n"));
    CHECK_THAT(c.out, ContainsSubstring("  run cannot pass: it was interrupted after 1000 "
                                        "stimuli: it did not reach its bound\n"));
    CHECK(check("good", {"--max", "1s", "--lost", "0"}).status == 0);
    // Several runs: the first failed run's status, as rt-tests JSON's return_code; the same
    // status as the export's for each run alone.
    auto all = run_process({IRQLOOP_BIN, "check", "--db", db, "--max", "1s"});
    CHECK(all.status == 4);
    CHECK_THAT(all.out,
               ContainsSubstring("check: FAIL: 2 of 3 runs failed (run " + std::to_string(none_id) +
                                 ", " + std::to_string(cut_id) + ")\n"));
    for (const auto& [id, status] : {std::pair<std::int64_t, int>{none_id, 4}, {cut_id, 1}}) {
        const std::string out = dir / ("rt" + std::to_string(id) + ".json");
        auto e = run_process({IRQLOOP_BIN, "export", "--db", db, "--run", std::to_string(id),
                              "--format", "rt-tests-json", "-o", out});
        REQUIRE(e.status == 0);
        CHECK(file_text(out).find("\"return_code\": " + std::to_string(status) + ",") !=
              std::string::npos);
    }
}

TEST_CASE("export junit and lava: a run without samples, or one that did not end complete, "
          "never reads as a pass",
          "[gates]")
{
    temp_dir dir;
    const std::string db = dir / "u.db";
    // Each passes every limit it was gated with; none may pass in CI.
    fig none; // ended complete, every stimulus disturbed: no sample in the statistics
    none.samples = 0;
    none.disturbed = 500;
    fig cut; // samples under the limit, but stopped by a signal
    cut.status = db::run_status::interrupted;
    fig broke; // a line failed mid-run
    broke.status = db::run_status::failed;
    fig good;
    logger::gate_limits lost0;
    lost0.lost = 0;
    logger::gate_limits loose;
    loose.max_ns = 1'000'000'000;
    for (const auto& [label, f, lim] :
         std::vector<std::tuple<std::string, fig, logger::gate_limits>>{{"none", none, lost0},
                                                                        {"cut", cut, loose},
                                                                        {"broke", broke, loose},
                                                                        {"good", good, loose}}) {
        const auto id = add_run(db, label, f);
        db::catalog cat({db});
        const auto g = logger::evaluate_gates(cat, only(cat, id), lim);
        REQUIRE(g.pass()); // the limits alone would pass each of them
        logger::store_gate_outcome(db, id, g);
    }
    // A run with no gates at all that was interrupted: still reported, and failed.
    fig bare;
    bare.status = db::run_status::interrupted;
    add_run(db, "bare", bare);

    const std::string lines = dir / "lava.txt";
    auto e = run_process({IRQLOOP_BIN, "export", "--format", "lava", "--db", db, "-o", lines});
    INFO(e.out << e.err);
    REQUIRE(e.status == 0);
    std::ifstream in(lines);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    INFO(text);
    for (const std::string run : {"none.run1", "cut.run2", "broke.run3", "bare.run5"}) {
        CHECK_THAT(text, ContainsSubstring("<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=" + run +
                                           ".complete RESULT=fail>\n"));
        CHECK_THAT(text, ContainsSubstring("<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=" + run +
                                           ".gate RESULT=fail>\n"));
    }
    CHECK_THAT(text, ContainsSubstring("TEST_CASE_ID=good.run4.gate RESULT=pass>\n"));
    CHECK(text.find("good.run4.complete") == std::string::npos);
    auto grammar = run_shell("/usr/bin/python3 '" + consumers + "' lava-grammar '" + lines + "'");
    INFO(grammar.out);
    CHECK(grammar.status == 0);

    // JUnit: junitparser counts one failed testcase per run that cannot pass.
    if (IRQLOOP_HAVE_PUGIXML) {
        const std::string xml = dir / "u.xml";
        auto j = run_process({IRQLOOP_BIN, "export", "--format", "junit", "--db", db, "-o", xml});
        INFO(j.out << j.err);
        REQUIRE(j.status == 0);
        const auto parsed = consume(consumers, "junit '" + xml + "'");
        CHECK_THAT(parsed.out, ContainsSubstring("suites 5 tests 8 failures 4\n"));
        CHECK_THAT(parsed.out, ContainsSubstring("suite none (run 1) tests 2 failures 1\n"));
        CHECK_THAT(parsed.out, ContainsSubstring("suite cut (run 2) tests 2 failures 1\n"));
        CHECK_THAT(parsed.out, ContainsSubstring("suite bare (run 5) tests 1 failures 1\n"));
        CHECK_THAT(parsed.out, ContainsSubstring("suite good (run 4) tests 1 failures 0\n"));
        std::ifstream jin(xml);
        const std::string jtext{std::istreambuf_iterator<char>(jin), {}};
        CHECK_THAT(jtext, ContainsSubstring(
                              "<failure type=\"run\" message=\"the run was interrupted after 1000 "
                              "stimuli: it did not reach its bound\">"));
        CHECK_THAT(jtext,
                   ContainsSubstring("message=\"the run has no sample in the statistics (500 "
                                     "stimuli, 0 lost, 500 disturbed)\""));
    }

    // lava-dispatcher's own signal code records the failures.
    const std::string lava = lava_dir();
    const auto real = consume(consumers, "lava-dispatcher '" + lines + "' '" + lava + "'");
    CHECK_THAT(real.out, ContainsSubstring("\ncut.run2.complete fail - -\n"));
    CHECK_THAT(real.out, ContainsSubstring("\nnone.run1.gate fail - -\n"));
}

TEST_CASE("docs/lava/irqloop-latency.yaml through LAVA: a broken --hw is a failed result, and "
          "a job reports only the run it made",
          "[gates]")
{
    temp_dir dir;
    const std::string lava = lava_dir();
    const std::string yaml = std::string(IRQLOOP_SOURCE_DIR) + "/docs/lava/irqloop-latency.yaml";
    const std::string bin = std::filesystem::path(IRQLOOP_BIN).parent_path().string();
    // The lab's file holds an earlier job's run, which passed its gates.
    const std::string db = dir / "lab.db";
    {
        const auto id = add_run(db, "lava-idle", fig{});
        logger::gate_limits lim;
        lim.max_ns = 100'000;
        db::catalog cat({db});
        logger::store_gate_outcome(db, id, logger::evaluate_gates(cat, only(cat, id), lim));
    }
    auto job = [&](const std::string& name, const std::string& params) {
        std::filesystem::create_directory(dir / name);
        return consume(consumers, "lava-testdef-run '" + yaml + "' '" + lava + "' '" + bin + "' '" +
                                      dir / name + "' DB='" + db + "' " + params);
    };
    // A job whose rig is broken: a GPIO chip that does not exist (irqloop run exits 2).
    const auto broken = job("broken", "HW=gpiod:chip=gpiochip99,out=17,in=27 DURATION=1s");
    INFO(broken.out << file_text(dir / "broken/console.txt"));
    CHECK_THAT(broken.out, ContainsSubstring("results 1 fail 1\n"));
    CHECK_THAT(broken.out, ContainsSubstring("\nirqloop-run fail 2"));
    CHECK(broken.out.find("run1") == std::string::npos); // not the earlier job's run

    // A job whose rig works: its own run (2) and nothing of run 1.
    const auto good =
        job("good", "HW=sim:model=fixed,value=5us,seed=1 DURATION=1s MAX=1ms P9999=1ms");
    INFO(good.out << file_text(dir / "good/console.txt"));
    CHECK_THAT(good.out, ContainsSubstring("exit 0 results 18 fail 0\n"));
    CHECK_THAT(good.out, ContainsSubstring("\nirqloop-run pass 0"));
    CHECK_THAT(good.out, ContainsSubstring("\nlava-idle.run2.gate pass - -\n"));
    CHECK(good.out.find("run1") == std::string::npos);
}

TEST_CASE("messages escape stored text: a label holding a newline and a LAVA signal comes out "
          "inert",
          "[gates]")
{
    temp_dir dir;
    const std::string db = dir / "forged.db";
    const std::string forged = "x\n<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=forged RESULT=pass>";
    const std::string shown = "x\\n\\x3cLAVA_SIGNAL_TESTCASE TEST_CASE_ID=forged RESULT=pass\\x3e";
    add_run(db, forged, fig{});           // run 1: no gates
    add_run(db, "tab\there \xff", fig{}); // run 2
    std::string console;
    auto take = [&](const process_result& r) {
        console += r.out + r.err;
        return r;
    };
    // export refuses a run without gates, naming it.
    const auto junit =
        take(run_process({IRQLOOP_BIN, "export", "--format", "junit", "--db", db, "--run", "1"}));
    CHECK(junit.status == 2);
    CHECK_THAT(junit.err, ContainsSubstring("irqloop: export: " + shown + " (run 1): no gates"));
    // check names each run.
    const auto check = take(run_process({IRQLOOP_BIN, "check", "--db", db, "--max", "1s"}));
    CHECK(check.status == 0);
    CHECK_THAT(check.out, ContainsSubstring("run 1 (" + shown + "): complete"));
    CHECK_THAT(check.out, ContainsSubstring("run 2 (tab\\there \\xff): complete"));
    // A selection that matches nothing lists the labels there are.
    const auto sel = take(run_process({IRQLOOP_BIN, "report", "--db", db, "--label", "nosuch"}));
    CHECK(sel.status == 2);
    CHECK_THAT(sel.err, ContainsSubstring("'" + shown + "'"));
    // report's title (its tables: the case below).
    const auto rep = run_process({IRQLOOP_BIN, "report", "--db", db, "--run", "1"});
    CHECK(rep.status == 0);
    CHECK_THAT(rep.out, ContainsSubstring("irqloop report: run 1 '" + shown + "'"));
    // run's summary line, for the label it was given.
    const auto run =
        take(run_process({IRQLOOP_BIN, "run", "--no-db", "--samples", "200", "--interval", "20us",
                          "--progress", "none", "--label", forged}));
    CHECK(run.status == 0);
    CHECK_THAT(run.out, ContainsSubstring("run - (" + shown + "): complete"));

    INFO(console);
    CHECK(console.find("<LAVA_SIGNAL") == std::string::npos);
    CHECK(console.find("\n<") == std::string::npos);
    // lava-dispatcher's signal pattern, searched over the whole console as pexpect does.
    const std::string log = dir / "console.txt";
    std::ofstream(log) << console;
    const std::string lava = lava_dir();
    const auto scan = consume(consumers, "lava-scan '" + log + "' '" + lava + "'");
    CHECK(scan.out == "signals 0\n");
}

TEST_CASE("tables escape stored text: report, compare and worst print a forged label inert in "
          "text and markdown, as stored in CSV",
          "[gates]")
{
    temp_dir dir;
    const std::string db = dir / "forged.db";
    const std::string forged = "x\n<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=forged RESULT=pass>";
    const std::string shown = "x\\n\\x3cLAVA_SIGNAL_TESTCASE TEST_CASE_ID=forged RESULT=pass\\x3e";
    {
        // Through the real recorder: worst samples, and uuids as the store makes them.
        namespace rt = logger::report_test;
        db::store st(db);
        rt::record_run(st, rt::numbered_spec(1, forged, 2000));
        auto two = rt::numbered_spec(2, "tab\there \xff", 2000);
        two.start_unix_ns += 60'000'000'000;
        rt::record_run(st, two);
    }
    const std::vector<std::vector<std::string>> tables = {
        {"report", "--list"},         {"report", "--run", "1"}, {"compare"},
        {"compare", "--by", "label"}, {"worst", "--top", "3"},
    };
    std::string console;
    for (const auto& args : tables)
        for (const char* fmt : {"text", "markdown", "csv"}) {
            std::vector<std::string> a{IRQLOOP_BIN};
            a.insert(a.end(), args.begin(), args.end());
            a.insert(a.end(), {"--db", db, "--format", fmt});
            const auto r = run_process(a);
            INFO(args[0] << " " << args.back() << " --format " << fmt << ":\n" << r.out << r.err);
            REQUIRE(r.status == 0);
            if (std::string_view(fmt) == "csv") {
                // CSV is data: the label as stored, one quoted field (RFC 4180).
                CHECK_THAT(r.out, ContainsSubstring("\"" + forged + "\""));
                continue;
            }
            CHECK_THAT(r.out, ContainsSubstring(shown));
            if (args.back() != "1") // report --run 1 shows run 1 only
                CHECK_THAT(r.out, ContainsSubstring("tab\\there \\xff"));
            CHECK(r.out.find("\n<") == std::string::npos);
            CHECK(r.out.find("<LAVA_SIGNAL") == std::string::npos);
            console += r.out;
        }
    // lava-dispatcher's signal pattern, searched over the whole console as pexpect does.
    const std::string log = dir / "console.txt";
    std::ofstream(log) << console;
    const auto scan = consume(consumers, "lava-scan '" + log + "' '" + lava_dir() + "'");
    CHECK(scan.out == "signals 0\n");
}

TEST_CASE("campaign: per-phase gates set the exit status and show in the compare table",
          "[run][cli][gates-run]")
{
    campaign_file camp("camp");
    const auto &db = camp.db, &ini = camp.ini;
    // Phase 'spiky' has spikes of exactly 200 us: its max cannot be under 199.999 us.
    camp.write("[calm]\nsamples = 3000\ninterval = 20us\ntimeout = 2ms\n"
               "hw = sim:model=fixed,value=5us,seed=3\nprogress = none\n"
               "max = 1s\np = 99.99=1s\noverflows = 0\n"
               "[spiky]\nsamples = 3000\ninterval = 20us\ntimeout = 2ms\n"
               "hw = sim:model=fixed,value=5us,spike_p=1e-2,spike_min=200us,"
               "spike_max=200us,seed=3\nprogress = none\n"
               "max = 199.999us\n");
    auto first = run_process({IRQLOOP_BIN, "campaign", ini});
    INFO(first.out << first.err);
    CHECK(first.status == 3);
    CHECK_THAT(first.out, ContainsSubstring("campaign: phase 'calm' (run 1) gates: PASS\n"));
    CHECK_THAT(first.out, ContainsSubstring("campaign: phase 'spiky' (run 2) gates: FAIL\n"));
    CHECK(std::regex_search(first.out, std::regex("\n  gate max +[0-9.]+ us  limit      199.999 "
                                                  "us  FAIL")));
    CHECK_THAT(first.out,
               ContainsSubstring("campaign: FAIL: the gates of 1 of 2 phases failed ('spiky')\n"));
    // The compare table gains the gate column.
    CHECK(std::regex_search(first.out, std::regex("\ncalm +1 .* pass\n")));
    CHECK(std::regex_search(first.out, std::regex("\nspiky +1 .* fail\n")));
    // Re-run: both phases complete and skipped, their gates evaluated again: still 3.
    auto again = run_process({IRQLOOP_BIN, "campaign", ini});
    INFO(again.out << again.err);
    CHECK(again.status == 3);
    CHECK_THAT(again.out, ContainsSubstring("'spiky': complete (run 2), skipped\n"));
    // A phase key from run's spelling is refused before anything runs.
    std::ofstream(camp.dir / "bad.ini") << "db = " << db << "\n[x]\nfail-above = 1us\n";
    CHECK(run_process({IRQLOOP_BIN, "campaign", camp.dir / "bad.ini"}).status == 2);
    std::ofstream(camp.dir / "bad2.ini") << "db = " << db << "\n[x]\nmax = 100\n";
    CHECK(run_process({IRQLOOP_BIN, "campaign", camp.dir / "bad2.ini"}).status == 2);
}
