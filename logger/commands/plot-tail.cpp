// SPDX-License-Identifier: MIT
// plot --kind tail: mean residual life, QQ against the fitted GPD, return levels with their
// band over the empirical tail (issue 25; docs/methodology-tail.md).
#include "plot-tail.hpp"

#include "error.hpp"
#include "plot.hpp"
#include "tail-command.hpp"
#include "units.hpp"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace irqloop::logger
{

namespace
{

constexpr double plot_tail_nan = std::numeric_limits<double>::quiet_NaN();

/// A value with its weight: an exact exceedance (1), or a histogram bucket's middle (its count).
struct plot_tail_value final {
    double v;
    double w;
};

/// The values above @p t: the exact exceedances when they hold every sample above it, else the
/// middles of the histogram's buckets starting at or above it.
std::vector<plot_tail_value> plot_tail_above(const analysis::tail_data& d, double t)
{
    std::vector<plot_tail_value> out;
    if (d.exact_complete && t >= d.exact_above_ns) {
        for (const auto& e : d.exact)
            if (e.value_ns > t)
                out.push_back({e.value_ns, 1});
    } else {
        for (const auto& b : d.bins)
            if (b.lo_ns >= t && b.count)
                out.push_back({(b.lo_ns + b.hi_ns) / 2, double(b.count)});
    }
    return out;
}

/// The lowest value with at least @p k samples at or above it (a bucket's lower edge, or an
/// exact value), or NaN when there are fewer.
double plot_tail_level_with(const analysis::tail_data& d, double k)
{
    double above = 0;
    for (auto it = d.bins.rbegin(); it != d.bins.rend(); ++it) {
        above += double(it->count);
        if (above >= k)
            return it->lo_ns;
    }
    return plot_tail_nan;
}

/// The fitted GPD's excess at cumulative probability @p f (0 <= f < 1).
double plot_tail_gpd_quantile(const analysis::gpd_params& g, double f)
{
    if (std::abs(g.xi) < 1e-9)
        return -g.sigma_ns * std::log1p(-f);
    return g.sigma_ns * std::expm1(-g.xi * std::log1p(-f)) / g.xi;
}

std::string plot_tail_num(double v)
{
    if (std::isnan(v))
        return "-";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

double plot_tail_in_unit(double ns, latency_unit u)
{
    return u == latency_unit::us ? ns / 1e3 : ns;
}

} // namespace

tail_diagnostics compute_tail_diagnostics(const analysis::tail_data& d,
                                          const analysis::tail_fit& fit, double confidence)
{
    tail_diagnostics out;
    if (!fit.fitted || fit.exceedances == 0)
        return out;
    const auto& g = fit.params;
    out.threshold_ns = g.threshold_ns;
    const double z = boost::math::quantile(boost::math::normal(), 0.5 + confidence / 2);
    const double n = double(d.samples);

    // Mean residual life: from where about ten times the fit's exceedances lie above (at most
    // every sample) to where 10 do, at 60 evenly spaced thresholds, and at the fit's own.
    const auto mean_excess = [&](double t) {
        double w = 0, s = 0, s2 = 0;
        for (const auto& x : plot_tail_above(d, t)) {
            w += x.w;
            s += x.w * (x.v - t);
            s2 += x.w * (x.v - t) * (x.v - t);
        }
        tail_diag_point p{t, plot_tail_nan, plot_tail_nan, plot_tail_nan};
        if (w < 2)
            return p;
        const double m = s / w, var = std::max(0.0, (s2 - w * m * m) / (w - 1));
        p.y = m;
        p.lo = m - z * std::sqrt(var / w);
        p.hi = m + z * std::sqrt(var / w);
        return p;
    };
    double t_lo = plot_tail_level_with(d, std::min(n, 10 * double(fit.exceedances)));
    const double t_hi = plot_tail_level_with(d, 10);
    if (std::isnan(t_lo) && !d.bins.empty())
        t_lo = d.bins.front().lo_ns;
    if (!std::isnan(t_lo) && !std::isnan(t_hi) && t_hi > t_lo) {
        constexpr int steps = 60;
        for (int i = 0; i <= steps; ++i) {
            const auto p = mean_excess(t_lo + (t_hi - t_lo) * i / steps);
            if (!std::isnan(p.y))
                out.mean_excess.push_back(p);
        }
    }
    out.threshold_excess_ns = mean_excess(g.threshold_ns).y;

    // QQ: the exceedances against the fitted GPD's quantiles at their empirical fractions.
    if (!fit.from_histogram) {
        std::vector<double> y;
        for (const auto& e : d.exact)
            if (e.value_ns > g.threshold_ns)
                y.push_back(e.value_ns);
        std::sort(y.begin(), y.end());
        const double k = double(y.size());
        for (std::size_t i = 0; i < y.size(); ++i)
            out.qq.push_back({g.threshold_ns + plot_tail_gpd_quantile(g, (double(i) + 0.5) / k),
                              y[i], plot_tail_nan, plot_tail_nan});
    } else {
        double k = 0;
        for (const auto& b : d.bins)
            if (b.lo_ns >= g.threshold_ns)
                k += double(b.count);
        double c = 0;
        for (const auto& b : d.bins)
            if (b.lo_ns >= g.threshold_ns && b.count) {
                c += double(b.count);
                if (c < k)
                    out.qq.push_back({g.threshold_ns + plot_tail_gpd_quantile(g, c / k), b.hi_ns,
                                      plot_tail_nan, plot_tail_nan});
            }
    }

    // Return levels every half decade below the fit's exceedance rate, down to 1e-12.
    const double e0 = std::ceil(2 * -std::log10(g.zeta) + 1e-9) / 2;
    for (double e = e0; e <= 12 + 1e-9; e += 0.5) {
        const double p = std::pow(10.0, -e);
        const auto l = analysis::return_level(d, fit, p, confidence);
        out.levels.push_back({p, l.level_ns, l.ci.lo_open ? plot_tail_nan : l.ci.lo,
                              l.ci.hi_open ? plot_tail_nan : l.ci.hi, l.ci.hi_open});
    }

    // The empirical tail: the fraction of samples above each bucket's upper edge.
    double above = n;
    for (const auto& b : d.bins) {
        above -= double(b.count);
        if (above <= 0)
            break;
        if (above / n <= 10 * g.zeta)
            out.empirical.push_back({above / n, b.hi_ns, plot_tail_nan, plot_tail_nan});
    }
    return out;
}

std::string tail_plot_script(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                             const plot_request& o, plot_outcome& data)
{
    if (runs.size() != 1)
        throw error("plot tail",
                    "it draws the fit of one run; " + std::to_string(runs.size()) + " are selected",
                    "select one with --run ID or --last");
    const auto& run = *runs.front();
    const auto d = read_tail_data(cat, run);
    const analysis::tail_options opt; // as `irqloop tail` fits it by default
    const auto fit = analysis::fit_tail(d, opt);
    if (!fit.fitted || fit.exceedances < opt.min_exceedances) {
        std::string why = "the tail fit failed";
        for (const auto& c : fit.checks)
            if (c.name == "exceedances" && !c.passed)
                why = c.detail;
        throw error("plot tail: " + run.name(), why,
                    "irqloop tail --run " + std::to_string(run.id) + " shows the checks");
    }
    std::string failed;
    for (const auto& c : fit.checks)
        if (c.assessed && !c.passed)
            failed += (failed.empty() ? "" : ", ") + c.name;
    if (!failed.empty())
        data.notes.push_back("irqloop: plot tail: " + run.name() + ": NOT CLAIMED: the " + failed +
                             " check failed (irqloop tail says why); drawn for "
                             "diagnosis");
    const auto t = compute_tail_diagnostics(d, fit, opt.confidence);

    data.data_header = "run_id\tseries\tx\ty\tlo\thi";
    const std::string id = std::to_string(run.id);
    const auto rows = [&](const char* series, const std::vector<tail_diag_point>& v) {
        for (const auto& p : v)
            data.data_rows.push_back(id + '\t' + series + '\t' + plot_tail_num(p.x) + '\t' +
                                     plot_tail_num(p.y) + '\t' + plot_tail_num(p.lo) + '\t' +
                                     (p.hi_open ? std::string("inf") : plot_tail_num(p.hi)));
    };
    rows("mean_excess", t.mean_excess);
    rows("threshold", {{t.threshold_ns, t.threshold_excess_ns, plot_tail_nan, plot_tail_nan}});
    rows("qq", t.qq);
    rows("level", t.levels);
    rows("empirical", t.empirical);

    const auto un = [&](double ns) { return plot_tail_num(plot_tail_in_unit(ns, o.unit)); };
    const std::string u = unit_name(o.unit);
    char shape[160];
    std::snprintf(shape, sizeof shape, "shape %.3f [%.3f, %.3f], %llu exceedances over %s %s",
                  fit.params.xi, fit.xi_ci.lo, fit.xi_ci.hi,
                  static_cast<unsigned long long>(fit.exceedances),
                  un(fit.params.threshold_ns).c_str(), u.c_str());
    const std::string title = o.title.empty()
                                  ? "tail fit of " + run.name() + ": generalized Pareto, " + shape +
                                        (failed.empty() ? "" : " (NOT CLAIMED: " + failed + ")")
                                  : o.title;
    std::ostringstream s;
    s << "set encoding utf8\n"
      << "set multiplot title " << gnuplot_quote(title) << " noenhanced\n"
      << "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
      << "set border 3\nset tics nomirror\nset key top left noenhanced\n";

    // Top left: mean residual life, the chosen threshold marked.
    s << "set size 0.5,0.47\nset origin 0,0.47\n"
      << "set title 'mean residual life: mean excess over the threshold' noenhanced\n"
      << "set xlabel 'threshold (" << u << ")'\nset ylabel 'mean excess (" << u << ")'\n"
      << "$mrl << EOD\n";
    for (const auto& p : t.mean_excess)
        s << un(p.x) << ' ' << un(p.y) << ' ' << un(p.lo) << ' ' << un(p.hi) << '\n';
    s << "EOD\n$u << EOD\n"
      << un(t.threshold_ns) << ' ' << un(t.threshold_excess_ns) << "\nEOD\n"
      << "plot $mrl using 1:3:4 with filledcurves fc rgb '#c6dbef' title '95 % band', \\\n"
      << "     $mrl using 1:2 with lines lw 1.5 lc rgb '#08519c' title 'mean excess', \\\n"
      << "     $u using 1:2 with points pt 7 ps 1.2 lc rgb '#d62728' title "
      << gnuplot_quote("chosen threshold " + un(t.threshold_ns) + " " + u) << '\n';

    // Top right: QQ of the exceedances against the fitted GPD.
    s << "set size 0.5,0.47\nset origin 0.5,0.47\n"
      << "set title 'QQ: exceedances against the fitted GPD' noenhanced\n"
      << "set xlabel 'fitted quantile (" << u << ")'\nset ylabel 'observed (" << u << ")'\n"
      << "$qq << EOD\n";
    for (const auto& p : t.qq)
        s << un(p.x) << ' ' << un(p.y) << '\n';
    s << "EOD\n"
      << "plot $qq using 1:2 with points pt 7 ps 0.4 lc rgb '#08519c' title "
      << gnuplot_quote(fit.from_histogram ? "bucket edges" : "exceedances")
      << ", x with lines dt 2 lc rgb '#444444' title 'y = x'\n";

    // Bottom: return levels with their band over the empirical tail, log return period.
    s << "set size 1,0.47\nset origin 0,0\n"
      << "set title 'return level: latency exceeded once in 1/p samples' noenhanced\n"
      << "set xlabel 'return period 1/p (samples)'\nset ylabel 'latency (" << u << ")'\n"
      << "set logscale x\nset format x '10^{%L}'\nset logscale y\nset key top left\n"
      << "$lv << EOD\n";
    double top = 0;
    for (const auto& p : t.levels)
        if (std::isfinite(p.hi))
            top = std::max(top, p.hi);
    for (const auto& p : t.levels) {
        // An open upper end is drawn to the panel's top; an open lower end at the estimate.
        const double hi = std::isfinite(p.hi) ? p.hi : std::max(top, p.y) * 2;
        const double lo = std::isfinite(p.lo) ? p.lo : p.y;
        s << plot_tail_num(1 / p.x) << ' ' << un(p.y) << ' ' << un(lo) << ' ' << un(hi) << '\n';
    }
    s << "EOD\n$emp << EOD\n";
    for (const auto& p : t.empirical)
        s << plot_tail_num(1 / p.x) << ' ' << un(p.y) << '\n';
    s << "EOD\n"
      << "plot $lv using 1:3:4 with filledcurves fc rgb '#fdd0a2' title '95 % profile interval', "
         "\\\n"
      << "     $lv using 1:2 with lines lw 1.5 lc rgb '#d94801' title 'fitted return level', \\\n"
      << "     $emp using 1:2 with points pt 7 ps 0.4 lc rgb '#08519c' title "
         "'measured (fraction of samples above)'\n"
      << "unset multiplot\n";
    return s.str();
}

} // namespace irqloop::logger
