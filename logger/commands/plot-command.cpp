// SPDX-License-Identifier: MIT
// irqloop plot: gnuplot histograms (OSADL style), timelines and tail CDFs of one or more runs.
#include "plot-command.hpp"

#include "error.hpp"
#include "output-file.hpp"
#include "plot-tail.hpp"
#include "plot.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

double in_unit(double ns, latency_unit u)
{
    return u == latency_unit::us ? ns / 1e3 : ns;
}

std::string num(double v)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

std::string width_text(std::int64_t ns)
{
    if (ns % 1'000'000 == 0)
        return std::to_string(ns / 1'000'000) + " ms";
    if (ns % 1000 == 0)
        return std::to_string(ns / 1000) + " us";
    return std::to_string(ns) + " ns";
}

/** @brief Series names: the label, or "run N"; a label shared by several runs gets " (run N)". */
std::vector<std::string> series_names(const std::vector<const db::run_record*>& runs)
{
    std::vector<std::string> out;
    for (const auto* r : runs) {
        std::size_t same = 0;
        for (const auto* o : runs)
            same += o->name() == r->name();
        out.push_back(same > 1 && !r->meta.label.empty()
                          ? r->meta.label + " (run " + std::to_string(r->id) + ")"
                          : r->name());
        if (r->partial())
            out.back() += " [partial]";
    }
    return out;
}

/** @brief A gnuplot inline data block: "$NAME << EOD", the lines @p rows writes, "EOD". */
template <class Rows> void data_block(std::ostream& s, const std::string& name, Rows rows)
{
    s << '$' << name << " << EOD\n";
    rows();
    s << "EOD\n";
}

/** @brief A window's max as every table prints it (format_max): its upper bound and bracket,
 *  the answers it lost and the run's timeout. */
max_figure window_figure(const db::interval_row& w, const db::run_record& r)
{
    return {w.samples ? std::optional<std::int64_t>(w.max_ns) : std::nullopt, w.max_bracket_ns,
            w.lost, r.meta.timeout_ns};
}

/** @brief What a window's max proves: the clean max, or a disturbed one's lower bound. */
std::int64_t proves_ns(const db::interval_row& w)
{
    return w.max_ns - w.max_bracket_ns;
}

/** @brief Elapsed seconds as a tick label: "20 s", "5:00", "2:00:00". */
std::string elapsed_text(double s)
{
    char b[48];
    const long long t = std::llround(s);
    if (s < 60 || std::abs(s - double(t)) > 1e-6)
        std::snprintf(b, sizeof b, "%g s", s);
    else if (t < 3600)
        std::snprintf(b, sizeof b, "%lld:%02lld", t / 60, t % 60);
    else
        std::snprintf(b, sizeof b, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
    return b;
}

/**
 * Runs side by side (heatmap, long-term): each run on its own stretch of the x axis, as long as
 * the run, in the order selected, a small gap between stretches. Runs recorded hours or weeks
 * apart then share the picture as equals, where one wall-clock axis would squeeze each into a
 * sliver at its edge. A run's x is its start's stretch plus the seconds since its start.
 */
struct side_by_side final {
    std::vector<double> offset_s, span_s; ///< per run: where its stretch starts, how long it is
    std::vector<std::int64_t> start_ns;   ///< per run: its start (runs.start_unix_ns)
    double gap_s = 0;

    side_by_side(db::catalog& cat, const std::vector<const db::run_record*>& runs)
    {
        double total = 0;
        for (const auto* r : runs) {
            std::int64_t end = r->end_unix_ns.value_or(r->meta.start_unix_ns);
            for (const auto& w : cat.intervals(*r))
                end = std::max(end, w.end_unix_ns);
            start_ns.push_back(r->meta.start_unix_ns);
            span_s.push_back(std::max(1e-3, double(end - r->meta.start_unix_ns) / 1e9));
            total += span_s.back();
        }
        gap_s = runs.size() > 1 ? total * 0.03 : 0;
        double x = 0;
        for (double span : span_s) {
            offset_s.push_back(x);
            x += span + gap_s;
        }
    }
    double x(std::size_t run, std::int64_t unix_ns) const
    {
        return offset_s[run] + double(unix_ns - start_ns[run]) / 1e9;
    }
    double end() const { return offset_s.empty() ? 1 : offset_s.back() + span_s.back(); }

    /** @brief The x range, and a dotted line between two runs' stretches. */
    std::string frame() const
    {
        std::ostringstream s;
        s << "set xrange [" << num(-gap_s / 2) << ':' << num(end() + gap_s / 2) << "]\n";
        for (std::size_t i = 1; i < offset_s.size(); ++i)
            s << "set arrow from " << num(offset_s[i] - gap_s / 2) << ", graph 0 to "
              << num(offset_s[i] - gap_s / 2) << ", graph 1 nohead dt 3 lc rgb '#888888' front\n";
        return s.str();
    }

    /** @brief Ticks at the seconds since each run's start, and each run's name and start (UTC)
     *  written at the top of its stretch. */
    std::string elapsed_ticks(const std::vector<std::string>& names) const
    {
        double longest = 0;
        for (double span : span_s)
            longest = std::max(longest, span);
        // About 10 ticks over the whole axis, on a step a reader counts in.
        const double want = end() / 10;
        double step = 86400;
        for (double c : {0.001, 0.002, 0.005, 0.01,  0.02,  0.05,   0.1,    0.2,    0.5,
                         1.,    2.,    5.,    10.,   15.,   30.,    60.,    120.,   300.,
                         600.,  900.,  1800., 3600., 7200., 10800., 21600., 43200., 86400.})
            if (c >= want) {
                step = c;
                break;
            }
        std::ostringstream s;
        s << "set xtics (";
        bool first = true;
        for (std::size_t i = 0; i < offset_s.size(); ++i)
            // A stretch's last tick too near the next stretch's 0 is left out: the labels would
            // overlap.
            for (double t = 0; t <= span_s[i] + step * 1e-9 &&
                               (i + 1 == offset_s.size() || t < span_s[i] + gap_s - step * 0.6);
                 t += step) {
                s << (first ? "" : ", ") << gnuplot_quote(elapsed_text(t)) << ' '
                  << num(offset_s[i] + t);
                first = false;
            }
        s << ")\n";
        for (std::size_t i = 0; i < offset_s.size(); ++i)
            s << "set label " << i + 10 << ' '
              << gnuplot_quote(names[i] + ", from " + format_utc(start_ns[i], 0)) << " at first "
              << num(offset_s[i]) << ", graph 0.97 left front font ',9' "
              << "noenhanced\n";
        return s.str();
    }
};

/**
 * @brief One series per run: the data blocks $run0, $run1, ... with the lines @p rows(i) writes
 * for run i, then the plot command drawing each with @p style under the run's series name.
 */
template <class Rows>
void plot_runs(std::ostream& s, const std::vector<const db::run_record*>& runs, const char* style,
               Rows rows, const std::vector<std::string>& more = {})
{
    for (std::size_t i = 0; i < runs.size(); ++i)
        data_block(s, "run" + std::to_string(i), [&] { rows(i); });
    const auto names = series_names(runs);
    s << "plot ";
    for (std::size_t i = 0; i < names.size(); ++i)
        s << (i ? ", \\\n     " : "") << "$run" << i << " using 1:2 with " << style << " lw 1.5 lc "
          << i + 1 << " title " << gnuplot_quote(names[i]);
    for (const auto& m : more)
        s << ", \\\n     " << m;
    s << '\n';
}

/**
 * @brief The lost answers of each run, which no histogram bucket holds, as a marker at the
 * timeout (at height @p y(i) for run i): the data blocks $lostN and the plot clauses,
 * "NAME: lost (N), no answer within T". Nothing for runs that lost none.
 */
template <class Y>
std::vector<std::string> lost_markers(std::ostream& s,
                                      const std::vector<const db::run_record*>& runs,
                                      const plot_request& o, Y y)
{
    std::vector<std::string> out;
    const auto names = series_names(runs);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = *runs[i];
        if (!r.summary.lost)
            continue;
        const std::string n = "lost" + std::to_string(i);
        const std::string text = "lost (" + format_count(r.summary.lost) + ")";
        data_block(s, n, [&] {
            s << num(in_unit(double(r.meta.timeout_ns), o.unit)) << ' ' << num(y(i)) << " \""
              << text << "\"\n";
        });
        const std::string c = " lc " + std::to_string(i + 1);
        out.push_back("$" + n + " using 1:2 with impulses lw 4" + c + " notitle");
        out.push_back("$" + n + " using 1:2 with points pt 9 ps 1.5" + c + " title " +
                      gnuplot_quote(names[i] + ": " + text + ", no answer within the timeout " +
                                    format_latency(double(r.meta.timeout_ns), o.unit) + " " +
                                    unit_name(o.unit)));
        out.push_back("$" + n + " using 1:2:3 with labels offset 0,1 font ',9' tc lt " +
                      std::to_string(i + 1) + " notitle");
    }
    return out;
}

