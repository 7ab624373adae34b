// SPDX-License-Identifier: MIT
// irqloop report: one run's metadata, summary, histogram, timeline and worst cases.
#include "report-command.hpp"

#include "breakdown-store.hpp"
#include "error.hpp"
#include "floor-rule.hpp"
#include "percentiles.hpp"
#include "plot.hpp"
#include "stats-pool.hpp"
#include "store.hpp"
#include "table.hpp"
#include "target-info.hpp"
#include "units.hpp"
#include "verify-command.hpp"
#include "worst-table.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

std::string ns_text(std::int64_t ns)
{
    return ns ? format_duration(double(ns)) : "0";
}

/** @brief The run's max as every table prints it (format_max). */
max_figure run_max(const db::run_record& r)
{
    return {r.has_stats ? std::optional<std::int64_t>(r.summary.max_ns) : std::nullopt,
            r.summary.max_bracket_ns, r.summary.lost, r.meta.timeout_ns};
}

void print_run_list(const db::catalog& cat, const report_request& o, std::ostream& out)
{
    table t;
    for (auto h : {"id", "uuid", "label", "kind", "status", "start (UTC)", "samples"})
        t.add_column(h,
                     std::string_view(h) == "id" || std::string_view(h) == "samples"
                         ? table::align::right
                         : table::align::left,
                     std::string_view(h) == "label" ? table::content::stored : table::content::own);
    t.add_column(std::string("max (") + unit_name(o.unit) + ")");
    t.add_column("lost");
    const bool many = cat.paths().size() > 1;
    if (many)
        t.add_column("file", table::align::left, table::content::stored);
    for (const auto& r : cat.runs()) {
        std::vector<std::string> row{std::to_string(r.id),
                                     r.meta.uuid,
                                     r.meta.label,
                                     std::string(db::to_text(r.meta.kind)),
                                     std::string(db::to_text(r.status)),
                                     format_utc(r.meta.start_unix_ns, 0),
                                     format_count(r.summary.samples),
                                     format_max(run_max(r), o.unit),
                                     format_count(r.summary.lost)};
        if (many)
            row.push_back(r.db_path);
        t.add_row(std::move(row));
    }
    t.print(out, o.format);
}

void print_metadata(const report_run& rr, const report_request& o, std::ostream& out)
{
    const db::run_record& r = *rr.run;
    const db::run_record* floor = rr.floor;
    table t;
    t.add_column("field", table::align::left);
    // label, host, command, backend, target, load... are stored text.
    t.add_column("value", table::align::left, table::content::stored);
    const auto& m = r.meta;
    std::string status(db::to_text(r.status));
    if (r.status == db::run_status::running)
        status += rr.writer_alive
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
    t.print(out, o.format);
}

/** @brief The summary table: a figure a row, and its value less the floor's share, if any. */
struct summary_table final {
    const report_request& o;
    const db::run_record* floor;
    double share; ///< what correcting subtracts (analysis::floor_correction_ns)
    std::string u = std::string(" (") + unit_name(o.unit) + ")";
    table t;

    /** @brief A latency row; @p suffix (a bracket) follows the raw and the corrected value. */
    void latency(const std::string& name, std::optional<double> v, bool corrected = true,
                 const std::string& suffix = "")
    {
        std::vector<std::string> row{name + u, format_latency(v, o.unit) + suffix};
        if (floor)
            row.push_back(corrected && v ? format_latency(*v - share, o.unit) + suffix
                                         : format_latency(v, o.unit));
        t.add_row(std::move(row));
    }
    void count(const char* name, std::string v) { t.add_row({name, std::move(v)}); }
    /** @brief The WARM MAX row: format_warm_max, raw and less the floor's share. */
    void warm_max(const db::run_record& r, const warm_lost& w)
    {
        std::vector<std::string> row{"warm max" + u, format_warm_max(r, w, o.unit)};
        if (floor)
            row.push_back(format_warm_max(r, w, o.unit, std::int64_t(std::llround(share))));
        t.add_row(std::move(row));
    }
    /** @brief The max row: format_max, raw and less the floor's share (the timeout too). */
    void max(const max_figure& m)
    {
        std::vector<std::string> row{"max" + u, format_max(m, o.unit)};
        if (floor) {
            max_figure c = m;
            const auto f = std::int64_t(std::llround(share));
            if (c.max_ns)
                *c.max_ns -= f;
            c.timeout_ns -= f;
            row.push_back(format_max(c, o.unit));
        }
        t.add_row(std::move(row));
    }
};

