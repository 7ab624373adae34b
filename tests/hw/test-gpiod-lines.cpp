// SPDX-License-Identifier: MIT
//
// The gpiod backend against a real kernel. Tests that need lines look for the testbed's
// irqloop-wire chip (hw/testbed/irqloop-wire.c: lines 2n and 2n+1 wired together) and SKIP
// without it; tests/testbed runs them inside QEMU where it is loaded (scenario gpiod-unit).
#include "error.hpp"
#include "gpiod/gpiod-lines.hpp"
#include "open-as.hpp"
#include "registry.hpp"
#include "spec.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <gpiod.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <pthread.h>
#include <signal.h>
#include <string>
#include <thread>

using namespace irqloop;
using namespace irqloop::hw;
using Catch::Matchers::ContainsSubstring;

namespace
{

/** The irqloop-wire chip's name (gpiochipN), or empty. */
std::string wire_chip()
{
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
        auto name = e.path().filename().string();
        if (name.rfind("gpiochip", 0) != 0)
            continue;
        std::unique_ptr<gpiod_chip, void (*)(gpiod_chip*)> chip(gpiod_chip_open(e.path().c_str()),
                                                                gpiod_chip_close);
        if (!chip)
            continue;
        std::unique_ptr<gpiod_chip_info, void (*)(gpiod_chip_info*)> info(
            gpiod_chip_get_info(chip.get()), gpiod_chip_info_free);
        if (info && std::string(gpiod_chip_info_get_label(info.get())) == "irqloop-wire")
            return name;
    }
    return {};
}

std::string need_wire_chip()
{
    auto chip = wire_chip();
    if (chip.empty()) {
        bool any = false;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator("/dev", ec))
            any = any || e.path().filename().string().rfind("gpiochip", 0) == 0;
        if (!any)
            SKIP("no GPIO chip on this machine (tests/testbed runs these under QEMU)");
        SKIP("no irqloop-wire GPIO chip here (load hw/testbed/irqloop-wire.ko)");
    }
    return chip;
}

/** The message and status of the irqloop::error that opening @p spec_text throws. */
irqloop::error open_error(const std::string& spec_text, role r = role::logger)
{
    try {
        open_lines(spec_text, r);
    } catch (const irqloop::error& e) {
        return e;
    }
    FAIL("opening '" << spec_text << "' did not fail");
    throw; // not reached
}

/**
 * @brief Opening @p spec_text is refused as bad input (exit status 2) with a message that
 * contains each of @p says.
 */
void check_refused(const std::string& spec_text, std::initializer_list<std::string> says)
{
    const auto e = open_error(spec_text);
    CHECK(e.status() == exit_usage);
    for (const auto& s : says)
        CHECK_THAT(e.message(), ContainsSubstring(s));
}

/** Holds one line as an input with a consumer name of our choice, like another program. */
struct foreign_holder {
    std::unique_ptr<gpiod_line_request, void (*)(gpiod_line_request*)> req{
        nullptr, gpiod_line_request_release};

    foreign_holder(const std::string& chip, unsigned offset, const char* consumer)
    {
        std::unique_ptr<gpiod_chip, void (*)(gpiod_chip*)> c(
            gpiod_chip_open(("/dev/" + chip).c_str()), gpiod_chip_close);
        REQUIRE(c);
        auto* settings = gpiod_line_settings_new();
        auto* line_cfg = gpiod_line_config_new();
        auto* req_cfg = gpiod_request_config_new();
        gpiod_line_config_add_line_settings(line_cfg, &offset, 1, settings);
        gpiod_request_config_set_consumer(req_cfg, consumer);
        req.reset(gpiod_chip_request_lines(c.get(), req_cfg, line_cfg));
        gpiod_request_config_free(req_cfg);
        gpiod_line_config_free(line_cfg);
        gpiod_line_settings_free(settings);
        REQUIRE(req);
    }
};

} // namespace

TEST_CASE("gpiod refuses a chip that does not exist, naming it, with exit status 2", "[gpiod]")
{
    check_refused("gpiod:chip=no-such-chip-xyz,out=1,in=2",
                  {"no such chip 'no-such-chip-xyz'", "out=1"});
}