/**
 * @brief "set logscale x" where a histogram or CDF needs it: --logx, or, unless --linear, data
 * from @p lo_ns to @p hi_ns spanning more than two decades, where a linear axis would squeeze
 * the body of a run into the first pixels beside its tail.
 */
std::string latency_axis(const plot_request& o, std::int64_t lo_ns, std::int64_t hi_ns)
{
    if (o.logx)
        return {}; // preamble() set it
    if (o.linear || double(hi_ns) <= 100 * double(std::max<std::int64_t>(lo_ns, 1)))
        return {};
    return "set logscale x\n";
}

/** @brief The largest timeout of the runs that lost answers; 0 when none did. */
std::int64_t lost_reach_ns(const std::vector<const db::run_record*>& runs)
{
    std::int64_t hi = 0;
    for (const auto* r : runs)
        if (r->summary.lost)
            hi = std::max(hi, r->meta.timeout_ns);
    return hi;
}

/** @brief The script's first lines: the terminal of -o's type, drawing into @p path. */
std::string script_head(const plot_request& o, const std::string& path)
{
    std::ostringstream s;
    if (plot_format_of(o.output) == plot_format::svg)
        s << "set terminal svg size " << o.width << ',' << o.height
          << " dynamic enhanced font 'sans,11' background '#ffffff'\n";
    else
        s << "set terminal pngcairo size " << o.width << ',' << o.height
          << " enhanced font 'sans,10' background '#ffffff'\n";
    s << "set output " << gnuplot_quote(path) << '\n';
    return s.str();
}

/** @brief What every plot sets after script_head(): the title, grid, key and axes. */
std::string preamble(const plot_request& o, const std::string& title)
{
    std::ostringstream s;
    s << "set encoding utf8\n"
      << "set title " << gnuplot_quote(o.title.empty() ? title : o.title) << " noenhanced\n"
      << "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
      << "set key top right noenhanced\n"
      << "set border 3\nset tics nomirror\n";
    if (o.logx && (o.kind == plot_kind::histogram || o.kind == plot_kind::cdf))
        s << "set logscale x\n";
    return s.str();
}

