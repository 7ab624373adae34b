// SPDX-License-Identifier: MIT
// irqloop compare: one row per run or label, in the formats published latency studies use.
#include "compare-command.hpp"

#include "error.hpp"
#include "floor-rule.hpp"
#include "histogram.hpp"
#include "percentiles.hpp"
#include "stats-pool.hpp"
#include "tail-command.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

using group = compare_group;

/** @brief What correcting subtracts from the run (analysis::floor_correction_ns: the one rule, see
 *  docs/commands/report.md), else 0. */
std::int64_t floor_of(const db::catalog& cat, const db::run_record& r, bool corrected)
{
    if (!corrected || r.meta.kind == db::run_kind::floor)
        return 0;
    const db::run_record* f = analysis::floor_for(cat, r);
    return f ? analysis::floor_correction_ns(r, *f) : 0;
}

/** @brief The run's summary with every latency figure lowered by @p f (stddev unchanged). */
db::summary_row shifted(db::summary_row s, std::int64_t f)
{
    for (auto* v : {&s.min_ns, &s.max_ns, &s.warm_max_ns})
        *v -= f;
    for (const auto& p : db::stored_percentiles)
        s.*p.field -= f;
    s.mean_ns -= double(f);
    return s;
}

/** @brief The counts of a summary, which pool by adding. */
constexpr std::uint64_t db::summary_row::*pooled_counts[] = {
    &db::summary_row::samples,
    &db::summary_row::stimuli,
    &db::summary_row::lost,
    &db::summary_row::late,
    &db::summary_row::disturbed,
    &db::summary_row::overflows,
    &db::summary_row::above_threshold,
    &db::summary_row::exceedances_dropped,
    &db::summary_row::rising,
    &db::summary_row::falling,
};

/** @brief The pool's extremes and moments, and the percentiles of the summed histograms @p h
 *  (a percentile of a pool is not a mean of percentiles), bounded by the exact extremes. */
void take_pooled(db::summary_row& s, const stats_pool& pool, const histogram& h)
{
    s.min_ns = pool.min_ns();
    s.max_ns = pool.max_ns();
    s.max_bracket_ns = pool.max_bracket_ns();
    s.mean_ns = pool.mean_ns();
    s.stddev_ns = pool.stddev_ns();
    constexpr std::size_t n = db::stored_percentiles.size();
    double ranks[n];
    std::int64_t values[n];
    for (std::size_t i = 0; i < n; ++i)
        ranks[i] = db::stored_percentiles[i].rank;
    h.percentiles(ranks, values);
    // The histogram answers with bucket bounds; the exact extremes bound every percentile.
    for (std::size_t i = 0; i < n; ++i)
        s.*db::stored_percentiles[i].field = std::clamp(values[i], s.min_ns, s.max_ns);
}

/** @brief Pool several runs: counts add, extremes combine, moments pool, percentiles come
 *  from the summed histograms. */
void pool(db::catalog& cat, group& g, bool corrected)
{
    for (const auto* r : g.runs)
        if (r->summary.lost)
            g.lost_bound_ns =
                std::max(g.lost_bound_ns, r->meta.timeout_ns - floor_of(cat, *r, corrected));
    if (g.runs.size() == 1) {
        g.s = shifted(g.runs[0]->summary, floor_of(cat, *g.runs[0], corrected));
        g.has_stats = g.runs[0]->has_stats;
        g.s.has_warm_max = g.has_stats && g.s.has_warm_max;
        g.threshold_ns = g.runs[0]->meta.threshold_ns;
        return;
    }
    histogram h;
    stats_pool pool;
    auto& s = g.s;
    for (const auto* r : g.runs) {
        const std::int64_t f = floor_of(cat, *r, corrected);
        const auto x = shifted(r->summary, f);
        for (const auto m : pooled_counts)
            s.*m += x.*m;
        g.threshold_ns = std::max(g.threshold_ns, r->meta.threshold_ns);
        if (!r->has_stats)
            continue;
        if (x.has_warm_max && (!s.has_warm_max || x.warm_max_ns > s.warm_max_ns)) {
            s.warm_max_ns = x.warm_max_ns;
            s.has_warm_max = true;
        }
        pool.add(x.samples, x.min_ns, x.max_ns, x.mean_ns, x.stddev_ns, x.max_bracket_ns);
        for (const auto& b : cat.histogram(*r))
            h.record_n(b.lo_ns - f, b.count);
    }
    g.has_stats = !pool.empty();
    if (g.has_stats)
        take_pooled(s, pool, h);
}

struct context {
    latency_unit unit;
    int decimals;
};

