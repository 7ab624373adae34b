// SPDX-License-Identifier: MIT
// The sim board's truth, stored with the run (schema version 6): a real `irqloop run` of the
// computed far end, read back from its SQLite file, and report's and worst's truth columns.
// Every check is exact: the far end is computed on the logger's own clock, so a busy machine
// moves the samples, never the relation between the truth and the bracket.
#include "read.hpp"
#include "table.hpp"
#include "test-report-fixtures.hpp"

#include <catch2/catch_test_macros.hpp>

#include <map>
#include <optional>

using namespace irqloop;
using namespace irqloop::logger;
using namespace irqloop::logger::report_test;
using irqloop::test::run_irqloop;

namespace
{

std::string us(std::int64_t ns)
{
    return format_latency(double(ns), latency_unit::us);
}

} // namespace

TEST_CASE("sim truth: every answered raw sample's truth lies in its bracket, each window's "
          "truth max is the max of its raw truths, worst rows carry the same truth, and report "
          "and worst print it",
          "[report][sim]")
{
    temp_dir dir;
    const auto path = dir.file("truth.db");
    // Spikes at 1 %, so the worst list holds drawn delays of 60 to 200 us.
    const auto run = run_irqloop(
        {"run",
         "--hw",
         "sim:model=normal,mean=8us,sd=1us,spike_p=1e-2,spike_min=60us,spike_max=200us,seed=7",
         "--samples",
         "5000",
         "--interval",
         "100us",
         "--jitter",
         "10us",
         "--threshold",
         "30us",
         "--stats-interval",
         "100ms",
         "--raw",
         "--label",
         "truth",
         "--progress",
         "none",
         "--db",
         path});
    INFO(run.out << run.err);
    REQUIRE(run.status == 0);

    db::catalog cat({path});
    REQUIRE(cat.runs().size() == 1);
    const auto& r = cat.runs()[0];
    REQUIRE(r.summary.stimuli == 5000);

    // Every raw sample, in seq order.
    std::vector<db::sample_row> raw;
    cat.for_each_raw(r, [&](const db::sample_row& s) { raw.push_back(s); });
    REQUIRE(raw.size() == 5000);
    std::uint64_t answered = 0, with_truth = 0, clean = 0, clean_within = 0, disturbed = 0,
                  disturbed_within = 0;
    std::string first_outside;
    for (const auto& s : raw) {
        if (s.flags & db::flag_lost)
            continue;
        ++answered;
        if (!s.truth_ns)
            continue;
        ++with_truth;
        const bool within =
            s.latency_ns - s.bracket_ns <= *s.truth_ns && *s.truth_ns <= s.latency_ns;
        if (!within && first_outside.empty())
            first_outside = "seq " + std::to_string(s.seq) + ": latency " +
                            std::to_string(s.latency_ns) + " bracket " +
                            std::to_string(s.bracket_ns) + " truth " + std::to_string(*s.truth_ns);
        if (s.flags & db::flag_disturbed) {
            ++disturbed;
            disturbed_within += within;
        } else {
            ++clean;
            clean_within += within;
        }
    }
    INFO("first sample outside its bracket: " << first_outside);
    CHECK(answered == 5000 - r.summary.lost);
    CHECK(with_truth == answered); // the model draws no loss: every answered edge has a truth
    CHECK(clean > 0);
    CHECK(clean_within == clean);
    CHECK(disturbed_within == disturbed);

    // The windows cut the raw stream in seq order: each takes its samples, lost and disturbed.
    const auto iv = cat.intervals(r);
    REQUIRE(!iv.empty());
    std::size_t at = 0;
    std::int64_t run_truth_max = -1;
    for (const auto& w : iv) {
        const std::size_t n = w.samples + w.lost + w.disturbed;
        REQUIRE(at + n <= raw.size());
        std::optional<std::int64_t> max;
        for (std::size_t i = at; i < at + n; ++i)
            if (!(raw[i].flags & db::flag_lost) && raw[i].truth_ns &&
                (!max || *raw[i].truth_ns > *max))
                max = raw[i].truth_ns;
        INFO("window " << w.index);
        CHECK(w.truth_max_ns == max);
        if (max)
            run_truth_max = std::max(run_truth_max, *max);
        at += n;
    }
    CHECK(at == raw.size());
    REQUIRE(run_truth_max > 0);

    // The worst rows carry the truth of the same sample.
    std::map<std::uint64_t, std::optional<std::int64_t>> truth_of;
    for (const auto& s : raw)
        truth_of[s.seq] = s.truth_ns;
    const auto worst = cat.worst(r);
    REQUIRE(!worst.empty());
    for (const auto& w : worst) {
        INFO("worst seq " << w.seq);
        REQUIRE(w.truth_ns);
        CHECK(w.truth_ns == truth_of.at(w.seq));
    }
    for (const auto& e : cat.exceedances(r))
        CHECK(e.truth_ns == truth_of.at(e.seq));

    // report: the truth beside the measured max, the worst sample's truth, and a truth column.
    const auto text = run_cmd(report_command, {"report", "--db", path, "--last"});
    INFO(text.out);
    REQUIRE(text.status == 0);
    CHECK(text.out.find("== truth (sim) vs measured ==\n") != std::string::npos);
    const auto truth_part = text.out.substr(text.out.find("== truth (sim) vs measured =="));
    const auto max_line = truth_part.substr(truth_part.find("\nmax "), 200);
    CHECK(max_line.find(" " + us(run_truth_max) + " ") != std::string::npos);
    CHECK(max_line.find(" " + us(r.summary.max_ns)) != std::string::npos);
    CHECK(truth_part.find("worst sample, seq " + std::to_string(worst[0].seq)) !=
          std::string::npos);
    CHECK(truth_part.find("the " + std::to_string(worst.size()) +
                          " stored worst samples with a truth: " + std::to_string(worst.size()) +
                          " lie within their bracket") != std::string::npos);
    const auto worst_part = text.out.substr(text.out.find("== worst 10 =="));
    const auto header = worst_part.substr(0, worst_part.find('\n', worst_part.find("rank")));
    CHECK(header.find("latency (us)") < header.find("truth (us)"));
    CHECK(header.find("truth (us)") < header.find("bracket (us)"));
    CHECK(worst_part.find(us(*worst[0].truth_ns)) != std::string::npos);

    const auto csv = run_cmd(report_command, {"report", "--db", path, "--format", "csv"});
    REQUIRE(csv.status == 0);
    CHECK(csv.out.find("# truth (sim) vs measured\nfigure,truth (us),measured (us),measured - "
                       "truth (us)\nmax," +
                       us(run_truth_max) + ",") != std::string::npos);
    const auto md = run_cmd(report_command, {"report", "--db", path, "--format", "markdown"});
    REQUIRE(md.status == 0);
    CHECK(md.out.find("## truth (sim) vs measured\n\n") != std::string::npos);

    // worst lists the truth beside the latency too.
    const auto w = run_cmd(
        worst_command, {"worst", "--db", path, "--top", "3", "--unit", "ns", "--format", "csv"});
    INFO(w.out);
    REQUIRE(w.status == 0);
    CHECK(w.out.find("latency (ns),truth (ns),bracket (ns)") != std::string::npos);
    CHECK(w.out.find("," + std::to_string(*worst[0].truth_ns) + ",") != std::string::npos);
}
