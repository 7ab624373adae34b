// SPDX-License-Identifier: MIT
#include "error.hpp"
#include "rows.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace irqloop;
using namespace irqloop::db;

TEST_CASE("run status and kind read back from the text schema.sql stores", "[db]")
{
    for (auto s :
         {run_status::running, run_status::complete, run_status::interrupted, run_status::failed})
        CHECK(parse_run_status(to_text(s)) == s);
    for (auto k : {run_kind::measure, run_kind::floor, run_kind::selftest})
        CHECK(parse_run_kind(to_text(k)) == k);
    // The exact words of schema.sql's CHECK constraints: files written before the enums.
    CHECK(to_text(run_status::interrupted) == "interrupted");
    CHECK(to_text(run_kind::selftest) == "selftest");

    SECTION("other text is refused, naming it and what is known")
    {
        try {
            parse_run_status("paused");
            FAIL("no throw");
        } catch (const irqloop::error& e) {
            CHECK(e.status() == exit_failure);
            CHECK_THAT(e.message(), Catch::Matchers::ContainsSubstring("unknown status 'paused'"));
            CHECK_THAT(e.message(), Catch::Matchers::ContainsSubstring(
                                        "running, complete, interrupted, failed"));
        }
        CHECK_THROWS_AS(parse_run_kind("Measure"), irqloop::error);
        CHECK_THROWS_AS(parse_run_kind(""), irqloop::error);
    }
}
