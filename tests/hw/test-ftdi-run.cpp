// SPDX-License-Identifier: MIT
// End to end: irqloop run on the simulated FT232H stores a run whose median matches the
// simulated far end, and report shows the ftdi metadata.
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

using Catch::Matchers::ContainsSubstring;
using irqloop::test::run_process;

TEST_CASE("ftdi end to end: irqloop run --hw ftdi:sim=ft232h --samples 20K, then report", "[ftdi]")
{
    irqloop::test::temp_dir dir;
    const std::string db = dir / "ftdi.db";
    // The simulated far end answers after normal(8 us, 1 us): its median is 8000 ns. Priority 0:
    // the sampler blocks in USB transfers and does not need SCHED_FIFO here.
    auto r = run_process({IRQLOOP_BIN, "run", "--hw",
                          "ftdi:sim=ft232h,model=normal,mean=8us,sd=1us,seed=5", "--samples", "20K",
                          "--db", db, "--progress", "none", "--priority", "0"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, ContainsSubstring("complete, 20000 samples"));
    CHECK_THAT(r.out, ContainsSubstring("lost 0"));

    auto rep = run_process({IRQLOOP_BIN, "report", "--db", db, "--unit", "ns", "--format", "csv"});
    INFO(rep.out << rep.err);
    REQUIRE(rep.status == 0);
    const double tick = 1e9 / 30e6;
    for (const char* key : {"ftdi.chip", "ftdi.tick_ns", "ftdi.window_ns", "ftdi.offset_ns"})
        CHECK_THAT(rep.out, ContainsSubstring(key));
    CHECK_THAT(rep.out, ContainsSubstring("ft232h"));
    CHECK_THAT(rep.out, ContainsSubstring("33.333"));
    // The stored median, from the report's summary.
    std::smatch m;
    REQUIRE(std::regex_search(rep.out, m, std::regex(R"(p50[^0-9\n]*([0-9]+(\.[0-9]+)?))")));
    const double p50 = std::strtod(m[1].str().c_str(), nullptr);
    std::printf("ftdi end to end: stored p50 %.1f ns, model median 8000 ns, tick %.1f ns\n", p50,
                tick);
    CHECK(std::abs(p50 - 8000.0) <= 2 * tick);
}