/** @brief The notes under the summary: few samples, and what the floor correction took. */
void print_summary_notes(const db::run_record& r, const db::run_record* floor, double share,
                         const report_request& o, std::ostream& out)
{
    if (r.has_stats && r.summary.samples < 1'000'000)
        print_note(out, o.format,
                   "note: with " + format_count(r.summary.samples) +
                       " samples the highest percentiles are the top samples themselves "
                       "(p99.9999 needs 10^6 samples to mean more than the max).");
    if (!floor)
        return;
    const char* rule =
        analysis::floor_device_timed(*floor)
            ? "a device-timed reading already excludes its command offset, so the floor's share "
              "is its minimum sample's proven lower bound, less what this run's offset took in; "
              "stddev is unchanged."
            : "the smallest latency the floor's samples prove, never more "
              "(docs/commands/report.md, \"Floor correction\"); stddev is unchanged.";
    const std::string u = unit_name(o.unit);
    print_note(out, o.format,
               "floor-corrected = value - " + format_latency(share, o.unit) + " " + u +
                   " (floor run " + std::to_string(floor->id) + ", min " +
                   format_latency(double(floor->summary.min_ns), o.unit) + " " + u + "): " + rule);
}

void print_summary(const db::run_record& r, const db::run_record* floor, const warm_lost& warm,
                   const report_request& o, std::ostream& out)
{
    const auto& s = r.summary;
    // The one floor rule (analysis::floor_correction_ns): what the floor's samples prove; for a
    // device-timed backend less what the run's own offset took in already.
    summary_table t{o, floor, floor ? double(analysis::floor_correction_ns(r, *floor)) : 0.0};
    t.t.add_column("figure", table::align::left);
    t.t.add_column("value");
    if (floor)
        t.t.add_column("floor-corrected" + t.u);
    auto opt = [&](auto v) {
        return r.has_stats ? std::optional<double>(double(v)) : std::nullopt;
    };
    // A maximum held by a disturbed sample is its upper bound; its bracket follows.
    auto bracket = [&](std::int64_t max_ns, std::int64_t bracket_ns) {
        return opt(max_ns) && bracket_ns > 0
                   ? " (bracket " + format_latency(double(bracket_ns), o.unit) + ")"
                   : std::string();
    };
    t.count("samples", format_count(s.samples));
    t.count("stimuli", format_count(s.stimuli));
    t.latency("min", opt(s.min_ns));
    t.latency("avg", opt(s.mean_ns));
    t.max(run_max(r));
    // With the max only bounded by the lost answers, the largest answered sample still says
    // where the answers' tail ends.
    if (run_max(r).bounded_by_timeout() && r.has_stats)
        t.latency("max answered", opt(s.max_ns), true, bracket(s.max_ns, s.max_bracket_ns));
    t.warm_max(r, warm);
    t.latency("stddev", opt(s.stddev_ns), false);
    for (const auto& p : db::stored_percentiles)
        t.latency(p.label, opt(s.*p.field));
    t.count("threshold",
            format_latency(double(r.meta.threshold_ns), o.unit) + " " + unit_name(o.unit));
    t.count("above threshold", format_count(s.above_threshold));
    t.count("% above threshold", format_percent(r.pct_above()));
    t.count("exceedances dropped", format_count(s.exceedances_dropped));
    t.count("lost", format_count(s.lost));
    t.count("late", format_count(s.late));
    t.count("disturbed", format_count(s.disturbed));
    // Version-1 runs did not count them (and judged "disturbed" by the largest poll gap).
    t.count("logger interruptions", r.bracketed ? format_count(s.interruptions) : "n/a");
    t.count("overflows", format_count(s.overflows));
    t.count("rising / falling", format_count(s.rising) + " / " + format_count(s.falling));
    t.t.print(out, o.format);
    print_summary_notes(r, floor, t.share, o, out);
}

/**
 * @brief The notes naming what the run's stored facts say stopped the logger around its stored
 * disturbed samples (every worst one kept, and every one above the threshold): one for RT
 * throttling, one for SMIs, none when nothing matches (disturbed_cause(): a match, not a proof).
 */
