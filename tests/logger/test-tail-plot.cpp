// SPDX-License-Identifier: MIT
// plot --kind tail: the numbers drawn (--data) read back and held to tail's own figures, on a
// stored run of the sim board's GPD spike tail (shape +0.2), through the real binary.
#include "run-process.hpp"
#include "store.hpp"
#include "temp-dir.hpp"
#include "test-tail-runs.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace
{

struct tail_plot_row final {
    std::string series;
    double x = 0, y = 0;
    std::string lo, hi;
};

std::vector<tail_plot_row> tail_plot_rows(const std::string& path, std::string& header)
{
    std::ifstream in(path);
    std::getline(in, header);
    std::vector<tail_plot_row> out;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        long long id = 0;
        tail_plot_row r;
        f >> id >> r.series >> r.x >> r.y >> r.lo >> r.hi;
        out.push_back(r);
    }
    return out;
}

// "  p = 1e-06      348.6 us   95 % interval 238.2 us .. 588.7 us" -> its three figures in us.
bool tail_plot_level_line(const std::string& out, const std::string& p, double& v, double& lo,
                          double& hi)
{
    const auto at = out.find("  p = " + p + " ");
    if (at == std::string::npos)
        return false;
    return std::sscanf(out.c_str() + at + 6 + p.size(), " %lf us 95 %% interval %lf us .. %lf us",
                       &v, &lo, &hi) == 3;
}

} // namespace

using namespace irqloop;

TEST_CASE("plot --kind tail: --data holds tail's own return levels and threshold; a GPD run's "
          "QQ points lie on the diagonal",
          "[tail]")
{
    test::temp_dir dir;
    const auto path = dir.file("tail.db"), data = dir.file("tail.tsv");
    {
        db::store st(path);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002511", tail_test::gpd_model,
                                  300'000);
    }
    const auto plot = test::run_irqloop({"plot", "--db", path, "--kind", "tail", "--script", "-o",
                                         dir.file("t.svg"), "--data", data});
    INFO(plot.err);
    REQUIRE(plot.status == 0);
    CHECK(plot.out.find("set multiplot") != std::string::npos);
    CHECK(plot.out.find("mean residual life") != std::string::npos);
    CHECK(plot.out.find("QQ") != std::string::npos);
    CHECK(plot.out.find("return period") != std::string::npos);
    std::string header;
    const auto rows = tail_plot_rows(data, header);
    CHECK(header == "run_id\tseries\tx\ty\tlo\thi");
    std::map<std::string, std::vector<tail_plot_row>> by;
    for (const auto& r : rows)
        by[r.series].push_back(r);
    REQUIRE(by["threshold"].size() == 1);
    CHECK(by["mean_excess"].size() >= 30);
    CHECK(by["empirical"].size() >= 10);

    const auto tail = test::run_irqloop({"tail", "--db", path});
    INFO(tail.out);
    REQUIRE(tail.status == 0);
    // The marked threshold is the one tail chose ("threshold 50.0 us (automatic ...").
    double thr_us = 0;
    REQUIRE(std::sscanf(tail.out.c_str() + tail.out.find("\nthreshold ") + 1, "threshold %lf us",
                        &thr_us) == 1);
    CHECK(std::abs(by["threshold"][0].x / 1000 - thr_us) <= 0.05);
    // Every return level tail prints at 1e-6, 1e-9, 1e-12 is a drawn point, interval included.
    for (const auto& level : std::vector<std::pair<double, std::string>>{
             {1e-6, "1e-06"}, {1e-9, "1e-09"}, {1e-12, "1e-12"}}) {
        const double p = level.first;
        double v = 0, lo = 0, hi = 0;
        REQUIRE(tail_plot_level_line(tail.out, level.second, v, lo, hi));
        const auto it = std::find_if(by["level"].begin(), by["level"].end(),
                                     [&](const auto& r) { return std::abs(r.x / p - 1) < 1e-9; });
        REQUIRE(it != by["level"].end());
        CHECK(std::abs(it->y / 1000 - v) <= 0.05);
        CHECK(std::abs(std::stod(it->lo) / 1000 - lo) <= 0.05);
        CHECK(std::abs(std::stod(it->hi) / 1000 - hi) <= 0.05);
    }
    // The levels rise as p falls, each inside its interval.
    for (std::size_t i = 1; i < by["level"].size(); ++i)
        CHECK(by["level"][i].y > by["level"][i - 1].y);
    // QQ of a GPD-seeded run: the exceedances against the fitted GPD lie near y = x. Below
    // the top 5 % (whose few points scatter, as any sample's extremes do) each is within 10 %
    // of its fitted quantile, and the median within 2 %.
    const auto& qq = by["qq"];
    REQUIRE(qq.size() >= 50);
    std::vector<double> rel;
    for (std::size_t i = 0; i < qq.size() * 95 / 100; ++i) {
        const double r = std::abs(qq[i].y / qq[i].x - 1);
        CHECK(r < 0.10);
        rel.push_back(r);
    }
    std::nth_element(rel.begin(), rel.begin() + std::ptrdiff_t(rel.size() / 2), rel.end());
    CHECK(rel[rel.size() / 2] < 0.02);
    // The mean excess at the marked threshold is the fitted GPD's, sigma / (1 - xi), within
    // 15 % (about three standard errors of a mean over these ~1000 exceedances).
    double xi = 0, sigma_us = 0;
    const auto fit_at = tail.out.find("fit: generalized Pareto, shape ");
    REQUIRE(fit_at != std::string::npos);
    REQUIRE(std::sscanf(tail.out.c_str() + fit_at, "fit: generalized Pareto, shape %lf", &xi) == 1);
    const auto scale_at = tail.out.find("scale ", fit_at);
    REQUIRE(std::sscanf(tail.out.c_str() + scale_at, "scale %lf us", &sigma_us) == 1);
    CHECK(std::abs(by["threshold"][0].y / 1000 / (sigma_us / (1 - xi)) - 1) < 0.15);
    CHECK(by["mean_excess"].front().x < by["threshold"][0].x);
}

TEST_CASE("plot --kind tail: more than one run, or a run too thin to fit, is refused with "
          "status 2",
          "[tail]")
{
    test::temp_dir dir;
    const auto path = dir.file("tail.db");
    {
        db::store st(path);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002512", tail_test::gpd_model,
                                  100'000);
        tail_test::tail_model_run(st, "00000000-0000-4000-8000-000000002513",
                                  "model=normal,mean=8us,sd=1us,spike_p=1e-4,spike_min=50us,seed=3",
                                  100'000);
    }
    const auto two = test::run_irqloop(
        {"plot", "--db", path, "--kind", "tail", "--script", "-o", dir.file("t.svg")});
    CHECK(two.status == 2);
    CHECK(two.err == "irqloop: plot tail: it draws the fit of one run; 2 are selected (select "
                     "one with --run ID or --last)\n");
    const auto thin = test::run_irqloop({"plot", "--db", path, "--run", "2", "--kind", "tail",
                                         "--script", "-o", dir.file("t.svg")});
    CHECK(thin.status == 2);
    CHECK(thin.err.find("irqloop: plot tail: run 2: ") == 0);
    CHECK(thin.err.find("at least 50 needed") != std::string::npos);
    CHECK(thin.out.empty());
}
