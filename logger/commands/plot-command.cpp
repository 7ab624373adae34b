// SPDX-License-Identifier: MIT
// irqloop plot: gnuplot histograms (OSADL style), timelines and tail CDFs of one or more runs.
#include "plot-command.hpp"

#include "error.hpp"
#include "output-file.hpp"
#include "plot.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
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

/**
 * @brief One series per run: the data blocks $run0, $run1, ... with the lines @p rows(i) writes
 * for run i, then the plot command drawing each with @p style under the run's series name.
 */
template <class Rows>
void plot_runs(std::ostream& s, const std::vector<const db::run_record*>& runs, const char* style,
               Rows rows)
{
    for (std::size_t i = 0; i < runs.size(); ++i)
        data_block(s, "run" + std::to_string(i), [&] { rows(i); });
    const auto names = series_names(runs);
    s << "plot ";
    for (std::size_t i = 0; i < names.size(); ++i)
        s << (i ? ", \\\n     " : "") << "$run" << i << " using 1:2 with " << style
          << " lw 1.5 title " << gnuplot_quote(names[i]);
    s << '\n';
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
    data.data_header = "run_id\tlo_ns\thi_ns\tcount";
    for (std::size_t i = 0; i < runs.size(); ++i)
        for (const auto& b : bins[i])
            data.data_rows.push_back(std::to_string(runs[i]->id) + '\t' + std::to_string(b.lo_ns) +
                                     '\t' + std::to_string(b.hi_ns) + '\t' +
                                     std::to_string(b.count));
    std::ostringstream s;
    s << preamble(o, "latency histogram");
    const char* u = unit_name(o.unit);
    s << "set xlabel 'latency (" << u << ")'\n"
      << "set ylabel '"
      << (w ? "samples per " + width_text(w) + " bin"
            : std::string("samples per bin (16 per power of two: log-linear "
                          "buckets)"))
      << "'\n"
      << "set logscale y\nset format y '10^{%L}'\nset yrange [0.8:*]\n";
    plot_runs(s, runs, "histeps", [&](std::size_t i) {
        // A zero count has no place on a log axis: 0.1 sits below the range, so the step
        // drops to the floor of the plot as OSADL's plots do.
        for (const auto& b : bins[i])
            s << num(in_unit((double(b.lo_ns) + double(b.hi_ns)) / 2, o.unit)) << ' '
              << (b.count ? std::to_string(b.count) : std::string("0.1")) << '\n';
    });
    return s.str();
}

std::string cdf_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                       const plot_request& o)
{
    std::vector<std::vector<tail_point>> curves;
    bool any = false;
    for (const auto* r : runs) {
        curves.push_back(tail_curve(cat.histogram(*r)));
        any |= !curves.back().empty();
    }
    if (!any)
        throw error("plot cdf", "the selected runs have no samples yet",
                    "plot a run that recorded at least one interval");
    std::ostringstream s;
    s << preamble(o, "latency tail: fraction of samples above");
    s << "set xlabel 'latency (" << unit_name(o.unit) << ")'\n"
      << "set ylabel 'fraction of samples > latency (1 - p)'\n"
      << "set logscale y\nset format y '10^{%L}'\n";
    plot_runs(s, runs, "steps", [&](std::size_t i) {
        for (const auto& p : curves[i])
            s << num(in_unit(p.latency_ns, o.unit)) << ' ' << num(p.fraction_above) << '\n';
    });
    return s.str();
}

