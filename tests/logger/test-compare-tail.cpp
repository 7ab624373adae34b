// SPDX-License-Identifier: MIT
// compare --tail and report --tail (issue 25): each run's tail fit beside its measured figures,
// on stored runs of the sim board's latency model written through the recorder, read by the
// real binary; the figures are tail's own, and a run whose checks fail claims none.
#include "run-process.hpp"
#include "store.hpp"
#include "temp-dir.hpp"
#include "test-tail-runs.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace
{

// Two configurations with GPD spike tails (shape +0.2, scale 10 us; shape +0.1, scale 5 us)
// and the first with a step change halfway, whose fit is not claimed.
std::string compare_tail_db(irqloop::test::temp_dir& dir)
{
    using namespace irqloop;
    const auto path = dir.file("tail.db");
    db::store st(path);
    tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002521", tail_test::gpd_model,
                              300'000);
    tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002522",
                              "model=normal,mean=8us,sd=1us,spike_p=4e-3,spike_min=50us,"
                              "spike_tail=gpd,spike_scale=5us,spike_shape=0.1,seed=13",
                              300'000);
    tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002523", tail_test::gpd_model,
                              300'000, tail_test::tail_twist::step_halfway);
    return path;
}

// "  p = 1e-06      348.6 us   95 % interval 238.2 us .. 588.7 us" -> its figures in us.
bool compare_tail_level(const std::string& out, const std::string& p, double f[3])
{
    const auto at = out.find("  p = " + p + " ");
    return at != std::string::npos &&
           std::sscanf(out.c_str() + at + 6 + p.size(), " %lf us 95 %% interval %lf us .. %lf us",
                       &f[0], &f[1], &f[2]) == 3;
}

} // namespace

using namespace irqloop;

TEST_CASE("compare --tail: golden table of two configurations and a run whose fit is not "
          "claimed; the figures are tail's",
          "[tail]")
{
    test::temp_dir dir;
    const auto path = compare_tail_db(dir);
    const auto c =
        test::run_irqloop({"compare", "--db", path, "--columns", "run,samples,max", "--tail"});
    INFO(c.err);
    REQUIRE(c.status == 0);
    // The true levels: run 1 262.7 us at 1e-6 (50 us + 10 us / 0.2 x ((1e-6 / 4e-3)^-0.2 - 1)),
    // run 2 114.6 us (scale 5 us, shape 0.1); each interval holds its own.
    CHECK(c.out ==
          "run  samples  max (us)                              shape [95 %]                    "
          "1e-6 level (us) [95 %]                    1e-9 level (us) [95 %]\n"
          "---  -------  --------  ----------------------------------------  "
          "----------------------------------------  ----------------------------------------\n"
          "  1   300000   161.997                      0.162 [0.091, 0.243]                228.228 "
          "[185.098, 303.555]               727.273 [410.615, 1573.539]\n"
          "  2   300000    98.397                     0.062 [-0.003, 0.136]                 "
          "104.728 [94.313, 122.390]                177.342 [131.039, 288.024]\n"
          "  3   300000   258.273  not claimed (independence, stationarity)  not claimed "
          "(independence, stationarity)  not claimed (independence, stationarity)\n");
    // Each claimed run's cells are the figures irqloop tail prints for it.
    const auto csv = test::run_irqloop(
        {"compare", "--db", path, "--columns", "run,rl_1e-6,rl_1e-9", "--format", "csv"});
    INFO(csv.out);
    REQUIRE(csv.status == 0);
    for (const std::string run : {"1", "2"}) {
        const auto t = test::run_irqloop({"tail", "--db", path, "--run", run});
        REQUIRE(t.status == 0);
        double f6[3], f9[3], c6[3], c9[3];
        REQUIRE(compare_tail_level(t.out, "1e-06", f6));
        REQUIRE(compare_tail_level(t.out, "1e-09", f9));
        const auto line = csv.out.find("\n" + run + ",");
        REQUIRE(line != std::string::npos);
        REQUIRE(std::sscanf(csv.out.c_str() + line + 1 + run.size(),
                            ",\"%lf [%lf, %lf]\",\"%lf [%lf, %lf]\"", &c6[0], &c6[1], &c6[2],
                            &c9[0], &c9[1], &c9[2]) == 6);
        for (int i = 0; i < 3; ++i) {
            CHECK(std::abs(c6[i] - f6[i]) <= 0.05);
            CHECK(std::abs(c9[i] - f9[i]) <= 0.05);
        }
        // The true levels (GPD spikes above 50 us at 4e-3 per sample) inside the intervals.
        const double xi = run == "1" ? 0.2 : 0.1, sigma = run == "1" ? 10 : 5;
        const auto truth = [&](double p) {
            return 50 + sigma / xi * (std::pow(p / 4e-3, -xi) - 1);
        };
        CHECK((c6[1] <= truth(1e-6) && truth(1e-6) <= c6[2]));
        CHECK((c9[1] <= truth(1e-9) && truth(1e-9) <= c9[2]));
    }
    CHECK(csv.out.find("\n3,\"not claimed (independence, stationarity)\",") != std::string::npos);
}

TEST_CASE("compare --tail: --by label and the rt_eval preset are refused with status 2", "[tail]")
{
    test::temp_dir dir;
    const auto path = compare_tail_db(dir);
    const auto by = test::run_irqloop({"compare", "--db", path, "--tail", "--by", "label"});
    CHECK(by.status == 2);
    CHECK(by.err == "irqloop: bad --tail: a tail fit is one run's, not a group's pooled runs' "
                    "(use --by run)\n");
    const auto rt = test::run_irqloop({"compare", "--db", path, "--tail", "--preset", "rt_eval"});
    CHECK(rt.status == 2);
    CHECK(rt.err.find("irqloop: bad --tail: ") == 0);
}