/// The default histogram's bins per power of two: the histogram's own log-linear layout
/// (histogram.hpp: 1024 per octave), 64 of its buckets to a bin, so every stored bucket lies in
/// one bin and the body of a run is drawn in its own detail whatever its tail's length.
constexpr int plot_bins_per_octave_log2 = 4;

/** @brief The log-linear bin holding @p ns: [lo, hi), 16 per power of two, 1 ns below 16 ns. */
std::pair<std::int64_t, std::int64_t> log_linear_bin(std::int64_t ns)
{
    if (ns < (std::int64_t{1} << plot_bins_per_octave_log2))
        return {std::max<std::int64_t>(ns, 0), std::max<std::int64_t>(ns, 0) + 1};
    const int k = 63 - __builtin_clzll(static_cast<unsigned long long>(ns));
    const std::int64_t w = std::int64_t{1} << (k - plot_bins_per_octave_log2);
    const std::int64_t lo = ns / w * w;
    return {lo, lo + w};
}

/** @brief @p buckets in log-linear bins from the first to the last non-empty one, empty bins
 *  between them kept (a step drops to the floor there). */
std::vector<bin> rebin_log_linear(const std::vector<db::bucket_row>& buckets)
{
    std::vector<bin> out;
    if (buckets.empty())
        return out;
    std::int64_t first = INT64_MAX, last = 0;
    for (const auto& b : buckets) {
        first = std::min(first, log_linear_bin(b.lo_ns).first);
        last = std::max(last, log_linear_bin(b.lo_ns).first);
    }
    for (std::int64_t lo = first;;) {
        const auto [l, h] = log_linear_bin(lo);
        out.push_back({l, h, 0});
        if (l >= last || h <= l)
            break;
        lo = h;
    }
    for (const auto& b : buckets) {
        const std::int64_t lo = log_linear_bin(b.lo_ns).first;
        const auto it = std::lower_bound(out.begin(), out.end(), lo,
                                         [](const bin& x, std::int64_t v) { return x.lo_ns < v; });
        if (it != out.end() && it->lo_ns == lo)
            it->count += b.count;
    }
    return out;
}

std::string histogram_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                             const plot_request& o, plot_outcome& data)
{
    std::vector<std::vector<db::bucket_row>> h;
    std::int64_t lo = INT64_MAX, hi = 0;
    for (const auto* r : runs) {
        h.push_back(cat.histogram(*r));
        if (!h.back().empty()) {
            lo = std::min(lo, h.back().front().lo_ns);
            hi = std::max(hi, h.back().back().hi_ns);
        }
    }
    if (hi == 0)
        throw error("plot histogram", "the selected runs have no samples yet",
                    "plot a run that recorded at least one interval");
    const std::int64_t w = o.bin_ns;
    constexpr std::int64_t max_bins = 100'000;
    if (w && (hi - lo) / w > max_bins)
        throw error("bad value for --bin",
                    "'" + width_text(w) + "' gives " + std::to_string((hi - lo) / w) +
                        " bins over the runs' range, above the limit of 100K",
                    "use a width of at least " + width_text((hi - lo) / max_bins + 1) +
                        ", or leave --bin out");
    std::vector<std::vector<bin>> bins;
    for (const auto& x : h)
        bins.push_back(w ? rebin_linear(x, w) : rebin_log_linear(x));
    data.data_header = "run_id\tlo_ns\thi_ns\tcount\twhat";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        for (const auto& b : bins[i])
            data.data_rows.push_back(std::to_string(runs[i]->id) + '\t' + std::to_string(b.lo_ns) +
                                     '\t' + std::to_string(b.hi_ns) + '\t' +
                                     std::to_string(b.count) + "\tanswered");
        // The lost answers: at least the timeout, no upper end.
        if (runs[i]->summary.lost)
            data.data_rows.push_back(std::to_string(runs[i]->id) + '\t' +
                                     std::to_string(runs[i]->meta.timeout_ns) + "\t\t" +
                                     std::to_string(runs[i]->summary.lost) + "\tlost");
    }
    std::ostringstream s;
    s << preamble(o, "latency histogram") << latency_axis(o, lo, std::max(hi, lost_reach_ns(runs)));
    const char* u = unit_name(o.unit);
    s << "set xlabel 'latency (" << u << ")'\n"
      << "set ylabel '"
      << (w ? "samples per " + width_text(w) + " bin"
            : std::string("samples per bin (16 per power of two: log-linear "
                          "buckets)"))
      << "'\n"
      << "set logscale y\nset format y '10^{%L}'\nset yrange [0.8:*]\n";
    plot_runs(
        s, runs, "histeps",
        [&](std::size_t i) {
            // A zero count has no place on a log axis: 0.1 sits below the range, so the step
            // drops to the floor of the plot as OSADL's plots do.
            for (const auto& b : bins[i])
                s << num(in_unit((double(b.lo_ns) + double(b.hi_ns)) / 2, o.unit)) << ' '
                  << (b.count ? std::to_string(b.count) : std::string("0.1")) << '\n';
        },
        lost_markers(s, runs, o, [&](std::size_t i) { return double(runs[i]->summary.lost); }));
    return s.str();
}

