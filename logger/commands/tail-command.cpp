// SPDX-License-Identifier: MIT
// irqloop tail: how bad can it get, with confidence (issue 25).
#include "tail-command.hpp"

#include "error.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

constexpr command_help tail_cmd_help = {
    "irqloop tail [--db F ...] [--run ID] [--label L] [--last] [--threshold T] [--exceed X ...]",
    "Estimate how bad a run's latency can get beyond what it measured: a generalized\n"
    "Pareto fit to the exceedances over a threshold (chosen by a stability rule unless\n"
    "given), with profile-likelihood intervals; the levels exceeded once in 1e6 ... 1e12\n"
    "samples, P(latency > X) per sample and per hour, the end point of a bounded tail,\n"
    "the samples still needed to show a percentile from the data alone, and the checks\n"
    "that say whether the run allows a fit. A generalized extreme-value fit to the\n"
    "windows' maxima (--stats-interval) is a second, independent estimate; the two\n"
    "agree when their intervals overlap (docs/methodology-tail.md)."};

constexpr double tail_cmd_levels[] = {1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12};
// The levels the block-maxima fit is compared at (each costs a profile over two parameters).
constexpr double tail_cmd_gev_levels[] = {1e-6, 1e-9, 1e-12};

bool tail_cmd_overlap(const analysis::tail_interval& a, const analysis::tail_interval& b)
{
    const bool a_below_b = !a.hi_open && !b.lo_open && a.hi < b.lo;
    const bool b_below_a = !b.hi_open && !a.lo_open && b.hi < a.lo;
    return !a_below_b && !b_below_a;
}

std::string tail_us(double ns)
{
    char b[48];
    if (!std::isfinite(ns))
        return "unbounded";
    std::snprintf(b, sizeof b, "%.1f us", ns / 1000);
    return b;
}

std::string tail_prob(double p)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.2g", p);
    return b;
}

std::string tail_interval_us(const analysis::tail_interval& ci)
{
    return (ci.lo_open ? "<= " : "") + tail_us(ci.lo) + " .. " +
           (ci.hi_open ? "unbounded" : tail_us(ci.hi));
}

} // namespace

