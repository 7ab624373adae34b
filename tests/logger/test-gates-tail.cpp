// SPDX-License-Identifier: MIT
// The --p-exceed gate (issue 25): P(latency > X) per sample from the tail fit, held to a limit
// through every gate path (check, export junit and lava, campaign, run --fail-p-exceed), just
// either side of the bound the fit computes; and the three runs whose fit cannot be claimed
// (too few exceedances, a step change, bursts), refused with exit 2.
#include "gates.hpp"
#include "read.hpp"
#include "run-process.hpp"
#include "store.hpp"
#include "tail-command.hpp"
#include "tail-fit.hpp"
#include "temp-dir.hpp"
#include "test-campaign-file.hpp"
#include "test-tail-runs.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

using namespace irqloop;
using Catch::Matchers::ContainsSubstring;
using irqloop::test::run_irqloop;
using irqloop::test::run_shell;

namespace
{

// A probability as the command line takes it, every digit kept.
std::string gt_prob(double p)
{
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", p);
    return b;
}

// The upper end of the 95 % interval of P(latency > x) of the run, as the fit computes it.
double gt_bound(const std::string& db, std::int64_t run_id, double x_ns)
{
    db::catalog cat({db});
    for (const auto& r : cat.runs())
        if (r.id == run_id) {
            const auto d = logger::read_tail_data(cat, r);
            const auto fit = analysis::fit_tail(d);
            REQUIRE(fit.trustworthy());
            const auto e = analysis::p_exceed(d, fit, x_ns);
            REQUIRE(!e.ci.hi_open);
            return e.ci.hi;
        }
    FAIL("no run " << run_id);
    return 0;
}

std::string gt_file_text(const std::string& path)
{
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

const std::string gt_consumers = std::string(IRQLOOP_SOURCE_DIR) + "/tests/logger/ci-consumers.py";

// The seeded sim board of the end-to-end runs: a generalized Pareto spike tail above 50 us.
const std::string gt_hw = "sim:model=normal,mean=8us,sd=1us,spike_p=4e-3,spike_min=50us,"
                          "spike_tail=gpd,spike_scale=10us,spike_shape=0.2,seed=11";

} // namespace

TEST_CASE("gates --p-exceed: check and the CI exports pass at the fit's bound and fail just "
          "under it",
          "[gates][tail-gates]")
{
    test::temp_dir dir;
    const auto db = dir.file("tail.db");
    {
        db::store st(db);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002511", tail_test::gpd_model,
                                  300'000);
    }
    const double b = gt_bound(db, 1, 150'000);
    INFO("bound " << b);
    CHECK(b > 1e-6);
    CHECK(b < 1e-3);
    const std::string over = "150us=" + gt_prob(b * (1 + 1e-6));
    const std::string under = "150us=" + gt_prob(b * (1 - 1e-6));

    // The gate's value is the fit's bound: what `irqloop tail --exceed` prints as its upper end.
    {
        db::catalog cat({db});
        logger::gate_limits lim;
        lim.p_exceed = {{150'000, 1e-3}};
        const auto g = logger::evaluate_gates(cat, cat.runs().front(), lim);
        REQUIRE(g.lines.size() == 1);
        CHECK(g.lines[0].value == b);
        CHECK(g.lines[0].name == "P(>150us)");
        CHECK(g.lines[0].key == "p_exceed_150us");
        CHECK(g.pass());
        char hi[32];
        std::snprintf(hi, sizeof hi, "%.2g", b);
        const auto t = run_irqloop({"tail", "--db", db, "--exceed", "150us"});
        CHECK_THAT(t.out, ContainsSubstring(std::string(" .. ") + hi + ")"));
    }

    auto pass = run_irqloop({"check", "--db", db, "--p-exceed", over});
    INFO(pass.out << pass.err);
    CHECK(pass.status == 0);
    CHECK(std::regex_search(pass.out, std::regex("\n  gate P\\(>150us\\) +[0-9.e-]+ +limit +"
                                                 "[0-9.e-]+ +PASS  \\(upper end of the 95 % "
                                                 "interval")));
    auto fail = run_irqloop({"check", "--db", db, "--p-exceed", under});
    INFO(fail.out << fail.err);
    CHECK(fail.status == 3);
    CHECK_THAT(fail.out, ContainsSubstring("FAIL  (upper end of the 95 % interval"));
    // Repeatable, with the other limits.
    CHECK(run_irqloop(
              {"check", "--db", db, "--p-exceed", over, "--p-exceed", "1ms=0.5", "--max", "1s"})
              .status == 0);

    // JUnit (read by junitparser) and LAVA (its grammar): a testcase per limit, either side.
    const std::string xml = dir.file("j.xml"), lava = dir.file("l.txt");
    for (const auto& [limit, failures] : {std::pair{over, 0}, std::pair{under, 1}}) {
        auto e = run_irqloop(
            {"export", "--format", "junit", "--db", db, "--p-exceed", limit, "-o", xml});
        INFO(e.out << e.err);
        REQUIRE(e.status == 0);
        auto parsed = run_shell("/usr/bin/python3 '" + gt_consumers + "' junit '" + xml + "'");
        INFO(parsed.out);
        if (parsed.status == 4)
            SKIP(parsed.out);
        CHECK_THAT(parsed.out, ContainsSubstring("suites 1 tests 1 failures " +
                                                 std::to_string(failures) + "\n"));
        e = run_irqloop(
            {"export", "--format", "lava", "--db", db, "--p-exceed", limit, "-o", lava});
        REQUIRE(e.status == 0);
        auto grammar =
            run_shell("/usr/bin/python3 '" + gt_consumers + "' lava-grammar '" + lava + "'");
        INFO(grammar.out);
        CHECK(grammar.status == 0);
        const auto text = gt_file_text(lava);
        CHECK(std::regex_search(text, std::regex("TEST_CASE_ID=run1.gate.p_exceed_150us RESULT=" +
                                                 std::string(failures ? "fail" : "pass") +
                                                 " MEASUREMENT=0\\.0[0-9]+ UNITS=probability>\n")));
    }

    // Bad limits: refused before anything is read.
    for (const char* bad : {"150us", "150=1e-9", "150us=0", "150us=1", "150us=x", "0us=0.1"})
        CHECK(run_irqloop({"check", "--db", db, "--p-exceed", bad}).status == 2);
}

TEST_CASE("gates --p-exceed: too few exceedances, a step change and bursts are refused with "
          "exit 2 naming the failed check",
          "[gates][tail-gates]")
{
    test::temp_dir dir;
    const auto db = dir.file("tail.db");
    {
        db::store st(db);
        using tail_test::tail_twist;
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002512", tail_test::gpd_model,
                                  300'000, tail_twist::step_halfway);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002513", tail_test::gpd_model,
                                  300'000, tail_twist::bursts);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002514",
                                  "model=normal,mean=8us,sd=1us,spike_p=1e-4,spike_min=50us,seed=3",
                                  300'000);
    }
    const std::pair<const char*, const char*> cases[] = {
        {"1", "stationarity check failed: exceedance rate across"},
        {"2", "independence check failed: extremal index"},
        {"3", "exceedances check failed: "}};
    for (const auto& [run, why] : cases) {
        // A limit no fit could meet and one any would: neither passes nor fails, both refused.
        for (const char* limit : {"100us=1e-15", "100us=0.999"}) {
            auto r = run_irqloop({"check", "--db", db, "--run", run, "--p-exceed", limit});
            INFO(run << " " << limit << "\n" << r.out << r.err);
            CHECK(r.status == 2);
            CHECK_THAT(r.err, ContainsSubstring(std::string("irqloop: gate P(>100us) on run ") +
                                                run + ": not claimed: the tail fit's "));
            CHECK_THAT(r.err, ContainsSubstring(why));
            CHECK_THAT(r.err, ContainsSubstring("(irqloop tail shows the fit and its checks"));
            CHECK(r.out.find("PASS") == std::string::npos);
        }
    }
    // The CI exports report it failed, "not claimed", with the check named.
    const std::string xml = dir.file("j.xml");
    auto e = run_irqloop({"export", "--format", "junit", "--db", db, "--run", "2", "--p-exceed",
                          "100us=0.999", "-o", xml});
    INFO(e.out << e.err);
    REQUIRE(e.status == 0);
    CHECK_THAT(gt_file_text(xml),
               ContainsSubstring("<failure type=\"not-claimed\" message=\"P(>100us) not "
                                 "claimed: the tail fit's independence check failed"));
    auto l = run_irqloop(
        {"export", "--format", "lava", "--db", db, "--run", "3", "--p-exceed", "100us=0.999"});
    CHECK_THAT(l.out, ContainsSubstring("TEST_CASE_ID=run3.gate.p_exceed_100us RESULT=fail>\n"));
    CHECK_THAT(l.out, ContainsSubstring("TEST_CASE_ID=run3.gate RESULT=fail>\n"));
}

TEST_CASE("campaign p-exceed: a phase's stored run of the seeded sim model, gated either side "
          "of the fit's bound",
          "[run][cli][gates-run][tail-gates]")
{
    test::campaign_file camp("tail");
    const auto &db = camp.db, &ini = camp.ini;
    // The phase's run is the sim board's seeded model drawn through the recorder into the
    // campaign's file, complete and labelled as the phase: the campaign skips the phase and
    // gates that run. (A live sim run here depended on the host: on a loaded machine its
    // disturbed samples, dropped, took spikes unevenly across the run, and the tail fit's
    // stationarity check refused the fit, chi-square p = 0.0048.) A re-run gates the complete
    // phase again on its stored run, so the limit can sit just either side of that run's bound.
    {
        db::store st(db);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002514", tail_test::gpd_model,
                                  100'000, tail_test::tail_twist::none, "tail");
    }
    auto phase = [&](const std::string& limit) {
        camp.write("[tail]\nsamples = 100k\ninterval = 10us\ntimeout = 20ms\nthreshold = 30us\n"
                   "stats-interval = 100ms\nprogress = none\nhw = " +
                   gt_hw + "\np-exceed = " + limit + "\np-exceed = 300us=1e-15\n");
    };
    phase("150us=0.5");
    auto c1 = run_irqloop({"campaign", ini});
    INFO(c1.out << c1.err);
    REQUIRE(c1.status == 3);
    CHECK_THAT(c1.out, ContainsSubstring("campaign: phase 1/1 'tail': complete (run 1), skipped"));
    CHECK(std::regex_search(c1.out, std::regex("\n  gate P\\(>150us\\) +[0-9.e-]+ +limit +"
                                               "0\\.5 +PASS  \\(upper end")));
    CHECK(std::regex_search(c1.out, std::regex("\n  gate P\\(>300us\\) +[0-9.e-]+ +limit +"
                                               "1e-15 +FAIL  \\(upper end")));
    CHECK_THAT(c1.out, ContainsSubstring("campaign: phase 'tail' (run 1) gates: FAIL\n"));
    // The stored outcome is the fit of the run as stored.
    const double b = gt_bound(db, 1, 150'000);
    INFO("bound " << b);
    {
        db::catalog cat({db});
        const auto stored = logger::stored_gates(cat.runs().front());
        REQUIRE(stored);
        REQUIRE(stored->lines.size() == 2);
        CHECK(stored->lines[0].name == "P(>150us)");
        CHECK(std::abs(stored->lines[0].value / b - 1) < 1e-3); // stored with 4 digits
        CHECK(stored->lines[0].pass);
        CHECK(!stored->lines[1].pass);
    }
    auto at = [&](double limit) {
        camp.write("[tail]\nsamples = 100k\ninterval = 10us\ntimeout = 20ms\nthreshold = 30us\n"
                   "stats-interval = 100ms\nprogress = none\nhw = " +
                   gt_hw + "\np-exceed = 150us=" + gt_prob(limit) + "\n");
        return run_irqloop({"campaign", ini});
    };
    auto c2 = at(b * (1 + 1e-6));
    INFO(c2.out << c2.err);
    CHECK(c2.status == 0);
    CHECK_THAT(c2.out, ContainsSubstring("'tail': complete (run 1), skipped\n"));
    CHECK_THAT(c2.out, ContainsSubstring("campaign: phase 'tail' (run 1) gates: PASS\n"));
    auto c3 = at(b * (1 - 1e-6));
    INFO(c3.out << c3.err);
    CHECK(c3.status == 3);
    CHECK_THAT(c3.out, ContainsSubstring("campaign: phase 'tail' (run 1) gates: FAIL\n"));
    // The same through check on the file the campaign wrote.
    CHECK(run_irqloop({"check", "--db", db, "--p-exceed", "150us=" + gt_prob(b * (1 + 1e-6))})
              .status == 0);
    CHECK(run_irqloop({"check", "--db", db, "--p-exceed", "150us=" + gt_prob(b * (1 - 1e-6))})
              .status == 3);
    // A phase key with a bad value is refused before anything runs.
    phase("150us=2");
    CHECK(run_irqloop({"campaign", ini}).status == 2);
}

TEST_CASE("campaign p-exceed: a phase with too few exceedances is NOT CLAIMED, the next phase "
          "runs, and the campaign exits 2",
          "[run][cli][gates-run][tail-gates]")
{
    test::campaign_file camp("few");
    const std::string hw =
        "sim:model=normal,mean=8us,sd=1us,spike_p=1e-4,spike_min=50us,spike_max=60us,seed=5";
    camp.write("[few]\nsamples = 20k\ninterval = 10us\ntimeout = 2ms\nprogress = none\nhw = " + hw +
               "\np-exceed = 100us=0.5\n[after]\nsamples = 1k\nprogress = none\n");
    auto c = run_irqloop({"campaign", camp.ini});
    INFO(c.out << c.err);
    CHECK(c.status == 2);
    CHECK_THAT(c.out, ContainsSubstring("NOT CLAIMED  (not claimed: the tail fit's exceedances "
                                        "check failed"));
    CHECK_THAT(c.out, ContainsSubstring("campaign: phase 'few' (run 1) gates: NOT CLAIMED\n"));
    CHECK_THAT(c.out, ContainsSubstring("campaign: phase 2/2 'after'"));
    CHECK_THAT(c.err, ContainsSubstring("irqloop: gate P(>100us) on phase 'few' (run 1): not "
                                        "claimed: the tail fit's exceedances check failed"));
    db::catalog cat({camp.db});
    const auto stored = logger::stored_gates(cat.runs().front());
    REQUIRE(stored);
    CHECK(stored->lines.at(0).refused);
    CHECK(!stored->pass());
}

TEST_CASE("run --fail-p-exceed: a seeded sim run's gate is the fit of the run as stored, and "
          "too few exceedances exit 2 after it is stored",
          "[run][cli][gates-run][tail-gates]")
{
    test::campaign_file camp("run");
    const auto& db = camp.db;
    auto words = [&](std::vector<std::string> extra) {
        std::vector<std::string> w = {
            "run",  "--hw", gt_hw, "--samples",  "100k", "--interval",  "10us", "--timeout",
            "20ms", "--db", db,    "--progress", "none", "--threshold", "30us", "--stats-interval",
            "100ms"};
        w.insert(w.end(), extra.begin(), extra.end());
        return w;
    };
    // One run, two limits: a loose one passes, a strict one fails; exit 3; stored as gate.*.
    auto first = run_irqloop(
        words({"--label", "a", "--fail-p-exceed", "150us=0.5", "--fail-p-exceed", "300us=1e-15"}));
    INFO(first.out << first.err);
    REQUIRE(first.status == 3);
    CHECK(std::regex_search(first.out, std::regex("\n  gate P\\(>150us\\) +[0-9.e-]+ +limit +"
                                                  "0\\.5 +PASS  \\(upper end")));
    CHECK(std::regex_search(first.out, std::regex("\n  gate P\\(>300us\\) +[0-9.e-]+ +limit +"
                                                  "1e-15 +FAIL  \\(upper end")));
    CHECK_THAT(first.out, ContainsSubstring("  gates: FAIL (1 of 2 limits failed)\n"));
    // The run's gate is the fit of the run as stored: check just either side of it.
    const double b = gt_bound(db, 1, 150'000);
    INFO("bound " << b);
    {
        db::catalog cat({db});
        const auto stored = logger::stored_gates(cat.runs().front());
        REQUIRE(stored);
        REQUIRE(stored->lines.size() == 2);
        CHECK(std::abs(stored->lines[0].value / b - 1) < 1e-3); // stored with 4 digits
        CHECK(stored->lines[0].pass);
        CHECK(!stored->lines[1].pass);
    }
    CHECK(run_irqloop({"check", "--db", db, "--p-exceed", "150us=" + gt_prob(b * (1 + 1e-6))})
              .status == 0);
    CHECK(run_irqloop({"check", "--db", db, "--p-exceed", "150us=" + gt_prob(b * (1 - 1e-6))})
              .status == 3);
    // The same seed again, limits an order of magnitude either side of the first run's bound:
    // the same delays, measured again. A re-measured run's bound moves with what disturbed the
    // logger on this machine (a fifth either side failed 1 time in 4 beside other builds), so
    // the exact either-side check is the stored run's, above.
    auto again_over =
        run_irqloop(words({"--label", "b", "--fail-p-exceed", "150us=" + gt_prob(b * 10)}));
    INFO(again_over.out << again_over.err);
    CHECK(again_over.status == 0);
    auto again_under =
        run_irqloop(words({"--label", "c", "--fail-p-exceed", "150us=" + gt_prob(b / 10)}));
    INFO(again_under.out << again_under.err);
    CHECK(again_under.status == 3);
    // --no-db keeps no tail: refused before the first stimulus.
    auto nodb = run_irqloop({"run", "--no-db", "--samples", "10", "--fail-p-exceed", "1ms=1e-3"});
    CHECK(nodb.status == 2);
    CHECK_THAT(nodb.err, ContainsSubstring("--fail-p-exceed"));
    // Too few exceedances: the run is stored with its gate NOT CLAIMED, then exit 2.
    auto few =
        run_irqloop({"run", "--hw",
                     "sim:model=normal,mean=8us,sd=1us,spike_p=1e-4,spike_min=50us,"
                     "spike_max=60us,seed=5",
                     "--samples", "20k", "--interval", "10us", "--timeout", "2ms", "--db", db,
                     "--label", "few", "--progress", "none", "--fail-p-exceed", "100us=0.5"});
    INFO(few.out << few.err);
    CHECK(few.status == 2);
    CHECK_THAT(few.out, ContainsSubstring("NOT CLAIMED  (not claimed: the tail fit's exceedances "
                                          "check failed"));
    CHECK_THAT(few.err, ContainsSubstring("irqloop: gate P(>100us) on run 4: not claimed: the "
                                          "tail fit's exceedances check failed"));
    db::catalog cat({db});
    const auto stored = logger::stored_gates(cat.runs().back());
    REQUIRE(stored);
    CHECK(stored->lines.at(0).refused);
}