std::string cdf_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                       const plot_request& o)
{
    std::vector<std::vector<tail_point>> curves;
    bool any = false;
    std::int64_t lo = INT64_MAX, hi = 0;
    for (const auto* r : runs) {
        const auto h = cat.histogram(*r);
        curves.push_back(tail_curve(h, r->summary.lost, r->meta.timeout_ns));
        any |= !curves.back().empty();
        if (!h.empty()) {
            lo = std::min(lo, h.front().lo_ns);
            hi = std::max(hi, h.back().hi_ns);
        }
    }
    if (!any)
        throw error("plot cdf", "the selected runs have no samples yet",
                    "plot a run that recorded at least one interval");
    std::ostringstream s;
    s << preamble(o, "latency tail: fraction of samples above")
      << latency_axis(o, lo, std::max(hi, lost_reach_ns(runs)));
    s << "set xlabel 'latency (" << unit_name(o.unit) << ")'\n"
      << "set ylabel '"
      << (lost_reach_ns(runs) ? "fraction of stimuli > latency (lost answers: > timeout)"
                              : "fraction of samples > latency (1 - p)")
      << "'\n"
      << "set logscale y\nset format y '10^{%L}'\n";
    plot_runs(
        s, runs, "steps",
        [&](std::size_t i) {
            for (const auto& p : curves[i])
                s << num(in_unit(p.latency_ns, o.unit)) << ' ' << num(p.fraction_above) << '\n';
        },
        lost_markers(s, runs, o, [&](std::size_t i) {
            return curves[i].empty() ? 1.0 : curves[i].back().fraction_above;
        }));
    return s.str();
}

/**
 * Timeline: each run's window max and mean over the seconds since its own start (runs recorded
 * hours apart are overlaid from 0, not squeezed onto one wall-clock axis), and the stored
 * samples above the threshold. Every max is drawn by the one rule of the tables: the max line
 * at what each window's max proves (a disturbed max at its lower bound), a disturbed max or
 * sample as its bracket (an error bar from what it proves to its upper bound), and a window
 * that lost answers as a marker at the timeout, "≥ timeout (N lost)": no picture shows a
 * smaller max than report.
 */
std::string timeline_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                            const plot_request& o, plot_outcome& data)
{
    const auto names = series_names(runs);
    data.data_header = "run_id\tidx\tstart_unix_ns\tend_unix_ns\tx_s\tsamples\tmax_ns\t"
                       "max_bracket_ns\tproves_ns\tlost\ttimeout_ns\tfigure";
    std::ostringstream s;
    s << preamble(o, "latency per stats interval, and samples above the threshold");
    std::string starts;
    for (std::size_t i = 0; i < runs.size() && runs.size() <= 4; ++i)
        starts += std::string(i ? "; " : " (") + names[i] + " from " +
                  format_utc(runs[i]->meta.start_unix_ns, 0) + (i + 1 == runs.size() ? ")" : "");
    // Several series per run: the key goes under the plot, off the data.
    s << "set key below\n"
      << "set xlabel " << gnuplot_quote("seconds since each run's start" + starts)
      << " noenhanced\n"
      << "set ylabel 'latency (" << unit_name(o.unit) << ")'\n";
    if (!o.linear)
        s << "set logscale y\n";
    std::vector<std::string> plots;
    bool any = false;
    const auto sec = [](std::int64_t from, std::int64_t to) { return double(to - from) / 1e9; };
    std::size_t lost_windows_all = 0; // labels beside the lost markers only while they are few
    std::int64_t lost_timeout_ns = 0; // the highest marker, which its label stands above
    for (const auto* r : runs)
        for (const auto& w : cat.intervals(*r))
            if (w.lost) {
                ++lost_windows_all;
                lost_timeout_ns = std::max(lost_timeout_ns, r->meta.timeout_ns);
            }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& run = *runs[i];
        const std::int64_t t0 = run.meta.start_unix_ns;
        const auto iv = cat.intervals(run);
        const std::string n = std::to_string(i);
        const int lc = int(i) + 1;
        std::ostringstream line, dist, lost;
        std::uint64_t lost_windows = 0, lost_total = 0, dist_windows = 0;
        for (const auto& w : iv) {
            if (!w.samples && !w.lost)
                continue;
            // The window's midpoint: its max and mean describe the whole window.
            const double x = sec(t0, w.start_unix_ns / 2 + w.end_unix_ns / 2);
            const max_figure f = window_figure(w, run);
            data.data_rows.push_back(
                std::to_string(run.id) + '\t' + std::to_string(w.index) + '\t' +
                std::to_string(w.start_unix_ns) + '\t' + std::to_string(w.end_unix_ns) + '\t' +
                num(x) + '\t' + std::to_string(w.samples) + '\t' +
                (w.samples ? std::to_string(w.max_ns) : std::string()) + '\t' +
                std::to_string(w.max_bracket_ns) + '\t' +
                (w.samples ? std::to_string(proves_ns(w)) : std::string()) + '\t' +
                std::to_string(w.lost) + '\t' + std::to_string(run.meta.timeout_ns) + '\t' +
                format_max(f, o.unit));
            if (w.samples) {
                line << num(x) << ' ' << num(in_unit(double(proves_ns(w)), o.unit)) << ' '
                     << num(in_unit(w.mean_ns, o.unit)) << '\n';
                any = true;
                if (w.max_bracket_ns > 0) {
                    dist << num(x) << ' ' << num(in_unit(double(proves_ns(w)), o.unit)) << ' '
                         << num(in_unit(double(proves_ns(w)), o.unit)) << ' '
                         << num(in_unit(double(w.max_ns), o.unit)) << '\n';
                    ++dist_windows;
                }
            }
            if (f.lost) {
                lost << num(x) << ' ' << num(in_unit(double(f.timeout_ns), o.unit)) << ' '
                     << "\"\xe2\x89\xa5 " << format_latency(double(f.timeout_ns), o.unit) << " ("
                     << format_count(f.lost) << " lost)\"\n";
                ++lost_windows;
                lost_total += f.lost;
                any = true;
            }
        }
        data_block(s, "iv" + n, [&] { s << line.str(); });
        const auto ex = cat.exceedances(run);
        const std::size_t step =
            ex.size() > o.max_points ? (ex.size() + o.max_points - 1) / o.max_points : 1;
        std::ostringstream clean, disturbed;
        for (std::size_t k = 0; k < ex.size(); k += step) {
            // Thinning keeps the sample of each run of step that proves the most: spikes must
            // stay visible.
            std::size_t best = k;
            for (std::size_t j = k; j < std::min(ex.size(), k + step); ++j)
                if (db::rank_ns(ex[j]) > db::rank_ns(ex[best]))
                    best = j;
            const auto& e = ex[best];
            const double x = sec(t0, e.unix_ns);
            if (e.flags & db::flag_disturbed)
                disturbed << num(x) << ' ' << num(in_unit(double(db::rank_ns(e)), o.unit)) << ' '
                          << num(in_unit(double(db::rank_ns(e)), o.unit)) << ' '
                          << num(in_unit(double(e.latency_ns), o.unit)) << '\n';
            else
                clean << num(x) << ' ' << num(in_unit(double(e.latency_ns), o.unit)) << '\n';
        }
        data_block(s, "ex" + n, [&] { s << clean.str(); });
        data_block(s, "exd" + n, [&] { s << disturbed.str(); });
        data_block(s, "dist" + n, [&] { s << dist.str(); });
        data_block(s, "lost" + n, [&] { s << lost.str(); });
        const std::string c = " lc " + std::to_string(lc);
        plots.push_back("$iv" + n + " using 1:2 with lines lw 1.5" + c + " title " +
                        gnuplot_quote(names[i] + " max"));
        plots.push_back("$iv" + n + " using 1:3 with lines dt 2" + c + " title " +
                        gnuplot_quote(names[i] + " avg"));
        if (dist_windows)
            plots.push_back("$dist" + n + " using 1:2:3:4 with yerrorbars pt 6 ps 0.8" + c +
                            " title " +
                            gnuplot_quote(names[i] + " max disturbed: what it proves, bracket up"));
        if (!clean.str().empty())
            plots.push_back("$ex" + n + " using 1:2 with points pt 7 ps 0.4" + c + " title " +
                            gnuplot_quote(names[i] + " above threshold"));
        if (!disturbed.str().empty())
            plots.push_back("$exd" + n + " using 1:2:3:4 with yerrorbars pt 4 ps 0.5" + c +
                            " title " +
                            gnuplot_quote(names[i] + " above threshold, disturbed (bracket)"));
        if (lost_windows) {
            plots.push_back("$lost" + n + " using 1:2 with points pt 9 ps 1.2" + c + " title " +
                            gnuplot_quote(names[i] + " lost answers: \xe2\x89\xa5 timeout (" +
                                          format_count(lost_total) + " lost)"));
            // Each window's count above its marker, upright so that neighbours do not overlap,
            // while they stay readable; for one run only (overlaid runs' windows share their x).
            if (runs.size() == 1 && lost_windows_all <= 40)
                plots.push_back(
                    "$lost" + n +
                    " using 1:2:3 with labels rotate by 90 left offset 0,0.8 font ',8' tc lt " +
                    std::to_string(lc) + " notitle");
        }
    }
    if (!any)
        throw error("plot timeline", "the selected runs have no committed interval with samples",
                    "plot a run that recorded at least one interval");
    // Room above the highest lost marker for its upright label, inside the frame.
    if (runs.size() == 1 && lost_windows_all && lost_windows_all <= 40)
        s << "set yrange [*:"
          << num(in_unit(double(lost_timeout_ns), o.unit) * (o.linear ? 1.6 : 30)) << "]\n";
    s << "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i)
        s << (i ? ", \\\n     " : "") << plots[i];
    s << '\n';
    return s.str();
}

