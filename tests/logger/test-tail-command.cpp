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
#include <cstdio>
#include <string>
#include <utility>
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

namespace
{

// One figure and its printed interval after @p key in tail's output ("p = 1e-06 ", "end point:
// ", "shape "), in us (or the shape's units), or false when not printed so.
bool tail_e2e_figure(const std::string& out, const std::string& key, double f[3])
{
    const auto at = out.find(key);
    if (at == std::string::npos)
        return false;
    const char* s = out.c_str() + at + key.size();
    return std::sscanf(s, " %lf us 95 %% interval %lf us .. %lf us", &f[0], &f[1], &f[2]) == 3 ||
           std::sscanf(s, " %lf us (95 %% interval %lf us .. %lf us)", &f[0], &f[1], &f[2]) == 3 ||
           std::sscanf(s, " %lf (95 %% interval %lf .. %lf", &f[0], &f[1], &f[2]) == 3;
}

// A real sim run through the whole chain: irqloop run (the sim board, its latency model, the
// sampler, recorder and store), then irqloop tail on the stored run.
std::string tail_e2e(const test::temp_dir& dir, const std::string& name, const std::string& model,
                     const std::string& threshold)
{
    const std::string db = dir.file(name + ".db");
    const auto run = test::run_irqloop(
        {"run", "-q", "--hw", "sim:" + model, "-n", "150K", "-i", "20us", "--threshold", threshold,
         "--stats-interval", "200ms", "--priority", "0", "--no-dma-latency", "--db", db});
    INFO(run.out << run.err);
    REQUIRE(run.status == 0);
    const auto t = test::run_irqloop({"tail", "--db", db});
    REQUIRE(t.status == 0);
    return t.out;
}

// The printed interval holds @p truth, allowing for the 0.1 us (0.001) of the print.
bool tail_e2e_holds(const double f[3], double truth, double print_step)
{
    return f[1] - print_step / 2 <= truth && truth <= f[2] + print_step / 2;
}

} // namespace

TEST_CASE("tail end to end: sim runs of a uniform spike band (shape -1, end point 150 us) and a "
          "lognormal base (Gumbel domain): the true values inside the printed intervals",
          "[tail]")
{
    test::temp_dir dir;
    // Spikes uniform in 50-150 us at 6e-3 per sample: P(X > x) = 6e-3 (150 us - x) / 100 us,
    // a GPD of shape -1 ending at 150 us; the level at 1e-6 is 150 - 100 x 1e-6 / 6e-3 us.
    const auto uni = tail_e2e(dir, "uniform",
                              "model=normal,mean=8us,sd=1us,spike_p=6e-3,spike_min=50us,"
                              "spike_max=150us,seed=3",
                              "30us");
    INFO(uni);
    double f[3];
    REQUIRE(tail_e2e_figure(uni, "end point:", f));
    CHECK(tail_e2e_holds(f, 150, 0.1));
    REQUIRE(tail_e2e_figure(uni, "p = 1e-06 ", f));
    CHECK(tail_e2e_holds(f, 150 - 100 * 1e-6 / 6e-3, 0.1));
    REQUIRE(tail_e2e_figure(uni, "fit: generalized Pareto, shape", f));
    CHECK(tail_e2e_holds(f, -1, 0.001));

    // A lognormal of mean 10 us and sd 3 us: its levels are exp(mu + s z_p), s^2 = ln(1.09),
    // mu = ln(10 us) - s^2 / 2; a light tail, whose GPD shape tends to 0.
    const auto logn = tail_e2e(dir, "lognormal", "model=lognormal,mean=10us,sd=3us,seed=4", "18us");
    INFO(logn);
    const double s2 = std::log1p(0.09), mu = std::log(10.0) - s2 / 2;
    for (const auto& [key, z] : std::vector<std::pair<std::string, double>>{
             {"p = 1e-06 ", 4.753424308822899}, {"p = 1e-09 ", 5.997807015007686}}) {
        INFO(key);
        REQUIRE(tail_e2e_figure(logn, key, f));
        CHECK(tail_e2e_holds(f, std::exp(mu + std::sqrt(s2) * z), 0.1));
    }
    REQUIRE(tail_e2e_figure(logn, "fit: generalized Pareto, shape", f));
    CHECK(tail_e2e_holds(f, 0, 0.001));
}