parsed<tail_request> parse_tail(int argc, char** argv)
{
    tail_request r;
    std::string threshold, confidence = "0.95";
    std::vector<std::string> exceed;
    po::options_description desc("options");
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("threshold", po::value(&threshold),
        "fit threshold, e.g. 40us (default: the automatic rule, docs/methodology-tail.md)");
    add("exceed", po::value(&exceed),
        "P(latency > X) per sample and per hour, e.g. 100us; repeatable (default: the run's "
        "max)");
    add("confidence", po::value(&confidence)->default_value(confidence),
        "confidence of the intervals, 0.5 to 0.999");
    return parse_reading(argc, argv, desc, tail_cmd_help, r, [&] {
        if (!threshold.empty())
            r.threshold_ns =
                parse_duration_ns_in(threshold, "--threshold", 1, 3600LL * 1'000'000'000, "ns");
        for (const auto& x : exceed)
            r.exceed_ns.push_back(
                parse_duration_ns_in(x, "--exceed", 1, 3600LL * 1'000'000'000, "ns"));
        r.confidence = parse_number(confidence, "--confidence");
        if (!(r.confidence >= 0.5 && r.confidence <= 0.999))
            throw error("bad value for --confidence: '" + confidence + "'",
                        "use a number from 0.5 to 0.999, e.g. 0.95");
    });
}

analysis::tail_data read_tail_data(db::catalog& cat, const db::run_record& run)
{
    analysis::tail_data d;
    d.samples = run.summary.samples;
    for (const auto& b : cat.histogram(run))
        d.bins.push_back({double(b.lo_ns), double(b.hi_ns), b.count});
    const auto windows = cat.intervals(run);
    std::vector<std::int64_t> ends;
    for (const auto& w : windows) {
        d.window_samples.push_back(w.samples);
        d.window_max_ns.push_back(double(w.max_ns));
        ends.push_back(w.end_unix_ns);
    }
    // Disturbed exceedances are kept by their proven lower bound but are not in the
    // histogram's statistics: the fit reads the samples the histogram counts.
    for (const auto& s : cat.exceedances(run)) {
        if (s.flags & (db::flag_disturbed | db::flag_lost))
            continue;
        const auto w =
            std::size_t(std::upper_bound(ends.begin(), ends.end(), s.unix_ns) - ends.begin());
        d.exact.push_back({double(s.latency_ns), s.seq, std::min(w, ends.size() - 1)});
    }
    d.exact_above_ns = double(run.meta.threshold_ns);
    d.exact_complete = run.summary.exceedances_dropped == 0;
    return d;
}

tail_run_result fit_tail_run(db::catalog& cat, const db::run_record& one, const tail_request& r)
{
    const auto* run = &one;
    tail_run_result res;
    res.run = run;
    const auto d = read_tail_data(cat, *run);
    analysis::tail_options opt;
    opt.confidence = r.confidence;
    if (r.threshold_ns)
        opt.threshold_ns = double(*r.threshold_ns);
    res.fit = analysis::fit_tail(d, opt);
    const double secs =
        run->end_unix_ns ? double(*run->end_unix_ns - run->meta.start_unix_ns) / 1e9 : 0;
    res.rate_per_s = secs > 0 ? double(run->summary.samples) / secs : 0;
    if (res.fit.fitted && res.fit.exceedances >= opt.min_exceedances) {
        for (double p : tail_cmd_levels)
            res.levels.push_back(analysis::return_level(d, res.fit, p, r.confidence));
        std::vector<std::int64_t> xs = r.exceed_ns;
        if (xs.empty())
            xs.push_back(run->summary.max_ns);
        for (auto x : xs)
            res.exceed.push_back(analysis::p_exceed(d, res.fit, double(x), r.confidence));
    }
    double block = 0;
    const auto maxima = analysis::block_maxima(d, block);
    res.gev = analysis::fit_gev(maxima, block, r.confidence);
    if (res.gev.fitted)
        for (double p : tail_cmd_gev_levels)
            res.gev_levels.push_back(analysis::gev_return_level(maxima, res.gev, p, r.confidence));
    return res;
}

tail_outcome execute_tail(const tail_request& r)
{
    tail_outcome o;
    o.cat = std::make_unique<db::catalog>(r.sel.dbs);
    for (const auto* run : o.cat->select(r.sel.sel))
        o.runs.push_back(fit_tail_run(*o.cat, *run, r));
    return o;
}

void print_tail_run(std::ostream& out, const tail_run_result& res, double confidence,
                    bool with_header)
{
    const int pct = int(std::lround(confidence * 100));
    const auto& f = res.fit;
    const auto& run = *res.run;
    if (with_header) {
        out << run.name() << ": " << run.summary.samples << " samples";
        if (res.rate_per_s > 0)
            out << " at " << std::lround(res.rate_per_s) << "/s";
        out << ", max " << tail_us(double(run.summary.max_ns)) << "\n";
    }
    if (run.partial())
        out << "  (partial run: the figures cover it up to its last commit)\n";
    out << "threshold " << tail_us(f.params.threshold_ns) << " (" << f.threshold_rule << "), "
        << f.exceedances << " exceedances"
        << (f.from_histogram ? " (histogram buckets, interval-censored)" : " (exact)") << "\n";
    out << "checks:\n";
    for (const auto& c : f.checks)
        out << "  " << c.name << std::string(14 - std::min<std::size_t>(13, c.name.size()), ' ')
            << (!c.assessed ? "n/a "
                : c.passed  ? "ok  "
                            : "FAIL")
            << "  " << c.detail << "\n";
    if (res.levels.empty()) {
        out << "no tail estimate: too few exceedances to fit; the observed max is all this "
               "run shows\n";
        return;
    }
    if (!f.trustworthy())
        out << "NOT CLAIMED: a check failed (above); the figures below are printed for "
               "diagnosis only and hold under assumptions this run breaks\n";
    char line[256];
    std::snprintf(line, sizeof line,
                  "fit: generalized Pareto, shape %.3f (%d %% interval %.3f .. %.3f%s), "
                  "scale %s\n",
                  f.params.xi, pct, f.xi_ci.lo, f.xi_ci.hi, f.xi_ci.lo_open ? ", at -1" : "",
                  tail_us(f.params.sigma_ns).c_str());
    out << line;
    if (f.end_point_ci)
        out << "end point: " << tail_us(f.params.end_point()) << " (" << pct << " % interval "
            << tail_interval_us(*f.end_point_ci) << ")\n";
    else
        out << "end point: none claimed (the shape's interval is not all below 0)\n";
    out << "return levels (exceeded once in 1/p samples):\n";
    for (const auto& l : res.levels) {
        std::snprintf(line, sizeof line, "  p = %-6s %12s   %d %% interval %s\n",
                      tail_prob(l.p).c_str(), tail_us(l.level_ns).c_str(), pct,
                      tail_interval_us(l.ci).c_str());
        out << line;
    }
    out << "P(latency > X):\n";
    for (const auto& e : res.exceed) {
        const double per_hour = res.rate_per_s * 3600;
        std::snprintf(line, sizeof line,
                      "  X = %s: %s per sample (%s .. %s%s); at %.0f/s, %s per hour "
                      "(%s .. %s)\n",
                      tail_us(e.level_ns).c_str(), tail_prob(e.p).c_str(),
                      tail_prob(e.ci.lo).c_str(), tail_prob(e.ci.hi).c_str(),
                      e.ci.hi_open ? "+" : "", res.rate_per_s, tail_prob(e.p * per_hour).c_str(),
                      tail_prob(e.ci.lo * per_hour).c_str(), tail_prob(e.ci.hi * per_hour).c_str());
        out << line;
    }
    if (!res.gev.fitted) {
        out << "block maxima: " << res.gev.detail << "\n";
    } else {
        const auto& g = res.gev;
        std::snprintf(line, sizeof line,
                      "block maxima: generalized extreme value fit to %zu window maxima "
                      "(%.0f samples each): shape %.3f (%d %% interval %.3f .. %.3f), "
                      "location %s, scale %s\n",
                      g.blocks, g.params.block_samples, g.params.xi, pct, g.xi_ci.lo, g.xi_ci.hi,
                      tail_us(g.params.mu_ns).c_str(), tail_us(g.params.sigma_ns).c_str());
        out << line;
        std::vector<std::string> differ;
        if (!tail_cmd_overlap(g.xi_ci, f.xi_ci))
            differ.push_back("the shape");
        for (const auto& l : res.gev_levels) {
            const auto it = std::find_if(res.levels.begin(), res.levels.end(),
                                         [&](const auto& x) { return x.p == l.p; });
            const bool agree = it == res.levels.end() || tail_cmd_overlap(l.ci, it->ci);
            if (!agree)
                differ.push_back("p = " + tail_prob(l.p));
            std::snprintf(line, sizeof line, "  p = %-6s %12s   %d %% interval %s%s\n",
                          tail_prob(l.p).c_str(), tail_us(l.level_ns).c_str(), pct,
                          tail_interval_us(l.ci).c_str(), agree ? "" : "  (differs)");
            out << line;
        }
        if (differ.empty())
            out << "agreement: the two estimates agree (their " << pct
                << " % intervals of the shape and of each level above overlap)\n";
        else {
            out << "agreement: NO: the two estimates differ at ";
            for (std::size_t i = 0; i < differ.size(); ++i)
                out << (i ? ", " : "") << differ[i];
            out << " (intervals apart): the threshold may be too low or the windows too "
                   "short for either model to hold\n";
        }
    }
    out << "samples still needed to show a percentile from the data alone (none above it, " << pct
        << " %):\n";
    for (double p : {1e-6, 1e-9, 1e-12}) {
        const double need = analysis::samples_to_show(p, confidence);
        const double more = std::max(0.0, need - double(run.summary.samples));
        std::snprintf(line, sizeof line, "  p = %-6s %.3g in all, %.3g more%s\n",
                      tail_prob(p).c_str(), need, more,
                      res.rate_per_s > 0
                          ? (" (" + format_duration(more / res.rate_per_s * 1e9) + ")").c_str()
                          : "");
        out << line;
    }
}

void add_tail_report_options(po::options_description& desc, bool& tail,
                             std::vector<std::string>& exceed)
{
    auto add = desc.add_options();
    add("tail", po::bool_switch(&tail),
        "add a tail section: the run's extreme-value fit as irqloop tail prints it (checks, "
        "return levels, end point, P(latency > X), the block-maxima fit and whether the two "
        "agree)");
    add("exceed", po::value(&exceed),
        "with the tail section (implies --tail): P(latency > X) per sample and per hour, e.g. "
        "100us; repeatable (default: the run's max)");
}

std::optional<tail_request> tail_report_request(bool tail, const std::vector<std::string>& exceed)
{
    if (!tail && exceed.empty())
        return std::nullopt;
    tail_request r;
    for (const auto& x : exceed)
        r.exceed_ns.push_back(parse_duration_ns_in(x, "--exceed", 1, 3600LL * 1'000'000'000, "ns"));
    return r;
}

void print_tail_section(std::ostream& out, table_format fmt, const tail_run_result& res,
                        double confidence)
{
    print_heading(out, fmt, "tail (irqloop tail: extreme-value fit, docs/methodology-tail.md)");
    std::ostringstream text;
    print_tail_run(text, res, confidence, false);
    if (fmt == table_format::markdown) {
        out << "```\n" << text.str() << "```\n\n";
        return;
    }
    std::istringstream lines(text.str());
    for (std::string l; std::getline(lines, l);)
        print_note(out, fmt, l);
}

int present_tail(const tail_outcome& o, const tail_request& r)
{
    for (const auto& res : o.runs) {
        print_tail_run(std::cout, res, r.confidence, true);
        std::cout << "\n";
    }
    return 0;
}

int tail_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_tail, execute_tail, present_tail, std::cout);
}

} // namespace irqloop::logger
