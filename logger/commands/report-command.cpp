// SPDX-License-Identifier: MIT
// irqloop report: one run's metadata, summary, histogram, timeline and worst cases.
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "floor-rule.hpp"
#include "plot.hpp"
#include "selection.hpp"
#include "stats-pool.hpp"
#include "store.hpp"
#include "table.hpp"
#include "units.hpp"
#include "worst-table.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

struct report_options {
    latency_unit unit = latency_unit::us;
    table_format fmt = table_format::text;
    std::size_t top = 10;
    std::size_t timeline_rows = 48;
    std::string floor = "auto";
};

std::string ns_text(std::int64_t ns)
{
    return ns ? format_duration(double(ns)) : "0";
}

void print_run_list(db::catalog& cat, const report_options& o, std::ostream& out)
{
    table t;
    for (auto h : {"id", "uuid", "label", "kind", "status", "start (UTC)", "samples"})
        t.add_column(h, std::string_view(h) == "id" || std::string_view(h) == "samples"
                            ? table::align::right
                            : table::align::left);
    t.add_column(std::string("max (") + unit_name(o.unit) + ")");
    const bool many = cat.paths().size() > 1;
    if (many)
        t.add_column("file", table::align::left);
    for (const auto& r : cat.runs()) {
        std::vector<std::string> row{
            std::to_string(r.id),
            r.meta.uuid,
            r.meta.label,
            std::string(db::to_text(r.meta.kind)),
            std::string(db::to_text(r.status)),
            format_utc(r.meta.start_unix_ns, 0),
            format_count(r.summary.samples),
            format_latency(r.has_stats ? std::optional<double>(double(r.summary.max_ns))
                                       : std::nullopt,
                           o.unit)};
        if (many)
            row.push_back(r.db_path);
        t.add_row(std::move(row));
    }
    t.print(out, o.fmt);
}

void print_metadata(const db::run_record& r, const db::run_record* floor, const report_options& o,
                    std::ostream& out)
{
    table t;
    t.add_column("field", table::align::left);
    t.add_column("value", table::align::left);
    const auto& m = r.meta;
    std::string status(db::to_text(r.status));
    if (r.status == db::run_status::running)
        status += db::writer_alive(r.db_path, r.id)
                      ? " (PARTIAL: still being recorded; figures up to the last commit)"
                      : " (PARTIAL: its logger died; figures up to the last commit)";
    else if (r.status == db::run_status::interrupted)
        status += " (PARTIAL: stopped early; figures up to the last commit)";
    t.add_row({"run", std::to_string(r.id) + " of " + r.db_path});
    t.add_row({"uuid", m.uuid});
    t.add_row({"label", m.label});
    t.add_row({"kind", std::string(db::to_text(m.kind))});
    t.add_row({"status", status});
    t.add_row({"start (UTC)", format_utc(m.start_unix_ns, 3)});
    if (r.end_unix_ns) {
        t.add_row({"end (UTC)", format_utc(*r.end_unix_ns, 3)});
        t.add_row({"duration", format_duration(double(*r.end_unix_ns - m.start_unix_ns))});
    } else {
        t.add_row({"end (UTC)", "-"});
    }
    t.add_row({"host", m.hostname});
    t.add_row({"uname", m.uname});
    t.add_row({"irqloop", m.version});
    t.add_row({"command", m.command_line});
    t.add_row({"backend", m.backend});
    char clock[128];
    std::snprintf(clock, sizeof clock, "%s at %.6f MHz, read cost %.1f ns", m.clock_source.c_str(),
                  m.clock_hz / 1e6, m.clock_read_ns);
    t.add_row({"clock", clock});
    t.add_row(
        {"interval", ns_text(m.interval_ns) +
                         (m.jitter_ns ? " + up to " + ns_text(m.jitter_ns) + " jitter" : "")});
    t.add_row({"timeout", ns_text(m.timeout_ns)});
    t.add_row({"threshold", ns_text(m.threshold_ns)});
    // Where the cycle counter's step set the automatic limit, it says so (run metadata).
    std::string gap = ns_text(m.gap_limit_ns), rule, step;
    for (const auto& [k, v] : m.metadata) {
        if (k == "logger.gap_limit_rule")
            rule = v;
        else if (k == "logger.clock_step_ns")
            step = v;
    }
    const double step_ns = step.empty() ? 0.0 : std::strtod(step.c_str(), nullptr);
    if (rule == "auto: 3 x clock step" && step_ns > 0 && step_ns < 3.6e12)
        gap += " (3 x clock step " + format_duration(step_ns) + ")";
    t.add_row({"gap limit", gap});
    t.add_row({"stats interval", ns_text(m.stats_interval_ns)});
    t.add_row({"warm-up", format_count(m.warmup_samples) + " samples"});
    if (m.samples_requested)
        t.add_row({"samples requested", format_count(m.samples_requested)});
    if (m.duration_ns)
        t.add_row({"duration requested", format_duration(double(m.duration_ns))});
    t.add_row({"rt settings", m.rt_settings});
    t.add_row({"target", m.target});
    t.add_row({"load", m.load});
    for (const auto& [k, v] : m.metadata)
        t.add_row({k, v});
    if (floor)
        t.add_row({"floor run", std::to_string(floor->id) + " '" + floor->name() + "', min " +
                                    format_latency(double(floor->summary.min_ns), o.unit) + " " +
                                    unit_name(o.unit)});
    t.print(out, o.fmt);
}

