// SPDX-License-Identifier: MIT
// The one read API: how runs are named and selected, listed and read back.
#include "floor-rule.hpp"
#include "read.hpp"
#include "store-fixtures.hpp"
#include "store.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace irqloop;
using namespace irqloop::db;
using namespace irqloop::db::test;
using Catch::Matchers::ContainsSubstring;

namespace
{

constexpr std::int64_t t = 1'790'000'000'000'000'000;

std::vector<std::int64_t> ids(const std::vector<const run_record*>& v)
{
    std::vector<std::int64_t> out;
    for (const auto* r : v)
        out.push_back(r->id);
    return out;
}

struct named_run {
    const char* uuid;
    const char* label;
    std::int64_t start;
    run_kind kind = run_kind::measure;
};

/** Write runs (no commit yet) into a new file @p path; their ids in the order given. */
std::vector<std::int64_t> write_runs(const std::string& path, std::initializer_list<named_run> v)
{
    store s(path);
    std::vector<std::int64_t> out;
    for (const auto& r : v)
        out.push_back(s.begin_run(sample_run(r.uuid, r.label, r.start, r.kind)));
    return out;
}

/** The refusal @p sel gets, as the user would read it. */
std::string refusal(const catalog& cat, const run_selector& sel)
{
    try {
        cat.select(sel);
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_usage);
        return e.message();
    }
    FAIL("select accepted what it should refuse");
    return {};
}

} // namespace

TEST_CASE("a run is named by id, uuid or a unique uuid prefix of 4 or more, as git names "
          "commits",
          "[db]")
{
    temp_dir dir;
    const std::string path = dir / "names.db";
    const auto id = write_runs(path, {{"0f1e2d3c-0000-4000-8000-00000000000a", "idle", t},
                                      {"0f1e2d3c-0000-4000-8000-00000000000b", "idle", t + 10},
                                      {"9a8b7c6d-0000-4000-8000-00000000000c", "load", t + 5},
                                      {"31337000-0000-4000-8000-00000000000d", "", t + 20}});
    const auto a = id[0], c = id[2], d = id[3];
    catalog cat({path});
    CHECK(ids(cat.select({{std::to_string(c)}, {}, false})) == std::vector{c});
    CHECK(ids(cat.select({{"0f1e2d3c-0000-4000-8000-00000000000a"}, {}, false})) == std::vector{a});
    CHECK(ids(cat.select({{"9a8b"}, {}, false})) == std::vector{c}); // 4 characters will do
    // All digits: an id first; a uuid prefix when no run has that id.
    CHECK(ids(cat.select({{"3133"}, {}, false})) == std::vector{d});
    CHECK(ids(cat.select({{"1"}, {}, false})) == std::vector{a});
    CHECK_THAT(refusal(cat, {{"0f1e2d3c"}, {}, false}),
               ContainsSubstring("2 runs match") && ContainsSubstring("more characters"));
    CHECK_THAT(refusal(cat, {{"9a8"}, {}, false}), ContainsSubstring("no such run"));
    CHECK_THAT(refusal(cat, {{"999"}, {}, false}), ContainsSubstring("ids: 1, 3, 2, 4"));
    CHECK_THAT(refusal(cat, {{"nothing"}, {}, false}), ContainsSubstring("no such run"));
}

TEST_CASE("a label selects every run with it, --last the latest; unnamed means every measure "
          "run",
          "[db]")
{
    temp_dir dir;
    const std::string path = dir / "labels.db";
    const auto id = write_runs(
        path, {{"aaaa0000-0000-4000-8000-000000000001", "idle", t},
               {"bbbb0000-0000-4000-8000-000000000002", "idle", t + 10},
               {"cccc0000-0000-4000-8000-000000000003", "load", t + 5},
               {"ffff0000-0000-4000-8000-000000000004", "floor", t + 1, run_kind::floor}});
    const auto a = id[0], b = id[1], c = id[2], f = id[3];
    catalog cat({path});
    // Listed by start time, whatever the ids.
    std::vector<std::int64_t> listed;
    for (const auto& r : cat.runs())
        listed.push_back(r.id);
    CHECK(listed == std::vector{a, f, c, b});

    CHECK(ids(cat.select({{}, {"idle"}, false})) == std::vector{a, b});
    CHECK(ids(cat.select({{}, {"idle"}, true})) == std::vector{b});
    CHECK(ids(cat.select({{}, {"idle", "load"}, false})) == std::vector{a, c, b});
    CHECK(ids(cat.select({{std::to_string(a)}, {"idle"}, false})) == std::vector{a, b});
    CHECK(ids(cat.select({})) == std::vector{a, c, b}); // the floor run only when named
    CHECK(ids(cat.select({{}, {}, true})) == std::vector{b});
    CHECK(ids(cat.select({{std::to_string(f)}, {}, false})) == std::vector{f});
    CHECK_THAT(refusal(cat, {{}, {"busy"}, false}),
               ContainsSubstring("labels: 'floor', 'idle', 'load'"));
    CHECK(irqloop::analysis::floor_for(
              cat, *cat.select({{std::to_string(b)}, {}, false}).front()) == nullptr);
}