using column_fn = std::function<std::string(const group&, const context&)>;

/** @brief A column the user can ask for: its key, default header and how to print a row. */
struct column_def {
    std::string key;
    std::string header; ///< "%u" becomes the unit
    bool numeric;
    std::string help;
    column_fn get;
};

/** @brief The distinct values @p f gives the group's runs, in run order, joined by "; ". */
template <class F> column_fn joined(F f)
{
    return [f](const group& g, const context&) {
        std::vector<std::string> v;
        for (const auto* r : g.runs) {
            auto s = f(*r);
            if (std::find(v.begin(), v.end(), s) == v.end())
                v.push_back(std::move(s));
        }
        std::string o;
        for (const auto& s : v)
            o += (o.empty() ? "" : "; ") + s;
        return o;
    };
}

/** @brief A text field of the runs' metadata, joined. */
column_fn meta(std::string db::run_row::*m)
{
    return joined([m](const db::run_record& r) { return r.meta.*m; });
}

/** @brief A latency figure of the group, absent ("—") when it has no sample or no such figure
 *  (@p present false: no run of the group has a sample after its warm-up, for WARM MAX). */
template <class T>
column_fn lat(T db::summary_row::*m, bool (*present)(const db::summary_row&) = nullptr)
{
    return [m, present](const group& g, const context& c) {
        const bool known = g.has_stats && (!present || present(g.s));
        return format_latency(known ? std::optional<double>(double(g.s.*m)) : std::nullopt, c.unit,
                              c.decimals);
    };
}

/** @brief The group's max as every table prints it (format_max): with its bracket, and as
 *  "≥ timeout (N lost)" when its runs lost answers that no sample outlasted. */
max_figure max_of(const group& g)
{
    return {g.has_stats ? std::optional<std::int64_t>(g.s.max_ns) : std::nullopt,
            g.s.max_bracket_ns, g.s.lost, g.lost_bound_ns};
}

column_fn cnt(std::uint64_t db::summary_row::*m)
{
    return [m](const group& g, const context&) { return format_count(g.s.*m); };
}

/** @brief The percentile columns p50 ... p999999, from the one table of stored percentiles. */
void add_percentile_columns(std::vector<column_def>& defs)
{
    for (const auto& p : db::stored_percentiles) {
        char rank[32];
        std::snprintf(rank, sizeof rank, "%gth percentile", p.rank);
        defs.push_back({p.key, std::string(p.label) + " (%u)", true, p.rank == 50 ? "median" : rank,
                        lat(p.field)});
    }
}

/** @brief "L [lo, hi]" in the unit: an estimate with its interval (compare --tail). */
std::string compare_tail_cell(double v, const analysis::tail_interval& ci, const context& c)
{
    return format_latency(v, c.unit, c.decimals) + " [" + (ci.lo_open ? "\xe2\x89\xa4 " : "") +
           format_latency(ci.lo, c.unit, c.decimals) + ", " +
           (ci.hi_open ? std::string("unbounded") : format_latency(ci.hi, c.unit, c.decimals)) +
           "]";
}

/** @brief A tail column's cell: @p f of the fit, "not claimed (checks)", or "—" without one. */
template <class F> column_fn compare_tail_column(F f)
{
    return [f](const group& g, const context& c) -> std::string {
        if (!g.tail)
            return "\xe2\x80\x94";
        if (!g.tail->not_claimed.empty())
            return "not claimed (" + g.tail->not_claimed + ")";
        return f(*g.tail, c);
    };
}

/** @brief The columns of compare --tail: the fitted shape, the 1e-6 and 1e-9 return levels. */
void add_tail_columns(std::vector<column_def>& defs)
{
    defs.push_back({"tail_shape", "shape [95 %]", true,
                    "compare --tail: the tail fit's shape with its 95 % interval (irqloop tail; "
                    "> 0 heavy, < 0 bounded)",
                    compare_tail_column([](const compare_tail& t, const context&) {
                        char b[96];
                        std::snprintf(b, sizeof b, "%.3f [%.3f, %.3f]", t.xi, t.xi_ci.lo,
                                      t.xi_ci.hi);
                        return std::string(b);
                    })});
    defs.push_back({"rl_1e-6", "1e-6 level (%u) [95 %]", true,
                    "compare --tail: the latency exceeded once in 1e6 samples, with its 95 % "
                    "interval; \"not claimed (check)\" when a check of the fit fails",
                    compare_tail_column([](const compare_tail& t, const context& c) {
                        return compare_tail_cell(t.level_6.level_ns, t.level_6.ci, c);
                    })});
    defs.push_back({"rl_1e-9", "1e-9 level (%u) [95 %]", true,
                    "compare --tail: the latency exceeded once in 1e9 samples, with its 95 % "
                    "interval",
                    compare_tail_column([](const compare_tail& t, const context& c) {
                        return compare_tail_cell(t.level_9.level_ns, t.level_9.ci, c);
                    })});
}

