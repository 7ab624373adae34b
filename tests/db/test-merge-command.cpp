// SPDX-License-Identifier: MIT
// irqloop merge end to end: databases recorded by the real binary on the sim board, merged by
// the real binary, read back through a separate SQLite connection.
#include "store-fixtures.hpp"

#include <catch2/catch_test_macros.hpp>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace irqloop::db::test;

namespace
{

std::string irqloop_cmd(const std::string& args)
{
    return irqloop::test::shell_program(IRQLOOP_BIN) + " " + args;
}

/** A short sim run into @p db under @p label; fails the test if the run does not complete. */
void record(const std::string& db, const std::string& label)
{
    const auto r = run_shell(irqloop_cmd("run --samples 2000 --interval 20us --progress none "
                                         "--db '" +
                                         db + "' --label " + label));
    INFO(r.out);
    REQUIRE(r.status == 0);
}

struct run_view {
    std::string uuid, label, status;
    long long histogram_samples = 0;
    long long intervals = 0;
};

/** The runs of @p db in id order, read through a fresh read-only connection. */
std::vector<run_view> runs_of(const std::string& db)
{
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    SQLite::Statement q(
        d, "SELECT r.uuid, r.label, r.status,"
           " (SELECT coalesce(sum(h.count), 0) FROM histogram h WHERE h.run_id = r.id),"
           " (SELECT count(*) FROM intervals i WHERE i.run_id = r.id)"
           " FROM runs r ORDER BY r.id");
    std::vector<run_view> out;
    while (q.executeStep())
        out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(),
                       q.getColumn(2).getString(), q.getColumn(3).getInt64(),
                       q.getColumn(4).getInt64()});
    return out;
}

} // namespace

TEST_CASE("irqloop merge copies the runs of two recorded files once, keeping labels and rows",
          "[db]")
{
    temp_dir dir;
    const auto a = dir.file("a.db"), b = dir.file("b.db"), all = dir.file("all.db");
    record(a, "A");
    record(b, "B");
    record(b, "B2");
    const auto ra = runs_of(a), rb = runs_of(b);
    REQUIRE(ra.size() == 1);
    REQUIRE(rb.size() == 2);
    REQUIRE(ra[0].histogram_samples > 0);

    auto r = run_shell(irqloop_cmd("merge --db '" + all + "' '" + a + "' '" + b + "'"));
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(r.out.find(a + ": copied 1 run, skipped 0\n") != std::string::npos);
    CHECK(r.out.find(b + ": copied 2 runs, skipped 0\n") != std::string::npos);

    const auto merged = runs_of(all);
    REQUIRE(merged.size() == 3);
    std::vector<run_view> expected{ra[0], rb[0], rb[1]};
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(merged[i].uuid == expected[i].uuid);
        CHECK(merged[i].label == expected[i].label);
        CHECK(merged[i].status == "complete");
        CHECK(merged[i].histogram_samples == expected[i].histogram_samples);
        CHECK(merged[i].intervals == expected[i].intervals);
    }
    CHECK(integrity(all) == "ok");

    SECTION("merging the same files again copies nothing new")
    {
        auto again = run_shell(irqloop_cmd("merge --db '" + all + "' '" + b + "' '" + a + "'"));
        INFO(again.out);
        REQUIRE(again.status == 0);
        CHECK(again.out.find(b + ": copied 0 runs, skipped 2 (2 already in " + all + ")\n") !=
              std::string::npos);
        CHECK(again.out.find(a + ": copied 0 runs, skipped 1 (1 already in " + all + ")\n") !=
              std::string::npos);
        CHECK(runs_of(all).size() == 3);
    }

    SECTION("a later run of a source is the only one copied")
    {
        record(a, "A2");
        auto more = run_shell(irqloop_cmd("merge --db '" + all + "' '" + a + "'"));
        INFO(more.out);
        REQUIRE(more.status == 0);
        CHECK(more.out == a + ": copied 1 run, skipped 1 (1 already in " + all + ")\n");
        const auto m = runs_of(all);
        REQUIRE(m.size() == 4);
        CHECK(m[3].label == "A2");
    }

    SECTION("the reading commands see the merged runs")
    {
        auto cmp = run_shell(irqloop_cmd("compare --db '" + all + "' --label A --label B2"));
        INFO(cmp.out);
        CHECK(cmp.status == 0);
        CHECK(cmp.out.find("B2") != std::string::npos);
    }
}

TEST_CASE("irqloop merge refuses a text file or a missing source with exit 2 and writes nothing",
          "[db]")
{
    temp_dir dir;
    const auto a = dir.file("a.db"), all = dir.file("all.db"), text = dir.file("notes.db");
    record(a, "A");
    write_file(text, "these are my notes, not a database\n");

    SECTION("an existing destination stays byte for byte")
    {
        REQUIRE(run_shell(irqloop_cmd("merge --db '" + all + "' '" + a + "'")).status == 0);
        const auto before = file_bytes(all);
        REQUIRE(before);
        // The good source comes first: validation of every source precedes any copy.
        auto r = run_shell(irqloop_cmd("merge --db '" + all + "' '" + a + "' '" + text + "'"));
        INFO(r.out);
        CHECK(r.status == 2);
        CHECK(r.out.rfind("irqloop: open database '" + text + "': ", 0) == 0);
        CHECK(r.out.find("copied") == std::string::npos);
        CHECK(file_bytes(all) == before);
        CHECK(file_bytes(text) == "these are my notes, not a database\n");
    }

    SECTION("a missing destination is not created")
    {
        auto r = run_shell(irqloop_cmd("merge --db '" + all + "' '" + text + "'"));
        INFO(r.out);
        CHECK(r.status == 2);
        CHECK_FALSE(std::filesystem::exists(all));
    }

    SECTION("a missing source is named")
    {
        const auto missing = dir.file("nosuch.db");
        auto r = run_shell(irqloop_cmd("merge --db '" + all + "' '" + missing + "'"));
        INFO(r.out);
        CHECK(r.status == 2);
        CHECK(r.out.find("'" + missing + "': no such file") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(all));
    }

    SECTION("the destination itself as a source")
    {
        REQUIRE(run_shell(irqloop_cmd("merge --db '" + all + "' '" + a + "'")).status == 0);
        const auto before = file_bytes(all);
        auto r = run_shell(irqloop_cmd("merge --db '" + all + "' '" + all + "'"));
        INFO(r.out);
        CHECK(r.status == 2);
        CHECK(r.out.find("same file") != std::string::npos);
        CHECK(file_bytes(all) == before);
    }

    SECTION("no source at all")
    {
        auto r = run_shell(irqloop_cmd("merge --db '" + all + "'"));
        INFO(r.out);
        CHECK(r.status == 2);
        CHECK(r.out.find("irqloop: merge: no source file given") != std::string::npos);
    }
}