std::vector<std::string> cause_notes(db::catalog& cat, const db::run_record& r,
                                     const std::vector<db::interval_row>& intervals)
{
    std::map<std::uint64_t, db::sample_row> stored; // by seq: a sample in both lists once
    for (const auto& s : cat.worst(r))
        if (s.flags & db::flag_disturbed)
            stored.emplace(s.seq, s);
    for (const auto& s : cat.exceedances(r))
        if (s.flags & db::flag_disturbed)
            stored.emplace(s.seq, s);
    std::vector<std::uint64_t> throttled;
    std::uint64_t smi = 0;
    for (const auto& [seq, s] : stored) {
        const std::string c = disturbed_cause(r, s, intervals);
        if (c.find("RT throttling") != std::string::npos)
            throttled.push_back(seq);
        if (c.find("SMI") != std::string::npos)
            ++smi;
    }
    std::vector<std::string> out;
    if (!throttled.empty()) {
        const auto t = stored_rt_throttling(r);
        std::string seqs;
        for (std::size_t i = 0; i < throttled.size() && i < 5; ++i)
            seqs += (i ? ", " : "") + std::to_string(throttled[i]);
        if (throttled.size() > 5)
            seqs += ", ...";
        char pause[32];
        std::snprintf(pause, sizeof pause, "%.3f ms", double(t->pause_ns()) / 1e6);
        out.push_back("note: RT throttling: " + format_count(throttled.size()) +
                      " stored disturbed sample" + (throttled.size() == 1 ? "" : "s") + " (seq " +
                      seqs + ") ha" + (throttled.size() == 1 ? "s" : "ve") +
                      " a bracket within 10 % of its pause, " + pause + " (sched_rt_runtime_us " +
                      std::to_string(t->runtime_us) + " of " + std::to_string(t->period_us) +
                      ", preflight FAIL): the logger was stopped that long around "
                      "the answer, which proves only its lower bound.");
    }
    if (smi)
        out.push_back("note: SMIs: " + format_count(smi) + " stored disturbed sample" +
                      (smi == 1 ? " lies" : "s lie") +
                      " in windows that counted SMIs (MSR 0x34; see the timeline's SMI column).");
    return out;
}

/**
 * Truth and measured side by side, for a run whose wire knew the truth (the sim board's
 * computed far end: schema version 6, intervals.truth_max_ns). Prints nothing, and returns
 * false, for any other run, so their reports stay as they were.
 */
bool print_truth(const report_run& rr, const report_request& o, std::ostream& out)
{
    const db::run_record& r = *rr.run;
    std::optional<std::int64_t> truth_max;
    for (const auto& w : rr.intervals)
        if (w.truth_max_ns && (!truth_max || *w.truth_max_ns > *truth_max))
            truth_max = w.truth_max_ns;
    if (!truth_max)
        return false;
    const std::string u = std::string(" (") + unit_name(o.unit) + ")";
    auto lat = [&](std::int64_t ns) { return format_latency(double(ns), o.unit); };
    auto with_bracket = [&](std::int64_t ns, std::int64_t bracket) {
        return lat(ns) + " (bracket " + lat(bracket) + ")";
    };
    print_heading(out, o.format, "truth (sim) vs measured");
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
    for (const auto& w : rr.truth_worst) {
        if (!w.truth_ns || w.latency_ns < 0)
            continue;
        if (!known)
            t.add_row({"worst sample, seq " + std::to_string(w.seq), lat(*w.truth_ns),
                       with_bracket(w.latency_ns, w.bracket_ns), lat(w.latency_ns - *w.truth_ns)});
        ++known;
        within += w.latency_ns - w.bracket_ns <= *w.truth_ns && *w.truth_ns <= w.latency_ns;
    }
    t.print(out, o.format);
    print_note(out, o.format,
               "truth: the delay the simulated board drew for each edge, on the logger's own "
               "clock (the max over answered samples, clean or disturbed); measured - truth is "
               "what the logger adds: its drive() and poll costs, and its interruptions.");
    if (known)
        print_note(out, o.format,
                   "the " + format_count(known) +
                       " stored worst samples with a truth: " + format_count(within) +
                       " lie within their bracket (latency - bracket <= truth <= latency).");
    return true;
}

