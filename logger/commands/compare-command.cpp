// SPDX-License-Identifier: MIT
// irqloop compare: one row per run or label, in the formats published latency studies use.
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "floor-rule.hpp"
#include "histogram.hpp"
#include "selection.hpp"
#include "stats-pool.hpp"
#include "table.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

/** @brief The figures of one row: a run, or every run of one label pooled. */
struct group {
    std::string key;
    std::vector<const db::run_record*> runs;
    db::summary_row s;
    bool has_stats = false;
    std::int64_t threshold_ns = 0;
};

/** @brief Pool several runs: counts add, extremes combine, moments pool, percentiles come
 *  from the summed histograms (a percentile of a pool is not a mean of percentiles). */
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
    for (auto* v : {&s.min_ns, &s.max_ns, &s.warm_max_ns, &s.p50_ns, &s.p99_ns, &s.p999_ns,
                    &s.p9999_ns, &s.p999999_ns})
        *v -= f;
    s.mean_ns -= double(f);
    return s;
}

void pool(db::catalog& cat, group& g, bool corrected)
{
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
        s.samples += x.samples;
        s.stimuli += x.stimuli;
        s.lost += x.lost;
        s.late += x.late;
        s.disturbed += x.disturbed;
        s.overflows += x.overflows;
        s.above_threshold += x.above_threshold;
        s.exceedances_dropped += x.exceedances_dropped;
        s.rising += x.rising;
        s.falling += x.falling;
        g.threshold_ns = std::max(g.threshold_ns, r->meta.threshold_ns);
        if (!r->has_stats)
            continue;
        if (x.has_warm_max && (!s.has_warm_max || x.warm_max_ns > s.warm_max_ns)) {
            s.warm_max_ns = x.warm_max_ns;
            s.has_warm_max = true;
        }
        pool.add(x.samples, x.min_ns, x.max_ns, x.mean_ns, x.stddev_ns);
        for (const auto& b : cat.histogram(*r))
            h.record_n(b.lo_ns - f, b.count);
    }
    g.has_stats = !pool.empty();
    if (!g.has_stats)
        return;
    s.min_ns = pool.min_ns();
    s.max_ns = pool.max_ns();
    s.mean_ns = pool.mean_ns();
    s.stddev_ns = pool.stddev_ns();
    const double ps[] = {50, 99, 99.9, 99.99, 99.9999};
    std::int64_t out[5];
    h.percentiles(ps, out);
    // The histogram answers with bucket bounds; the exact extremes bound every percentile.
    for (auto& v : out)
        v = std::clamp(v, s.min_ns, s.max_ns);
    s.p50_ns = out[0];
    s.p99_ns = out[1];
    s.p999_ns = out[2];
    s.p9999_ns = out[3];
    s.p999999_ns = out[4];
}

struct context {
    latency_unit unit;
    int decimals;
};

/** @brief A column the user can ask for: its key, default header and how to print a row. */
struct column_def {
    const char* key;
    const char* header; ///< "%u" becomes the unit
    bool numeric;
    const char* help;
    std::function<std::string(const group&, const context&)> get;
};

std::string join_runs(const group& g, const std::function<std::string(const db::run_record&)>& f)
{
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
}

std::function<std::string(const group&, const context&)> lat(std::int64_t db::summary_row::*m)
{
    return [m](const group& g, const context& c) {
        return format_latency(g.has_stats ? std::optional<double>(double(g.s.*m)) : std::nullopt,
                              c.unit, c.decimals);
    };
}

// WARM MAX: absent ("—") when no run of the group has a sample after its warm-up.
std::function<std::string(const group&, const context&)> warm_max()
{
    return [](const group& g, const context& c) {
        return format_latency(g.has_stats && g.s.has_warm_max
                                  ? std::optional<double>(double(g.s.warm_max_ns))
                                  : std::nullopt,
                              c.unit, c.decimals);
    };
}

std::function<std::string(const group&, const context&)> latd(double db::summary_row::*m)
{
    return [m](const group& g, const context& c) {
        return format_latency(g.has_stats ? std::optional<double>(g.s.*m) : std::nullopt, c.unit,
                              c.decimals);
    };
}

std::function<std::string(const group&, const context&)> cnt(std::uint64_t db::summary_row::*m)
{
    return [m](const group& g, const context&) { return format_count(g.s.*m); };
}