/** @brief The tail fit of @p run for compare --tail, lowered by @p floor_ns. */
compare_tail compare_tail_of(db::catalog& cat, const db::run_record& run, std::int64_t floor_ns)
{
    compare_tail t;
    const auto d = read_tail_data(cat, run);
    const analysis::tail_options opt; // as `irqloop tail` fits it by default
    const auto fit = analysis::fit_tail(d, opt);
    for (const auto& c : fit.checks)
        if (c.assessed && !c.passed)
            t.not_claimed += (t.not_claimed.empty() ? "" : ", ") + c.name;
    if (!fit.fitted || fit.exceedances < opt.min_exceedances) {
        if (t.not_claimed.empty())
            t.not_claimed = "no fit";
        return t;
    }
    if (!t.not_claimed.empty())
        return t;
    t.xi = fit.params.xi;
    t.xi_ci = fit.xi_ci;
    t.level_6 = analysis::return_level(d, fit, 1e-6, opt.confidence);
    t.level_9 = analysis::return_level(d, fit, 1e-9, opt.confidence);
    // A location shift moves every level and its interval by the same amount.
    for (auto* l : {&t.level_6, &t.level_9}) {
        l->level_ns -= double(floor_ns);
        l->ci.lo -= double(floor_ns);
        l->ci.hi -= double(floor_ns);
    }
    return t;
}

/** @brief The keys of the tail columns, which --tail appends. */
constexpr const char* compare_tail_keys[] = {"tail_shape", "rl_1e-6", "rl_1e-9"};

std::vector<column_def> make_columns()
{
    using R = const db::run_record&;
    std::vector<column_def> defs = {
        {"run", "run", true, "run id(s)", joined([](R r) { return std::to_string(r.id); })},
        {"uuid", "uuid", false, "run uuid(s)", meta(&db::run_row::uuid)},
        {"label", "label", false, "the run's --label", meta(&db::run_row::label)},
        {"group", "group", false,
         "with --by KEY[,KEY...]: the keys' values the row's runs share (\"(none)\": their "
         "target info lacks the key; \"(no target info)\": runs made without --target-info)",
         [](const group& g, const context&) {
             // Grouped by run or label: the row's name, as the label column would give it.
             return g.key.rfind('#', 0) == 0 ? g.runs[0]->name() : g.key;
         }},
        {"runs", "runs", true, "number of runs pooled in the row",
         [](const group& g, const context&) { return std::to_string(g.runs.size()); }},
        {"kind", "kind", false, "measure, floor or selftest",
         joined([](R r) { return std::string(db::to_text(r.meta.kind)); })},
        {"status", "status", false, "complete, interrupted, running, failed",
         joined([](R r) { return std::string(db::to_text(r.status)); })},
        {"target", "target", false, "the run's --target description", meta(&db::run_row::target)},
        {"load", "load", false, "the run's --load description", meta(&db::run_row::load)},
        {"sys_load", "sys load", false,
         "the run's --load description, None for a run with none (an idle run, as the "
         "published opersys/OSADL tables say)",
         joined([](R r) { return r.meta.load.empty() ? std::string("None") : r.meta.load; })},
        {"backend", "backend", false, "backend spec", meta(&db::run_row::backend)},
        {"host", "host", false, "logger hostname", meta(&db::run_row::hostname)},
        {"start", "start (UTC)", false, "start time of the first run",
         [](const group& g, const context&) {
             return format_utc(g.runs[0]->meta.start_unix_ns, 0);
         }},
        {"file", "file", false, "database file(s)", joined([](R r) { return r.db_path; })},
        {"gate", "gate", false,
         "the gates' outcome stored with the run (run --fail-*, campaign): pass, fail or -; "
         "shown by default when a run has one",
         joined([](R r) {
             for (const auto& [k, v] : r.meta.metadata)
                 if (k == "gate.result")
                     return v;
             return std::string("-");
         })},
        {"samples", "samples", true, "samples in the statistics", cnt(&db::summary_row::samples)},
        {"lost", "lost", true, "stimuli without a response before the timeout",
         cnt(&db::summary_row::lost)},
        {"late", "late", true, "responses after the timeout", cnt(&db::summary_row::late)},
        {"disturbed", "disturbed", true, "samples the logger itself disturbed",
         cnt(&db::summary_row::disturbed)},
        {"overflows", "overflows", true, "samples dropped, ring full",
         cnt(&db::summary_row::overflows)},
        {"above", "above thr", true, "samples above the threshold",
         cnt(&db::summary_row::above_threshold)},
        {"pct_above", "% above", true, "percentage of samples above the threshold",
         [](const group& g, const context&) { return format_percent(db::pct_above(g.s)); }},
        {"threshold", "thr (%u)", true, "the threshold",
         [](const group& g, const context& c) {
             return format_latency(double(g.threshold_ns), c.unit, c.decimals);
         }},
        {"min", "min (%u)", true, "minimum latency", lat(&db::summary_row::min_ns)},
        {"avg", "avg (%u)", true, "mean latency", lat(&db::summary_row::mean_ns)},
        {"max", "max (%u)", true,
         "maximum latency, by what its sample proves (a disturbed one's bracket follows it); "
         "\"\xe2\x89\xa5 timeout (N lost)\" when answers were lost and no sample proves as much",
         [](const group& g, const context& c) {
             return format_max(max_of(g), c.unit, c.decimals);
         }},
        // WARM MAX: absent ("—") when no run of the group has a sample after its warm-up.
        {"warm_max", "warm max (%u)", true, "maximum after the warm-up",
         lat(&db::summary_row::warm_max_ns,
             [](const db::summary_row& s) { return s.has_warm_max; })},
        {"stddev", "stddev (%u)", true, "standard deviation", lat(&db::summary_row::stddev_ns)},
    };
    add_percentile_columns(defs);
    add_tail_columns(defs);
    return defs;
}

