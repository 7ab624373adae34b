// SPDX-License-Identifier: MIT
// Marks (issue 31): SIGUSR1 during a run stores a `mark` event with its sender and the
// stimulus count; the sampler's thread blocks it; the handler is the run's only.
#include "db-query.hpp"
#include "lines.hpp"
#include "run.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <pthread.h>
#include <thread>
#include <unistd.h>

using namespace irqloop;
using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;

namespace
{

/** A bare jumper that notes, on the sampler's thread (not its creator's), that it drives and
 *  whether that thread blocks SIGUSR1. */
class noting_jumper final : public hw::lines, public hw::polled_wire
{
public:
    noting_jumper() : hw::lines(hw::far_end{true, true}) {}
    void drive(bool high) noexcept override
    {
        if (std::this_thread::get_id() != owner_ && !driving_.load()) {
            sigset_t cur;
            pthread_sigmask(SIG_BLOCK, nullptr, &cur);
            usr1_blocked_.store(sigismember(&cur, SIGUSR1) == 1);
            driving_.store(true);
        }
        level_.store(high);
    }
    int sense() noexcept override { return level_.load() ? 1 : 0; }
    std::string describe() const override { return "jumper"; }
    bool driving() const { return driving_.load(); }
    bool usr1_blocked() const { return usr1_blocked_.load(); }

private:
    const std::thread::id owner_ = std::this_thread::get_id();
    std::atomic<bool> level_{false}, driving_{false}, usr1_blocked_{false};
};

} // namespace

TEST_CASE("run: SIGUSR1 during a run stores a mark event with its sender; the sampler's thread "
          "blocks it",
          "[run][marks]")
{
    temp_dir dir;
    const std::string db = dir / "marks.db";
    logger::run_options o;
    o.timing.samples = 0;
    o.timing.duration_ns = 60'000'000'000; // ended by the stop flag below, long before
    o.timing.interval_ns = 100'000;
    o.recording.db_path = db;
    o.rt.priority = 0; // no real-time settings: the test needs no privileges
    o.rt.mlock = false;
    o.rt.dma_latency = false;
    std::atomic<bool> stop{false};
    noting_jumper wire;
    std::thread marker([&] {
        // The handler is installed before the sampler is released: once it drives, a
        // SIGUSR1 is a mark, not the default action (which would end this test program).
        while (!wire.driving())
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        kill(getpid(), SIGUSR1);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        kill(getpid(), SIGUSR1);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop.store(true);
    });
    const auto out = logger::execute_run(o, wire, stop);
    marker.join();
    CHECK(out.status == db::run_status::interrupted);
    CHECK(wire.usr1_blocked());
    REQUIRE(query_int(db, "SELECT count(*) FROM events WHERE kind = 'mark'") == 2);
    CHECK(query_text(db, "SELECT group_concat(value) FROM (SELECT value FROM events WHERE kind "
                         "= 'mark' ORDER BY id)") == "1,2");
    const std::string me = "SIGUSR1 from pid " + std::to_string(getpid());
    CHECK_THAT(query_text(db, "SELECT detail FROM events WHERE kind = 'mark' AND value = 1"),
               ContainsSubstring("mark 1: " + me));
    // The second mark is at least 200 ms of 100 us intervals later: more stimuli, later time.
    CHECK(query_int(db, "SELECT (SELECT seq FROM events WHERE kind = 'mark' AND value = 2) - "
                        "(SELECT seq FROM events WHERE kind = 'mark' AND value = 1)") > 0);
    CHECK(query_int(db, "SELECT (SELECT unix_ns FROM events WHERE kind = 'mark' AND value = 2) "
                        "- (SELECT unix_ns FROM events WHERE kind = 'mark' AND value = 1)") >=
          150'000'000);
    // After the run the disposition is the one before it (the default here).
    struct sigaction now {
    };
    sigaction(SIGUSR1, nullptr, &now);
    CHECK(now.sa_handler == SIG_DFL);
}