TEST_CASE("gpiod has no default chip: an offset without one is refused, and the default lines "
          "are the Pi header's line names, looked up on every chip",
          "[gpiod]")
{
    // Refused before any chip is opened, here and on the testbed alike: the same offset is
    // another pin on another board (a Pi 5's gpiochip0 is the SoC's own controller).
    check_refused("gpiod:out=5,in=6", {"out=5", "offset 5 without a chip", "chip=", "GPIO17"});
    check_refused("gpiod:out=gpiochip0:5,in=6", {"in=6", "offset 6 without a chip"});
    // The defaults are names: with no chip naming a line GPIO17 (no chip here; the testbed's
    // irqloop-wire names its lines wire0a...), the refusal names the line, not an offset of
    // gpiochip0.
    check_refused("gpiod:", {"out=GPIO17", "no chip has a line named 'GPIO17'"});
    check_refused("gpiod:out=no-such-name-xyz", {"no chip has a line named 'no-such-name-xyz'"});
}

TEST_CASE("gpiod refuses bad key values before touching hardware", "[gpiod]")
{
    check_refused("gpiod:chip=x,out=1,in=2,bias=sideways", {"bias", "pull-up"});
    auto edges = open_error("gpiod:chip=x,out=1,in=2,edges=some");
    CHECK_THAT(edges.message(), ContainsSubstring("edges"));
    auto events = open_error("gpiod:chip=x,out=1,in=2,events=some");
    CHECK(events.status() == exit_usage);
    CHECK_THAT(events.message(), ContainsSubstring("events"));
    CHECK_THAT(events.hint(), ContainsSubstring("rising"));
}

TEST_CASE("gpiod refuses an unknown key before opening a chip", "[gpiod]")
{
    // Were the chip opened first, the error would be "no such chip".
    auto e = open_error("gpiod:chip=no-such-chip-xyz,out=1,in=2,evnts=none");
    CHECK(e.status() == exit_usage);
    CHECK_THAT(e.message(), ContainsSubstring("unknown key 'evnts'"));
    CHECK_THAT(e.message(), !ContainsSubstring("no such chip"));
}

TEST_CASE("gpiod events= asks for kernel edge events; edges= is the far end's", "[gpiod]")
{
    auto take = [](const std::string& text, role r) {
        spec s(text);
        auto o = take_gpiod_options(s, r);
        s.finish();
        return o;
    };
    CHECK(take("gpiod", role::logger).events == gpiod_events::none);
    CHECK(take("gpiod", role::responder).events == gpiod_events::both);
    CHECK(take("gpiod:events=both", role::logger).events == gpiod_events::both);
    CHECK(take("gpiod:events=none", role::responder).events == gpiod_events::none);
    // One edge: the kernel filters the other before any wake-up.
    CHECK(take("gpiod:events=rising", role::responder).events == gpiod_events::rising);
    CHECK(take("gpiod:events=falling", role::responder).events == gpiod_events::falling);
    auto far = take("gpiod:edges=rising", role::logger).answers;
    CHECK_FALSE(far.both_edges);
    CHECK_FALSE(far.follow);
    CHECK(take("gpiod:answer=follow", role::logger).answers.follow);
    // The key's old meaning, spelled the old way, is pointed to its new name.
    auto old = open_error("gpiod:chip=x,edges=none", role::responder);
    CHECK(old.status() == exit_usage);
    CHECK_THAT(old.message() + " " + old.hint(), ContainsSubstring("events=none"));
}

TEST_CASE("gpiod drives one end of a wire and senses the other", "[gpiod]")
{
    auto chip = need_wire_chip();
    auto pair = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=0,in=1", role::logger);
    for (bool level : {true, false, true, false}) {
        pair->drive(level);
        CHECK(pair->sense() == int{level});
    }
    CHECK_FALSE(pair->error());
    CHECK_FALSE(pair->has_edge_events()); // the logger polls: no edge detection by default
}

