// SPDX-License-Identifier: MIT
// The table printer behind every reading command: text alignment, markdown, CSV quoting.
#include "error.hpp"
#include "table.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sstream>

using namespace irqloop::logger;

namespace
{

std::string print(const table& t, table_format f)
{
    std::ostringstream o;
    t.print(o, f);
    return o.str();
}

table sample_table()
{
    table t;
    t.add_column("label", table::align::left);
    t.add_column("avg (us)");
    t.add_row({"credit, vwfi=trap", "7.706"});
    t.add_row({"a|b \"q\"", "-"});
    t.add_row({"short"}); // padded with an empty cell
    return t;
}

} // namespace

TEST_CASE("tables print aligned text, escaped markdown and RFC 4180 CSV", "[report]")
{
    const auto t = sample_table();
    CHECK(print(t, table_format::text) == "label              avg (us)\n"
                                          "-----------------  --------\n"
                                          "credit, vwfi=trap     7.706\n"
                                          "a|b \"q\"                   -\n"
                                          "short\n");
    CHECK(print(t, table_format::markdown) == "| label | avg (us) |\n"
                                              "| --- | ---: |\n"
                                              "| credit, vwfi=trap | 7.706 |\n"
                                              "| a\\|b \"q\" | - |\n"
                                              "| short |  |\n\n");
    CHECK(print(t, table_format::csv) == "label,avg (us)\n"
                                         "\"credit, vwfi=trap\",7.706\n"
                                         "\"a|b \"\"q\"\"\",\n"
                                         "short,\n");
    table bad;
    bad.add_column("one");
    CHECK_THROWS_AS(bad.add_row({"1", "2"}), std::logic_error);
}

TEST_CASE("latencies, percentages and times format the same way everywhere", "[report]")
{
    CHECK(format_latency(7706.0, latency_unit::us) == "7.706");
    CHECK(format_latency(7706.4, latency_unit::ns) == "7706");
    CHECK(format_latency(7706.0, latency_unit::us, 1) == "7.7");
    CHECK(format_latency(-0.2, latency_unit::ns) == "0"); // never "-0"
    CHECK(format_latency(-10.0, latency_unit::ns) == "-10");
    CHECK(format_latency(std::nullopt, latency_unit::us) == "-");
    CHECK(format_percent(0.153528) == "0.153528");
    CHECK(format_percent(11.1111111) == "11.111111");
    CHECK(format_percent(0) == "0");
    CHECK(format_percent(50) == "50");
    CHECK(format_utc(1'767'225'600'123'456'789, 6) == "2026-01-01 00:00:00.123456");
    CHECK(format_utc(1'767'225'600'123'456'789, 0) == "2026-01-01 00:00:00");
    CHECK(parse_table_format("md") == table_format::markdown);
    CHECK_THROWS_AS(parse_table_format("html"), irqloop::error);
    CHECK_THROWS_AS(parse_latency_unit("ms"), irqloop::error);
}
