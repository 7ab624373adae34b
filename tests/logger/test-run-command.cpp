// SPDX-License-Identifier: MIT
// `irqloop run` end to end through the real binary: bounds, bad input, lost responses,
// signals, and the shm wire to a separate irqloop-responder process.
#include "db-query.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace
{

const std::string irqloop_bin = IRQLOOP_BIN;
const std::string responder_bin = IRQLOOP_RESPONDER_BIN;

// A run that only a signal ends (50 us stimuli, 500 ms intervals, into @p db), sent @p sig after
// @p ms; its exit status.
int signalled_run(const temp_dir& dir, const std::string& db, const char* label, int ms, int sig)
{
    background_process p({irqloop_bin, "run", "--interval", "50us", "--stats-interval", "500ms",
                          "--db", db, "--progress", "none", "--label", label},
                         dir / "log");
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    p.signal(sig);
    return p.wait();
}

} // namespace

TEST_CASE(
    "run: bad options are refused with irqloop: what: why (hint) and exit 2, creating nothing",
    "[run][cli]")
{
    temp_dir dir;
    const std::string db = dir / "x.db";
    struct bad {
        std::vector<std::string> args;
        const char* expect;
    };
    const bad cases[] = {
        {{"--hw", "usb3000"}, "unknown backend"},
        {{"--hw", "sim:mean=fast"}, "key 'mean'"},
        {{"--hw", "sim:colour=red"}, "unknown key 'colour'"},
        {{"--duration", "8 fortnights"}, "bad value for --duration"},
        {{"--interval", "-1us"}, "bad value for --interval"},
        {{"--samples", "10", "--duration", "1s"}, "--samples and --duration both given"},
        {{"--samples", "2.5"}, "bad value for --samples"},
        {{"--timeout", "0"}, "bad value for --timeout"},
        {{"--trigger-above", "5us"}, "--trigger-above given without --trigger-line"},
        {{"--progress", "loud"}, "bad value for --progress"},
        {{"--frobnicate"}, "unrecognised option"},
    };
    for (const auto& c : cases) {
        auto args = c.args;
        args.insert(args.begin(), {"run", "--db", db});
        auto r = run_irqloop(args);
        INFO("args: " << args[3] << " ...; stderr: " << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, StartsWith("irqloop: "));
        CHECK_THAT(r.err, ContainsSubstring(c.expect));
        CHECK_FALSE(std::filesystem::exists(db));
    }
}

TEST_CASE("run: a dead wire is refused after the first 100 stimuli: exit 4, stored as failed",
          "[run][cli][lost]")
{
    temp_dir dir;
    const std::string db = dir / "dead.db";
    struct wire {
        std::string hw, lines;
    };
    // shm:name=nobody: no responder ever maps the segment; sim:loss_p=1: a board that never
    // answers. Both stop after 100 stimuli, not after the 100000 asked for.
    for (const auto& w : {wire{"shm:name=nobody", "STIM"}, wire{"sim:loss_p=1", "STIM"}}) {
        auto r = run_irqloop({"run", "--hw", w.hw, "--samples", "100k", "--timeout", "1ms", "--db",
                              db, "--progress", "none"});
        INFO(w.hw << ": " << r.out << r.err);
        CHECK(r.status == 4);
        CHECK(r.seconds < 10);
        CHECK_THAT(r.err, ContainsSubstring("irqloop: run: no answer: the first "));
        CHECK_THAT(r.err, ContainsSubstring(" stimuli on STIM timed out"));
        CHECK_THAT(r.err, ContainsSubstring("waiting for RESP"));
        CHECK_THAT(r.err, ContainsSubstring("(backend '" + w.hw.substr(0, 4)));
        CHECK_THAT(r.err, ContainsSubstring("is the responder running on the target? are STIM "
                                            "and RESP swapped? do the boards share a ground?"));
        CHECK_THAT(r.out, ContainsSubstring("failed, 0 samples"));
        // No sample, yet every lost answer proves at least the timeout: the max says so.
        CHECK_THAT(r.out, ContainsSubstring("min \xe2\x80\x94  avg \xe2\x80\x94  max "
                                            "\xe2\x89\xa5 1000.000 ("));
        const std::string last = "(SELECT max(id) FROM runs)";
        CHECK(query_text(db, "SELECT status FROM runs WHERE id = " + last) == "failed");
        CHECK(query_int(db, "SELECT stimuli FROM runs WHERE id = " + last) >= 100);
        CHECK(query_int(db, "SELECT min_ns IS NULL AND max_ns IS NULL AND warm_max_ns IS NULL "
                            "AND mean_ns IS NULL FROM runs WHERE id = " +
                                last) == 1);
        CHECK_THAT(
            query_text(db, "SELECT detail FROM events WHERE kind = 'error' AND run_id = " + last),
            StartsWith("no answer: the first "));
    }
}

