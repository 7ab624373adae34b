// SPDX-License-Identifier: MIT
// The ftdi backend and floor runs, end to end through the irqloop binary on the chip
// simulator: report's floor-corrected figures never fall more than a tick below the target's
// truth and the raw ones never below it; later runs take the newest floor run on the same
// wiring into their offset and say which one.
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>
#include <utility>

using Catch::Matchers::ContainsSubstring;
using irqloop::test::run_process;

namespace
{

constexpr double tick = 1e9 / 30e6; // TCK 30 MHz

/** irqloop calibrate / run on the simulator: 400 samples, priority 0 (the sampler blocks in
 * USB transfers). */
irqloop::test::process_result invoke(const char* cmd, const std::string& hw, const std::string& db)
{
    auto r = run_process({IRQLOOP_BIN, cmd, "--hw", hw, "--samples", "400", "--interval", "0",
                          "--db", db, "--progress", "none", "--priority", "0"});
    INFO(cmd << " " << hw << "\n" << r.out << r.err);
    REQUIRE(r.status == 0);
    return r;
}

/** The report of @p run as CSV. */
std::string report(const std::string& db, int run)
{
    auto r = run_process({IRQLOOP_BIN, "report", "--db", db, "--run", std::to_string(run), "--unit",
                          "ns", "--format", "csv"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    return r.out;
}

/** A summary row "NAME (ns),RAW[,CORRECTED]". */
std::pair<double, std::optional<double>> figure(const std::string& rep, const std::string& name)
{
    std::smatch m;
    const std::regex row("\n" + name + R"( \(ns\),([-0-9.]+)(,([-0-9.]+))?)");
    REQUIRE(std::regex_search(rep, m, row));
    std::optional<double> corrected;
    if (m[3].matched)
        corrected = std::strtod(m[3].str().c_str(), nullptr);
    return {std::strtod(m[1].str().c_str(), nullptr), corrected};
}

/** A metadata row "KEY,VALUE". */
std::string meta(const std::string& rep, const std::string& key)
{
    const auto at = rep.find("\n" + key + ",");
    if (at == std::string::npos)
        return "";
    const auto from = at + key.size() + 2;
    return rep.substr(from, rep.find('\n', from) - from);
}

/** Raw figures at or above the truth, corrected ones at most a tick below it (2 ns of slack:
 * the simulator's pin times are whole ns). */
void check_bounds(const std::string& rep, double truth_min, double truth_max, bool want_floor)
{
    for (const char* name : {"min", "p50", "max"}) {
        const auto [raw, corrected] = figure(rep, name);
        const double truth = std::string(name) == "max" ? truth_max : truth_min;
        std::printf("  %s: raw %.0f, floor-corrected %s, truth %s %.0f\n", name, raw,
                    corrected ? std::to_string(*corrected).c_str() : "-",
                    std::string(name) == "max" ? "max" : "min", truth);
        INFO(name << " raw " << raw << " truth " << truth);
        CHECK(raw >= truth - 2);
        CHECK(corrected.has_value() == want_floor);
        if (corrected) {
            CHECK(*corrected >= truth - tick - 2);
            CHECK(*corrected <= raw);
        }
    }
}

} // namespace

TEST_CASE("ftdi floor: corrected >= truth - 1 tick and raw >= truth, with and without wire delay",
          "[ftdi]")
{
    for (int path : {0, 150}) {
        irqloop::test::temp_dir dir;
        const std::string db = dir / "floor.db";
        const std::string p = ",path=" + std::to_string(path) + "ns";
        INFO("path " << path << " ns");
        std::printf("ftdi floor, wires' delay %d ns:\n", path);
        // The jumper: a zero-delay far end through the same wires.
        invoke("calibrate", "ftdi:sim=ft232h,model=fixed,value=0" + p, db);
        // The target, its own latency 8 us, then uniform 5..9 us; offset=nominal: the floor
        // is not taken in, report corrects with it.
        invoke("run", "ftdi:sim=ft232h,offset=nominal,model=fixed,value=8us" + p, db);
        std::string rep = report(db, 2);
        CHECK(meta(rep, "ftdi.offset_source") == "nominal");
        check_bounds(rep, 8000, 8000, true);
        invoke("run", "ftdi:sim=ft232h,offset=nominal,model=uniform,min=5us,max=9us,seed=3" + p,
               db);
        check_bounds(report(db, 3), 5000, 5000, true);
        // offset=auto (the default): the floor's share is in the run's own offset, and report
        // does not subtract it again.
        invoke("run", "ftdi:sim=ft232h,model=fixed,value=8us" + p, db);
        rep = report(db, 4);
        CHECK_THAT(meta(rep, "ftdi.offset_source"), ContainsSubstring("floor run 1 ("));
        check_bounds(rep, 8000, 8000, true);
        const auto [raw, corrected] = figure(rep, "min");
        CHECK(corrected == raw); // nothing left to subtract
        if (path == 0) {
            // The jumpered answer shows in the first sample: the floor's minimum is the offset
            // the reading already excludes, and its share is 0.
            CHECK(meta(rep, "ftdi.floor_share_ns") == "0");
        } else {
            // 150 ns of wires: the jumper shows in sample 3 (66.7 + 3 x 33.3 = 166.7 ns); the
            // share is sample 2's time, 133 ns: proven, and below the true 150.
            CHECK(meta(rep, "ftdi.floor_share_ns") == "133");
        }
    }
}

TEST_CASE("ftdi floor: a run takes the newest floor run on its own wiring, and names it", "[ftdi]")
{
    irqloop::test::temp_dir dir;
    const std::string db = dir / "wiring.db";
    const std::string target = "ftdi:sim=ft232h,model=fixed,value=8us,path=150ns";
    // No floor run yet: the nominal offset.
    invoke("run", target, db);
    CHECK(meta(report(db, 1), "ftdi.offset_source") == "nominal");
    CHECK(meta(report(db, 1), "ftdi.floor_share_ns").empty());
    invoke("calibrate", "ftdi:sim=ft232h,model=fixed,value=0,path=150ns", db); // run 2
    // Another wiring (stimulus on ADBUS5): not this one's floor.
    invoke("calibrate", "ftdi:sim=ft232h,out=ADBUS5,model=fixed,value=0,path=300ns", db); // 3
    invoke("run", target, db);                                                            // run 4
    std::string rep = report(db, 4);
    CHECK_THAT(meta(rep, "ftdi.offset_source"), ContainsSubstring("floor run 2 ("));
    CHECK(meta(rep, "ftdi.floor_share_ns") == "133");
    CHECK(meta(rep, "ftdi.offset_ns") == "-66.333"); // 66.667 nominal - 133
    // A newer floor on the same wiring replaces it.
    invoke("calibrate", "ftdi:sim=ft232h,model=fixed,value=0,path=290ns", db); // run 5
    invoke("run", target, db);                                                 // run 6
    rep = report(db, 6);
    CHECK_THAT(meta(rep, "ftdi.offset_source"), ContainsSubstring("floor run 5 ("));
    // 290 ns: the jumper shows in sample 7 (66.7 + 7 x 33.3 = 300); share 66.7 + 6 x 33.3.
    CHECK(meta(rep, "ftdi.floor_share_ns") == "266");
    // (This run's wires are still 150 ns: a changed cable is what the wiring key cannot see,
    // hence "recalibrate after changing the wires" in docs/backends/ftdi.md.)
    // An explicit offset wins: no floor taken in.
    invoke("run", target + ",offset=70ns", db); // run 7
    rep = report(db, 7);
    CHECK(meta(rep, "ftdi.offset_source") == "given (offset=)");
    CHECK(meta(rep, "ftdi.offset_ns") == "70.000");
}