const char* const no_window_histograms = "no per-window histograms in this run";

/**
 * Heatmap: one column per stats window (its wall-clock span on x), one row per log-spaced
 * bucket of the per-window histogram (latency on a log y axis), the samples as colour (log).
 * Several runs are drawn along the same time axis. A run recorded before schema version 3 has
 * no per-window histograms: it is named on stderr, and a plot of such runs only draws that
 * sentence instead of failing.
 */
std::string heatmap_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                           const plot_request& o, plot_outcome& data)
{
    data.data_header = "run_id\tidx\tstart_unix_ns\tend_unix_ns\tlo_ns\thi_ns\tcount\tx0_s\tx1_s";
    const side_by_side axis(cat, runs);
    std::ostringstream cells, lost;
    std::uint64_t lost_total = 0;
    std::uint64_t top = 0;
    std::size_t with = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto* r = runs[i];
        if (!cat.has_window_histograms(*r)) {
            data.notes.push_back("irqloop: plot heatmap: " + r->name() + " (run " +
                                 std::to_string(r->id) + "): " + no_window_histograms +
                                 " (recorded before schema version 3)");
            continue;
        }
        ++with;
        const auto iv = cat.intervals(*r);
        std::map<std::uint64_t, const db::interval_row*> by_idx;
        for (const auto& w : iv) {
            by_idx[w.index] = &w;
            // The window's lost answers, which no bucket holds: a marker at the timeout.
            if (w.lost) {
                lost << num(axis.x(i, w.start_unix_ns / 2 + w.end_unix_ns / 2)) << ' '
                     << num(in_unit(double(r->meta.timeout_ns), o.unit)) << '\n';
                lost_total += w.lost;
            }
        }
        for (const auto& b : cat.window_histograms(*r)) {
            auto w = by_idx.find(b.interval);
            if (w == by_idx.end())
                continue;
            const auto lo = db::window_buckets::lo_ns(b.bucket);
            const auto hi = db::window_buckets::hi_ns(b.bucket);
            data.data_rows.push_back(std::to_string(r->id) + '\t' + std::to_string(b.interval) +
                                     '\t' + std::to_string(w->second->start_unix_ns) + '\t' +
                                     std::to_string(w->second->end_unix_ns) + '\t' +
                                     std::to_string(lo) + '\t' + std::to_string(hi) + '\t' +
                                     std::to_string(b.count) + '\t' +
                                     num(axis.x(i, w->second->start_unix_ns)) + '\t' +
                                     num(axis.x(i, w->second->end_unix_ns)));
            cells << num(axis.x(i, w->second->start_unix_ns)) << ' '
                  << num(axis.x(i, w->second->end_unix_ns)) << ' '
                  << num(in_unit(double(lo), o.unit)) << ' ' << num(in_unit(double(hi), o.unit))
                  << ' ' << b.count << '\n';
            top = std::max(top, b.count);
        }
    }
    std::ostringstream s;
    const std::string title = runs.size() == 1 ? "latency per stats window: " + runs[0]->name()
                                               : "latency per stats window";
    s << preamble(o, title);
    s << "set key below\n"
      << "set xlabel "
      << gnuplot_quote("time since each run's start, one column per stats window; runs side by "
                       "side")
      << " noenhanced\n"
      << "set ylabel 'latency (" << unit_name(o.unit) << "), 4 buckets per octave'\n";
    if (with == 0 || top == 0) {
        s << "set key off\n";
        // Nothing to colour: say why in the picture, and draw an empty frame.
        const std::string why = with == 0 ? std::string(no_window_histograms)
                                          : "no samples in the per-window histograms";
        data.notes.push_back("irqloop: plot heatmap: " + why);
        s << "unset xdata\nset format x ''\nset xrange [0:1]\nset yrange [0:1]\n"
          << "unset ytics\nunset xtics\nset ylabel ''\n"
          << "set label 1 " << gnuplot_quote(why) << " at 0.5,0.5 center font 'sans,14'\n"
          << "plot 2 notitle\n";
        return s.str();
    }
    s << "set logscale y\nset logscale cb\nset cbrange [1:" << std::max<std::uint64_t>(top, 2)
      << "]\nset cblabel 'samples in the window and bucket'\nset colorbox\n"
      << "set palette defined (0 '#fff7bc', 1 '#fec44f', 2 '#d95f0e', 3 '#7f0000', 4 '#000000')\n";
    s << axis.frame() << axis.elapsed_ticks(series_names(runs));
    data_block(s, "cells", [&] { s << cells.str(); });
    data_block(s, "lost", [&] { s << lost.str(); });
    s << "plot $cells using (($1+$2)/2):(sqrt($3*$4)):1:2:3:4:5 with boxxyerror "
         "fs solid 1.0 noborder lc palette notitle";
    if (lost_total)
        s << ", \\\n     $lost using 1:2 with points pt 9 ps 1.2 lc rgb '#1f4e9c' title "
          << gnuplot_quote("windows that lost answers: \xe2\x89\xa5 timeout (" +
                           format_count(lost_total) + " lost)");
    s << '\n';
    return s.str();
}

