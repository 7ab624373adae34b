// SPDX-License-Identifier: MIT
// report --tail (issue 25): the report's tail section is what irqloop tail prints for the run,
// on stored runs of the sim board's latency model written through the recorder, read by the
// real binary.
#include "run-process.hpp"
#include "store.hpp"
#include "temp-dir.hpp"
#include "test-tail-runs.hpp"

#include <catch2/catch_test_macros.hpp>

#include <string>

using namespace irqloop;

TEST_CASE("report --tail: the section is tail's output for the run; --exceed adds P(latency > X)",
          "[tail]")
{
    test::temp_dir dir;
    const auto path = dir.file("tail.db");
    {
        // A GPD spike tail (shape +0.2), and the same with a step change halfway.
        db::store st(path);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002531", tail_test::gpd_model,
                                  300'000);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002532", tail_test::gpd_model,
                                  300'000, tail_test::tail_twist::step_halfway);
    }
    const auto t = test::run_irqloop({"tail", "--db", path, "--run", "1", "--exceed", "300us"});
    REQUIRE(t.status == 0);
    const auto r = test::run_irqloop({"report", "--db", path, "--run", "1", "--exceed", "300us"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto at = r.out.find("tail (irqloop tail");
    REQUIRE(at != std::string::npos);
    // Every line tail prints after its first is in the section, in order.
    const std::string body = t.out.substr(t.out.find('\n') + 1);
    CHECK(r.out.find(body.substr(0, body.size() - 1), at) != std::string::npos);
    CHECK(r.out.find("X = 300.0 us", at) != std::string::npos);
    CHECK(r.out.find("agreement: the two estimates agree", at) != std::string::npos);
    // The step-change run's section says what cannot be claimed.
    const auto s = test::run_irqloop({"report", "--db", path, "--run", "2", "--tail"});
    REQUIRE(s.status == 0);
    CHECK(s.out.find("stationarity  FAIL") != std::string::npos);
    CHECK(s.out.find("NOT CLAIMED") != std::string::npos);
    // Without --tail, no section: the default report stays as it was.
    const auto plain = test::run_irqloop({"report", "--db", path, "--run", "1"});
    CHECK(plain.out.find("tail (irqloop tail") == std::string::npos);
    // csv: the section's lines are comments.
    const auto csv =
        test::run_irqloop({"report", "--db", path, "--run", "1", "--tail", "--format", "csv"});
    CHECK(csv.out.find("\n# fit: generalized Pareto") != std::string::npos);
}