TEST_CASE("run: the dead-wire check stops only a wire that never answered", "[run][cli][lost]")
{
    temp_dir dir;
    const std::string db = dir / "p.db";
    SECTION("half the answers lost: a lossy wire, not a dead one")
    {
        auto r = run_irqloop({"run", "--hw", "sim:loss_p=0.5,seed=3", "--samples", "400",
                              "--timeout", "1ms", "--db", db, "--progress", "none"});
        INFO(r.out << r.err);
        CHECK(r.status == 0);
        CHECK(query_text(db, "SELECT status FROM runs") == "complete");
        CHECK(query_int(db, "SELECT stimuli FROM runs") == 400);
        CHECK(query_int(db, "SELECT lost FROM runs") > 100);
    }
    SECTION("--allow-silent measures a silent wire to its end, and 0 samples still exit 4")
    {
        auto r = run_irqloop({"run", "--hw", "sim:loss_p=1", "--samples", "300", "--timeout", "1ms",
                              "--db", db, "--progress", "none", "--allow-silent"});
        INFO(r.out << r.err);
        CHECK(r.status == 4);
        CHECK_THAT(r.err, ContainsSubstring("no sample in the statistics: 300 stimuli, 300 lost"));
        CHECK(query_text(db, "SELECT status FROM runs") == "complete");
        CHECK(query_int(db, "SELECT lost FROM runs") == 300);
        CHECK(query_int(db, "SELECT sum(value) FROM events WHERE kind = 'lost'") == 300);
    }
    SECTION("a run shorter than the check that never got an answer is refused too")
    {
        auto r = run_irqloop({"run", "--hw", "sim:loss_p=1", "--samples", "20", "--timeout", "1ms",
                              "--db", db, "--progress", "none"});
        INFO(r.out << r.err);
        CHECK(r.status == 4);
        CHECK_THAT(r.err, ContainsSubstring("no answer: all 20 stimuli on STIM"));
        CHECK(query_text(db, "SELECT status FROM runs") == "failed");
    }
    SECTION("a run shorter than its warm-up has no WARM MAX: shown and stored as absent")
    {
        auto r = run_irqloop({"run", "--hw", "sim:model=fixed,value=0", "--samples", "50", "--db",
                              db, "--progress", "none"});
        INFO(r.out << r.err);
        CHECK(r.status == 0);
        CHECK_THAT(r.out, ContainsSubstring("warm max \xe2\x80\x94  stddev"));
        CHECK(query_int(db, "SELECT warm_max_ns IS NULL AND min_ns IS NOT NULL FROM runs") == 1);
    }
}

