// SPDX-License-Identifier: MIT
// The shm wire's segment (issue 32): the side that created /dev/shm/irqloop-NAME removes it
// on every ending, SIGTERM, SIGINT or a normal end, for irqloop-responder and for the logger;
// the side that only attached leaves it to its creator. Real processes, at SCHED_OTHER, for
// a few seconds in all.
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>

using namespace irqloop::test;

namespace shm_ending_test
{

const std::string logger_bin = IRQLOOP_BIN;
const std::string responder_bin = IRQLOOP_RESPONDER_BIN;

std::vector<std::string> responder_args(const std::string& name)
{
    return {responder_bin, "--hw",       "shm:name=" + name, "--mode",   "poll", "--priority",
            "0",           "--no-mlock", "--no-dma-latency", "--report", "0"};
}

/** A run on the wire that only a signal or @p stop ("--samples", "N" or "--duration", "T") ends. */
std::vector<std::string> logger_args(const std::string& name, const std::string& stop_key,
                                     const std::string& stop_value)
{
    return {logger_bin,       "run",       "--hw",       "shm:name=" + name,
            "--allow-silent", stop_key,    stop_value,   "--interval",
            "50us",           "--timeout", "1ms",        "--no-db",
            "--priority",     "0",         "--no-mlock", "--no-dma-latency",
            "--progress",     "none"};
}

} // namespace shm_ending_test

using namespace shm_ending_test;

TEST_CASE("shm: the side that created the segment removes it on every ending", "[run][shm]")
{
    temp_dir dir;
    const std::string name = "ending" + std::to_string(::getpid());
    const std::string seg = "/dev/shm/irqloop-" + name;
    const auto exists = [&] { return std::filesystem::exists(seg); };
    ::unlink(seg.c_str());

    for (int sig : {SIGTERM, SIGINT}) {
        DYNAMIC_SECTION("the responder created it and gets signal " << sig)
        {
            const std::string log = dir / "resp.log";
            background_process resp(responder_args(name), log);
            // Its start line comes after the signal handlers: a signal from now on unwinds.
            REQUIRE(wait_for_text(log, "; obtained ", 30.0));
            REQUIRE(exists());
            // A logger run that only attached ends normally and leaves the segment alone.
            // (Exit 0, or 4 when a loaded machine kept the SCHED_OTHER responder from every
            // answer: either is a normal end, which is what is tested.)
            background_process run(logger_args(name, "--samples", "2000"), dir / "run.log");
            const int status = run.wait();
            CHECK((status == 0 || status == 4));
            CHECK(exists());
            resp.signal(sig);
            CHECK(resp.wait() == 0);
            CHECK_FALSE(exists());
        }
        DYNAMIC_SECTION("the logger created it and gets signal " << sig)
        {
            background_process run(logger_args(name, "--samples", "1G"), dir / "run.log");
            // The logger catches the stop signals before it opens the wire.
            REQUIRE(wait_until(exists, 30.0));
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            run.signal(sig);
            // 128 + N is also the status of a run that stops on signal N by itself
            // (docs/commands/exit-status.md): its summary line says it was not killed.
            CHECK(run.wait() == 128 + sig);
            CHECK(wait_for_text(dir / "run.log", "interrupted", 5.0));
            CHECK_FALSE(exists());
        }
    }
    SECTION("the responder created it and ends normally (--duration)")
    {
        const std::string log = dir / "resp.log";
        background_process resp(
            [&] {
                auto a = responder_args(name);
                a.insert(a.end(), {"--duration", "500ms"});
                return a;
            }(),
            log);
        REQUIRE(wait_for_text(log, "; obtained ", 30.0));
        CHECK(exists());
        CHECK(resp.wait() == 0);
        CHECK_FALSE(exists());
    }
    SECTION("the logger created it and ends normally; the responder that attached leaves it")
    {
        background_process run(logger_args(name, "--duration", "2s"), dir / "run.log");
        REQUIRE(wait_until(exists, 30.0));
        const std::string log = dir / "resp.log";
        background_process resp(responder_args(name), log);
        REQUIRE(wait_for_text(log, "; obtained ", 30.0));
        const int status = run.wait(); // 0, or 4 when the responder never got to answer
        CHECK((status == 0 || status == 4));
        CHECK_FALSE(exists());
        resp.signal(SIGTERM);
        CHECK(resp.wait() == 0);
        CHECK_FALSE(exists()); // not created again by the responder's end
    }
    ::unlink(seg.c_str());
}