void print_histogram(const db::run_record& r, const std::vector<db::bucket_row>& buckets,
                     const report_request& o, std::ostream& out)
{
    const auto bins = rebin_report(buckets);
    if (bins.empty()) {
        print_note(out, o.format, "(no samples)");
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
    if (o.format != table_format::csv)
        t.add_column("log10 scale", table::align::left);
    // Where the summary's figures fall: the bin holding each of them. Every stored percentile
    // up to p99.99 (p99.9999 is not marked), the threshold and the max.
    std::vector<std::pair<const char*, std::int64_t>> figures;
    for (const auto& p : db::stored_percentiles)
        if (p.rank <= 99.99)
            figures.emplace_back(p.label, r.summary.*p.field);
    figures.emplace_back("threshold", r.meta.threshold_ns);
    if (!run_max(r).bounded_by_timeout())
        figures.emplace_back("max", r.summary.max_ns);
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
        if (o.format != table_format::csv)
            row.push_back(log_bar(b.count, top));
        t.add_row(std::move(row));
    }
    t.print(out, o.format);
    if (r.summary.lost)
        print_note(out, o.format,
                   "not in the histogram: " + format_count(r.summary.lost) +
                       " lost (no answer within the timeout, " +
                       format_latency(double(r.meta.timeout_ns), o.unit) + " " + unit_name(o.unit) +
                       "): the max is at least that.");
}

void print_timeline(const db::run_record& r, const std::vector<db::interval_row>& iv,
                    const report_request& o, std::ostream& out)
{
    if (iv.empty()) {
        print_note(out, o.format, "(no interval committed yet)");
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
    const bool run_bounded = run_max(r).bounded_by_timeout();
    for (std::size_t a = 0; a < iv.size(); a += per) {
        const std::size_t b = std::min(iv.size(), a + per);
        const auto m = merge_windows(iv, a, b);
        auto opt = [&](double v) { return m.samples ? std::optional<double>(v) : std::nullopt; };
        const max_figure mx{m.samples ? std::optional<std::int64_t>(m.max_ns) : std::nullopt,
                            m.max_bracket_ns, m.lost, r.meta.timeout_ns};
        // The run's max: the first row holding its sample, or with lost answers that no sample
        // outlasted, the first row that lost one.
        const bool holds_max = run_bounded
                                   ? mx.bounded_by_timeout()
                                   : r.has_stats && m.samples && m.max_ns == r.summary.max_ns &&
                                         m.max_bracket_ns == r.summary.max_bracket_ns;
        std::string mark;
        if (!marked && holds_max) {
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
                   format_latency(opt(m.mean_ns), o.unit), format_max(mx, o.unit),
                   format_latency(opt(m.stddev_ns), o.unit),
                   format_latency(opt(double(m.p99_ns)), o.unit), format_count(m.above_threshold),
                   format_count(m.lost), format_count(m.disturbed),
                   m.smi_count ? format_count(*m.smi_count) : std::string("n/a"), mark});
    }
    t.print(out, o.format);
    if (per > 1)
        print_note(out, o.format,
                   "note: " + std::to_string(iv.size()) + " intervals, " + std::to_string(per) +
                       " per row (--timeline-rows 0 shows every one).");
}

void print_worst(const db::run_record& r, const std::vector<db::sample_row>& w,
                 const std::vector<db::interval_row>& intervals, const report_request& o,
                 std::ostream& out)
{
    if (w.empty()) {
        print_note(out, o.format, "(no samples)");
        return;
    }
    // What irqloop explain --store kept of each listed sample: the why column.
    const auto why = analysis::read_breakdowns(r.db_path, r.id);
    std::vector<worst_entry> rows;
    for (const auto& s : w) {
        const auto b = why.find(s.seq);
        rows.push_back({&r, s, disturbed_cause(r, s, intervals),
                        b == why.end() ? std::string() : analysis::why_text(b->second)});
    }
    print_worst_table(rows, worst_columns::sample_only, o.unit, o.format, out);
}

void print_events(const std::vector<db::event_total>& events, const report_request& o,
                  std::ostream& out)
{
    table t;
    t.add_column("kind", table::align::left);
    t.add_column("events");
    t.add_column("sum of values");
    t.add_column("first (UTC)", table::align::left);
    t.add_column("last (UTC)", table::align::left);
    for (const auto& e : events)
        t.add_row({e.kind, std::to_string(e.events), std::to_string(e.value_sum),
                   format_utc(e.first_unix_ns, 3), format_utc(e.last_unix_ns, 3)});
    if (t.rows() == 0)
        print_note(out, o.format, "(none)");
    else
        t.print(out, o.format);
}