const std::vector<column_def>& columns()
{
    using R = const db::run_record&;
    static const std::vector<column_def> defs = {
        {"run", "run", true, "run id(s)",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return std::to_string(r.id); });
         }},
        {"uuid", "uuid", false, "run uuid(s)",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return r.meta.uuid; });
         }},
        {"label", "label", false, "the run's --label",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return r.meta.label; });
         }},
        {"runs", "runs", true, "number of runs pooled in the row",
         [](const group& g, const context&) { return std::to_string(g.runs.size()); }},
        {"kind", "kind", false, "measure, floor or selftest",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return std::string(db::to_text(r.meta.kind)); });
         }},
        {"status", "status", false, "complete, interrupted, running, failed",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return std::string(db::to_text(r.status)); });
         }},
        {"target", "target", false, "the run's --target description",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return r.meta.target; });
         }},
        {"load", "load", false, "the run's --load description",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return r.meta.load; });
         }},
        {"backend", "backend", false, "backend spec",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return r.meta.backend; });
         }},
        {"host", "host", false, "logger hostname",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return r.meta.hostname; });
         }},
        {"start", "start (UTC)", false, "start time of the first run",
         [](const group& g, const context&) {
             return format_utc(g.runs[0]->meta.start_unix_ns, 0);
         }},
        {"file", "file", false, "database file(s)",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) { return r.db_path; });
         }},
        {"gate", "gate", false,
         "the gates' outcome stored with the run (run --fail-*, campaign): pass, fail or -; "
         "shown by default when a run has one",
         [](const group& g, const context&) {
             return join_runs(g, [](R r) {
                 for (const auto& [k, v] : r.meta.metadata)
                     if (k == "gate.result")
                         return v;
                 return std::string("-");
             });
         }},
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
        {"avg", "avg (%u)", true, "mean latency", latd(&db::summary_row::mean_ns)},
        {"max", "max (%u)", true, "maximum latency", lat(&db::summary_row::max_ns)},
        {"warm_max", "warm max (%u)", true, "maximum after the warm-up", warm_max()},
        {"stddev", "stddev (%u)", true, "standard deviation", latd(&db::summary_row::stddev_ns)},
        {"p50", "p50 (%u)", true, "median", lat(&db::summary_row::p50_ns)},
        {"p99", "p99 (%u)", true, "99th percentile", lat(&db::summary_row::p99_ns)},
        {"p999", "p99.9 (%u)", true, "99.9th percentile", lat(&db::summary_row::p999_ns)},
        {"p9999", "p99.99 (%u)", true, "99.99th percentile", lat(&db::summary_row::p9999_ns)},
        {"p999999", "p99.9999 (%u)", true, "99.9999th percentile",
         lat(&db::summary_row::p999999_ns)},
    };
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
    {"opersys", "target=Kernel,load=sys load,avg=Aver,max=Max,min=Min,stddev=StdDev",
     latency_unit::us, 1, "kernel x load, Aver/Max/Min/StdDev in us (LKML 2005)"},
    {"rt_eval", "", latency_unit::ns, 0,
     "one row per stats interval: mean/stddev/% above threshold/window min-max/global min-max"},
    {"tbm", "label=,avg=AVG,min=MIN,max=MAX,warm_max=WARM MAX", latency_unit::ns, 0,
     "AVG/MIN/MAX/WARM MAX in ns (xen-devel TBM tables)"},
};

const char* default_columns(bool by_label)
{
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
                known += (known.empty() ? "" : ",") + std::string(d.key);
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
    else if (key == "max")
        v = double(s.max_ns);
    else if (key == "warm_max")
        v = double(s.warm_max_ns);
    else if (key == "stddev")
        v = s.stddev_ns;
    else if (key == "p50")
        v = double(s.p50_ns);
    else if (key == "p99")
        v = double(s.p99_ns);
    else if (key == "p999")
        v = double(s.p999_ns);
    else if (key == "p9999")
        v = double(s.p9999_ns);
    else if (key == "p999999")
        v = double(s.p999999_ns);
    else if (key == "samples")
        return double(s.samples);
    else if (key == "lost")
        return double(s.lost);
    else if (key == "pct_above")
        v = db::pct_above(s) / 100.0;
    else
        throw error(
            "bad --sort", "cannot sort by '" + key + "'",
            "use start, label, min, avg, max, warm_max, stddev, p50..p999999, samples, lost "
            "or pct_above, with a leading - for descending");
    if (!g.has_stats || (key == "warm_max" && !s.has_warm_max))
        return std::nullopt; // shown "—": no figure to rank
    return v;
}