TEST_CASE("gpiod names events and the far end in its spec, metadata and pair", "[gpiod]")
{
    auto chip = need_wire_chip();
    auto logger = test::open_as<gpiod_lines>(
        "gpiod:chip=" + chip + ",out=0,in=1,events=both,answer=follow", role::logger);
    CHECK(logger->has_edge_events());
    CHECK(logger->far_end_follows());
    CHECK(logger->far_end_answers_both_edges());
    CHECK(logger->describe() ==
          "gpiod:out=" + chip + ":0,in=" + chip + ":1,events=both,answer=follow");
    std::string all;
    for (const auto& m : logger->metadata())
        all += m.key + "=" + m.value + "\n";
    CHECK_THAT(all, ContainsSubstring("gpiod.events=both\n"));
    logger.reset();

    auto responder = test::open_as<gpiod_lines>(
        "gpiod:chip=" + chip + ",out=2,in=3,events=none,edges=rising", role::responder);
    CHECK_FALSE(responder->has_edge_events());
    CHECK_FALSE(responder->far_end_answers_both_edges());
    CHECK(responder->describe() ==
          "gpiod:out=" + chip + ":2,in=" + chip + ":3,events=none,edges=rising");
}

TEST_CASE("gpiod finds chips by label and path and lines by name", "[gpiod]")
{
    auto chip = need_wire_chip();
    auto by_label =
        test::open_as<gpiod_lines>("gpiod:out=irqloop-wire:2,in=/dev/" + chip + ":3", role::logger);
    CHECK(by_label->describe() == "gpiod:out=" + chip + ":2,in=" + chip + ":3");
    by_label.reset();

    auto by_name = test::open_as<gpiod_lines>("gpiod:out=wire1a,in=wire1b", role::logger);
    CHECK(by_name->describe() == "gpiod:out=" + chip + ":2,in=" + chip + ":3");
    by_name->drive(true);
    CHECK(by_name->sense() == 1);
    by_name->drive(false);
    CHECK(by_name->sense() == 0);

    check_refused("gpiod:chip=" + chip + ",out=wire9z,in=1", {"no line named 'wire9z'"});
}

TEST_CASE("gpiod refuses an offset out of range, giving the range", "[gpiod]")
{
    auto chip = need_wire_chip();
    check_refused("gpiod:chip=" + chip + ",out=99,in=1", {"offset 99 is out of range", "0..7"});
}

TEST_CASE("gpiod refuses a busy line, naming the consumer that holds it", "[gpiod]")
{
    auto chip = need_wire_chip();
    {
        foreign_holder holder(chip, 5, "someone-else");
        check_refused("gpiod:chip=" + chip + ",out=4,in=5",
                      {"in use by 'someone-else'", chip + ":5"});
    }
    auto first = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=4,in=5", role::logger);
    auto e = open_error("gpiod:chip=" + chip + ",out=4,in=7");
    CHECK_THAT(e.message(), ContainsSubstring("in use by 'irqloop'"));
    auto same = open_error("gpiod:chip=" + chip + ",out=6,in=6");
    CHECK_THAT(same.message(), ContainsSubstring("same line"));
}