void print_summary(const db::run_record& r, const db::run_record* floor, const report_options& o,
                   std::ostream& out)
{
    const auto& s = r.summary;
    const std::string u = std::string(" (") + unit_name(o.unit) + ")";
    table t;
    t.add_column("figure", table::align::left);
    t.add_column("value");
    if (floor)
        t.add_column("floor-corrected" + u);
    // The one floor rule (analysis::floor_correction_ns): what the floor's samples prove; for a
    // device-timed backend less what the run's own offset took in already.
    const double f = floor ? double(analysis::floor_correction_ns(r, *floor)) : 0.0;
    const bool plain = !floor || !analysis::floor_device_timed(*floor);
    auto lat = [&](const char* name, std::optional<double> v, bool corrected = true) {
        std::vector<std::string> row{name + u, format_latency(v, o.unit)};
        if (floor)
            row.push_back(corrected && v ? format_latency(*v - f, o.unit)
                                         : format_latency(v, o.unit));
        t.add_row(std::move(row));
    };
    auto cnt = [&](const char* name, std::string v) { t.add_row({name, std::move(v)}); };
    auto opt = [&](auto v) {
        return r.has_stats ? std::optional<double>(double(v)) : std::nullopt;
    };
    cnt("samples", format_count(s.samples));
    cnt("stimuli", format_count(s.stimuli));
    lat("min", opt(s.min_ns));
    lat("avg", opt(s.mean_ns));
    // A maximum held by a disturbed sample is its upper bound; its bracket follows.
    auto bracketed = [&](const char* name, std::optional<double> v, std::int64_t bracket) {
        if (!v || bracket <= 0)
            return lat(name, v);
        const std::string b = " (bracket " + format_latency(double(bracket), o.unit) + ")";
        std::vector<std::string> row{name + u, format_latency(v, o.unit) + b};
        if (floor)
            row.push_back(format_latency(*v - f, o.unit) + b);
        t.add_row(std::move(row));
    };
    bracketed("max", opt(s.max_ns), s.max_bracket_ns);
    bracketed("warm max", s.has_warm_max ? opt(s.warm_max_ns) : std::nullopt,
              s.warm_max_bracket_ns);
    lat("stddev", opt(s.stddev_ns), false);
    lat("p50", opt(s.p50_ns));
    lat("p99", opt(s.p99_ns));
    lat("p99.9", opt(s.p999_ns));
    lat("p99.99", opt(s.p9999_ns));
    lat("p99.9999", opt(s.p999999_ns));
    cnt("threshold", format_latency(double(r.meta.threshold_ns), o.unit) + " " + unit_name(o.unit));
    cnt("above threshold", format_count(s.above_threshold));
    cnt("% above threshold", format_percent(r.pct_above()));
    cnt("exceedances dropped", format_count(s.exceedances_dropped));
    cnt("lost", format_count(s.lost));
    cnt("late", format_count(s.late));
    cnt("disturbed", format_count(s.disturbed));
    // Version-1 runs did not count them (and judged "disturbed" by the largest poll gap).
    cnt("logger interruptions", r.bracketed ? format_count(s.interruptions) : "n/a");
    cnt("overflows", format_count(s.overflows));
    cnt("rising / falling", format_count(s.rising) + " / " + format_count(s.falling));
    t.print(out, o.fmt);
    if (r.has_stats && s.samples < 1'000'000)
        print_note(out, o.fmt,
                   "note: with " + format_count(s.samples) +
                       " samples the highest percentiles are the top samples themselves "
                       "(p99.9999 needs 10^6 samples to mean more than the max).");
    if (floor && !plain)
        print_note(out, o.fmt,
                   "floor-corrected = value - " + format_latency(f, o.unit) + " " +
                       unit_name(o.unit) + " (floor run " + std::to_string(floor->id) + ", min " +
                       format_latency(double(floor->summary.min_ns), o.unit) + " " +
                       unit_name(o.unit) +
                       "): a device-timed reading already excludes its command offset, so the "
                       "floor's share is its minimum sample's proven lower bound, less what this "
                       "run's offset took in; stddev is unchanged.");
    else if (floor)
        print_note(out, o.fmt,
                   "floor-corrected = value - " + format_latency(f, o.unit) + " " +
                       unit_name(o.unit) + " (floor run " + std::to_string(floor->id) + ", min " +
                       format_latency(double(floor->summary.min_ns), o.unit) + " " +
                       unit_name(o.unit) +
                       "): the smallest latency the floor's samples prove, never more "
                       "(docs/commands/report.md, \"Floor correction\"); stddev is unchanged.");
}

