// SPDX-License-Identifier: MIT
// --on-threshold actions: parsing, the holdoff, and real shell/signal/stop actions run off the
// offering thread.
#include "actions.hpp"
#include "error.hpp"
#include "load-process.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace irqloop::logger;
using Catch::Matchers::ContainsSubstring;
using irqloop::test::file_text;
using irqloop::test::temp_dir;

namespace
{

constexpr std::int64_t s = 1'000'000'000;

} // namespace

TEST_CASE("actions: the four kinds parse, and bad values are refused by name", "[soak]")
{
    auto a = parse_action("shell,command=echo a,b >> x");
    CHECK(a.kind == action_kind::shell);
    CHECK(a.command == "echo a,b >> x");
    a = parse_action("signal,pid=1234,num=USR1");
    CHECK(a.kind == action_kind::signal);
    CHECK(a.pid == 1234);
    CHECK(a.signum == SIGUSR1);
    CHECK(parse_action("signal,num=SIGTERM,pid=7").signum == SIGTERM);
    CHECK(parse_action("signal,pid=7,num=2").signum == 2);
    CHECK(parse_action("stop").kind == action_kind::stop);
    CHECK(parse_action("trace").kind == action_kind::trace);
    auto refused = [](const std::string& v) {
        try {
            parse_action(v);
        } catch (const irqloop::error& e) {
            CHECK(e.status() == 2);
            return e.message();
        }
        return std::string("accepted");
    };
    CHECK_THAT(refused("shell"), ContainsSubstring("shell needs command=CMD"));
    CHECK_THAT(refused("shell,command="), ContainsSubstring("shell needs command=CMD"));
    CHECK_THAT(refused("signal,pid=0,num=USR1"), ContainsSubstring("is not a process id"));
    CHECK_THAT(refused("signal,pid=12,num=FOO"), ContainsSubstring("num 'FOO' is not a signal"));
    CHECK_THAT(refused("signal,pid=12"), ContainsSubstring("signal needs pid=N and num=S"));
    CHECK_THAT(refused("signal,pid=12,num=1,x=2"), ContainsSubstring("unknown key 'x'"));
    CHECK_THAT(refused("stop,now"), ContainsSubstring("'stop' takes no keys"));
    CHECK_THAT(refused("reboot"), ContainsSubstring("unknown action 'reboot'"));
}

TEST_CASE("actions: a shell action writes its file exactly once per holdoff, and events record it",
          "[soak]")
{
    temp_dir dir;
    const std::string log = dir / "spikes.log";
    std::vector<irqloop::db::event_row> events;
    {
        action_runner r(
            {parse_action("shell,command=echo $IRQLOOP_SEQ $IRQLOOP_LATENCY_NS >> '" + log + "'")},
            1 * s, {});
        // Sample times 0, 0.5, 0.99, 1.0, 1.5, 2.2 s with a 1 s holdoff: fire at 0, 1.0, 2.2.
        CHECK(r.offer({10, 0, 50'000}));
        CHECK_FALSE(r.offer({11, s / 2, 60'000}));
        CHECK_FALSE(r.offer({12, s - s / 100, 70'000}));
        CHECK(r.offer({13, s, 80'000}));
        CHECK_FALSE(r.offer({14, s + s / 2, 90'000}));
        CHECK(r.offer({15, 2 * s + s / 5, 99'000}));
        r.finish();
        CHECK_FALSE(r.offer({16, 10 * s, 1})); // nothing after finish
        CHECK(r.fired() == 3);
        CHECK(r.suppressed() == 3);
        events = r.take_events();
    }
    CHECK(file_text(log) == "10 50000\n13 80000\n15 99000\n");
    REQUIRE(events.size() == 3);
    CHECK(events[0].kind == "action");
    CHECK(events[0].seq == 10);
    CHECK(events[0].value == 0);
    CHECK_THAT(events[0].detail, ContainsSubstring(": exit 0 at seq 10 (50.000 us)"));
    CHECK_THAT(events[1].detail, ContainsSubstring("2 earlier above threshold held off"));
    CHECK_THAT(events[2].detail, ContainsSubstring("1 earlier above threshold held off"));
}

TEST_CASE("actions: offer() returns while a shell action is still running", "[soak]")
{
    temp_dir dir;
    const std::string release = dir / "release", done = dir / "done";
    action_runner r({parse_action("shell,command=while [ ! -e '" + release +
                                  "' ]; do sleep 0.01; done; echo x >> '" + done + "'; exit 4")},
                    0, {});
    CHECK(r.offer({1, 0, 1}));
    CHECK(r.offer({2, 1, 1})); // holdoff 0: fires again, queued behind the first
    CHECK_FALSE(std::filesystem::exists(done));
    std::ofstream(release) << "go";
    r.finish();
    CHECK(file_text(done) == "x\nx\n");
    const auto ev = r.take_events();
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].value == 4);
    CHECK_THAT(ev[0].detail, ContainsSubstring("exit 4"));
}

TEST_CASE("actions: signal reaches its process, stop calls back, trace is recorded, a hung shell "
          "is ended",
          "[soak]")
{
    load_process victim({"while :; do sleep 0.05; done", 2 * s, 64});
    victim.start();
    std::atomic<int> stops{0};
    action_runner r(
        {parse_action("signal,pid=" + std::to_string(victim.pgid()) + ",num=TERM"),
         parse_action("stop"), parse_action("trace"), parse_action("shell,command=sleep 60")},
        5 * s, [&] { stops.fetch_add(1); }, s / 5);
    CHECK(r.offer({7, 100, 123'456}));
    r.finish(); // the sleep 60 gets the 0.2 s finish grace, then SIGTERM
    const auto ev = r.take_events();
    REQUIRE(ev.size() == 4);
    CHECK(ev[0].value == 0);
    CHECK_THAT(ev[0].detail, ContainsSubstring("signal SIGTERM to pid"));
    CHECK(stops.load() == 1);
    CHECK_THAT(ev[1].detail, ContainsSubstring("stop: the run ends"));
    CHECK_THAT(ev[2].detail, ContainsSubstring("trace"));
    CHECK(ev[3].value == 128 + SIGTERM);
    const auto v = victim.stop();
    CHECK(v.by_itself);
    CHECK(v.signal == SIGTERM);
}
