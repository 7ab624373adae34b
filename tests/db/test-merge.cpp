// SPDX-License-Identifier: MIT
#include "merge.hpp"
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

/** A run with @p n intervals, raw samples, metadata and events, finished. */
std::int64_t add_run(store& s, const std::string& uuid, const std::string& label, int n,
                     std::int64_t start)
{
    auto id = s.begin_run(sample_run(uuid, label, start));
    for (int i = 0; i < n; ++i)
        s.commit_interval(id, simple_commit(i, start).view());
    std::vector<sample_row> raw;
    for (std::uint64_t k = 0; k < 50; ++k)
        raw.push_back(sample_row{k, 0, std::int64_t(4000 + k), 30, 0});
    s.append_raw(id, raw);
    s.finish_run(id, run_status::complete, start + n * 10'000'000'000LL);
    return id;
}

} // namespace

TEST_CASE("merge_into copies runs from another machine under new ids, once", "[db]")
{
    temp_dir dir;
    const auto a = dir.file("lab-a.db");
    const auto b = dir.file("lab-b.db");
    {
        store s(b);
        add_run(s, "uuid-b-1", "board-b", 2, t_start + 100);
        add_run(s, "uuid-b-2", "board-b", 3, t_start + 200);
        add_run(s, "uuid-shared", "shared", 1, t_start + 300);
        s.begin_run(sample_run("uuid-b-live", "live", t_start + 400)); // still running
    }
    const auto b_before = file_bytes(b);
    store dst(a);
    const auto a1 = add_run(dst, "uuid-a-1", "board-a", 1, t_start);
    add_run(dst, "uuid-shared", "shared", 1, t_start + 300);

    auto res = merge_into(dst, b);
    CHECK(res.copied == 2);
    CHECK(res.already_present == 1);
    CHECK(res.still_running == 1);
    CHECK(file_bytes(b) == b_before);

    auto runs = list_runs(dst);
    REQUIRE(runs.size() == 4);
    auto b2 = find_run(dst, "uuid-b-2");
    CHECK(b2.id != a1);
    CHECK(b2.meta.label == "board-b");
    CHECK(b2.meta.metadata.size() == 2);
    CHECK(b2.summary.samples == 3000);
    CHECK(intervals(dst, b2.id).size() == 3);
    CHECK(worst(dst, b2.id).size() == 3);
    CHECK(histogram(dst, b2.id).size() == 3);
    CHECK(exceedances(dst, b2.id).size() == 3);
    CHECK(events(dst, b2.id).size() == 3);
    CHECK(raw_count(dst, b2.id) == 50);
    // The run already there keeps its own rows, not doubled ones.
    auto shared = find_run(dst, "uuid-shared");
    CHECK(intervals(dst, shared.id).size() == 1);
    CHECK(raw_count(dst, shared.id) == 50);

    auto again = merge_into(dst, b);
    CHECK(again.copied == 0);
    CHECK(again.already_present == 3);
    CHECK(list_runs(dst).size() == 4);
    CHECK(dst.database().execAndGet("SELECT count(*) FROM intervals").getInt() == 1 + 1 + 2 + 3);
    CHECK(integrity(a) == "ok");
    CHECK(integrity(b) == "ok");
}

TEST_CASE("merge_into refuses a foreign file and the file itself", "[db]")
{
    temp_dir dir;
    const auto a = dir.file("a.db");
    store dst(a);
    const auto notes = dir.file("notes.db");
    write_file(notes, "not a database\n");
    try {
        merge_into(dst, notes);
        FAIL("merged a text file");
    } catch (const irqloop::error& e) {
        CHECK_THAT(e.message(), ContainsSubstring("open database '" + notes + "'"));
    }
    CHECK_THROWS_AS(merge_into(dst, a), irqloop::error);
    CHECK(list_runs(dst).empty());
}
