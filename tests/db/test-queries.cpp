// SPDX-License-Identifier: MIT
#include "queries.hpp"
#include "store-fixtures.hpp"
#include "store.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace irqloop;
using namespace irqloop::db;
using namespace irqloop::db::test;

TEST_CASE("find_run accepts last, an id, a uuid or its prefix, and a label", "[db]")
{
    constexpr std::int64_t t = 1'790'000'000'000'000'000;
    temp_dir dir;
    store s(dir.file("find.db"));
    auto a = s.begin_run(sample_run("0f1e2d3c-0000-4000-8000-00000000000a", "idle", t));
    auto b = s.begin_run(sample_run("0f1e2d3c-0000-4000-8000-00000000000b", "idle", t + 10));
    auto c = s.begin_run(sample_run("9a8b7c6d-0000-4000-8000-00000000000c", "load", t + 5));
    CHECK(find_run(s, "last")->id == b);
    CHECK(find_run(s, std::to_string(c))->id == c);
    CHECK(find_run(s, "0f1e2d3c-0000-4000-8000-00000000000a")->id == a);
    CHECK(find_run(s, "9a8b7c6d")->id == c);
    CHECK_THROWS_AS(find_run(s, "0f1e2d3c"), irqloop::error); // two runs start so
    CHECK(find_run(s, "idle")->id == b);                      // the latest with that label
    CHECK(find_run(s, "load")->id == c);
    CHECK(!find_run(s, "nothing"));
    CHECK(!find_run(s, "999"));
    CHECK(!find_run(s, ""));
    auto all = list_runs(s);
    REQUIRE(all.size() == 3);
    CHECK(all[0].id == a);
    CHECK(all[1].id == c);
    CHECK(all[2].id == b);
    CHECK(!get_run(s, 12345));
}