/**
 * Truth and measured side by side, for a run whose wire knew the truth (the sim board's
 * computed far end: schema version 6, intervals.truth_max_ns). Prints nothing, and returns
 * false, for any other run, so their reports stay as they were.
 */
bool print_truth(db::catalog& cat, const db::run_record& r, const std::vector<db::interval_row>& iv,
                 const report_options& o, std::ostream& out)
{
    std::optional<std::int64_t> truth_max;
    for (const auto& w : iv)
        if (w.truth_max_ns && (!truth_max || *w.truth_max_ns > *truth_max))
            truth_max = w.truth_max_ns;
    if (!truth_max)
        return false;
    const std::string u = std::string(" (") + unit_name(o.unit) + ")";
    auto lat = [&](std::int64_t ns) { return format_latency(double(ns), o.unit); };
    auto with_bracket = [&](std::int64_t ns, std::int64_t bracket) {
        return lat(ns) + " (bracket " + lat(bracket) + ")";
    };
    print_heading(out, o.fmt, "truth (sim) vs measured");
    table t;
    t.add_column("figure", table::align::left);
    t.add_column("truth" + u);
    t.add_column("measured" + u);
    t.add_column("measured - truth" + u);
    if (r.has_stats) {
        const auto& s = r.summary;
        t.add_row({"max", lat(*truth_max),
                   s.max_bracket_ns > 0 ? with_bracket(s.max_ns, s.max_bracket_ns) : lat(s.max_ns),
                   lat(s.max_ns - *truth_max)});
    } else {
        t.add_row({"max", lat(*truth_max), format_latency(std::nullopt, o.unit),
                   format_latency(std::nullopt, o.unit)});
    }
    // The worst sample, and how many of the stored worst ones lie within their brackets.
    std::uint64_t known = 0, within = 0;
    for (const auto& w : cat.worst(r)) {
        if (!w.truth_ns || w.latency_ns < 0)
            continue;
        if (!known)
            t.add_row({"worst sample, seq " + std::to_string(w.seq), lat(*w.truth_ns),
                       with_bracket(w.latency_ns, w.bracket_ns), lat(w.latency_ns - *w.truth_ns)});
        ++known;
        within += w.latency_ns - w.bracket_ns <= *w.truth_ns && *w.truth_ns <= w.latency_ns;
    }
    t.print(out, o.fmt);
    print_note(out, o.fmt,
               "truth: the delay the simulated board drew for each edge, on the logger's own "
               "clock (the max over answered samples, clean or disturbed); measured - truth is "
               "what the logger adds: its drive() and poll costs, and its interruptions.");
    if (known)
        print_note(out, o.fmt,
                   "the " + format_count(known) +
                       " stored worst samples with a truth: " + format_count(within) +
                       " lie within their bracket (latency - bracket <= truth <= latency).");
    return true;
}

