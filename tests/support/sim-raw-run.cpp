// SPDX-License-Identifier: MIT
#include "sim-raw-run.hpp"

#include "read.hpp"
#include "run-process.hpp"

#include <catch2/catch_test_macros.hpp>

namespace irqloop::test
{

std::vector<db::sample_row> seeded_raw_run(const std::string& db, std::size_t samples,
                                           const std::string& label, int seed)
{
    const auto spec = "sim:model=normal,mean=8us,sd=1us,seed=" + std::to_string(seed);
    const auto run = run_irqloop({"run", "--hw", spec, "--samples", std::to_string(samples),
                                  "--interval", "100us", "--jitter", "10us", "--raw", "--label",
                                  label, "--progress", "none", "--db", db});
    INFO(run.out << run.err);
    REQUIRE(run.status == 0);
    db::catalog cat({db});
    std::vector<db::sample_row> raw;
    for (const auto& r : cat.runs())
        if (r.meta.label == label)
            cat.for_each_raw(r, [&](const db::sample_row& s) { raw.push_back(s); });
    REQUIRE(raw.size() == samples);
    return raw;
}

} // namespace irqloop::test