const std::vector<column_def>& columns()
{
    static const std::vector<column_def> defs = make_columns();
    return defs;
}

/** @brief A named column list with its unit and decimals, as published tables print them. */
struct preset {
    const char* name;
    const char* columns;
    latency_unit unit;
    int decimals;
    const char* about;
};

const preset presets[] = {
    {"default", "", latency_unit::us, 3, "run or label, samples, percentiles, extremes, losses"},
    {"opersys", "target=Kernel,sys_load=sys load,avg=Aver,max=Max,min=Min,stddev=StdDev,lost=Lost",
     latency_unit::us, 1, "kernel x load, Aver/Max/Min/StdDev in us (LKML 2005)"},
    {"rt_eval", "", latency_unit::ns, 0,
     "one row per stats interval: mean/stddev/% above threshold/window min-max/lost/global "
     "min-max"},
    {"tbm", "label=,avg=AVG,min=MIN,max=MAX,warm_max=WARM MAX,lost=LOST", latency_unit::ns, 0,
     "AVG/MIN/MAX/WARM MAX in ns (xen-devel TBM tables)"},
    {"tbm-target", "group=,avg=AVG,min=MIN,max=MAX,warm_max=WARM MAX,lost=LOST", latency_unit::ns,
     0,
     "the TBM table from the runs' stored target info: one row per scheduler x vwfi (--by "
     "sched,vwfi unless --by says otherwise), AVG/MIN/MAX/WARM MAX in ns"},
};

/** @brief The --by keys a preset implies when --by is not given. */
std::vector<std::string> preset_by_keys(const std::string& name)
{
    if (name == "tbm-target")
        return {"sched", "vwfi"};
    return {};
}

/** @brief The preset named @p name. @throws irqloop::error (exit 2) for an unknown one. */
const preset& find_preset(const std::string& name)
{
    for (const auto& x : presets)
        if (name == x.name)
            return x;
    throw error("bad --preset", "unknown preset '" + name + "'",
                "use default, opersys, tbm, tbm-target or rt_eval");
}

const char* default_columns(bool by_label, bool by_keys)
{
    if (by_keys)
        return "group,runs,samples,min,avg,p50,p99,p999,p9999,max,warm_max,stddev,pct_above,lost,"
               "disturbed";
    return by_label ? "label,runs,samples,min,avg,p50,p99,p999,p9999,max,warm_max,stddev,pct_above,"
                      "lost,disturbed"
                    : "run,label,samples,min,avg,p50,p99,p999,p9999,max,warm_max,stddev,pct_above,"
                      "lost,disturbed";
}

struct chosen_column {
    const column_def* def;
    std::string header;
};