const db::run_record* pick_floor(const db::catalog& cat, const db::run_record& r,
                                 const std::string& spec)
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

/** @brief Read what the report of @p r shows (the floor @p o names, checked). */
/**
 * run --target-info's command, how it ended, and the keys parsed from its stdout (a run without
 * one says so: never a silent gap); --target-output adds the stored stdout and stderr, each
 * line escaped as stored text is.
 */
void print_target_info(const db::run_record& r, const report_request& o, std::ostream& out)
{
    const auto& t = r.meta.target_info;
    if (!t) {
        print_note(out, o.format, "none recorded (the run was made without --target-info)");
        return;
    }
    print_note(out, o.format, "command: " + message_text(t->command));
    print_note(out, o.format, "outcome: " + message_text(target_info_line(*t)));
    if (t->facts.empty()) {
        print_note(out, o.format, "keys: none recognized in its stdout");
    } else {
        table k;
        k.add_column("key", table::align::left, table::content::stored);
        k.add_column("value", table::align::left, table::content::stored);
        k.add_column("source", table::align::left, table::content::stored);
        for (const auto& f : t->facts)
            k.add_row({f.key, f.value, f.source});
        k.print(out, o.format);
    }
    if (!o.target_output)
        return;
    for (const auto& [name, text, cut] : {std::tuple{"stdout", &t->out, t->out_truncated()},
                                          std::tuple{"stderr", &t->err, t->err_truncated()}}) {
        print_note(out, o.format,
                   std::string(name) + (text->empty() ? ": (empty)" : ":") +
                       (cut ? " (TRUNCATED at " + std::to_string(text->size()) + " bytes)" : ""));
        std::istringstream lines(*text);
        for (std::string l; std::getline(lines, l);)
            print_note(out, o.format, "  " + message_text(l));
    }
}

report_run read_run(db::catalog& cat, const db::run_record& r, const report_request& o)
{
    report_run rr;
    rr.run = &r;
    rr.floor = pick_floor(cat, r, o.floor);
    rr.writer_alive = r.status == db::run_status::running && db::writer_alive(r.db_path, r.id);
    rr.intervals = cat.intervals(r);
    rr.histogram = cat.histogram(r);
    rr.worst = cat.worst(r, o.top);
    rr.verifications = analysis::read_verifications(r.db_path, r.id);
    if (std::any_of(rr.intervals.begin(), rr.intervals.end(),
                    [](const db::interval_row& w) { return w.truth_max_ns.has_value(); }))
        rr.truth_worst = cat.worst(r);
    rr.events = cat.event_totals(r);
    rr.cause_notes = cause_notes(cat, r, rr.intervals);
    if (r.summary.lost)
        rr.warm = lost_after_warmup(r, cat.events(r));
    else
        rr.warm.known = true;
    if (o.tail)
        rr.tail = fit_tail_run(cat, r, *o.tail);
    return rr;
}

