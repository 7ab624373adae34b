// SPDX-License-Identifier: MIT
// `irqloop campaign`: three phases on the sim board give three labelled runs and the compare
// table; killed during phase 2, a re-run resumes at phase 2 without repeating phase 1.
#include "db-query.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <SQLiteCpp/Database.h>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("campaign: three phases into one file, and a kill during phase 2 resumes at phase 2",
          "[run][cli][campaign]")
{
    temp_dir dir;
    const std::string db = dir / "night.db", ini = dir / "night.ini";
    std::ofstream(ini) << "db = " << db << "\n"
                       << "[idle]\nduration = 1s\nprogress = none\ntarget = sim board\n"
                       << "[load]\nduration = 4s\nprogress = none\nstats-interval = 200ms\n"
                       << "[after]\nsamples = 2000\nprogress = none\n";
    background_process first({IRQLOOP_BIN, "campaign", ini}, dir / "first.log");
    bool in_phase2 = false;
    for (int i = 0; i < 200 && !in_phase2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        try {
            in_phase2 =
                std::filesystem::exists(db) &&
                query_int(
                    db, "SELECT count(*) FROM runs WHERE label = 'load' AND status = 'running'") ==
                    1;
        } catch (const SQLite::Exception&) {
        }
    }
    INFO("the first campaign's output so far:\n" << file_text(dir / "first.log"));
    REQUIRE(in_phase2);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    first.signal(SIGKILL);
    CHECK(first.wait() == 128 + SIGKILL);
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'idle' AND status = 'complete'") ==
          1);
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'after'") == 0);

    auto again = run_process({IRQLOOP_BIN, "campaign", ini});
    INFO(again.out << again.err);
    REQUIRE(again.status == 0);
    CHECK_THAT(again.out,
               ContainsSubstring("campaign: phase 1/3 'idle': complete (run 1), skipped"));
    CHECK_THAT(again.out, ContainsSubstring("campaign: phase 2/3 'load'\n"));
    CHECK_THAT(again.out, ContainsSubstring("campaign: phase 3/3 'after'\n"));
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'idle'") == 1); // not repeated
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'load' AND status = 'complete'") ==
          1);
    CHECK(query_int(
              db, "SELECT count(*) FROM runs WHERE label = 'after' AND status = 'complete'") == 1);
    // The compare table, one row per label.
    CHECK_THAT(again.out, ContainsSubstring("label "));
    for (const char* l : {"\nidle ", "\nload ", "\nafter "})
        CHECK_THAT(again.out, ContainsSubstring(l));

    auto third = run_process({IRQLOOP_BIN, "campaign", ini});
    CHECK(third.status == 0);
    CHECK_THAT(third.out, ContainsSubstring("phase 3/3 'after': complete"));
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE status = 'complete'") == 3);
}

TEST_CASE("campaign: a bad file is refused with exit 2", "[cli][campaign]")
{
    temp_dir dir;
    const std::string ini = dir / "bad.ini";
    std::ofstream(ini) << "colour = red\n[idle]\nduration = 1s\n";
    auto r = run_process({IRQLOOP_BIN, "campaign", ini});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, ContainsSubstring("unknown top-level key 'colour'"));
    std::ofstream(ini) << "db = x.db\n[idle]\ndb = y.db\n";
    r = run_process({IRQLOOP_BIN, "campaign", ini});
    CHECK(r.status == 2);
    r = run_process({IRQLOOP_BIN, "campaign", dir / "none.ini"});
    CHECK(r.status == 2);
}