std::vector<chosen_column> parse_columns(const std::string& spec, latency_unit unit)
{
    std::vector<chosen_column> out;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty())
            continue;
        const auto eq = item.find('=');
        const std::string key = item.substr(0, eq);
        const column_def* def = nullptr;
        for (const auto& d : columns())
            if (key == d.key)
                def = &d;
        if (!def) {
            std::string known;
            for (const auto& d : columns())
                known += (known.empty() ? "" : ",") + d.key;
            throw error("bad --columns", "unknown column '" + key + "'", "known: " + known);
        }
        std::string header = eq == std::string::npos ? def->header : item.substr(eq + 1);
        if (auto p = header.find("%u"); p != std::string::npos)
            header.replace(p, 2, unit_name(unit));
        out.push_back({def, header});
    }
    if (out.empty())
        throw error("bad --columns", "no column given", "e.g. --columns label,avg,max");
    return out;
}

/** @brief The figure --sort orders by; none when the group has no such figure (no sample, or no
 *  sample after the warm-up for warm_max): such rows go last, whichever the direction. */
std::optional<double> sort_value(const group& g, const std::string& key)
{
    const auto& s = g.s;
    std::optional<double> v;
    if (key == "min")
        v = double(s.min_ns);
    else if (key == "avg")
        v = s.mean_ns;
    else if (key == "max") // by what it proves, the lost answers' timeout included
        v = max_of(g).bounded_by_timeout() ? double(g.lost_bound_ns)
                                           : double(s.max_ns - s.max_bracket_ns);
    else if (key == "warm_max")
        v = double(s.warm_max_ns);
    else if (key == "stddev")
        v = s.stddev_ns;
    else if (key == "samples")
        return double(s.samples);
    else if (key == "lost")
        return double(s.lost);
    else if (key == "pct_above")
        v = db::pct_above(s) / 100.0;
    for (const auto& p : db::stored_percentiles)
        if (key == p.key)
            v = double(s.*p.field);
    if (!v)
        throw error(
            "bad --sort", "cannot sort by '" + key + "'",
            "use start, label, min, avg, max, warm_max, stddev, p50..p999999, samples, lost "
            "or pct_above, with a leading - for descending");
    if (!g.has_stats || (key == "warm_max" && !s.has_warm_max))
        return std::nullopt; // shown "—": no figure to rank
    return v;
}

/** @brief --sort's key, without the "-" of a descending order. */
std::string sort_key(const std::string& sort)
{
    return !sort.empty() && sort[0] == '-' ? sort.substr(1) : sort;
}

/** @brief Order @p groups by --sort @p sort (start: as selected). */
void sort_groups(std::vector<group>& groups, const std::string& sort)
{
    if (sort == "start")
        return;
    const bool desc_order = !sort.empty() && sort[0] == '-';
    const std::string key = sort_key(sort);
    if (key == "label") {
        std::stable_sort(groups.begin(), groups.end(), [&](const group& a, const group& b) {
            return desc_order ? a.runs[0]->meta.label > b.runs[0]->meta.label
                              : a.runs[0]->meta.label < b.runs[0]->meta.label;
        });
        return;
    }
    std::stable_sort(groups.begin(), groups.end(), [&](const group& a, const group& b) {
        const auto va = sort_value(a, key), vb = sort_value(b, key);
        if (!va || !vb) // an absent figure sorts last (NULLS LAST), either direction
            return va.has_value() && !vb.has_value();
        return desc_order ? *va > *vb : *va < *vb;
    });
}

/** @brief The values of @p keys in @p r's stored target info, as the group column shows them:
 *  "k=v, k=v"; a key the target info lacks is "(none)"; a run without target info is
 *  "(no target info)", a row of its own, never dropped. */
std::string target_group(const db::run_record& r, const std::vector<std::string>& keys)
{
    if (!r.meta.target_info)
        return "(no target info)";
    std::string s;
    for (const auto& k : keys) {
        const auto v = r.meta.target_info->fact(k);
        s += (s.empty() ? "" : ", ") + k + "=" + (v ? *v : "(none)");
    }
    return s;
}

/** @brief The selected runs in rows: one a run, one a label (@p by_label), or one a combination
 *  of target info values (@p by_keys). */
std::vector<group> group_runs(const std::vector<const db::run_record*>& runs, bool by_label,
                              const std::vector<std::string>& by_keys = {})
{
    std::vector<group> groups;
    for (const auto* r : runs) {
        // Unlabelled runs stay apart: an empty label is not a configuration.
        const std::string key = !by_keys.empty()                     ? target_group(*r, by_keys)
                                : by_label && !r->meta.label.empty() ? r->meta.label
                                                                     : "#" + r->meta.uuid;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const group& g) { return g.key == key; });
        if (it == groups.end()) {
            groups.push_back({key, {}, {}, false, 0, 0, {}, {}});
            it = groups.end() - 1;
        }
        it->runs.push_back(r);
    }
    return groups;
}

