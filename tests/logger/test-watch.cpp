// SPDX-License-Identifier: MIT
// `irqloop watch` reads a file while `irqloop run` writes it, and ends cleanly without a
// running run.
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("watch: sees the counts of a running run grow, then ends cleanly with no running run",
          "[run][cli][watch]")
{
    temp_dir dir;
    const std::string db = dir / "w.db";
    background_process run({IRQLOOP_BIN, "run", "--db", db, "--duration", "6s", "--stats-interval",
                            "200ms", "--progress", "none", "--label", "watched"},
                           dir / "run.log");
    // Wait for the first commit.
    for (int i = 0; i < 100 && !std::filesystem::exists(db); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    auto w = run_process({IRQLOOP_BIN, "watch", "--db", db, "--count", "3", "--refresh", "1s"});
    INFO(w.out << w.err);
    INFO("the run's output so far:\n" << file_text(dir / "run.log"));
    REQUIRE(w.status == 0);
    std::vector<unsigned long long> samples;
    const std::regex re("samples ([0-9]+)  stimuli");
    for (auto it = std::sregex_iterator(w.out.begin(), w.out.end(), re);
         it != std::sregex_iterator(); ++it)
        samples.push_back(std::stoull((*it)[1]));
    REQUIRE(samples.size() == 3);
    CHECK(samples[0] < samples[1]);
    CHECK(samples[1] < samples[2]);
    CHECK_THAT(w.out, ContainsSubstring("run 1 (watched) running"));
    CHECK(run.wait() == 0);
    auto after = run_process({IRQLOOP_BIN, "watch", "--db", db});
    CHECK(after.status == 0);
    CHECK(after.out == "irqloop watch: no running run in " + db + "\n");
    auto missing = run_process({IRQLOOP_BIN, "watch", "--db", dir / "none.db"});
    CHECK(missing.status == 2);
    CHECK_FALSE(std::filesystem::exists(dir / "none.db"));
}