/**
 * The long-term view OSADL draws for its nightly runs: every stats window's maximum across every
 * selected run (typically --label L over weeks), one series per label, on a log axis. The runs
 * stand side by side in the order selected (start time), each on a stretch as long as itself,
 * each stretch's tick its start (UTC): nights a day apart are not slivers on a calendar axis.
 * A window's max is drawn by the tables' rule: at what it proves (a disturbed max at its lower
 * bound, with its bracket as an error bar up to its upper bound), and a window that lost answers
 * with a marker at the timeout. Every schema version stores the window maxima, so old runs take
 * part.
 */
std::string long_term_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                             const plot_request& o, plot_outcome& data)
{
    data.data_header = "run_id\tlabel\tidx\tstart_unix_ns\tend_unix_ns\tmax_ns\tsamples\t"
                       "max_bracket_ns\tlost\ttimeout_ns\tx_s";
    const side_by_side axis(cat, runs);
    std::vector<std::string> labels;
    struct series_text {
        std::ostringstream max, dist, lost;
        std::uint64_t lost_total = 0;
    };
    std::map<std::string, series_text> series;
    std::size_t points = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto* r = runs[i];
        const std::string name = r->meta.label.empty() ? "(no label)" : r->meta.label;
        if (!series.count(name))
            labels.push_back(name);
        auto& out = series[name];
        for (const auto& w : cat.intervals(*r)) {
            if (!w.samples && !w.lost)
                continue;
            const double x = axis.x(i, w.start_unix_ns / 2 + w.end_unix_ns / 2);
            data.data_rows.push_back(
                std::to_string(r->id) + '\t' + r->meta.label + '\t' + std::to_string(w.index) +
                '\t' + std::to_string(w.start_unix_ns) + '\t' + std::to_string(w.end_unix_ns) +
                '\t' + std::to_string(w.max_ns) + '\t' + std::to_string(w.samples) + '\t' +
                std::to_string(w.max_bracket_ns) + '\t' + std::to_string(w.lost) + '\t' +
                std::to_string(r->meta.timeout_ns) + '\t' + num(x));
            if (w.samples) {
                const std::string y = num(in_unit(double(proves_ns(w)), o.unit));
                out.max << num(x) << ' ' << y << '\n';
                if (w.max_bracket_ns > 0)
                    out.dist << num(x) << ' ' << y << ' ' << y << ' '
                             << num(in_unit(double(w.max_ns), o.unit)) << '\n';
            }
            if (w.lost) {
                out.lost << num(x) << ' ' << num(in_unit(double(r->meta.timeout_ns), o.unit))
                         << '\n';
                out.lost_total += w.lost;
            }
            ++points;
        }
    }
    if (!points)
        throw error("plot long-term", "the selected runs have no committed interval with samples",
                    "plot runs that recorded at least one interval");
    std::ostringstream s;
    s << preamble(o, "maximum per stats window, " + std::to_string(runs.size()) + " run" +
                         (runs.size() == 1 ? "" : "s"));
    s << "set key below\n"
      << "set xlabel "
      << gnuplot_quote("runs side by side, each as long as itself; a tick at each run's start "
                       "(UTC)")
      << "\nset ylabel 'max latency per window (" << unit_name(o.unit) << ")'\n"
      << axis.frame();
    // A tick at the start of each run (of every k-th when there are many): month-day and time to
    // the second, so runs minutes apart read apart.
    const std::size_t every = (runs.size() + 11) / 12;
    s << "set xtics (";
    for (std::size_t i = 0; i < runs.size(); i += every)
        s << (i ? ", " : "") << '"' << format_utc_as(axis.start_ns[i], "%m-%d\\n%H:%M:%S") << "\" "
          << num(axis.offset_s[i]);
    s << ")\n";
    if (!o.linear)
        s << "set logscale y\n";
    std::vector<std::string> plots;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        auto& t = series[labels[i]];
        const std::string n = std::to_string(i), c = " lc " + std::to_string(i + 1);
        data_block(s, "max" + n, [&] { s << t.max.str(); });
        plots.push_back("$max" + n + " using 1:2 with impulses lw 1" + c + " notitle");
        plots.push_back("$max" + n + " using 1:2 with points pt 7 ps 0.3" + c + " title " +
                        gnuplot_quote(labels[i]));
        if (!t.dist.str().empty()) {
            data_block(s, "dist" + n, [&] { s << t.dist.str(); });
            plots.push_back(
                "$dist" + n + " using 1:2:3:4 with yerrorbars pt 6 ps 0.6" + c + " title " +
                gnuplot_quote(labels[i] + ": max disturbed, what it proves, bracket up"));
        }
        if (t.lost_total) {
            data_block(s, "lost" + n, [&] { s << t.lost.str(); });
            plots.push_back("$lost" + n + " using 1:2 with points pt 9 ps 1" + c + " title " +
                            gnuplot_quote(labels[i] + ": lost answers, \xe2\x89\xa5 timeout (" +
                                          format_count(t.lost_total) + " lost)"));
        }
    }
    s << "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i)
        s << (i ? ", \\\n     " : "") << plots[i];
    s << '\n';
    return s.str();
}