std::string timeline_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                            const plot_request& o)
{
    const auto names = series_names(runs);
    std::ostringstream s;
    s << preamble(o, "latency per stats interval, and samples above the threshold");
    // Three series per run: the key goes under the plot, off the data.
    s << "set key below\nset xdata time\nset timefmt '%s'\nset format x '%H:%M:%S'\n"
      << "set xlabel 'logger wall-clock time (UTC)'\n"
      << "set ylabel 'latency (" << unit_name(o.unit) << ")'\n";
    if (!o.linear)
        s << "set logscale y\n";
    std::vector<std::string> plots;
    bool any = false;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto iv = cat.intervals(*runs[i]);
        data_block(s, "iv" + std::to_string(i), [&] {
            for (const auto& w : iv) {
                if (!w.samples)
                    continue;
                // The interval's midpoint: its max and mean describe the whole window.
                const double t = (double(w.start_unix_ns) + double(w.end_unix_ns)) / 2e9;
                char line[160];
                std::snprintf(line, sizeof line, "%.3f %s %s\n", t,
                              num(in_unit(double(w.max_ns), o.unit)).c_str(),
                              num(in_unit(w.mean_ns, o.unit)).c_str());
                s << line;
                any = true;
            }
        });
        const auto ex = cat.exceedances(*runs[i]);
        const std::size_t step =
            ex.size() > o.max_points ? (ex.size() + o.max_points - 1) / o.max_points : 1;
        data_block(s, "ex" + std::to_string(i), [&] {
            for (std::size_t k = 0; k < ex.size(); k += step) {
                // Thinning keeps the largest of each run of step samples: spikes must stay
                // visible.
                std::size_t best = k;
                for (std::size_t j = k; j < std::min(ex.size(), k + step); ++j)
                    if (ex[j].latency_ns > ex[best].latency_ns)
                        best = j;
                char line[160];
                std::snprintf(line, sizeof line, "%.6f %s\n", double(ex[best].unix_ns) / 1e9,
                              num(in_unit(double(ex[best].latency_ns), o.unit)).c_str());
                s << line;
            }
        });
        const int lc = int(i) + 1;
        plots.push_back("$iv" + std::to_string(i) + " using 1:2 with lines lw 1.5 lc " +
                        std::to_string(lc) + " title " + gnuplot_quote(names[i] + " max"));
        plots.push_back("$iv" + std::to_string(i) + " using 1:3 with lines dt 2 lc " +
                        std::to_string(lc) + " title " + gnuplot_quote(names[i] + " avg"));
        if (!ex.empty())
            plots.push_back("$ex" + std::to_string(i) + " using 1:2 with points pt 7 ps 0.4 lc " +
                            std::to_string(lc) + " title " +
                            gnuplot_quote(names[i] + " above threshold"));
    }
    if (!any)
        throw error("plot timeline", "the selected runs have no committed interval with samples",
                    "plot a run that recorded at least one interval");
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
    data.data_header = "run_id\tidx\tstart_unix_ns\tend_unix_ns\tlo_ns\thi_ns\tcount";
    std::ostringstream cells;
    std::uint64_t top = 0;
    std::size_t with = 0;
    for (const auto* r : runs) {
        if (!cat.has_window_histograms(*r)) {
            data.notes.push_back("irqloop: plot heatmap: " + r->name() + " (run " +
                                 std::to_string(r->id) + "): " + no_window_histograms +
                                 " (recorded before schema version 3)");
            continue;
        }
        ++with;
        const auto iv = cat.intervals(*r);
        std::map<std::uint64_t, const db::interval_row*> by_idx;
        for (const auto& w : iv)
            by_idx[w.index] = &w;
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
                                     std::to_string(b.count));
            char line[200];
            std::snprintf(
                line, sizeof line, "%.3f %.3f %s %s %llu\n", double(w->second->start_unix_ns) / 1e9,
                double(w->second->end_unix_ns) / 1e9, num(in_unit(double(lo), o.unit)).c_str(),
                num(in_unit(double(hi), o.unit)).c_str(), static_cast<unsigned long long>(b.count));
            cells << line;
            top = std::max(top, b.count);
        }
    }
    std::ostringstream s;
    const std::string title = runs.size() == 1 ? "latency per stats window: " + runs[0]->name()
                                               : "latency per stats window";
    s << preamble(o, title);
    s << "set key off\nset xdata time\nset timefmt '%s'\nset format x '%H:%M:%S'\n"
      << "set autoscale xfix\n"
      << "set xlabel 'logger wall-clock time (UTC), one column per stats window'\n"
      << "set ylabel 'latency (" << unit_name(o.unit) << "), 4 buckets per octave'\n";
    if (with == 0 || top == 0) {
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
    data_block(s, "cells", [&] { s << cells.str(); });
    s << "plot $cells using (($1+$2)/2):(sqrt($3*$4)):1:2:3:4:5 with boxxyerror "
         "fs solid 1.0 noborder lc palette\n";
    return s.str();
}

/**
 * The long-term view OSADL draws for its nightly runs: every stats window's maximum over
 * wall-clock time, across every selected run (typically --label L over weeks), one series per
 * label, on a log axis. A window's max is the proven one (a disturbed sample by its upper bound
 * when its lower bound beat every clean one), and every schema version stores it, so old runs
 * take part.
 */
