// SPDX-License-Identifier: MIT
// `irqloop doctor` on fake /sys and /proc trees (tests/logger/doctor-trees/, written by
// make-trees.sh there): golden outputs, exit statuses, and the busy-sibling window.
#include "golden.hpp"
#include "preflight.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

using namespace irqloop::test;
using namespace irqloop::logger;
using Catch::Matchers::ContainsSubstring;

namespace
{

const std::string trees = std::string(IRQLOOP_SOURCE_DIR) + "/tests/logger/doctor-trees/";

void check_golden(const std::string& name, const std::string& actual)
{
    const std::string path = golden_path("doctor", name);
    if (rewrite_golden(path, actual))
        return;
    INFO("golden file " << path
                        << " (regenerate: IRQLOOP_UPDATE_GOLDEN=1 irqloop-tests '[doctor]')");
    REQUIRE(std::filesystem::exists(path));
    CHECK(file_text(path) == actual);
}

} // namespace

TEST_CASE("doctor prints the golden verdicts of four fake systems and exits 3 only on a FAIL",
          "[doctor]")
{
    struct golden_case {
        const char* tree;
        const char* cpu;
        int status;
    };
    for (const auto& gc : {golden_case{"rt-logger", "2", 0}, golden_case{"laptop", "1", 3},
                           golden_case{"laptop", "-1", 3}, golden_case{"throttled", "1", 3},
                           golden_case{"vm", "1", 0}}) {
        const std::string name = std::string(gc.tree) + "-cpu" + gc.cpu + ".txt";
        DYNAMIC_SECTION(name)
        {
            auto r = run_process({IRQLOOP_BIN, "doctor", "--root", trees + gc.tree, "--cpu", gc.cpu,
                                  "--busy-window", "0"});
            INFO(r.err);
            CHECK(r.status == gc.status);
            CHECK(r.err.empty());
            check_golden(name, r.out);
        }
    }
}

TEST_CASE("doctor: each fake system shows the trouble it was built with", "[doctor]")
{
    auto level_of = [](const std::string& tree, int cpu, const std::string& key) {
        preflight_options o;
        o.root = trees + tree;
        o.cpu = cpu;
        o.busy_window_ms = 0;
        for (const auto& c : run_preflight(o))
            if (c.key == key)
                return std::string(level_name(c.level));
        return std::string("missing");
    };
    const auto rt = [&] {
        preflight_options o;
        o.root = trees + "rt-logger";
        o.cpu = 2;
        o.busy_window_ms = 0;
        return run_preflight(o);
    }();
    CHECK(worst_level(rt) == check_level::ok);
    CHECK(level_of("laptop", 1, "cpu.governor") == "WARN");
    CHECK(level_of("laptop", 1, "cpu.smt") == "WARN");
    CHECK(level_of("laptop", 1, "irq.balance") == "WARN");
    CHECK(level_of("throttled", 1, "sched.rt_throttling") == "FAIL");
    CHECK(level_of("rt-logger", 2, "sched.rt_throttling") == "OK");
    CHECK(level_of("vm", 1, "msr.smi") == "WARN");
    CHECK(level_of("rt-logger", 2, "msr.smi") == "OK");
    CHECK(level_of("vm", 1, "clock.tsc") == "WARN");
    // Every check has a hint exactly when it warns or fails.
    for (const char* t : {"rt-logger", "laptop", "throttled", "vm"}) {
        preflight_options o;
        o.root = trees + t;
        o.cpu = 1;
        o.busy_window_ms = 0;
        for (const auto& c : run_preflight(o)) {
            INFO(t << " " << c.key);
            const bool bad = c.level == check_level::warn || c.level == check_level::fail;
            CHECK(c.hint.empty() == !bad);
        }
    }
}

TEST_CASE("doctor: an SMT sibling that gets busy during the window is a FAIL", "[doctor]")
{
    temp_dir dir;
    std::filesystem::copy(trees + "laptop", dir.path(), std::filesystem::copy_options::recursive);
    const std::string stat = dir / "proc/stat";
    const std::string before = file_text(stat);
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        // cpu5 (the sibling of cpu1) spends 300 of the next 400 ticks busy.
        std::string after = before;
        const auto at = after.find("cpu5 ");
        const auto eol = after.find('\n', at);
        after.replace(at, eol - at, "cpu5 550 0 125 22600 25 0 2 0 0 0");
        std::ofstream(stat + ".new") << after;
        std::filesystem::rename(stat + ".new", stat);
    });
    preflight_options o;
    o.root = dir.path();
    o.cpu = 1;
    o.busy_window_ms = 600;
    const auto checks = run_preflight(o);
    writer.join();
    bool seen = false;
    for (const auto& c : checks)
        if (c.key == "cpu.smt") {
            seen = true;
            CHECK(c.level == check_level::fail);
            CHECK_THAT(c.value, ContainsSubstring("busy (75%)"));
        }
    CHECK(seen);
}

TEST_CASE("doctor: an offline --cpu and a missing root are refused with exit 2", "[doctor]")
{
    auto r = run_process({IRQLOOP_BIN, "doctor", "--root", trees + "vm", "--cpu", "7"});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, ContainsSubstring(
                          "irqloop: bad value for --cpu: '7' is not an online CPU (online: 0-1)"));
    r = run_process({IRQLOOP_BIN, "doctor", "--root", trees + "no-such-tree"});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, ContainsSubstring("is not a directory"));
    r = run_process({IRQLOOP_BIN, "doctor", "--cpu", "-2"});
    CHECK(r.status == 2);
}

TEST_CASE("doctor: preflight metadata keys are preflight.<check> with the level first", "[doctor]")
{
    preflight_options o;
    o.root = trees + "vm";
    o.cpu = 1;
    o.busy_window_ms = 0;
    const auto m = preflight_metadata(run_preflight(o));
    REQUIRE(m.size() == 14);
    CHECK(m[0].first == "preflight.cpu.isolated");
    CHECK(m[0].second == "OK cpu1 isolated (isolated: 1)");
    CHECK(m[11].first == "preflight.msr.smi");
    CHECK(m[11].second.rfind("WARN no /dev/cpu/1/msr", 0) == 0);
}
