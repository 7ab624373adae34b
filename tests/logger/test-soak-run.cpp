// SPDX-License-Identifier: MIT
// `irqloop run` on the sim board with the soak machinery: the preflight stored and enforced,
// a real load process (started after warm-up, stopped on every kind of end, no process of its
// group left), --on-threshold actions with their holdoff, and the events cap.
#include "db-query.hpp"
#include "proc-scan.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace
{

const std::string irqloop_bin = IRQLOOP_BIN;
const std::string trees = std::string(IRQLOOP_SOURCE_DIR) + "/tests/logger/doctor-trees/";

// The number after @p name in the "load started" event.
int load_started(const std::string& db, const std::string& name)
{
    const auto d =
        query_text(db, "SELECT detail FROM events WHERE kind = 'load' AND detail LIKE 'started%'");
    const auto at = d.find(name);
    REQUIRE(at != std::string::npos);
    return std::stoi(d.substr(at + name.size()));
}

// The process group named in the "load started" event.
int load_pgid(const std::string& db)
{
    return load_started(db, "process group ");
}

// The guard's pid named in the same event.
int load_guard(const std::string& db)
{
    return load_started(db, ", guard ");
}

bool wait_for_load_start(const std::string& db, double seconds)
{
    return wait_until(
        [&] {
            try {
                return std::filesystem::exists(db) &&
                       query_int(db, "SELECT count(*) FROM events WHERE kind = 'load'") > 0;
            } catch (const SQLite::Exception&) {
                return false; // not created yet
            }
        },
        seconds);
}

const std::vector<std::string> sim_args = {"--hw",
                                           "sim:model=fixed,value=5us",
                                           "--interval",
                                           "100us",
                                           "--stats-interval",
                                           "100ms",
                                           "--progress",
                                           "none"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& more)
{
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

/**
 * @brief A 2 s simulated run into @p db with the load @p load started after @p warmup samples,
 * required to end with status 0 (its messages shown when it does not).
 */
process_result run_with_load(const std::string& db, const std::string& warmup,
                             const std::string& load)
{
    auto r = run_irqloop(with(
        {"run", "--db", db, "--duration", "2s", "--warmup", warmup, "--load-cmd", load}, sim_args));
    INFO(r.err);
    REQUIRE(r.status == 0);
    return r;
}

} // namespace

TEST_CASE("run: the preflight is stored as preflight.* metadata and --strict-rt refuses a FAIL",
          "[run][cli][preflight]")
{
    temp_dir dir;
    const std::string db = dir / "pre.db";
    auto r = run_irqloop(with({"run", "--db", db, "--samples", "2000", "--strict-rt",
                               "--preflight-root", trees + "throttled"},
                              sim_args));
    CHECK(r.status == 2);
    CHECK_THAT(
        r.err,
        ContainsSubstring(
            "irqloop: preflight: FAIL sched.rt_throttling: on: 950000 us of every 1000000 us"));
    CHECK_THAT(r.err, ContainsSubstring(
                          "irqloop: run: preflight check sched.rt_throttling: on: 950000 us"));
    CHECK_FALSE(std::filesystem::exists(db));

    r = run_irqloop(
        with({"run", "--db", db, "--samples", "2000", "--preflight-root", trees + "throttled"},
             sim_args));
    INFO(r.err);
    REQUIRE(r.status == 0); // without --strict-rt a FAIL is printed and stored, not fatal
    CHECK_THAT(r.err, ContainsSubstring("irqloop: preflight: FAIL sched.rt_throttling"));
    CHECK(query_text(
              db, "SELECT value FROM run_metadata WHERE key = 'preflight.sched.rt_throttling'") ==
          "FAIL on: 950000 us of every 1000000 us");
    CHECK(query_int(db, "SELECT count(*) FROM run_metadata WHERE key LIKE 'preflight.%'") == 14);
}

TEST_CASE(
    "run: --load-cmd starts after the warm-up and is stopped at the --duration end, group and all",
    "[run][cli][load]")
{
    temp_dir dir;
    const std::string db = dir / "load.db";
    const auto r = run_with_load(db, "300", "echo load running; sleep 60 & sleep 60 & wait");
    CHECK_THAT(r.out, ContainsSubstring("load: killed by SIGTERM"));
    CHECK(query_text(db, "SELECT status FROM runs") == "complete");
    CHECK(query_text(db, "SELECT load FROM runs") ==
          "echo load running; sleep 60 & sleep 60 & wait");
    CHECK(query_int(db, "SELECT seq FROM events WHERE kind = 'load' AND detail LIKE 'started%'") >=
          300);
    CHECK(query_text(db, "SELECT detail FROM events WHERE kind = 'load' AND detail LIKE 'stopped%'")
              .rfind("stopped at the end of the run: killed by SIGTERM", 0) == 0);
    CHECK_THAT(
        query_text(db, "SELECT detail FROM events WHERE kind = 'load' AND detail LIKE 'stopped%'"),
        ContainsSubstring("output: load running"));
    CHECK(
        query_int(db, "SELECT value FROM events WHERE kind = 'load' AND detail LIKE 'stopped%'") ==
        128 + SIGTERM);
    CHECK_FALSE(group_alive(load_pgid(db)));
}

TEST_CASE(
    "run: SIGINT and SIGTERM of irqloop stop the load, and none of its processes outlives the run",
    "[run][cli][load][signal]")
{
    for (int sig : {SIGINT, SIGTERM}) {
        DYNAMIC_SECTION("signal " << sig)
        {
            temp_dir dir;
            const std::string db = dir / "sig.db";
            background_process p(with({irqloop_bin, "run", "--db", db, "--warmup", "100",
                                       "--load-cmd", "trap '' INT; while :; do sleep 0.05; done"},
                                      sim_args),
                                 dir / "log");
            REQUIRE(wait_for_load_start(db, 20));
            const int pg = load_pgid(db);
            CHECK(group_alive(pg));
            p.signal(sig);
            CHECK(p.wait() == 128 + sig);
            CHECK(query_text(db, "SELECT status FROM runs") == "interrupted");
            CHECK(query_int(
                      db,
                      "SELECT value FROM events WHERE kind = 'load' AND detail LIKE 'stopped%'") ==
                  128 + SIGTERM);
            CHECK_FALSE(group_alive(pg));
        }
    }
}

TEST_CASE("run: SIGKILL of irqloop leaves nothing of the load: its guard ends the group, "
          "orphans and children in new sessions within the grace + 1 s",
          "[run][cli][load][signal]")
{
    const double grace = 1.0;
    temp_dir dir;
    const std::string f1 = dir / "escapee1", f2 = dir / "escapee2";
    const auto loads = endless_loads(f1, f2);
    int n = 0;
    for (const auto& l : loads) {
        ++n;
        DYNAMIC_SECTION(l.name)
        {
            const std::string db = dir / ("kill9-" + std::to_string(n) + ".db");
            std::vector<int> groups, escapees;
            // Whatever happens below, nothing of this load is left running.
            struct cleanup {
                std::vector<int>&groups, &escapees;
                ~cleanup()
                {
                    for (int g : groups)
                        kill(-g, SIGKILL);
                    kill_escapees(escapees);
                }
            } clean{groups, escapees};
            background_process p(with({irqloop_bin, "run", "--db", db, "--warmup", "100",
                                       "--load-grace", "1s", "--load-cmd", l.command},
                                      sim_args),
                                 dir / "log");
            REQUIRE(wait_for_load_start(db, 20));
            const int pg = load_pgid(db), guard = load_guard(db);
            groups = {pg, guard};
            if (l.command.find("setsid") != std::string::npos) {
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                while ((read_pid(f1) <= 0 || read_pid(f2) <= 0) &&
                       std::chrono::steady_clock::now() < until)
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                escapees = {read_pid(f1), read_pid(f2)};
                REQUIRE(escapees[0] > 0);
                REQUIRE(escapees[1] > 0);
                CHECK(getpgid(escapees[0]) != pg);
                CHECK(getpgid(escapees[1]) != pg);
            }
            CHECK(group_alive(pg));
            CHECK(group_alive(guard));
            p.signal(SIGKILL);
            const auto t0 = std::chrono::steady_clock::now();
            CHECK(p.wait() == 128 + SIGKILL);
            double took = 0;
            std::vector<int> left;
            do {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                left = live_members(groups, escapees);
                took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            } while (!left.empty() && took < grace + 1.0);
            INFO(left.size() << " processes of the load left " << took << " s after the SIGKILL");
            CHECK(left.empty());
            if (l.ignores_term)
                CHECK(took >= grace); // they needed the SIGKILL at the end of the grace
            else
                CHECK(took < grace);
        }
    }
}

TEST_CASE("run: the guard is found next to irqloop, or in ../libexec/irqloop as installed; "
          "a missing guard means the load is not started",
          "[run][cli][load]")
{
    temp_dir dir;
    // The load starts on the recorder's first tick after the warm-up; a run of 3 s leaves
    // a busy machine (load average 10 has delayed that tick past a 0.3 s run) ample time.
    const std::string load = "echo guarded; while :; do sleep 0.05; done";
    auto run_env = [&](const std::string& env, const std::string& bin, const std::string& db,
                       const std::string& more) {
        return run_shell("env " + env + " " + shell_program(bin) + " run --db '" + db +
                         "' --hw sim:model=fixed,value=5us --interval 100us --samples 30000 "
                         "--warmup 100 --progress none --load-cmd '" +
                         load + "' " + more);
    };
    SECTION("beside irqloop (the build tree), without IRQLOOP_LOAD_GUARD")
    {
        const std::string db = dir / "beside.db";
        const auto r = run_env("-u IRQLOOP_LOAD_GUARD", irqloop_bin, db, "");
        INFO(r.out);
        REQUIRE(r.status == 0);
        CHECK(load_guard(db) > 0);
        CHECK_THAT(r.out, ContainsSubstring("load: killed by SIGTERM"));
    }
    SECTION("in ../libexec/irqloop from a copy of irqloop in bin/ (the installed layout)")
    {
        std::filesystem::create_directories(dir / "usr/bin");
        std::filesystem::create_directories(dir / "usr/libexec/irqloop");
        std::filesystem::copy_file(irqloop_bin, dir / "usr/bin/irqloop");
        std::filesystem::copy_file(IRQLOOP_LOAD_GUARD_BIN,
                                   dir / "usr/libexec/irqloop/irqloop-load-guard");
        const std::string db = dir / "installed.db";
        const auto r = run_env("-u IRQLOOP_LOAD_GUARD", dir / "usr/bin/irqloop", db, "");
        INFO(r.out);
        REQUIRE(r.status == 0);
        CHECK(load_guard(db) > 0);
        CHECK_THAT(r.out, ContainsSubstring("load: killed by SIGTERM"));
    }
    SECTION("no guard: the load is not started; --load-required then ends the run")
    {
        const std::string db = dir / "none.db";
        auto r = run_env("IRQLOOP_LOAD_GUARD=/nonexistent/guard", irqloop_bin, db, "");
        INFO(r.out);
        REQUIRE(r.status == 0);
        CHECK_THAT(query_text(db, "SELECT detail FROM events WHERE kind = 'load'"),
                   StartsWith("not started: ") &&
                       ContainsSubstring("start load: IRQLOOP_LOAD_GUARD=/nonexistent/guard is "
                                         "not an executable file"));
        const std::string db2 = dir / "none-required.db";
        r = run_env("IRQLOOP_LOAD_GUARD=/nonexistent/guard", irqloop_bin, db2, "--load-required");
        CHECK(r.status == 1);
        CHECK_THAT(r.out, ContainsSubstring("irqloop: run: the load could not be started "
                                            "(not started: "));
        CHECK(query_text(db2, "SELECT status FROM runs") == "interrupted");
    }
}

TEST_CASE("run: a load that dies early is recorded; with --load-required it ends the run",
          "[run][cli][load]")
{
    temp_dir dir;
    SECTION("without --load-required the run goes on to its end")
    {
        const std::string db = dir / "early.db";
        run_with_load(db, "100", "echo cannot reach target; exit 3");
        CHECK(query_text(db, "SELECT status FROM runs") == "complete");
        CHECK(query_int(db,
                        "SELECT value FROM events WHERE kind = 'load' AND detail LIKE 'exited%'") ==
              3);
        CHECK_THAT(
            query_text(db,
                       "SELECT detail FROM events WHERE kind = 'load' AND detail LIKE 'exited%'"),
            StartsWith("exited by itself: exit 3") &&
                ContainsSubstring("output: cannot reach target"));
    }
    SECTION("with --load-required the run stops, marked interrupted, exit 1")
    {
        const std::string db = dir / "req.db";
        const auto t0 = std::chrono::steady_clock::now();
        auto r = run_irqloop(with({"run", "--db", db, "--duration", "60s", "--warmup", "100",
                                   "--load-cmd", "sleep 0.5; exit 3", "--load-required"},
                                  sim_args));
        const double took =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK(r.status == 1);
        CHECK_THAT(
            r.err,
            ContainsSubstring(
                "irqloop: run: the load exited by itself (exit 3) and --load-required is set"));
        CHECK(took < 30);
        CHECK(query_text(db, "SELECT status FROM runs") == "interrupted");
        CHECK(query_int(db, "SELECT count(*) FROM events WHERE kind = 'signal' AND detail LIKE "
                            "'%--load-required%'") == 1);
        CHECK(query_int(db, "SELECT samples FROM runs") > 0);
    }
    SECTION("--load-required without --load-cmd is refused")
    {
        const std::string db = dir / "none.db";
        auto r = run_irqloop(with({"run", "--db", db, "--load-required"}, sim_args));
        CHECK(r.status == 2);
        CHECK_THAT(r.err, ContainsSubstring("--load-required given without --load-cmd"));
        CHECK_FALSE(std::filesystem::exists(db));
    }
}

TEST_CASE(
    "run: a seeded sim spike fires a shell action exactly once per holdoff, recorded as events",
    "[run][cli][actions]")
{
    temp_dir dir;
    const std::string spikes = dir / "spikes.txt";
    const std::string cmd =
        "shell,command=echo $IRQLOOP_SEQ $IRQLOOP_LATENCY_NS >> '" + spikes + "'";
    // 100 us stimuli with seeded 200..300 us spikes over a 150 us threshold, each action a line.
    auto spike_run = [&](const std::string& db, const char* duration, const char* holdoff) {
        return run_irqloop(
            {"run", "--db", db, "--hw",
             "sim:model=fixed,value=5us,spike_p=0.01,spike_min=200us,spike_max=300us,seed=7",
             "--interval", "100us", "--duration", duration, "--threshold", "150us", "--progress",
             "none", "--on-threshold", cmd, "--action-holdoff", holdoff});
    };
    SECTION("a holdoff longer than the run: one action for many spikes")
    {
        const std::string db = dir / "once.db";
        auto r = spike_run(db, "2s", "1h");
        INFO(r.err);
        REQUIRE(r.status == 0);
        CHECK(query_int(db, "SELECT above_threshold FROM runs") >= 2); // several spikes, one action
        const std::string text = file_text(spikes);
        CHECK(std::count(text.begin(), text.end(), '\n') == 1);
        CHECK(query_int(db, "SELECT count(*) FROM events WHERE kind = 'action'") == 1);
        CHECK(query_int(db, "SELECT value FROM events WHERE kind = 'action'") == 0);
        // The action's seq is a sample that was above the threshold.
        const auto seq = query_int(db, "SELECT seq FROM events WHERE kind = 'action'");
        CHECK(query_int(db, "SELECT count(*) FROM exceedances WHERE seq = " +
                                std::to_string(seq)) == 1);
        CHECK(text.rfind(std::to_string(seq) + " ", 0) == 0);
        CHECK_THAT(r.out, ContainsSubstring("actions: fired 1, held off "));
    }
    SECTION(
        "a 500 ms holdoff over 3 s: actions at least 500 ms of sample time apart, one line each")
    {
        const std::string db = dir / "holdoff.db";
        auto r = spike_run(db, "3s", "500ms");
        INFO(r.err);
        REQUIRE(r.status == 0);
        const std::string text = file_text(spikes);
        const auto lines = std::count(text.begin(), text.end(), '\n');
        const auto events = query_int(db, "SELECT count(*) FROM events WHERE kind = 'action'");
        CHECK(lines == events);
        CHECK(events >= 2);
        CHECK(events <= 7); // 3 s / 500 ms, plus the first
        SQLite::Database d(db, SQLite::OPEN_READONLY);
        SQLite::Statement q(d, "SELECT unix_ns FROM events WHERE kind = 'action' ORDER BY seq");
        std::int64_t prev = 0;
        while (q.executeStep()) {
            const auto t = q.getColumn(0).getInt64();
            if (prev)
                CHECK(t - prev >= 500'000'000);
            prev = t;
        }
    }
}

TEST_CASE("run: lost events stay under --max-events and the rest are counted", "[run][cli][lost]")
{
    temp_dir dir;
    const std::string db = dir / "cap.db";
    auto r = run_irqloop({"run", "--db", db, "--hw", "sim:model=fixed,value=5us,loss_p=0.5,seed=3",
                          "--interval", "20us", "--timeout", "100us", "--samples", "20000",
                          "--max-events", "20", "--progress", "none"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(query_int(
              db, "SELECT count(*) FROM events WHERE kind IN ('lost', 'disturbed', 'overflow')") ==
          20);
    const auto dropped = query_int(db, "SELECT value FROM events WHERE kind = 'capped'");
    CHECK(dropped > 0);
    CHECK_THAT(
        r.err,
        ContainsSubstring(
            std::to_string(dropped) +
            " lost/disturbed/overflow events over --max-events 20 were counted, not stored"));
    // The counters still hold every loss: more than the stored events can account for.
    CHECK(query_int(db, "SELECT lost FROM runs") >=
          query_int(db, "SELECT sum(value) FROM events WHERE kind = 'lost'"));
    CHECK(query_int(db, "SELECT lost FROM runs") ==
          query_int(db, "SELECT sum(lost) FROM intervals"));
}
