// SPDX-License-Identifier: MIT
// `irqloop tail` end to end on stored runs: draws from the sim board's latency model through
// the recorder into a real SQLite file, then the real binary reads and fits them.
#include "read.hpp"
#include "recorder.hpp"
#include "run-process.hpp"
#include "sim/latency-model.hpp"
#include "spec.hpp"
#include "store.hpp"
#include "synthetic-run.hpp"
#include "tail-command.hpp"
#include "tail-fit.hpp"
#include "temp-dir.hpp"
#include "test-tail-data.hpp"
#include "test-tail-runs.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace irqloop;
using irqloop::tail_test::gpd_model;
using irqloop::tail_test::tail_model_run;
using irqloop::tail_test::tail_twist;

TEST_CASE("tail: the stored run's fit is the fit of the draws it was made from", "[tail]")
{
    test::temp_dir dir;
    const auto path = dir.file("tail.db");
    {
        db::store st(path);
        tail_model_run(st, "00000000-0000-4000-8000-000000002501", gpd_model, 300'000);
    }
    db::catalog cat({path});
    const auto d = logger::read_tail_data(cat, cat.runs().front());
    const auto direct = tail_test::draw_tail(gpd_model, 300'000, 30'000, 20'000);
    CHECK(d.samples == direct.samples);
    CHECK(d.exact.size() == direct.exact.size());
    CHECK(d.window_samples.size() == 15);
    const auto a = analysis::fit_tail(d), b = analysis::fit_tail(direct);
    CHECK(a.params.threshold_ns == b.params.threshold_ns);
    CHECK(a.params.xi == b.params.xi);
    CHECK(a.params.sigma_ns == b.params.sigma_ns);
    CHECK(a.trustworthy());

    const auto r = test::run_irqloop({"tail", "--db", path, "--exceed", "300us"});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("return levels") != std::string::npos);
    CHECK(r.out.find("X = 300.0 us") != std::string::npos);
    CHECK(r.out.find("no finite upper bound") != std::string::npos);
    // The second estimate, from the 15 windows' maxima, agrees with the first.
    CHECK(r.out.find("block maxima: generalized extreme value fit to 15 window maxima (20000 "
                     "samples each)") != std::string::npos);
    CHECK(r.out.find("agreement: the two estimates agree") != std::string::npos);
    CHECK(r.out.find("NOT CLAIMED") == std::string::npos);
    CHECK(r.out.find("FAIL") == std::string::npos);
}

TEST_CASE("tail: a step change, bursts and too few exceedances say what cannot be claimed",
          "[tail]")
{
    test::temp_dir dir;
    const auto path = dir.file("tail.db");
    {
        db::store st(path);
        tail_model_run(st, "00000000-0000-4000-8000-000000002502", gpd_model, 300'000,
                       tail_twist::step_halfway);
        tail_model_run(st, "00000000-0000-4000-8000-000000002503", gpd_model, 300'000,
                       tail_twist::bursts);
        tail_model_run(st, "00000000-0000-4000-8000-000000002504",
                       "model=normal,mean=8us,sd=1us,spike_p=1e-4,spike_min=50us,seed=3", 300'000);
    }
    auto step = test::run_irqloop({"tail", "--db", path, "--run", "1"});
    INFO(step.out);
    CHECK(step.status == 0);
    CHECK(step.out.find("stationarity  FAIL") != std::string::npos);
    CHECK(step.out.find("NOT CLAIMED") != std::string::npos);
    auto burst = test::run_irqloop({"tail", "--db", path, "--run", "2"});
    INFO(burst.out);
    CHECK(burst.out.find("independence  FAIL") != std::string::npos);
    CHECK(burst.out.find("clusters of") != std::string::npos);
    CHECK(burst.out.find("NOT CLAIMED") != std::string::npos);
    auto few = test::run_irqloop({"tail", "--db", path, "--run", "3"});
    INFO(few.out);
    CHECK(few.out.find("exceedances   FAIL") != std::string::npos);
    CHECK(few.out.find("no tail estimate") != std::string::npos);
    CHECK(few.out.find("return levels") == std::string::npos);
}

TEST_CASE("tail: bad arguments are refused with status 2 and a hint", "[tail]")
{
    auto r = test::run_irqloop({"tail", "--db", "/nonexistent/x.db"});
    CHECK(r.status == 2);
    r = test::run_irqloop({"tail", "--confidence", "1.5"});
    CHECK(r.status == 2);
    CHECK(r.err.find("irqloop: bad value for --confidence: '1.5'") != std::string::npos);
    r = test::run_irqloop({"tail", "--threshold", "fast"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--threshold") != std::string::npos);
    r = test::run_irqloop({"tail", "--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("--exceed") != std::string::npos);
}