/** @brief Refuse a --by key that no selected run's target info has (a typo would otherwise
 *  pool every run under "(none)"), naming the keys the runs do have. */
void check_by_keys(const std::vector<const db::run_record*>& runs,
                   const std::vector<std::string>& keys)
{
    for (const auto& k : keys) {
        bool found = false;
        std::vector<std::string> known;
        for (const auto* r : runs) {
            if (!r->meta.target_info)
                continue;
            found |= r->meta.target_info->fact(k).has_value();
            for (const auto& f : r->meta.target_info->facts)
                if (std::find(known.begin(), known.end(), f.key) == known.end())
                    known.push_back(f.key);
        }
        if (found)
            continue;
        std::string some;
        for (std::size_t i = 0; i < known.size() && i < 12; ++i)
            some += (i ? ", " : "") + known[i];
        throw error("bad --by", "no selected run has '" + k + "' in its target info",
                    known.empty() ? std::string("use run or label: no selected run was made with "
                                                "run --target-info")
                                  : "use run, label, or keys the runs have: " + some +
                                        (known.size() > 12 ? ", ..." : "") +
                                        " (irqloop report lists a run's)");
    }
}

/** @brief rt_eval: the per-window lines of the Zephyr/Linux rt_eval apps, as a table. */
void print_rt_eval(const std::vector<group>& groups, const context& c, table_format fmt,
                   std::ostream& out)
{
    const std::string u = std::string(" (") + unit_name(c.unit) + ")";
    table t;
    t.add_column("label", table::align::left, table::content::stored);
    t.add_column("run");
    t.add_column("window");
    t.add_column("start (UTC)", table::align::left);
    t.add_column("samples");
    t.add_column("mean" + u);
    t.add_column("stddev" + u);
    t.add_column("above thr %");
    t.add_column("min" + u);
    t.add_column("max" + u);
    t.add_column("lost");
    t.add_column("global min" + u);
    t.add_column("global max" + u);
    for (const auto& g : groups) {
        stats_pool global; // the windows so far
        std::uint64_t global_lost = 0;
        std::int64_t global_bound = 0;
        for (std::size_t i = 0; i < g.runs.size(); ++i)
            for (const auto& w : g.windows[i]) {
                const db::run_record* r = g.runs[i];
                std::optional<double> mn, mean, sd;
                global.add(w.samples, w.min_ns, w.max_ns, w.mean_ns, w.stddev_ns, w.max_bracket_ns);
                global_lost += w.lost;
                if (w.lost)
                    global_bound = std::max(global_bound, r->meta.timeout_ns);
                if (w.samples) {
                    mn = double(w.min_ns);
                    mean = w.mean_ns;
                    sd = w.stddev_ns;
                }
                auto gv = [&](std::int64_t v) {
                    return format_latency(global.empty() ? std::nullopt
                                                         : std::optional<double>(double(v)),
                                          c.unit, c.decimals);
                };
                const max_figure mx{w.samples ? std::optional<std::int64_t>(w.max_ns)
                                              : std::nullopt,
                                    w.max_bracket_ns, w.lost, r->meta.timeout_ns};
                const max_figure gmx{global.empty() ? std::nullopt
                                                    : std::optional<std::int64_t>(global.max_ns()),
                                     global.max_bracket_ns(), global_lost, global_bound};
                t.add_row({r->meta.label, std::to_string(r->id), std::to_string(w.index),
                           format_utc(w.start_unix_ns, 0), format_count(w.samples),
                           format_latency(mean, c.unit, c.decimals),
                           format_latency(sd, c.unit, c.decimals),
                           format_percent(
                               // A window has no stimuli count: its answered samples are the ones
                               // in the statistics and the disturbed ones.
                               w.samples + w.disturbed ? 100.0 * double(w.above_threshold) /
                                                             double(w.samples + w.disturbed)
                                                       : 0.0),
                           format_latency(mn, c.unit, c.decimals),
                           format_max(mx, c.unit, c.decimals), format_count(w.lost),
                           gv(global.min_ns()), format_max(gmx, c.unit, c.decimals)});
            }
    }
    t.print(out, fmt);
}