void print_histogram(const db::run_record& r, const std::vector<db::bucket_row>& buckets,
                     const report_options& o, std::ostream& out)
{
    const auto bins = rebin_report(buckets);
    if (bins.empty()) {
        print_note(out, o.fmt, "(no samples)");
        return;
    }
    std::uint64_t top = 0, total = 0;
    for (const auto& b : bins) {
        top = std::max(top, b.count);
        total += b.count;
    }
    const std::string u = std::string(" (") + unit_name(o.unit) + ")";
    table t;
    t.add_column("from" + u);
    t.add_column("to" + u);
    t.add_column("count");
    t.add_column("%");
    t.add_column("marks", table::align::left);
    if (o.fmt != table_format::csv)
        t.add_column("log10 scale", table::align::left);
    // Where the summary's figures fall: the bin holding each of them.
    const std::pair<const char*, std::int64_t> figures[] = {
        {"p50", r.summary.p50_ns},          {"p99", r.summary.p99_ns},
        {"p99.9", r.summary.p999_ns},       {"p99.99", r.summary.p9999_ns},
        {"threshold", r.meta.threshold_ns}, {"max", r.summary.max_ns}};
    for (std::size_t i = 0; i < bins.size(); ++i) {
        const auto& b = bins[i];
        const bool last = i + 1 == bins.size();
        std::string marks;
        for (const auto& [name, v] : figures)
            if (r.has_stats && v >= b.lo_ns && (v < b.hi_ns || (last && v >= b.hi_ns)))
                marks += (marks.empty() ? "" : " ") + std::string(name);
        std::vector<std::string> row{
            format_latency(double(b.lo_ns), o.unit), format_latency(double(b.hi_ns), o.unit),
            format_count(b.count), format_percent(100.0 * double(b.count) / double(total)), marks};
        if (o.fmt != table_format::csv)
            row.push_back(log_bar(b.count, top));
        t.add_row(std::move(row));
    }
    t.print(out, o.fmt);
}

