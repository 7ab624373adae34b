// SPDX-License-Identifier: MIT
#include "sim-raw-run.hpp"

#include "read.hpp"
#include "recorder.hpp"
#include "run-process.hpp"
#include "store.hpp"
#include "synthetic-run.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace irqloop::test
{
namespace
{

/** The raw samples of @p db's runs labelled @p label; REQUIREs @p samples of them. */
std::vector<db::sample_row> raw_of(const std::string& db, const std::string& label,
                                   std::size_t samples)
{
    db::catalog cat({db});
    std::vector<db::sample_row> raw;
    for (const auto& r : cat.runs())
        if (r.meta.label == label)
            cat.for_each_raw(r, [&](const db::sample_row& s) { raw.push_back(s); });
    REQUIRE(raw.size() == samples);
    return raw;
}

} // namespace

std::vector<db::sample_row> seeded_raw_run(const std::string& db, std::size_t samples,
                                           const std::string& label, int seed)
{
    const auto spec = "sim:model=normal,mean=8us,sd=1us,seed=" + std::to_string(seed);
    const auto run = run_irqloop({"run", "--hw", spec, "--samples", std::to_string(samples),
                                  "--interval", "100us", "--jitter", "10us", "--raw", "--label",
                                  label, "--progress", "none", "--db", db});
    INFO(run.out << run.err);
    REQUIRE(run.status == 0);
    return raw_of(db, label, samples);
}

std::vector<db::sample_row> scripted_raw_run(const std::string& db, std::size_t samples,
                                             const std::string& label, int seed,
                                             const std::vector<std::uint64_t>& lost)
{
    constexpr std::int64_t start = 1'767'225'600'000'000'000; // 2026-01-01 UTC
    constexpr std::int64_t interval = 100'000;
    {
        db::store st(db);
        char uuid[40];
        std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012d", seed);
        auto row = synthetic_run_row(uuid, label, start, "irqloop run (scripted)", "scripted");
        row.interval_ns = interval;
        row.jitter_ns = 10'000;
        row.samples_requested = samples;
        if (!lost.empty())
            row.timeout_ns = 50'000;
        const auto id = st.begin_run(row);
        auto cfg = synthetic_recorder_config(1'000'000'000, start);
        cfg.raw = true;
        logger::recorder rec(cfg, &st, id);
        std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
        std::uniform_int_distribution<std::int64_t> jitter(-10'000, 10'000);
        std::normal_distribution<double> latency(8'000, 1'000);
        std::vector<logger::sample> v;
        v.reserve(samples);
        for (std::uint64_t k = 0; k < samples; ++k) {
            logger::sample x{};
            x.seq = k;
            x.t0_cycles = std::uint64_t(1'000'000 + std::int64_t(k) * interval + jitter(rng));
            x.latency_cycles =
                std::uint64_t(std::max<long long>(1'000, std::llround(latency(rng))));
            x.bracket_cycles = 40;
            x.flags = k % 2 == 0 ? logger::sample::rising : 0;
            if (std::find(lost.begin(), lost.end(), k) != lost.end()) {
                x.latency_cycles = 0;
                x.flags |= logger::sample::lost;
            }
            v.push_back(x);
        }
        rec.add(v);
        const std::uint64_t end = 1'000'000 + std::uint64_t(samples) * interval;
        rec.finish(end);
        st.finish_run(id, db::run_status::complete, start + std::int64_t(end));
    }
    return raw_of(db, label, samples);
}

} // namespace irqloop::test