void write_data(const std::string& path, const plot_outcome& d)
{
    std::ostringstream text;
    text << d.data_header << '\n';
    for (const auto& r : d.data_rows)
        text << r << '\n';
    if (path == "-") {
        std::cout << text.str();
        return;
    }
    // Checked, and removed again when a write fails (docs/commands/exit-status.md).
    output_file f(path, "plot --data");
    f.write(text.str());
    f.commit();
}

/** A temporary file with the output's extension, removed on destruction. */
struct temp_picture {
    std::string path;
    explicit temp_picture(const std::string& output)
    {
        const auto dot = output.rfind('.');
        const std::string ext = dot == std::string::npos ? "" : output.substr(dot);
        std::error_code ec;
        auto dir = std::filesystem::temp_directory_path(ec);
        std::string templ =
            (ec ? std::string("/tmp") : dir.string()) + "/irqloop-plot-XXXXXX" + ext;
        int fd = ::mkstemps(templ.data(), static_cast<int>(ext.size()));
        if (fd < 0)
            throw_file_error(errno, "plot: create a temporary file", templ);
        ::close(fd);
        path = templ;
    }
    ~temp_picture() { ::unlink(path.c_str()); }
    temp_picture(const temp_picture&) = delete;
    temp_picture& operator=(const temp_picture&) = delete;
    std::string read() const
    {
        std::ifstream in(path, std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.is_open() || in.bad())
            throw_file_error(errno ? errno : EIO, "plot: read gnuplot's picture", path);
        return data;
    }
};

void parse_size(const std::string& text, plot_request& o)
{
    int w = 0, h = 0;
    char x = 0, extra = 0;
    if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 64 ||
        h < 64 || w > 10000 || h > 10000)
        throw error("bad --size", "'" + text + "' is not WIDTHxHEIGHT in pixels (64..10000)",
                    "e.g. --size 900x600");
    o.width = w;
    o.height = h;
}

struct kind_name final {
    const char* name;
    plot_kind kind;
};
constexpr kind_name kind_names[] = {{"histogram", plot_kind::histogram},
                                    {"timeline", plot_kind::timeline},
                                    {"cdf", plot_kind::cdf},
                                    {"heatmap", plot_kind::heatmap},
                                    {"long-term", plot_kind::long_term},
                                    {"tail", plot_kind::tail}};

plot_kind parse_kind(const std::string& text)
{
    for (const auto& k : kind_names)
        if (text == k.name)
            return k.kind;
    throw error("bad --kind", "unknown plot kind '" + text + "'",
                "use histogram, timeline, cdf, heatmap, long-term or tail");
}

/** @brief The text fields of the option table, checked and converted by parse_plot(). */
struct plot_args final {
    std::string kind = "histogram", size = "900x600", unit = "us", bin;
};

