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

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace irqloop;

namespace
{

enum class tail_twist { none, step_halfway, bursts };

// n draws of @p model, one every 10 us (windows of 0.2 s), through the recorder into @p st.
// step_halfway: the spikes' probability is 5 times higher in the second half; bursts: each
// spike is followed by four more on the next stimuli.
void tail_model_run(db::store& st, const std::string& uuid, const std::string& model,
                    std::uint64_t n, tail_twist twist = tail_twist::none)
{
    const std::int64_t start = 1'700'000'000'000'000'000;
    auto row = test::synthetic_run_row(uuid, "", start, "test", "test");
    row.backend = "sim:" + model;
    row.stats_interval_ns = 200'000'000;
    row.threshold_ns = 30'000;
    const auto id = st.begin_run(row);
    auto cfg = test::synthetic_recorder_config(200'000'000, start);
    cfg.threshold_ns = 30'000;
    logger::recorder rec(cfg, &st, id);
    hw::spec s("sim:" + model);
    auto m = hw::latency_model::from_spec(s);
    std::string hot_model = model;
    if (const auto at = hot_model.find("spike_p=4e-3"); at != std::string::npos)
        hot_model.replace(at, 12, "spike_p=2e-2");
    hw::spec s2("sim:" + hot_model);
    auto hot = hw::latency_model::from_spec(s2);
    std::vector<logger::sample> v;
    int burst_left = 0;
    double burst_value = 0;
    for (std::uint64_t seq = 0; seq < n; ++seq) {
        auto d = (twist == tail_twist::step_halfway && seq >= n / 2 ? hot : m).draw();
        if (twist == tail_twist::bursts && burst_left > 0) {
            d.delay_ns = burst_value * (1 - 0.01 * burst_left);
            --burst_left;
        } else if (twist == tail_twist::bursts && d.spike) {
            burst_left = 4;
            burst_value = d.delay_ns;
        }
        logger::sample x{};
        x.seq = seq;
        x.t0_cycles = seq * 10'000 + 1;
        x.latency_cycles = std::uint64_t(std::llround(d.delay_ns));
        x.bracket_cycles = 40;
        v.push_back(x);
    }
    rec.add(v);
    rec.finish(n * 10'000);
    st.finish_run(id, db::run_status::complete, start + std::int64_t(n) * 10'000);
}

const std::string gpd_model = "model=normal,mean=8us,sd=1us,spike_p=4e-3,spike_min=50us,"
                              "spike_tail=gpd,spike_scale=10us,spike_shape=0.2,seed=11";

} // namespace

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