std::string long_term_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                             const plot_request& o, plot_outcome& data)
{
    data.data_header = "run_id\tlabel\tidx\tstart_unix_ns\tend_unix_ns\tmax_ns\tsamples";
    std::vector<std::string> labels;
    std::map<std::string, std::ostringstream> series;
    std::size_t points = 0;
    for (const auto* r : runs) {
        const std::string name = r->meta.label.empty() ? "(no label)" : r->meta.label;
        if (!series.count(name))
            labels.push_back(name);
        auto& out = series[name];
        for (const auto& w : cat.intervals(*r)) {
            if (!w.samples)
                continue;
            data.data_rows.push_back(
                std::to_string(r->id) + '\t' + r->meta.label + '\t' + std::to_string(w.index) +
                '\t' + std::to_string(w.start_unix_ns) + '\t' + std::to_string(w.end_unix_ns) +
                '\t' + std::to_string(w.max_ns) + '\t' + std::to_string(w.samples));
            char line[120];
            std::snprintf(line, sizeof line, "%.3f %s\n",
                          (double(w.start_unix_ns) + double(w.end_unix_ns)) / 2e9,
                          num(in_unit(double(w.max_ns), o.unit)).c_str());
            out << line;
            ++points;
        }
    }
    if (!points)
        throw error("plot long-term", "the selected runs have no committed interval with samples",
                    "plot runs that recorded at least one interval");
    std::ostringstream s;
    s << preamble(o, "maximum per stats window, " + std::to_string(runs.size()) + " run" +
                         (runs.size() == 1 ? "" : "s"));
    s << "set key below\nset xdata time\nset timefmt '%s'\nset format x \"%m-%d\\n%H:%M\"\n"
      << "set xlabel 'logger wall-clock time (UTC)'\n"
      << "set ylabel 'max latency per window (" << unit_name(o.unit) << ")'\n";
    if (!o.linear)
        s << "set logscale y\n";
    for (std::size_t i = 0; i < labels.size(); ++i)
        data_block(s, "max" + std::to_string(i), [&] { s << series[labels[i]].str(); });
    s << "plot ";
    for (std::size_t i = 0; i < labels.size(); ++i)
        s << (i ? ", \\\n     " : "") << "$max" << i << " using 1:2 with impulses lw 1 lc " << i + 1
          << " notitle, $max" << i << " using 1:2 with points pt 7 ps 0.3 lc " << i + 1 << " title "
          << gnuplot_quote(labels[i]);
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
                                    {"long-term", plot_kind::long_term}};

plot_kind parse_kind(const std::string& text)
{
    for (const auto& k : kind_names)
        if (text == k.name)
            return k.kind;
    throw error("bad --kind", "unknown plot kind '" + text + "'",
                "use histogram, timeline, cdf, heatmap or long-term");
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
        "histogram (log y, runs overlaid), timeline (interval max/avg and exceedances over "
        "wall-clock time), cdf (fraction of samples above each latency, log y), heatmap "
        "(per-window histograms: time on x, latency on log y, samples as colour) or long-term "
        "(every window's max over all selected runs, e.g. --label L over weeks; one series "
        "per label)");
    add("output,o", po::value(&r.output), "output file, *.svg or *.png (required)");
    add("size", po::value(&a.size)->default_value(a.size), "picture size in pixels, WIDTHxHEIGHT");
    add("unit", po::value(&a.unit)->default_value(a.unit), "latency unit of the axes: ns or us");
    add("bin", po::value(&a.bin),
        "histogram bin width, e.g. 1us (default: the histogram's log-linear buckets, 16 bins per "
        "power of two, so the body keeps its detail beside a long tail)");
    add("title", po::value(&r.title), "plot title (default: says what is plotted)");
    add("linear", po::bool_switch(&r.linear), "timeline: linear latency axis instead of log");
    add("logx", po::bool_switch(&r.logx), "histogram, cdf: log latency axis (long tails)");
    add("data", po::value(&r.data_path),
        "histogram, heatmap, long-term: also write the rows drawn, tab-separated with a header, "
        "to this "
        "file ('-': stdout)");
    add("script", po::bool_switch(&r.print_script),
        "print the gnuplot script to stdout instead of running gnuplot");
}

constexpr command_help plot_help = {
    "irqloop plot --kind histogram|timeline|cdf|heatmap|long-term [--db F] "
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
    if (!r.data_path.empty() && r.kind != plot_kind::heatmap && r.kind != plot_kind::long_term &&
        r.kind != plot_kind::histogram)
        throw error("bad --data",
                    "only the histogram, heatmap and long-term plots write their data",
                    "use --kind histogram, heatmap or long-term, or export --format csv");
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
        o.body = timeline_script(cat, runs, r);
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
