// SPDX-License-Identifier: MIT
// The views of db/views.sql return the right figures for known runs; db/schema.sql and
// db/views.sql work by hand in the sqlite3 shell.
#include "db-query.hpp"
#include "store-fixtures.hpp"
#include "store.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

using namespace irqloop;
using namespace irqloop::db;
using namespace irqloop::db::test;
using irqloop::test::query_int;

TEST_CASE("view run_summary gives one line per run with the published figures", "[db]")
{
    temp_dir dir;
    store s(dir.file("views.db"));
    auto p = populate(s);
    SQLite::Statement q(s.database(),
                        "SELECT label, kind, status, start_utc, end_utc, duration_s, samples, "
                        "lost, min_ns, avg_ns, max_ns, warm_max_ns, p99_ns, p999999_ns, "
                        "pct_above, max_us, warm_max_us, avg_us, stddev_us, target "
                        "FROM run_summary WHERE id = ?");
    q.bind(1, static_cast<std::int64_t>(p.idle));
    REQUIRE(q.executeStep());
    CHECK(q.getColumn(0).getString() == "idle");
    CHECK(q.getColumn(1).getString() == "measure");
    CHECK(q.getColumn(2).getString() == "complete");
    CHECK(q.getColumn(3).getString() == "2026-11-30 03:19:50");
    CHECK(q.getColumn(4).getString() == "2026-11-30 03:20:20");
    CHECK(q.getColumn(5).getDouble() == 30.0);
    CHECK(q.getColumn(6).getInt64() == 3000);
    CHECK(q.getColumn(7).getInt64() == 6);
    CHECK(q.getColumn(8).getInt64() == 4000);
    CHECK(q.getColumn(9).getDouble() == 5003.0); // round(5002.5)
    CHECK(q.getColumn(10).getInt64() == 25'002);
    CHECK(q.getColumn(11).getInt64() == 24'002);
    CHECK(q.getColumn(12).getInt64() == 9000);
    CHECK(q.getColumn(13).getInt64() == 25'002);
    // 3 of 3009 answered stimuli (3000 in the statistics, 9 disturbed): % above counts every
    // answered sample since version 2, because a disturbed one can be above by its lower bound.
    CHECK(q.getColumn(14).getDouble() == Catch::Approx(100.0 * 3 / 3009).margin(1e-6));
    CHECK(q.getColumn(15).getDouble() == Catch::Approx(25.002));
    CHECK(q.getColumn(16).getDouble() == Catch::Approx(24.002));
    CHECK(q.getColumn(17).getDouble() == Catch::Approx(5.003));
    CHECK(q.getColumn(18).getDouble() == Catch::Approx(0.3));
    CHECK(q.getColumn(19).getString() == "imx8mp, 6.1-rt");
    CHECK(s.database().execAndGet("SELECT count(*) FROM run_summary").getInt() == 3);
    CHECK(s.database()
              .execAndGet("SELECT status || ' ' || max_ns FROM run_summary WHERE label = 'load'")
              .getString() == "interrupted 125001");
}

TEST_CASE("view worst_cases ranks the worst samples across runs with label and time", "[db]")
{
    temp_dir dir;
    store s(dir.file("views.db"));
    populate(s);
    SQLite::Statement q(s.database(),
                        "SELECT label, rank, seq, time_utc, latency_ns, latency_us, edge, "
                        "disturbed FROM worst_cases ORDER BY latency_ns DESC LIMIT 3");
    const char* labels[] = {"load", "load", "idle"};
    const std::int64_t latencies[] = {125'001, 125'000, 25'002};
    for (int k = 0; k < 3; ++k) {
        REQUIRE(q.executeStep());
        CHECK(q.getColumn(0).getString() == labels[k]);
        CHECK(q.getColumn(4).getInt64() == latencies[k]);
    }
    SQLite::Statement idle(s.database(), "SELECT rank, seq, time_utc, latency_us, edge, "
                                         "disturbed FROM worst_cases WHERE label = 'idle' "
                                         "ORDER BY rank");
    REQUIRE(idle.executeStep());
    CHECK(idle.getColumn(0).getInt() == 1);
    CHECK(idle.getColumn(1).getInt64() == 2 * 1005 + 500);
    CHECK(idle.getColumn(2).getString() == "2026-11-30 03:20:15.000");
    CHECK(idle.getColumn(3).getDouble() == Catch::Approx(25.002));
    CHECK(idle.getColumn(4).getString() == "rising");
    CHECK(idle.getColumn(5).getInt() == 0);
    CHECK(s.database().execAndGet("SELECT count(*) FROM worst_cases").getInt() == 3 + 2 + 1);
}

TEST_CASE("view interval_maxima lists each interval's maximum and start time", "[db]")
{
    temp_dir dir;
    store s(dir.file("views.db"));
    auto p = populate(s);
    SQLite::Statement q(s.database(), "SELECT idx, start_utc, samples, max_ns, max_us, lost "
                                      "FROM interval_maxima WHERE run_id = ? ORDER BY idx");
    q.bind(1, static_cast<std::int64_t>(p.idle));
    const char* starts[] = {"2026-11-30 03:19:50", "2026-11-30 03:20:00", "2026-11-30 03:20:10"};
    for (int k = 0; k < 3; ++k) {
        REQUIRE(q.executeStep());
        CHECK(q.getColumn(0).getInt() == k);
        CHECK(q.getColumn(1).getString() == starts[k]);
        CHECK(q.getColumn(2).getInt64() == 1000);
        CHECK(q.getColumn(3).getInt64() == 25'000 + k);
        CHECK(q.getColumn(4).getDouble() == Catch::Approx((25'000 + k) / 1000.0));
        CHECK(q.getColumn(5).getInt64() == 2 + k);
    }
    CHECK(!q.executeStep());
    CHECK(s.database()
              .execAndGet("SELECT max(max_ns) FROM interval_maxima WHERE label = 'load'")
              .getInt64() == 125'001);
}

TEST_CASE("db/schema.sql run by the sqlite3 shell makes a file irqloop accepts", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("by-hand.db");
    auto r = run_shell("sqlite3 '" + path + "' < '" IRQLOOP_SOURCE_DIR "/db/schema.sql'");
    REQUIRE(r.status == 0);
    CHECK(query_int(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'view'") == 0);
    store s(path);
    CHECK(s.database().execAndGet("PRAGMA user_version").getInt() == store::schema_version());
    s.begin_run(sample_run("uuid-by-hand", "x", populate_start));
    // The upgrade brought the views (db/views.sql).
    CHECK(s.database().execAndGet("SELECT count(*) FROM run_summary").getInt() == 1);
    CHECK(s.database()
              .execAndGet("SELECT count(*) FROM sqlite_schema WHERE type = 'view'")
              .getInt() == 4);
}

TEST_CASE("db/views.sql run by the sqlite3 shell re-creates the views of a current file", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("views-by-hand.db");
    const std::string views =
        "SELECT name, sql FROM sqlite_schema WHERE type = 'view' ORDER BY name";
    std::string before;
    {
        store s(path);
        populate(s);
        before = rows_text(path, views);
        s.database().exec("DROP VIEW worst_cases; DROP VIEW window_histograms");
    }
    REQUIRE(rows_text(path, views) != before);
    auto r = run_shell("sqlite3 '" + path + "' < '" IRQLOOP_SOURCE_DIR "/db/views.sql'");
    REQUIRE(r.status == 0);
    CHECK(rows_text(path, views) == before);
    CHECK(query_int(path, "SELECT count(*) FROM worst_cases") == 3 + 2 + 1);
}
