// SPDX-License-Identifier: MIT
// Stored runs with a tail known in closed form, for the tail and gate tests: draws of the sim
// board's latency model through the recorder into a real SQLite file, with an optional twist
// (a step change halfway, spikes in bursts) that the tail fit's checks must catch.
#pragma once

#include "recorder.hpp"
#include "sim/latency-model.hpp"
#include "spec.hpp"
#include "store.hpp"
#include "synthetic-run.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace irqloop::tail_test
{

enum class tail_twist { none, step_halfway, bursts };

// n draws of @p model, one every 10 us (windows of 0.2 s), through the recorder into @p st.
// step_halfway: the spikes' probability is 5 times higher in the second half; bursts: each
// spike is followed by four more on the next stimuli. @p label: the run's label.
inline void tail_model_run(db::store& st, const std::string& uuid, const std::string& model,
                           std::uint64_t n, tail_twist twist = tail_twist::none,
                           const std::string& label = "")
{
    const std::int64_t start = 1'700'000'000'000'000'000;
    auto row = test::synthetic_run_row(uuid, label, start, "test", "test");
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

inline const std::string gpd_model = "model=normal,mean=8us,sd=1us,spike_p=4e-3,spike_min=50us,"
                                     "spike_tail=gpd,spike_scale=10us,spike_shape=0.2,seed=11";

} // namespace irqloop::tail_test
