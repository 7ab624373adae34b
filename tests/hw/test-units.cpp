// SPDX-License-Identifier: MIT
#include "error.hpp"
#include "units.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace irqloop;

TEST_CASE("durations take every unit suffix and default to the given unit", "[units]")
{
    CHECK(parse_duration_ns("10us", "x") == 10'000);
    CHECK(parse_duration_ns("1.5ms", "x") == 1'500'000);
    CHECK(parse_duration_ns("8h", "x") == 8ll * 3600 * 1'000'000'000);
    CHECK(parse_duration_ns("2d", "x") == 2ll * 86400 * 1'000'000'000);
    CHECK(parse_duration_ns("3m", "x") == 180'000'000'000);
    CHECK(parse_duration_ns("250ns", "x") == 250);
    CHECK(parse_duration_ns("0", "x") == 0);
    CHECK(parse_duration_ns("7", "x", "us") == 7000);
}

TEST_CASE("a bad duration names the option and suggests the form", "[units]")
{
    for (const char* bad : {"", "us", "10 parsecs", "-5us", "10uss", "1e400s"}) {
        try {
            parse_duration_ns(bad, "--interval");
            FAIL("accepted '" << bad << "'");
        } catch (const error& e) {
            CHECK(e.what_failed() == "bad value for --interval");
            CHECK(e.message().find("irqloop: bad value for --interval: ") == 0);
            CHECK(e.status() == exit_usage);
        }
    }
}

TEST_CASE("counts take K, M and G suffixes and refuse fractions", "[units]")
{
    CHECK(parse_count("100M", "n") == 100'000'000);
    CHECK(parse_count("1G", "n") == 1'000'000'000);
    CHECK(parse_count("5K", "n") == 5000);
    CHECK(parse_count("1e6", "n") == 1'000'000);
    CHECK(parse_count("42", "n") == 42);
    CHECK_THROWS_AS(parse_count("1.5", "n"), error);
    CHECK_THROWS_AS(parse_count("10X", "n"), error);
    CHECK_THROWS_AS(parse_count("-1", "n"), error);
}

TEST_CASE("durations format with a unit that keeps them readable", "[units]")
{
    CHECK(format_duration(512) == "512ns");
    CHECK(format_duration(1234) == "1.234us");
    CHECK(format_duration(2.5e6) == "2.500ms");
    CHECK(format_duration(3723e9) == "1h02m03s");
}