/** @brief The option table of `irqloop plot`, bound to @p r and the text fields @p a. */
void add_plot_options(po::options_description& desc, plot_request& r, plot_args& a)
{
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("runs", po::value(&r.sel.sel.runs)->multitoken()->composing(), "several run ids at once");
    add("labels", po::value(&r.sel.sel.labels)->multitoken()->composing(),
        "several labels at once");
    add("kind", po::value(&a.kind)->default_value(a.kind),
        "histogram (log y, runs overlaid), timeline (interval max/avg and exceedances over the "
        "seconds since each run's start), cdf (fraction of samples above each latency, log y), "
        "heatmap (per-window histograms: time on x, runs side by side, latency on log y, "
        "samples as colour), long-term (every window's max over all selected runs side by "
        "side, e.g. --label L over weeks; one series per label) or tail (one run's tail fit, as "
        "irqloop tail makes it: mean residual life, QQ against the fitted GPD, return levels "
        "with their 95 % band over the measured tail). Lost answers are drawn at the "
        "timeout, a disturbed max at what it proves with its bracket");
    add("output,o", po::value(&r.output), "output file, *.svg or *.png (required)");
    add("size", po::value(&a.size)->default_value(a.size), "picture size in pixels, WIDTHxHEIGHT");
    add("unit", po::value(&a.unit)->default_value(a.unit), "latency unit of the axes: ns or us");
    add("bin", po::value(&a.bin),
        "histogram bin width, e.g. 1us (default: the histogram's log-linear buckets, 16 bins per "
        "power of two, so the body keeps its detail beside a long tail)");
    add("title", po::value(&r.title), "plot title (default: says what is plotted)");
    add("linear", po::bool_switch(&r.linear),
        "a linear latency axis: timeline and long-term (instead of log), histogram and cdf "
        "(instead of the log axis they take when the data span more than two decades)");
    add("logx", po::bool_switch(&r.logx),
        "histogram, cdf: log latency axis, whatever the data's span");
    add("data", po::value(&r.data_path),
        "histogram, timeline, heatmap, long-term, tail: also write the rows drawn, tab-separated "
        "with a "
        "header, to this file ('-': stdout)");
    add("script", po::bool_switch(&r.print_script),
        "print the gnuplot script to stdout instead of running gnuplot");
}

constexpr command_help plot_help = {
    "irqloop plot --kind histogram|timeline|cdf|heatmap|long-term|tail [--db F] "
    "[--runs ID... | --labels L...] -o out.svg|out.png [--data FILE]",
    "Draw the selected runs (default: every measurement run) with gnuplot. The script\n"
    "and its data go to gnuplot on a pipe: nothing but the picture is written.\n"
    "Needs gnuplot (apt-get install gnuplot-nox); $IRQLOOP_GNUPLOT overrides the path."};

/** @brief Check the text fields @p a into @p r, and the options that go together. */
void check_plot(plot_request& r, const plot_args& a)
{
    if (r.output.empty() && !r.print_script)
        throw error("plot", "no output file", "give -o out.svg or -o out.png");
    if (r.output.empty())
        r.output = "irqloop-plot.svg";
    plot_format_of(r.output);
    r.kind = parse_kind(a.kind);
    if (!r.data_path.empty() && r.kind == plot_kind::cdf)
        throw error("bad --data", "the cdf plot does not write its data",
                    "use --kind histogram, whose bins the curve sums, or export --format csv");
    if (r.linear && r.logx)
        throw error("bad --linear", "--linear and --logx both set the latency axis",
                    "give one of them");
    parse_size(a.size, r);
    r.unit = parse_latency_unit(a.unit);
    if (!a.bin.empty()) {
        // At least 1ns; the bin count it gives over the runs' range is checked once read.
        r.bin_ns = parse_duration_ns_in(a.bin, "--bin", 1, 3600LL * 1'000'000'000);
    }
}

} // namespace

parsed<plot_request> parse_plot(int argc, char** argv)
{
    return parse_reading_table(argc, argv, plot_help, add_plot_options, check_plot,
                               bare_arguments::refused);
}

plot_outcome execute_plot(const plot_request& r)
{
    db::catalog cat(r.sel.dbs);
    const auto runs = cat.select(r.sel.sel);
    plot_outcome o;
    o.runs = runs.size();
    switch (r.kind) {
    case plot_kind::histogram:
        o.body = histogram_script(cat, runs, r, o);
        break;
    case plot_kind::cdf:
        o.body = cdf_script(cat, runs, r);
        break;
    case plot_kind::heatmap:
        o.body = heatmap_script(cat, runs, r, o);
        break;
    case plot_kind::long_term:
        o.body = long_term_script(cat, runs, r, o);
        break;
    case plot_kind::timeline:
        o.body = timeline_script(cat, runs, r, o);
        break;
    case plot_kind::tail:
        o.body = tail_plot_script(cat, runs, r, o);
        break;
    }
    return o;
}

int present_plot(const plot_outcome& o, const plot_request& r)
{
    for (const auto& n : o.notes)
        std::cerr << n << '\n';
    if (r.print_script) {
        if (!r.data_path.empty())
            write_data(r.data_path, o);
        std::cout << script_head(r, r.output) << o.body; // checked by run_main
        return 0;
    }
    // gnuplot writes a temporary file (it does not check its own writes); the picture is then
    // copied to -o with every write checked, so a full disk or a link to /dev/full fails
    // instead of saying "wrote", and leaves nothing behind.
    output_file out(r.output, "plot");
    temp_picture tmp(r.output);
    if (!r.data_path.empty())
        write_data(r.data_path, o);
    run_gnuplot(script_head(r, tmp.path) + o.body, tmp.path);
    out.write(tmp.read());
    out.commit();
    std::cerr << "irqloop: plot: wrote " << r.output << " (" << o.runs << " run"
              << (o.runs == 1 ? "" : "s") << ")\n";
    return 0;
}

int plot_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_plot, execute_plot, present_plot, std::cout);
}

} // namespace irqloop::logger