void print_timeline(const db::run_record& r, const std::vector<db::interval_row>& iv,
                    const report_options& o, std::ostream& out)
{
    if (iv.empty()) {
        print_note(out, o.fmt, "(no interval committed yet)");
        return;
    }
    const std::size_t rows = o.timeline_rows ? o.timeline_rows : iv.size();
    const std::size_t per = (iv.size() + rows - 1) / rows;
    const std::string u = std::string(" (") + unit_name(o.unit) + ")";
    table t;
    t.add_column(per > 1 ? "intervals" : "interval");
    t.add_column("start (UTC)", table::align::left);
    t.add_column("samples");
    t.add_column("min" + u);
    t.add_column("avg" + u);
    t.add_column("max" + u);
    t.add_column("stddev" + u);
    t.add_column(per > 1 ? "max p99" + u : "p99" + u);
    t.add_column("above");
    t.add_column("lost");
    t.add_column("disturbed");
    t.add_column("SMI");
    t.add_column("mark", table::align::left);
    bool marked = false;
    for (std::size_t a = 0; a < iv.size(); a += per) {
        const std::size_t b = std::min(iv.size(), a + per);
        const auto m = merge_windows(iv, a, b);
        auto opt = [&](double v) { return m.samples ? std::optional<double>(v) : std::nullopt; };
        std::string mark;
        if (!marked && r.has_stats && m.samples && m.max_ns == r.summary.max_ns) {
            mark = "<== run max";
            marked = true;
        } else if (m.above_threshold) {
            mark = "> threshold";
        }
        if (m.lost)
            mark += mark.empty() ? "lost" : ", lost";
        t.add_row({b - a > 1 ? std::to_string(iv[a].index) + "-" + std::to_string(iv[b - 1].index)
                             : std::to_string(m.index),
                   format_utc(m.start_unix_ns, 0), format_count(m.samples),
                   format_latency(opt(double(m.min_ns)), o.unit),
                   format_latency(opt(m.mean_ns), o.unit),
                   format_latency(opt(double(m.max_ns)), o.unit),
                   format_latency(opt(m.stddev_ns), o.unit),
                   format_latency(opt(double(m.p99_ns)), o.unit), format_count(m.above_threshold),
                   format_count(m.lost), format_count(m.disturbed),
                   m.smi_count ? format_count(*m.smi_count) : std::string("n/a"), mark});
    }
    t.print(out, o.fmt);
    if (per > 1)
        print_note(out, o.fmt,
                   "note: " + std::to_string(iv.size()) + " intervals, " + std::to_string(per) +
                       " per row (--timeline-rows 0 shows every one).");
}

void print_worst(const db::run_record& r, const std::vector<db::sample_row>& w,
                 const report_options& o, std::ostream& out)
{
    if (w.empty()) {
        print_note(out, o.fmt, "(no samples)");
        return;
    }
    std::vector<worst_entry> rows;
    for (const auto& s : w)
        rows.push_back({&r, s});
    print_worst_table(rows, worst_columns::sample_only, o.unit, o.fmt, out);
}

void print_events(db::catalog& cat, const db::run_record& r, const report_options& o,
                  std::ostream& out)
{
    table t;
    t.add_column("kind", table::align::left);
    t.add_column("events");
    t.add_column("sum of values");
    t.add_column("first (UTC)", table::align::left);
    t.add_column("last (UTC)", table::align::left);
    for (const auto& e : cat.event_totals(r))
        t.add_row({e.kind, std::to_string(e.events), std::to_string(e.value_sum),
                   format_utc(e.first_unix_ns, 3), format_utc(e.last_unix_ns, 3)});
    if (t.rows() == 0)
        print_note(out, o.fmt, "(none)");
    else
        t.print(out, o.fmt);
}

const db::run_record* pick_floor(db::catalog& cat, const db::run_record& r, const std::string& spec)
{
    if (spec == "none" || r.meta.kind == db::run_kind::floor)
        return nullptr;
    if (spec == "auto")
        return analysis::floor_for(cat, r);
    db::run_selector s;
    s.runs.push_back(spec);
    const db::run_record* f = cat.select(s).front();
    if (f->db_index != r.db_index || f->meta.kind != db::run_kind::floor || !f->has_stats)
        throw error("use floor run '" + spec + "'",
                    "it is not a floor run with samples in " + r.db_path,
                    "record one with 'irqloop calibrate', or use --floor none");
    return f;
}

