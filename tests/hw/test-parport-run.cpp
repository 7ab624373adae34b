// SPDX-License-Identifier: MIT
// `irqloop run` through the parport code path, end to end, on the far-end simulator
// (parport:sim=...): the real sampler, recorder and store with single-edge re-arming.
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <SQLiteCpp/Database.h>
#include <catch2/catch_test_macros.hpp>

#include <string>

using namespace irqloop::test;

namespace
{

std::string query(const std::string& db, const std::string& sql)
{
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    return d.execAndGet(sql).getString();
}

} // namespace

TEST_CASE("parport irqloop run on the simulator: single-edge samples, losses counted, poll "
          "cost stored",
          "[parport][cli]")
{
    temp_dir dir;
    const std::string db = dir / "pp.db";
    // --gap-limit 1ms: the simulated port's far end is a thread that drive() wakes with a
    // futex, and the sampler runs at SCHED_OTHER (-p 0); on a busy machine the woken thread
    // preempts the sampler inside drive(), every bracket then holds the whole answer and every
    // sample is disturbed (seen: 360 of 400, at load 6). What is checked here is the count, the
    // single-edge re-arm and the modelled floor, not the logger's disturbance.
    auto r = run_process({IRQLOOP_BIN, "run", "--hw",
                          "parport:sim=raw,model=fixed,value=30us,lose_every=10,read_cost=1us",
                          "-n", "400", "--interval", "200us", "-p", "0", "--no-mlock",
                          "--gap-limit", "1ms", "--db", db, "-l", "parport-sim"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    // Every sample is a rising stimulus: the re-arm edges are not measured.
    CHECK(r.out.find("falling 0") != std::string::npos);
    CHECK(query(db, "SELECT status FROM runs") == "complete");
    CHECK(query(db, "SELECT backend FROM runs") == "parport:sim=raw,out=D3,in=nACK,edges=rising");
    CHECK(std::stoll(query(db, "SELECT stimuli FROM runs")) == 400);
    CHECK(std::stoll(query(db, "SELECT samples + lost + disturbed FROM runs")) == 400);
    // One stimulus in ten gets no answer; a busy machine may time out a few more.
    const long long lost = std::stoll(query(db, "SELECT lost FROM runs"));
    CHECK(lost >= 40);
    CHECK(lost <= 80);
    // The modelled delay is a floor for every measured sample.
    CHECK(std::stoll(query(db, "SELECT min_ns FROM runs")) >= 30'000);
    CHECK(query(db, "SELECT value FROM run_metadata WHERE key = 'parport.method'") == "sim");
    CHECK(std::stod(query(db, "SELECT value FROM run_metadata WHERE key = "
                              "'parport.status_read_ns'")) >= 1000);
}