TEST_CASE("run: with a loss probability of 1e-3 the run completes and counts the losses",
          "[run][cli][lost]")
{
    temp_dir dir;
    const std::string db = dir / "p.db";
    // The simulated far end is computed on the logger's clock: a busy machine cannot make an
    // answer late, so every loss is a drawn one.
    auto r = run_irqloop({"run", "--hw", "sim:model=fixed,value=2us,loss_p=1e-3,seed=4", "--cpu",
                          "0", "--samples", "50k", "--interval", "5us", "--timeout", "200us",
                          "--db", db, "--progress", "none"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    auto lost = query_int(db, "SELECT lost FROM runs");
    // Binomial(50000, 1e-3): mean 50, sd 7.1; 5 sd either side. No answer is late: the far
    // end is computed, and a logger stall after a poll's read is no loss (the sampler polls
    // again), so only drawn losses count.
    CHECK(lost >= 15);
    CHECK(lost <= 85);
    CHECK(query_int(db, "SELECT stimuli FROM runs") == 50000);
    CHECK(query_int(db, "SELECT samples + lost + disturbed FROM runs") == 50000);
    // The summary line's MAX and WARM MAX are what the lost answers prove (at least the
    // timeout: no answer is late here), as report prints them; the lost answers after the
    // warm-up (1000 stimuli) counted from the stored bursts ("lost": value stimuli from seq).
    const auto after = query_int(db, "SELECT sum(CASE WHEN seq >= 1000 THEN value WHEN seq + "
                                     "value > 1000 THEN seq + value - 1000 ELSE 0 END) FROM "
                                     "events WHERE kind = 'lost'");
    CHECK(after > 0);
    CHECK_THAT(r.out, ContainsSubstring("  max \xe2\x89\xa5 200.000 (" + std::to_string(lost) +
                                        " lost)  warm max \xe2\x89\xa5 200.000 (" +
                                        std::to_string(after) + " lost after the warm-up)  "));
}

TEST_CASE("run: --duration bounds the run by time", "[run][cli]")
{
    temp_dir dir;
    const std::string db = dir / "d.db";
    auto r = run_irqloop(
        {"run", "--duration", "1500ms", "--interval", "50us", "--db", db, "--progress", "none"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.seconds < 10);
    auto stimuli = query_int(db, "SELECT stimuli FROM runs");
    CHECK(stimuli > 1000);
    CHECK(stimuli <= 30001);
    CHECK(query_int(db, "SELECT duration_ns FROM runs") == 1'500'000'000);
}

TEST_CASE("run: SIGINT stops cleanly, commits the open interval and marks the run interrupted",
          "[run][cli][signal]")
{
    temp_dir dir;
    const std::string db = dir / "int.db";
    int rc = signalled_run(dir, db, "sigint", 2500, SIGINT);
    CHECK(rc == 130);
    CHECK(query_text(db, "SELECT status FROM runs") == "interrupted");
    CHECK(query_int(db, "SELECT count(*) FROM intervals") >= 3);
    CHECK(query_int(db, "SELECT samples FROM runs") ==
          query_int(db, "SELECT sum(samples) FROM intervals"));
    CHECK(query_int(db, "SELECT count(*) FROM events WHERE kind = 'signal'") == 1);
    CHECK(query_int(db, "SELECT count(*) FROM histogram") > 0);
    CHECK(query_text(db, "PRAGMA integrity_check") == "ok");
}

TEST_CASE("run: after SIGKILL the file is intact, keeps committed intervals and is marked "
          "interrupted on next open",
          "[run][cli][signal]")
{
    temp_dir dir;
    const std::string db = dir / "kill.db";
    CHECK(signalled_run(dir, db, "sigkill", 2800, SIGKILL) == 128 + SIGKILL);
    CHECK(query_text(db, "PRAGMA integrity_check") == "ok");
    auto intervals = query_int(db, "SELECT count(*) FROM intervals");
    CHECK(intervals >= 3);
    CHECK(query_text(db, "SELECT status FROM runs") == "running");
    // Opening for writing recovers it: a second run into the same file.
    auto r = run_irqloop({"run", "--samples", "100", "--db", db, "--progress", "none"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(query_text(db, "SELECT status FROM runs WHERE label = 'sigkill'") == "interrupted");
    CHECK(query_int(db, "SELECT count(*) FROM intervals WHERE run_id = 1") == intervals);
    CHECK(query_int(db, "SELECT samples FROM runs WHERE label = 'sigkill'") ==
          query_int(db, "SELECT sum(samples) FROM intervals WHERE run_id = 1"));
}

TEST_CASE("run: the shm wire measures a separate irqloop-responder process end to end",
          "[run][cli][shm]")
{
    temp_dir dir;
    const std::string db = dir / "shm.db";
    const std::string name = "test" + std::to_string(getpid());
    for (const char* mode : {"poll", "event"}) {
        DYNAMIC_SECTION("responder mode " << mode)
        {
            // Both ends SCHED_FIFO: a loaded machine must not preempt the responder for a
            // whole timeout; 20k samples at 20 us stay well under RT throttling.
            background_process resp({responder_bin, "--hw", "shm:name=" + name + ",answer=follow",
                                     "--answer", "follow", "--mode", mode, "--priority", "70",
                                     "--report", "0"},
                                    dir / (std::string("resp-") + mode + ".log"));
            // Measure only once the responder has its wire open and its priority set (its
            // start line): a loaded machine can take far longer than any fixed sleep to get
            // there, and the run's dead-wire check would then end the run.
            REQUIRE(
                wait_for_text(dir / (std::string("resp-") + mode + ".log"), "; obtained ", 30.0));
            // The event-mode responder's drive() is a futex wake of microseconds, inside every
            // bracket: an explicit gap limit, as docs/backends/shm.md advises.
            auto r = run_irqloop({"run", "--hw", "shm:name=" + name + ",answer=follow", "--samples",
                                  "20k", "--interval", "20us", "--gap-limit", "100us", "--db", db,
                                  "--label", std::string("shm-") + mode, "--progress", "none"});
            INFO(r.out << r.err);
            CHECK(r.status == 0);
            resp.signal(SIGTERM);
            CHECK(resp.wait() == 0);
            const std::string where = " FROM runs WHERE label = 'shm-" + std::string(mode) + "'";
            CHECK(query_int(db, "SELECT stimuli" + where) == 20000);
            // A shared, loaded machine can preempt the responder past the timeout now and then.
            CHECK(query_int(db, "SELECT lost" + where) <= 1000);
            CHECK(query_int(db, "SELECT samples" + where) > 10000);
            CHECK(query_text(db, "SELECT backend" + where) ==
                  "shm:name=" + name + ",answer=follow");
        }
    }
    shm_unlink(("/irqloop-" + name).c_str());
}
