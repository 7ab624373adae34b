// SPDX-License-Identifier: MIT
#include "migrate.hpp"
#include "store-fixtures.hpp"
#include "store.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace irqloop;
using namespace irqloop::db;
using namespace irqloop::db::test;
using Catch::Matchers::ContainsSubstring;

namespace
{

constexpr std::int64_t t_start = 1'790'000'000'000'000'000;

// Test-only steps: what a future 0002 and 0003 could look like. Never shipped.
constexpr migration add_notes{2, "0002-test-add-notes",
                              "ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '';"
                              "DROP VIEW worst_cases;"
                              "CREATE VIEW worst_cases AS SELECT w.*, r.label, r.notes "
                              "FROM worst w JOIN runs r ON r.id = w.run_id;"};
constexpr migration add_tags{3, "0003-test-add-tags",
                             "CREATE TABLE run_tags (run_id INTEGER NOT NULL REFERENCES runs (id), "
                             "tag TEXT NOT NULL, PRIMARY KEY (run_id, tag)) WITHOUT ROWID;"};
constexpr migration broken{3, "0003-test-broken",
                           "CREATE TABLE half_done (x); INSERT INTO no_such_table VALUES (1);"};

std::int64_t scalar(const std::string& path, const std::string& q)
{
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    return d.execAndGet(q).getInt64();
}

std::string v1_file(const temp_dir& dir, std::int64_t& run_id)
{
    const auto path = dir.file("v1.db");
    store s(path);
    run_id = s.begin_run(sample_run("uuid-v1", "old", t_start));
    s.commit_interval(run_id, simple_commit(0, t_start).view());
    s.finish_run(run_id, run_status::complete, t_start + 1);
    return path;
}

} // namespace

TEST_CASE("this build ships no migration step: version 1 is current", "[db]")
{
    CHECK(shipped_migrations().empty());
    CHECK(latest_version(shipped_migrations()) == 1);
    CHECK(store::schema_version() == 1);
}

TEST_CASE("opening an older file runs each step in order and keeps its runs", "[db]")
{
    temp_dir dir;
    std::int64_t id = 0;
    const auto path = v1_file(dir, id);
    const migration steps[] = {add_notes, add_tags};
    {
        store s(path, store::mode::read_write, steps);
        CHECK(s.database().execAndGet("PRAGMA user_version").getInt() == 3);
        CHECK(s.database().tableExists("run_tags"));
        s.database().exec("UPDATE runs SET notes = 'migrated'");
    }
    // This build's catalog refuses a version-3 file (see below): count the rows directly.
    CHECK(scalar(path, "SELECT samples FROM runs WHERE id = " + std::to_string(id)) == 1000);
    CHECK(scalar(path, "SELECT count(*) FROM intervals WHERE run_id = " + std::to_string(id)) == 1);
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases WHERE notes = 'migrated'") == 1);
    CHECK(integrity(path) == "ok");
    // This build (version 1) now refuses the file as newer, and leaves it alone.
    const auto before = file_bytes(path);
    try {
        store s(path);
        FAIL("a version-3 file was opened by a version-1 build");
    } catch (const irqloop::error& e) {
        CHECK_THAT(e.why(), ContainsSubstring("newer irqloop"));
    }
    CHECK(file_bytes(path) == before);
}

TEST_CASE("a new file goes through the same steps as an old one", "[db]")
{
    temp_dir dir;
    const migration steps[] = {add_notes};
    const auto path = dir.file("fresh.db");
    {
        store s(path, store::mode::read_write, steps);
        s.begin_run(sample_run("uuid-fresh", "fresh", t_start));
    }
    CHECK(scalar(path, "PRAGMA user_version") == 2);
    CHECK(scalar(path, "SELECT count(*) FROM runs WHERE notes = ''") == 1);
}

TEST_CASE("a failing step leaves the file at the last good version", "[db]")
{
    temp_dir dir;
    std::int64_t id = 0;
    const auto path = v1_file(dir, id);
    const migration steps[] = {add_notes, broken};
    try {
        store s(path, store::mode::read_write, steps);
        FAIL("a broken step was accepted");
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_failure);
        CHECK_THAT(e.message(), ContainsSubstring("from schema version 2 to 3"));
        CHECK_THAT(e.why(), ContainsSubstring("0003-test-broken"));
        CHECK_THAT(e.hint(), ContainsSubstring("stays at version 2"));
    }
    CHECK(scalar(path, "PRAGMA user_version") == 2);
    CHECK(scalar(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'") == 0);
    CHECK(scalar(path, "SELECT count(*) FROM runs") == 1);
    CHECK(integrity(path) == "ok");
    // A read-only open of an older file reads it as it is and never upgrades it.
    const migration good[] = {add_notes, add_tags};
    {
        store r(path, store::mode::read_only, good);
        CHECK(r.file_version() == 2);
    }
    CHECK(scalar(path, "PRAGMA user_version") == 2);
    store s(path, store::mode::read_write, good);
    CHECK(s.file_version() == 3);
    CHECK(s.database().execAndGet("PRAGMA user_version").getInt() == 3);
}

TEST_CASE("a gap in the steps is an error, not a skipped version", "[db]")
{
    temp_dir dir;
    std::int64_t id = 0;
    const auto path = v1_file(dir, id);
    const migration steps[] = {add_tags}; // 3 without 2
    CHECK_THROWS_AS(store(path, store::mode::read_write, steps), irqloop::error);
    CHECK(scalar(path, "PRAGMA user_version") == 1);
}