/** @brief rt_eval: the per-window lines of the Zephyr/Linux rt_eval apps, as a table. */
void print_rt_eval(db::catalog& cat, const std::vector<group>& groups, const context& c,
                   table_format fmt, std::ostream& out)
{
    const std::string u = std::string(" (") + unit_name(c.unit) + ")";
    table t;
    t.add_column("label", table::align::left);
    t.add_column("run");
    t.add_column("window");
    t.add_column("start (UTC)", table::align::left);
    t.add_column("samples");
    t.add_column("mean" + u);
    t.add_column("stddev" + u);
    t.add_column("above thr %");
    t.add_column("min" + u);
    t.add_column("max" + u);
    t.add_column("global min" + u);
    t.add_column("global max" + u);
    for (const auto& g : groups) {
        stats_pool global; // the windows so far
        for (const auto* r : g.runs)
            for (const auto& w : cat.intervals(*r)) {
                std::optional<double> mn, mx, mean, sd;
                global.add(w.samples, w.min_ns, w.max_ns, w.mean_ns, w.stddev_ns);
                if (w.samples) {
                    mn = double(w.min_ns);
                    mx = double(w.max_ns);
                    mean = w.mean_ns;
                    sd = w.stddev_ns;
                }
                auto gv = [&](std::int64_t v) {
                    return format_latency(global.empty() ? std::nullopt
                                                         : std::optional<double>(double(v)),
                                          c.unit, c.decimals);
                };
                t.add_row(
                    {r->meta.label, std::to_string(r->id), std::to_string(w.index),
                     format_utc(w.start_unix_ns, 0), format_count(w.samples),
                     format_latency(mean, c.unit, c.decimals),
                     format_latency(sd, c.unit, c.decimals),
                     format_percent(
                         // A window has no stimuli count: its answered samples are the ones
                         // in the statistics and the disturbed ones.
                         w.samples + w.disturbed
                             ? 100.0 * double(w.above_threshold) / double(w.samples + w.disturbed)
                             : 0.0),
                     format_latency(mn, c.unit, c.decimals), format_latency(mx, c.unit, c.decimals),
                     gv(global.min_ns()), gv(global.max_ns())});
            }
    }
    t.print(out, fmt);
}

} // namespace