TEST_CASE("gpiod responder wakes on each edge of the stimulus and times out without one", "[gpiod]")
{
    auto chip = need_wire_chip();
    // logger: drives wire2 (line 4), senses wire3 (line 7); responder: the other ends.
    auto logger = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=4,in=7", role::logger);
    auto responder =
        test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=6,in=5", role::responder);
    REQUIRE(responder->has_edge_events());
    CHECK(responder->wait_edge(20'000'000) == 0);

    bool level = false;
    for (int i = 0; i < 50; ++i) {
        level = !level;
        logger->drive(level);
        REQUIRE(responder->wait_edge(2'000'000'000) == 1);
        REQUIRE(responder->sense() == int{level});
        responder->drive(level);
        REQUIRE(logger->sense() == int{level});
    }
    CHECK(responder->missed_edges() == 0);
    auto& g = dynamic_cast<gpiod_lines&>(*responder);
    CHECK(g.edges_seen() == 50);
    CHECK_FALSE(responder->error());
    CHECK_FALSE(logger->error());
}

TEST_CASE("gpiod responder without a timeout: each edge in one read, and a signal to the waiting "
          "thread ends the wait with 0",
          "[gpiod]")
{
    auto chip = need_wire_chip();
    auto logger = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=4,in=7", role::logger);
    auto responder =
        test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=6,in=5", role::responder);
    REQUIRE(responder->wait_ends_on_signal());

    // Edges queued before the wait are read at once, without a poll.
    bool level = false;
    for (int i = 0; i < 20; ++i) {
        level = !level;
        logger->drive(level);
        REQUIRE(responder->wait_edge(-1) == 1);
        CHECK(responder->last_edge().rising == int{level});
    }
    auto& g = dynamic_cast<gpiod_lines&>(*responder);
    CHECK(g.edges_seen() == 20);

    // No edge: the wait blocks until a signal (no SA_RESTART) reaches this thread. The handler
    // counts what it caught: the wait has returned because of a signal when the count read
    // right after it is not 0 (no timing: a busy or emulated machine delays either side).
    static std::atomic<int> caught{0};
    caught.store(0);
    struct sigaction sa = {}, old = {};
    sa.sa_handler = [](int) { caught.fetch_add(1); };
    sigemptyset(&sa.sa_mask);
    REQUIRE(::sigaction(SIGUSR2, &sa, &old) == 0);
    const pthread_t self = ::pthread_self();
    std::atomic<bool> returned{false};
    std::thread waker([&] {
        // Keep signalling until the wait has returned: one signal could land before it blocks.
        while (!returned.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            ::pthread_kill(self, SIGUSR2);
        }
    });
    const int rc = responder->wait_edge(-1);
    const int caught_at_return = caught.load();
    returned.store(true);
    waker.join();
    ::sigaction(SIGUSR2, &old, nullptr);
    CHECK(rc == 0);
    CHECK(caught_at_return >= 1);
    CHECK_FALSE(responder->error());
    CHECK(g.edges_seen() == 20);
}

TEST_CASE("gpiod counts the edges the kernel dropped through sequence-number gaps", "[gpiod]")
{
    auto chip = need_wire_chip();
    auto logger = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=4,in=7", role::logger);
    auto responder =
        test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=6,in=5", role::responder);
    // The kernel queues 16 events per line and drops the oldest beyond that. The pause lets
    // the IRQ thread queue each edge: back-to-back edges merge into one thread run instead.
    for (int i = 0; i < 40; ++i) {
        logger->drive(i % 2 == 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    while (responder->wait_edge(100'000'000) == 1) {
    }
    logger->drive(true);
    REQUIRE(responder->wait_edge(2'000'000'000) == 1);
    auto& g = dynamic_cast<gpiod_lines&>(*responder);
    INFO("seen " << g.edges_seen() << ", missed " << g.missed_edges());
    CHECK(responder->missed_edges() > 0);
    CHECK(g.edges_seen() <= 17);
    CHECK(g.edges_seen() + responder->missed_edges() <= 41);
}

TEST_CASE("gpiod measures its poll cost and reports chips and lines in the metadata", "[gpiod]")
{
    auto chip = need_wire_chip();
    auto pair = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=0,in=1", role::logger);
    auto& g = dynamic_cast<gpiod_lines&>(*pair);
    CHECK(g.poll_cost_ns() > 0);
    CHECK(g.poll_cost_ns() < 1e6);
    std::string all;
    for (const auto& m : pair->metadata())
        all += m.key + "=" + m.value + "\n";
    INFO(all);
    CHECK_THAT(all, ContainsSubstring("gpiod.poll_cost_ns="));
    CHECK_THAT(all, ContainsSubstring("gpiod.out=" + chip + ":0 (\"wire0a\")"));
    CHECK_THAT(all, ContainsSubstring("[irqloop-wire]"));
    CHECK_THAT(all, ContainsSubstring("gpiod.libgpiod=2."));
}

TEST_CASE("gpiod trigger line is a third output driven on request", "[gpiod]")
{
    auto chip = need_wire_chip();
    auto pair = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=0,in=3", role::logger);
    REQUIRE_NOTHROW(pair->open_trigger("irqloop-wire:4"));
    auto far = test::open_as<gpiod_lines>("gpiod:chip=" + chip + ",out=2,in=5", role::logger);
    CHECK(far->sense() == 0);
    pair->trigger(true);
    CHECK(far->sense() == 1);
    pair->trigger(false);
    CHECK(far->sense() == 0);
    CHECK_FALSE(pair->error());
}