/** @brief One row per group in the columns asked for (the preset's, or the defaults). */
void print_groups(const compare_outcome& o, const compare_request& r, std::ostream& out)
{
    const preset& p = find_preset(r.preset);
    // The default columns gain the gates' outcome when a run has one stored.
    const std::string defaults =
        std::string(default_columns(r.by_label, !r.by_keys.empty())) + (o.gated ? ",gate" : "");
    std::string spec = !r.columns.empty() ? r.columns : *p.columns ? p.columns : defaults;
    // --tail adds the tail columns, unless the columns asked for name some of them.
    bool named = false;
    for (const char* k : compare_tail_keys)
        named |= ("," + spec + ",").find("," + std::string(k) + ",") != std::string::npos;
    if (r.tail && !named)
        for (const char* k : compare_tail_keys)
            spec += std::string(",") + k;
    const auto chosen = parse_columns(spec, r.unit);
    const context c{r.unit, r.decimals};
    table t;
    for (const auto& col : chosen)
        // A text column holds stored text (label, host, target, load, backend) or a word of
        // irqloop's own, which escaping leaves as it is.
        t.add_column(col.header, col.def->numeric ? table::align::right : table::align::left,
                     col.def->numeric ? table::content::own : table::content::stored);
    for (const auto& g : o.groups) {
        std::vector<std::string> row;
        for (const auto& col : chosen)
            row.push_back(col.def->get(g, c));
        t.add_row(std::move(row));
    }
    t.print(out, r.format);
}

/** @brief The notes under the table: what the floor correction took, and the partial runs. */
void print_compare_notes(const compare_outcome& o, const compare_request& r, std::ostream& out)
{
    std::string with, without, partial;
    for (const auto& f : o.floors) {
        if (f.floor)
            with += (with.empty() ? "" : ", ") + std::to_string(f.run->id) + " - " +
                    format_latency(double(f.share_ns), r.unit) + " " + unit_name(r.unit) +
                    " (floor run " + std::to_string(f.floor->id) + ")";
        else
            without += (without.empty() ? "" : ", ") + std::to_string(f.run->id);
    }
    if (!with.empty())
        print_note(out, r.format, "floor-corrected: run " + with);
    if (!without.empty())
        print_note(out, r.format, "NOT corrected, no floor run on their backend: " + without);
    for (const auto* run : o.runs)
        if (run->partial())
            partial += (partial.empty() ? "" : ", ") + std::to_string(run->id) + " (" +
                       std::string(db::to_text(run->status)) + ")";
    if (!partial.empty())
        print_note(out, r.format, "PARTIAL runs, figures up to their last commit: " + partial);
}

/** @brief The text of --help after the usage line: the presets and the columns. */
std::string compare_about()
{
    std::ostringstream more;
    more << "Print one row per run (or per label) of one or more database files, side by\n"
            "side. Files from several loggers combine: runs are told apart by "
            "uuid.\n\npresets:\n";
    for (const auto& p : presets)
        more << "  " << p.name << ": " << p.about << " [" << unit_name(p.unit) << "]"
             << (*p.columns ? std::string("\n      = ") + p.columns : std::string()) << '\n';
    more << "\ncolumns:\n";
    for (const auto& d : columns())
        more << "  " << d.key << ": " << d.help << '\n';
    return more.str();
}

/** @brief The option values kept as text until they are checked. */
struct compare_texts {
    std::string by, unit, fmt = "text", decimals; ///< by "": not given (run, or the preset's keys)
};

/** @brief The option table of `irqloop compare`, bound to @p r and @p t. */
void add_compare_options(po::options_description& desc, compare_request& r, compare_texts& t)
{
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("by", po::value(&t.by),
        "one row per run (the default), per label (the runs of a label pooled), or per combination "
        "of the "
        "values of keys of the runs' stored target info (run --target-info), e.g. sched,vwfi or "
        "halt_poll_ns");
    add("preset", po::value(&r.preset)->default_value(r.preset),
        "column set: default, opersys, tbm or rt_eval (see below)");
    add("columns", po::value(&r.columns),
        "comma-separated columns, each KEY or KEY=Header, replacing the preset's (see below)");
    add("unit", po::value(&t.unit), "latency unit: ns or us (default: the preset's)");
    add("decimals", po::value(&t.decimals),
        "decimals of latencies, 0 to 9 (default: the preset's)");
    add("sort", po::value(&r.sort)->default_value(r.sort),
        "row order: start (first run's start time), label, or a figure such as avg or -max");
    add("floor-corrected", po::bool_switch(&r.floor_corrected),
        "subtract from each run's latency figures the share its file's floor run proves (the "
        "smallest latency its samples prove: record it with calibrate --raw)");
    add("format", po::value(&t.fmt)->default_value(t.fmt), "table format: text, markdown or csv");
    add("tail", po::bool_switch(&r.tail),
        "add each run's tail fit (irqloop tail): the shape and the latencies exceeded once in "
        "1e6 and 1e9 samples, with 95 % intervals; \"not claimed (check)\" for a run whose fit "
        "checks fail (columns tail_shape, rl_1e-6, rl_1e-9; --by run only)");
}