int compare_command(int argc, char** argv)
{
    selection_options sel;
    std::string by = "run", cols, preset_name = "default", unit, fmt = "text", sort = "start",
                decimals_text;
    bool corrected = false;
    po::options_description desc("options");
    add_selection_options(desc, sel);
    auto add = desc.add_options();
    add("by", po::value(&by)->default_value(by),
        "one row per run, or per label (the runs of a label pooled)");
    add("preset", po::value(&preset_name)->default_value(preset_name),
        "column set: default, opersys, tbm or rt_eval (see below)");
    add("columns", po::value(&cols),
        "comma-separated columns, each KEY or KEY=Header, replacing the preset's (see below)");
    add("unit", po::value(&unit), "latency unit: ns or us (default: the preset's)");
    add("decimals", po::value(&decimals_text),
        "decimals of latencies, 0 to 9 (default: the preset's)");
    add("sort", po::value(&sort)->default_value(sort),
        "row order: start (first run's start time), label, or a figure such as avg or -max");
    add("floor-corrected", po::bool_switch(&corrected),
        "subtract from each run's latency figures the share its file's floor run proves (the "
        "smallest latency its samples prove: record it with calibrate --raw)");
    add("format", po::value(&fmt)->default_value(fmt), "table format: text, markdown or csv");
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
    if (!parse_reading_command(argc, argv, desc,
                               "irqloop compare [--by run|label] [--preset P | --columns C] "
                               "[--db F] [F1.db F2.db ...]",
                               more.str()))
        return 0;
    const int decimals = decimals_text.empty()
                             ? -1
                             : static_cast<int>(parse_count_in(decimals_text, "--decimals", 0, 9));
    if (by != "run" && by != "label")
        throw error("bad --by", "unknown grouping '" + by + "'", "use run or label");
    const preset* p = nullptr;
    for (const auto& x : presets)
        if (preset_name == x.name)
            p = &x;
    if (!p)
        throw error("bad --preset", "unknown preset '" + preset_name + "'",
                    "use default, opersys, tbm or rt_eval");
    context c{unit.empty() ? p->unit : parse_latency_unit(unit),
              decimals >= 0 ? decimals : p->decimals};
    if (!unit.empty() && decimals < 0)
        c.decimals = c.unit == latency_unit::ns ? 0 : 3;
    const auto f = parse_table_format(fmt);
    const bool by_label = by == "label";
    base::options_parsed();

    db::catalog cat(db_paths_or_default(sel.dbs));
    const auto runs = cat.select(sel.sel);
    std::vector<group> groups;
    for (const auto* r : runs) {
        // Unlabelled runs stay apart: an empty label is not a configuration.
        const std::string key =
            by_label && !r->meta.label.empty() ? r->meta.label : "#" + r->meta.uuid;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const group& g) { return g.key == key; });
        if (it == groups.end()) {
            groups.push_back({key, {}, {}, false, 0});
            it = groups.end() - 1;
        }
        it->runs.push_back(r);
    }
    for (auto& g : groups)
        pool(cat, g, corrected);
    if (sort != "start") {
        const bool desc_order = !sort.empty() && sort[0] == '-';
        const std::string key = desc_order ? sort.substr(1) : sort;
        if (key == "label")
            std::stable_sort(groups.begin(), groups.end(), [&](const group& a, const group& b) {
                return desc_order ? a.runs[0]->meta.label > b.runs[0]->meta.label
                                  : a.runs[0]->meta.label < b.runs[0]->meta.label;
            });
        else {
            sort_value(groups.front(), key); // validates the key even for one row
            std::stable_sort(groups.begin(), groups.end(), [&](const group& a, const group& b) {
                const auto va = sort_value(a, key), vb = sort_value(b, key);
                if (!va || !vb) // an absent figure sorts last (NULLS LAST), either direction
                    return va.has_value() && !vb.has_value();
                return desc_order ? *va > *vb : *va < *vb;
            });
        }
    }

    if (std::string_view(p->name) == "rt_eval" && cols.empty()) {
        print_rt_eval(cat, groups, c, f, std::cout);
    } else {
        // The default columns gain the gates' outcome when a run has one stored.
        bool gated = false;
        for (const auto* r : runs)
            for (const auto& kv : r->meta.metadata)
                gated |= kv.first == "gate.result";
        const std::string defaults =
            std::string(default_columns(by_label)) + (gated ? ",gate" : "");
        const auto chosen = parse_columns(!cols.empty() ? cols
                                          : *p->columns ? p->columns
                                                        : defaults,
                                          c.unit);
        table t;
        for (const auto& col : chosen)
            t.add_column(col.header, col.def->numeric ? table::align::right : table::align::left);
        for (const auto& g : groups) {
            std::vector<std::string> row;
            for (const auto& col : chosen)
                row.push_back(col.def->get(g, c));
            t.add_row(std::move(row));
        }
        t.print(std::cout, f);
    }
    if (corrected) {
        std::string with, without;
        for (const auto* r : runs) {
            if (r->meta.kind == db::run_kind::floor)
                continue;
            if (const db::run_record* fl = analysis::floor_for(cat, *r))
                with += (with.empty() ? "" : ", ") + std::to_string(r->id) + " - " +
                        format_latency(double(analysis::floor_correction_ns(*r, *fl)), c.unit) + " " +
                        unit_name(c.unit) + " (floor run " + std::to_string(fl->id) + ")";
            else
                without += (without.empty() ? "" : ", ") + std::to_string(r->id);
        }
        if (!with.empty())
            print_note(std::cout, f, "floor-corrected: run " + with);
        if (!without.empty())
            print_note(std::cout, f, "NOT corrected, no floor run on their backend: " + without);
    }
    std::string partial;
    for (const auto* r : runs)
        if (r->partial())
            partial += (partial.empty() ? "" : ", ") + std::to_string(r->id) + " (" +
                       std::string(db::to_text(r->status)) + ")";
    if (!partial.empty())
        print_note(std::cout, f, "PARTIAL runs, figures up to their last commit: " + partial);
    return 0;
}

} // namespace irqloop::logger