TEST_CASE("runs of several files: a copied run once, from the first file; a bare id that "
          "repeats is refused",
          "[db]")
{
    temp_dir dir;
    const std::string one = dir / "one.db", two = dir / "two.db";
    write_runs(one, {{"11110000-0000-4000-8000-000000000001", "shared", t},
                     {"11110000-0000-4000-8000-000000000002", "only-one", t + 1}});
    write_runs(two, {{"22220000-0000-4000-8000-000000000001", "only-two", t - 1},
                     {"11110000-0000-4000-8000-000000000001", "shared", t}});
    catalog cat({one, two});
    REQUIRE(cat.runs().size() == 3);
    CHECK(cat.runs()[0].meta.label == "only-two");
    CHECK(cat.runs()[0].db_path == two);
    CHECK(cat.runs()[1].meta.label == "shared");
    CHECK(cat.runs()[1].db_path == one);
    CHECK(cat.runs()[1].db_index == 0);
    CHECK_THAT(refusal(cat, {{"1"}, {}, false}),
               ContainsSubstring("2 runs match") && ContainsSubstring("give the run's uuid"));
    CHECK(cat.select({{"2222"}, {}, false}).front()->db_path == two);
    CHECK(cat.describe() == one + ", " + two);
}

TEST_CASE("a run read back: no commit yet, then committed figures; events in time order", "[db]")
{
    temp_dir dir;
    const std::string path = dir / "back.db";
    store s(path);
    const auto id = s.begin_run(sample_run("abcd0000-0000-4000-8000-000000000001", "x", t));
    {
        const auto r = get_run(s, id);
        CHECK(r.status == run_status::running);
        CHECK(r.partial());
        CHECK(!r.has_stats);
        CHECK(!r.end_unix_ns);
        CHECK(r.summary.max_ns == 0);
        CHECK(r.name() == "x");
        CHECK(r.meta.metadata.size() == 2);
    }
    auto c = simple_commit(0, t);
    s.commit_interval(id, c.view());
    // Written after the commit but earlier in time: a recovery note, a signal at the end.
    const event_row early{t + 500'000, 0, "warning", 0, "written late"};
    s.append_events(id, std::span(&early, 1));
    s.finish_run(id, run_status::interrupted, t + 20'000'000'000);

    const auto r = get_run(s, id);
    CHECK(r.status == run_status::interrupted);
    CHECK(r.partial());
    CHECK(r.has_stats);
    CHECK(r.end_unix_ns == t + 20'000'000'000);
    CHECK(r.summary.max_ns == c.summary.max_ns);
    // Above threshold over the answered stimuli (stimuli - lost), disturbed ones included.
    CHECK(r.pct_above() == Catch::Approx(100.0 * double(c.summary.above_threshold) /
                                         double(c.summary.stimuli - c.summary.lost)));
    const auto ev = events(s, id);
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].detail == "written late");
    CHECK(ev[1].kind == "lost");
    read_back rb(s, id);
    const auto totals = rb.cat.event_totals(*rb.run);
    REQUIRE(totals.size() == 2);
    CHECK(totals[0].kind == "lost");
    CHECK(totals[0].events == 1);
    CHECK(totals[0].value_sum == 1);
    CHECK(totals[1].kind == "warning");
    CHECK(totals[1].first_unix_ns == t + 500'000);
}

TEST_CASE("a catalog refuses a missing file, and empty files have nothing to select", "[db]")
{
    temp_dir dir;
    CHECK_THROWS_AS(catalog({dir / "absent.db"}), irqloop::error);
    CHECK_THROWS_AS(catalog(std::vector<std::string>{}), irqloop::error);
    {
        store s(dir / "empty.db");
    }
    catalog cat({dir / "empty.db"});
    CHECK(cat.runs().empty());
    CHECK_THAT(refusal(cat, {}), ContainsSubstring("holds no runs"));
}
