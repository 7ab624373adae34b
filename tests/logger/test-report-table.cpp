// SPDX-License-Identifier: MIT
// The table printer behind every reading command: text alignment, markdown, CSV quoting; and
// the statistics pool behind report's timeline and compare's pooled rows.
#include "error.hpp"
#include "stats-pool.hpp"
#include "table.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

using namespace irqloop;
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
    CHECK(format_latency(std::nullopt, latency_unit::us) == absent_value); // "—", never 0
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

TEST_CASE("the statistics pool of report and compare equals the figures of the whole population",
          "[report]")
{
    // Three windows of known samples, one of them empty, and the population they make.
    const std::vector<std::vector<std::int64_t>> windows = {
        {7000, 7100, 7300, 9000}, {}, {6900, 8000, 8000, 12'000, 7500}};
    std::vector<db::interval_row> rows;
    std::vector<std::int64_t> all;
    stats_pool pool;
    for (std::size_t i = 0; i < windows.size(); ++i) {
        const auto& w = windows[i];
        db::interval_row r;
        r.index = i;
        r.samples = w.size();
        r.lost = i;
        r.p99_ns = w.empty() ? 0 : 100 * std::int64_t(i + 1);
        if (!w.empty()) {
            r.min_ns = *std::min_element(w.begin(), w.end());
            r.max_ns = *std::max_element(w.begin(), w.end());
            double sum = 0, sq = 0;
            for (auto x : w)
                sum += double(x);
            r.mean_ns = sum / double(w.size());
            for (auto x : w)
                sq += (double(x) - r.mean_ns) * (double(x) - r.mean_ns);
            r.stddev_ns = std::sqrt(sq / double(w.size()));
        }
        pool.add(r.samples, r.min_ns, r.max_ns, r.mean_ns, r.stddev_ns);
        rows.push_back(r);
        all.insert(all.end(), w.begin(), w.end());
    }
    double sum = 0, sq = 0;
    for (auto x : all)
        sum += double(x);
    const double mean = sum / double(all.size());
    for (auto x : all)
        sq += (double(x) - mean) * (double(x) - mean);
    const double sd = std::sqrt(sq / double(all.size()));

    CHECK(pool.samples() == 9);
    CHECK(pool.min_ns() == 6900);
    CHECK(pool.max_ns() == 12'000);
    CHECK(std::abs(pool.mean_ns() - mean) < 1e-9);
    CHECK(std::abs(pool.stddev_ns() - sd) < 1e-6);

    const auto m = merge_windows(rows, 0, rows.size());
    CHECK(m.index == 0);
    CHECK(m.samples == 9);
    CHECK(m.min_ns == 6900);
    CHECK(m.max_ns == 12'000);
    CHECK(m.mean_ns == pool.mean_ns());
    CHECK(m.stddev_ns == pool.stddev_ns());
    CHECK(m.lost == 0 + 1 + 2);
    CHECK(m.p99_ns == 300); // the largest window p99, the empty window's 0 ignored

    stats_pool none;
    none.add(0, 1, 2, 3, 4);
    CHECK(none.empty());
    CHECK(none.mean_ns() == 0);
    const auto only_empty = merge_windows(rows, 1, 2);
    CHECK(only_empty.samples == 0);
    CHECK(only_empty.lost == 1);
}
