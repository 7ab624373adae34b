// SPDX-License-Identifier: MIT
// A run whose first stimulus comes late says so: the sampler's first drive() (on its own
// thread, after the run's window 0 began) is held for 1.5 s, and the run stores a late_start
// event and reports it; the same run without the stall does not.
#include "db-query.hpp"
#include "lines.hpp"
#include "run.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using namespace irqloop;
using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;

namespace
{

/** A bare jumper; the first drive() made on a thread other than its creator's (the sampler's
 *  first, after the set-up) sleeps stall_ms first. */
class stalling_jumper final : public hw::lines, public hw::polled_wire
{
public:
    explicit stalling_jumper(int stall_ms) : hw::lines(hw::far_end{true, true}), stall_ms_(stall_ms)
    {
    }
    void drive(bool high) noexcept override
    {
        if (std::this_thread::get_id() != owner_ && !stalled_.exchange(true))
            std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms_));
        level_.store(high);
    }
    int sense() noexcept override { return level_.load() ? 1 : 0; }
    std::string describe() const override { return "jumper"; }

private:
    const int stall_ms_;
    const std::thread::id owner_ = std::this_thread::get_id();
    std::atomic<bool> level_{false}, stalled_{false};
};

logger::run_options quiet_run(const std::string& db)
{
    logger::run_options o;
    o.timing.samples = 200;
    o.timing.interval_ns = 100'000;
    o.recording.db_path = db;
    o.rt.priority = 0; // no real-time settings: the test needs no privileges
    o.rt.mlock = false;
    o.rt.dma_latency = false;
    return o;
}

} // namespace

TEST_CASE("run: a first stimulus 1.5 s after the run began is a late_start event and an "
          "outcome flag; a prompt one is neither",
          "[run][late-start]")
{
    temp_dir dir;
    const std::string db = dir / "late.db";
    std::atomic<bool> stop{false};
    {
        stalling_jumper wire(1500);
        const auto out = logger::execute_run(quiet_run(db), wire, stop);
        CHECK(out.status == db::run_status::complete);
        CHECK(out.late_start);
        CHECK(out.first_stimulus_ns >= 1'500'000'000);
        CHECK(out.sampler_release_ns < out.first_stimulus_ns);
        CHECK(query_int(db, "SELECT count(*) FROM events WHERE run_id = 1 AND kind = "
                            "'late_start'") == 1);
        CHECK(query_int(db, "SELECT value FROM events WHERE run_id = 1 AND kind = "
                            "'late_start'") >= 1'500'000'000);
        CHECK_THAT(query_text(db, "SELECT detail FROM events WHERE kind = 'late_start'"),
                   ContainsSubstring("after the run began (sampler released after"));
    }
    {
        stalling_jumper wire(0);
        const auto out = logger::execute_run(quiet_run(db), wire, stop);
        CHECK(out.status == db::run_status::complete);
        CHECK_FALSE(out.late_start);
        CHECK(out.first_stimulus_ns >= 0);
        CHECK(out.first_stimulus_ns < logger::run_options::late_start_ns);
        CHECK(query_int(db, "SELECT count(*) FROM events WHERE run_id = 2 AND kind = "
                            "'late_start'") == 0);
    }
}