/** @brief Check the values of @p r and @p t, and settle the unit and decimals in @p r. */
void check_compare(compare_request& r, const compare_texts& t)
{
    const int decimals =
        t.decimals.empty() ? -1 : static_cast<int>(parse_count_in(t.decimals, "--decimals", 0, 9));
    const preset& p = find_preset(r.preset);
    r.by_label = t.by == "label";
    if (!t.by.empty() && t.by != "run" && t.by != "label") {
        // Keys of the runs' stored target info (run --target-info), comma-separated.
        std::stringstream ss(t.by);
        for (std::string k; std::getline(ss, k, ',');) {
            const bool word =
                !k.empty() && k.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                  "0123456789_.-") == std::string::npos;
            if (!word)
                throw error("bad --by", "'" + t.by + "' is not run, label or target info keys",
                            "use run, label, or keys such as sched,vwfi (irqloop report shows a "
                            "run's keys)");
            r.by_keys.push_back(k);
        }
        if (r.by_keys.empty())
            throw error("bad --by", "no key given", "use run, label, or keys such as sched,vwfi");
    } else if (t.by.empty()) {
        r.by_keys = preset_by_keys(r.preset);
    }
    r.unit = t.unit.empty() ? p.unit : parse_latency_unit(t.unit);
    r.decimals = decimals >= 0                ? decimals
                 : t.unit.empty()             ? p.decimals
                 : r.unit == latency_unit::ns ? 0
                                              : 3;
    r.format = parse_table_format(t.fmt);
    if (const std::string key = sort_key(r.sort); r.sort != "start" && key != "label")
        sort_value(group{}, key); // throws for a key it cannot sort by
    if (!r.columns.empty())
        for (const auto& c : parse_columns(r.columns, r.unit)) // throws for an unknown column
            for (const char* k : compare_tail_keys)
                r.tail |= c.def->key == k;
    if (r.tail && (r.by_label || !r.by_keys.empty()))
        throw error("bad --tail", "a tail fit is one run's, not a group's pooled runs'",
                    "use --by run");
    if (r.tail && r.rt_eval())
        throw error("bad --tail", "the rt_eval preset prints windows, not runs",
                    "use another preset, or --columns");
}

} // namespace

parsed<compare_request> parse_compare(int argc, char** argv)
{
    const std::string about = compare_about();
    const command_help help = {"irqloop compare [--by run|label|KEY[,KEY...]] [--preset P | "
                               "--columns C] "
                               "[--db F] [F1.db F2.db ...]",
                               about.c_str()};
    return parse_reading_table(argc, argv, help, add_compare_options, check_compare);
}

compare_outcome execute_compare(const compare_request& r)
{
    compare_outcome o;
    o.cat = std::make_unique<db::catalog>(r.sel.dbs);
    o.runs = o.cat->select(r.sel.sel);
    check_by_keys(o.runs, r.by_keys);
    o.groups = group_runs(o.runs, r.by_label, r.by_keys);
    for (auto& g : o.groups) {
        pool(*o.cat, g, r.floor_corrected);
        if (r.tail)
            g.tail = compare_tail_of(*o.cat, *g.runs.front(),
                                     floor_of(*o.cat, *g.runs.front(), r.floor_corrected));
        if (r.rt_eval())
            for (const auto* run : g.runs)
                g.windows.push_back(o.cat->intervals(*run));
    }
    sort_groups(o.groups, r.sort);
    for (const auto* run : o.runs) {
        for (const auto& kv : run->meta.metadata)
            o.gated |= kv.first == "gate.result";
        if (!r.floor_corrected || run->meta.kind == db::run_kind::floor)
            continue;
        const db::run_record* fl = analysis::floor_for(*o.cat, *run);
        o.floors.push_back({run, fl, fl ? analysis::floor_correction_ns(*run, *fl) : 0});
    }
    return o;
}

int present_compare(const compare_outcome& o, const compare_request& r)
{
    if (r.rt_eval())
        print_rt_eval(o.groups, {r.unit, r.decimals}, r.format, std::cout);
    else
        print_groups(o, r, std::cout);
    print_compare_notes(o, r, std::cout);
    return 0;
}

int compare_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_compare, execute_compare, present_compare, std::cout);
}

} // namespace irqloop::logger