void report_one(const report_run& rr, const report_request& o, std::ostream& out)
{
    const db::run_record& r = *rr.run;
    const bool md = o.format == table_format::markdown;
    auto gap = [&] { out << (o.format == table_format::csv ? "" : "\n"); };
    std::string title = "irqloop report: run " + std::to_string(r.id);
    if (!r.meta.label.empty())
        title += " '" + message_text(r.meta.label) + "'";
    if (r.partial())
        title += " [PARTIAL: " + std::string(db::to_text(r.status)) + "]";
    if (md)
        out << "# " << title << "\n\n";
    else
        print_note(out, o.format, title);
    if (r.partial())
        print_note(out, o.format,
                   "PARTIAL: this run is " + std::string(db::to_text(r.status)) +
                       "; every figure below covers only the intervals committed before it "
                       "stopped (or so far).");
    gap();
    print_heading(out, o.format, "run");
    print_metadata(rr, o, out);
    gap();
    print_heading(out, o.format, "target info");
    print_target_info(r, o, out);
    gap();
    print_heading(out, o.format, r.partial() ? "summary (partial)" : "summary");
    print_summary(r, rr.floor, rr.warm, o, out);
    for (const auto& n : rr.cause_notes)
        print_note(out, o.format, n);
    gap();
    if (print_truth(rr, o, out))
        gap();
    print_heading(out, o.format, "histogram (log10 bars; linear bins up to p99, then doubling)");
    print_histogram(r, rr.histogram, o, out);
    gap();
    print_heading(out, o.format, "timeline");
    print_timeline(r, rr.intervals, o, out);
    gap();
    print_heading(out, o.format, "worst " + std::to_string(o.top));
    print_worst(r, rr.worst, rr.intervals, o, out);
    gap();
    print_heading(out, o.format, "events");
    print_events(rr.events, o, out);
    if (!rr.verifications.empty()) { // irqloop verify's (docs/commands/verify.md)
        gap();
        print_heading(out, o.format, "verification against a logic analyzer");
        for (const auto& v : rr.verifications) {
            std::istringstream lines(format_verification(v));
            for (std::string l; std::getline(lines, l);)
                print_note(out, o.format, l);
        }
    }
    if (rr.tail) { // report --tail (print_tail_section, tail-command.cpp)
        gap();
        print_tail_section(out, o.format, *rr.tail, o.tail->confidence);
    }
}

constexpr command_help report_help = {
    "irqloop report [--db F] [--run ID | --label L | --last] [--unit ns|us] "
    "[--format text|markdown|csv] [--tail [--exceed X ...]]",
    "Print a run's metadata, summary (raw and floor-corrected), a log-scale histogram,\n"
    "the per-interval timeline and the worst samples. Without --run or --label, the\n"
    "most recent measurement run. Running or interrupted runs are marked PARTIAL."};

} // namespace

parsed<report_request> parse_report(int argc, char** argv)
{
    report_request r;
    std::string unit = "us", fmt = "text", top = "10", timeline_rows = "48";
    po::options_description desc("options");
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("unit", po::value(&unit)->default_value(unit), "latency unit: ns or us");
    add("format", po::value(&fmt)->default_value(fmt), "table format: text, markdown or csv");
    add("top", po::value(&top)->default_value(top), "worst samples to list (1 to 1M)");
    add("timeline-rows", po::value(&timeline_rows)->default_value(timeline_rows),
        "at most this many timeline rows (up to 1M); consecutive intervals are merged (0: one per "
        "interval)");
    add("floor", po::value(&r.floor)->default_value(r.floor),
        "floor run to correct with: auto (a floor run in the same file), none, or a run id");
    add("list", po::bool_switch(&r.list), "list the runs of the file(s) and stop");
    add("target-output", po::bool_switch(&r.target_output),
        "in the target info section, also print the stored stdout and stderr of the run's "
        "--target-info command");
    bool tail = false;
    std::vector<std::string> exceed;
    add_tail_report_options(desc, tail, exceed);
    return parse_reading(argc, argv, desc, report_help, r, [&] {
        r.unit = parse_latency_unit(unit);
        r.format = parse_table_format(fmt);
        r.top = parse_count_in(top, "--top", 1, 1'000'000);
        r.timeline_rows = parse_count_in(timeline_rows, "--timeline-rows", 0, 1'000'000);
        r.tail = tail_report_request(tail, exceed);
    });
}

report_outcome execute_report(const report_request& r)
{
    report_outcome o;
    o.cat = std::make_unique<db::catalog>(r.sel.dbs);
    if (r.list) {
        if (o.cat->runs().empty())
            o.cat->select(r.sel.sel); // throws the "holds no runs" message
        return o;
    }
    db::run_selector sel = r.sel.sel;
    if (sel.empty())
        sel.last = true;
    for (const auto* run : o.cat->select(sel))
        o.runs.push_back(read_run(*o.cat, *run, r));
    return o;
}

int present_report(const report_outcome& o, const report_request& r)
{
    if (r.list)
        print_run_list(*o.cat, r, std::cout);
    for (std::size_t i = 0; i < o.runs.size(); ++i) {
        if (i)
            std::cout << (r.format == table_format::csv ? "" : "\n");
        report_one(o.runs[i], r, std::cout);
    }
    std::cout.flush();
    return 0;
}

int report_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_report, execute_report, present_report, std::cout);
}

} // namespace irqloop::logger