void report_one(db::catalog& cat, const db::run_record& r, const report_options& o,
                std::ostream& out)
{
    const db::run_record* floor = pick_floor(cat, r, o.floor);
    const bool md = o.fmt == table_format::markdown;
    auto gap = [&] { out << (o.fmt == table_format::csv ? "" : "\n"); };
    std::string title = "irqloop report: run " + std::to_string(r.id);
    if (!r.meta.label.empty())
        title += " '" + r.meta.label + "'";
    if (r.partial())
        title += " [PARTIAL: " + std::string(db::to_text(r.status)) + "]";
    if (md)
        out << "# " << title << "\n\n";
    else
        print_note(out, o.fmt, title);
    if (r.partial())
        print_note(out, o.fmt,
                   "PARTIAL: this run is " + std::string(db::to_text(r.status)) +
                       "; every figure below covers only the intervals committed before it "
                       "stopped (or so far).");
    gap();
    print_heading(out, o.fmt, "run");
    print_metadata(r, floor, o, out);
    gap();
    print_heading(out, o.fmt, r.partial() ? "summary (partial)" : "summary");
    print_summary(r, floor, o, out);
    gap();
    const auto intervals = cat.intervals(r);
    if (print_truth(cat, r, intervals, o, out))
        gap();
    print_heading(out, o.fmt, "histogram (log10 bars; linear bins up to p99, then doubling)");
    print_histogram(r, cat.histogram(r), o, out);
    gap();
    print_heading(out, o.fmt, "timeline");
    print_timeline(r, intervals, o, out);
    gap();
    print_heading(out, o.fmt, "worst " + std::to_string(o.top));
    print_worst(r, cat.worst(r, o.top), o, out);
    gap();
    print_heading(out, o.fmt, "events");
    print_events(cat, r, o, out);
}

} // namespace

int report_command(int argc, char** argv)
{
    selection_options sel;
    report_options o;
    std::string unit = "us", fmt = "text", top = "10", timeline_rows = "48";
    bool list = false;
    po::options_description desc("options");
    add_selection_options(desc, sel);
    auto add = desc.add_options();
    add("unit", po::value(&unit)->default_value(unit), "latency unit: ns or us");
    add("format", po::value(&fmt)->default_value(fmt), "table format: text, markdown or csv");
    add("top", po::value(&top)->default_value(top), "worst samples to list (1 to 1M)");
    add("timeline-rows", po::value(&timeline_rows)->default_value(timeline_rows),
        "at most this many timeline rows (up to 1M); consecutive intervals are merged (0: one per "
        "interval)");
    add("floor", po::value(&o.floor)->default_value(o.floor),
        "floor run to correct with: auto (a floor run in the same file), none, or a run id");
    add("list", po::bool_switch(&list), "list the runs of the file(s) and stop");
    if (!parse_reading_command(
            argc, argv, desc,
            "irqloop report [--db F] [--run ID | --label L | --last] [--unit ns|us] "
            "[--format text|markdown|csv]",
            "Print a run's metadata, summary (raw and floor-corrected), a log-scale histogram,\n"
            "the per-interval timeline and the worst samples. Without --run or --label, the\n"
            "most recent measurement run. Running or interrupted runs are marked PARTIAL."))
        return 0;
    o.unit = parse_latency_unit(unit);
    o.fmt = parse_table_format(fmt);
    o.top = parse_count_in(top, "--top", 1, 1'000'000);
    o.timeline_rows = parse_count_in(timeline_rows, "--timeline-rows", 0, 1'000'000);
    base::options_parsed();
    db::catalog cat(db_paths_or_default(sel.dbs));
    if (list) {
        if (cat.runs().empty())
            cat.select(sel.sel); // throws the "holds no runs" message
        print_run_list(cat, o, std::cout);
        return 0;
    }
    if (sel.sel.empty())
        sel.sel.last = true;
    const auto runs = cat.select(sel.sel);
    bool first = true;
    for (const auto* r : runs) {
        if (!first)
            std::cout << (o.fmt == table_format::csv ? "" : "\n");
        first = false;
        report_one(cat, *r, o, std::cout);
    }
    std::cout.flush();
    return 0;
}

} // namespace irqloop::logger
