// SPDX-License-Identifier: MIT
// The load lifecycle with real processes (/bin/sh loops and sleeps): its own process group,
// SIGTERM then SIGKILL after the grace, exit status and output tail, early death, and no
// process of the group left behind.
#include "error.hpp"
#include "load-process.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>
#include <unistd.h>

using namespace irqloop::logger;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::EndsWith;

namespace
{

bool group_alive(int pgid)
{
    return kill(-pgid, 0) == 0 || errno != ESRCH;
}

bool wait_for(const std::function<bool()>& cond, double seconds)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (cond())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return cond();
}

} // namespace

TEST_CASE(
    "load: a running load gets SIGTERM on stop, in its own process group, with its output tail",
    "[soak]")
{
    load_process lp({"echo started; while :; do sleep 0.05; done", 2'000'000'000, 1024});
    lp.start();
    const int pg = lp.pgid();
    REQUIRE(pg > 0);
    CHECK(getpgid(pg) == pg);        // the shell leads a group of its own
    CHECK(getpgid(pg) != getpgrp()); // not ours: a terminal's SIGINT does not reach it
    REQUIRE(wait_for([&] { return lp.tail() == "started\n"; }, 5));
    CHECK_FALSE(lp.exited());
    const auto r = lp.stop();
    CHECK(r.started);
    CHECK_FALSE(r.by_itself);
    CHECK_FALSE(r.killed);
    CHECK(r.signal == SIGTERM);
    CHECK(r.status == 128 + SIGTERM);
    CHECK(r.describe() == "killed by SIGTERM");
    CHECK(r.tail == "started\n");
    CHECK_FALSE(group_alive(pg));
    CHECK(lp.stop().signal == SIGTERM); // idempotent
}

TEST_CASE("load: a load that ignores SIGTERM is killed after the grace period", "[soak]")
{
    load_process lp(
        {"trap '' TERM; echo stubborn; while :; do sleep 0.05; done", 300'000'000, 1024});
    lp.start();
    const int pg = lp.pgid();
    REQUIRE(wait_for([&] { return !lp.tail().empty(); }, 5));
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = lp.stop();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(r.killed);
    CHECK(r.signal == SIGKILL);
    CHECK(waited >= 0.3);
    CHECK_FALSE(group_alive(pg));
}

TEST_CASE("load: an early death is seen with its exit status and last output", "[soak]")
{
    load_process lp({"echo 'hackbench: cannot connect'; exit 3", 2'000'000'000, 1024});
    lp.start();
    REQUIRE(wait_for([&] { return lp.exited(); }, 5));
    const auto r = lp.stop();
    CHECK(r.by_itself);
    CHECK(r.status == 3);
    CHECK(r.signal == 0);
    CHECK(r.describe() == "exit 3");
    CHECK(r.tail == "hackbench: cannot connect\n");
    load_process missing({"/no/such/load-binary", 2'000'000'000, 1024});
    missing.start();
    REQUIRE(wait_for([&] { return missing.exited(); }, 5));
    const auto m = missing.stop();
    CHECK(m.status == 127);
    CHECK_THAT(m.tail, ContainsSubstring("not found"));
}

TEST_CASE("load: no process of the group outlives stop(), orphans included", "[soak]")
{
    SECTION("children in the background of a waiting shell")
    {
        load_process lp({"sleep 60 & sleep 60 & (sleep 60 &) ; wait", 2'000'000'000, 1024});
        lp.start();
        const int pg = lp.pgid();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        CHECK(group_alive(pg));
        lp.stop();
        CHECK_FALSE(group_alive(pg));
    }
    SECTION("a shell that exits and leaves its children running")
    {
        load_process lp({"sleep 60 & sleep 60 & exit 0", 2'000'000'000, 1024});
        lp.start();
        const int pg = lp.pgid();
        REQUIRE(wait_for([&] { return lp.exited(); }, 5));
        CHECK(group_alive(pg)); // the sleeps are still there
        const auto r = lp.stop();
        CHECK(r.by_itself);
        CHECK(r.status == 0);
        CHECK_FALSE(group_alive(pg));
    }
    SECTION("the destructor stops a running load")
    {
        int pg = -1;
        {
            load_process lp({"while :; do sleep 0.05; done", 2'000'000'000, 1024});
            lp.start();
            pg = lp.pgid();
            CHECK(group_alive(pg));
        }
        CHECK_FALSE(group_alive(pg));
    }
}

TEST_CASE("load: only the last tail_bytes of a long output are kept", "[soak]")
{
    load_process lp({"seq 1 200000", 2'000'000'000, 64});
    lp.start();
    REQUIRE(wait_for([&] { return lp.exited(); }, 10));
    const auto r = lp.stop();
    CHECK(r.status == 0);
    CHECK(r.tail.size() == 64);
    CHECK_THAT(r.tail, EndsWith("199999\n200000\n"));
}
