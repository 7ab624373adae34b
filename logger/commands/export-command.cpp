// SPDX-License-Identifier: MIT
// irqloop export: runs as JSON (format_version 2, docs/export-format.md), one table as CSV, or
// in the formats of cyclictest and Prometheus (export-formats.*) and of CI (export-ci.*).
#include "export-command.hpp"

#include "breakdown-store.hpp"
#include "error.hpp"
#include "export-formats.hpp"
#include "export-lab-formats.hpp"
#include "output-file.hpp"
#include "percentiles.hpp"
#include "table.hpp"
#include "verify-store.hpp"
#include "version.hpp"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string_view>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

/** @brief The JSON layout version; bump on any change a reader could trip over. */
constexpr int export_format_version = 2;

const char* const json_parts[] = {"summary",     "histogram", "intervals", "worst",
                                  "exceedances", "events",    "raw"};

using ojson = nlohmann::ordered_json;

// ---- One row, as JSON and CSV both write it -------------------------------------------------

/**
 * @brief One field of an exported row: absent (JSON null, CSV "-"), an integer, a figure in ns
 * (JSON to 0.001 ns, CSV "%.3f") or text. Each part's row is built once, from the store's row,
 * and written by either format, so JSON and CSV cannot drift apart.
 */
struct cell final {
    enum class kind { none, integer, figure, text } k = kind::none;
    std::int64_t i = 0;
    double d = 0;
    std::string s;
};

cell integer(std::int64_t v)
{
    return {cell::kind::integer, v, 0, {}};
}
cell integer(std::uint64_t v)
{
    return integer(static_cast<std::int64_t>(v));
}
cell figure(double v)
{
    return {cell::kind::figure, 0, v, {}};
}
cell text(std::string_view v)
{
    return {cell::kind::text, 0, 0, std::string(v)};
}
/** @brief @p v when @p present, else none: a figure a run or window without samples lacks. */
template <class T> cell maybe(bool present, T v)
{
    if (!present)
        return {};
    if constexpr (std::is_floating_point_v<T>)
        return figure(v);
    else
        return integer(v);
}

using cells = std::vector<std::pair<std::string, cell>>;

/** @brief "p99.9" -> "p99_9_ns": a stored percentile's JSON key and CSV column. */
std::string percentile_key(const db::stored_percentile& p)
{
    std::string k = p.label;
    for (char& c : k)
        if (c == '.')
            c = '_';
    return k + "_ns";
}

/** @brief samples ... above_threshold: the counts both formats' summary starts with. */
void add_counts(cells& c, const db::summary_row& s)
{
    for (const auto& [name, v] : {std::pair<const char*, std::uint64_t>{"samples", s.samples},
                                  {"stimuli", s.stimuli},
                                  {"lost", s.lost},
                                  {"late", s.late},
                                  {"disturbed", s.disturbed},
                                  {"overflows", s.overflows},
                                  {"above_threshold", s.above_threshold}})
        c.push_back({name, integer(v)});
}

/** @brief min_ns ... interruptions: the figures both formats' summary ends with. */
void add_figures(cells& c, const db::run_record& r)
{
    const auto& s = r.summary;
    const bool st = r.has_stats;
    c.push_back({"min_ns", maybe(st, s.min_ns)});
    c.push_back({"avg_ns", maybe(st, s.mean_ns)});
    // max_ns never below what the lost answers prove (at least the timeout each), as the
    // gates and the tables' "≥" say; max_answered_ns is the largest answered one.
    const auto bound = r.max_at_least_ns();
    c.push_back({"max_ns", maybe(bound.has_value(), bound.value_or(0))});
    c.push_back({"max_answered_ns", maybe(st, s.max_ns)});
    c.push_back({"warm_max_ns", maybe(st && s.has_warm_max, s.warm_max_ns)});
    c.push_back({"stddev_ns", maybe(st, s.stddev_ns)});
    for (const auto& p : db::stored_percentiles)
        c.push_back({percentile_key(p), maybe(st, s.*p.field)});
    c.push_back({"max_bracket_ns", integer(s.max_bracket_ns)});
    c.push_back({"warm_max_bracket_ns", integer(s.warm_max_bracket_ns)});
    c.push_back({"interruptions", maybe(r.bracketed, s.interruptions)});
}

cells summary_cells(const db::run_record& r, export_format f)
{
    const auto& s = r.summary;
    cells c;
    if (f == export_format::csv) {
        c.push_back({"kind", text(db::to_text(r.meta.kind))});
        c.push_back({"status", text(db::to_text(r.status))});
        c.push_back({"start_unix_ns", integer(r.meta.start_unix_ns)});
        c.push_back({"end_unix_ns", maybe(r.end_unix_ns.has_value(), r.end_unix_ns.value_or(0))});
    }
    add_counts(c, s);
    if (f == export_format::csv) {
        c.push_back({"threshold_ns", integer(r.meta.threshold_ns)});
    } else {
        c.push_back({"pct_above", maybe(r.has_stats, r.pct_above())});
        c.push_back({"exceedances_dropped", integer(s.exceedances_dropped)});
        c.push_back({"rising", integer(s.rising)});
        c.push_back({"falling", integer(s.falling)});
    }
    add_figures(c, r);
    return c;
}

cells interval_cells(const db::interval_row& w, bool bracketed, std::int64_t timeout_ns)
{
    const bool st = w.samples != 0;
    const auto bound =
        db::max_at_least_ns(st ? std::optional(w.max_ns) : std::nullopt, w.lost, timeout_ns);
    return {{"index", integer(w.index)},
            {"start_unix_ns", integer(w.start_unix_ns)},
            {"end_unix_ns", integer(w.end_unix_ns)},
            {"samples", integer(w.samples)},
            {"min_ns", maybe(st, w.min_ns)},
            {"max_ns", maybe(bound.has_value(), bound.value_or(0))},
            {"max_answered_ns", maybe(st, w.max_ns)},
            {"avg_ns", maybe(st, w.mean_ns)},
            {"stddev_ns", maybe(st, w.stddev_ns)},
            {"p50_ns", maybe(st, w.p50_ns)},
            {"p99_ns", maybe(st, w.p99_ns)},
            {"p99_9_ns", maybe(st, w.p999_ns)},
            {"above_threshold", integer(w.above_threshold)},
            {"lost", integer(w.lost)},
            {"disturbed", integer(w.disturbed)},
            {"overflows", integer(w.overflows)},
            {"interruptions", maybe(bracketed, w.interruptions)},
            {"max_bracket_ns", integer(w.max_bracket_ns)}};
}

/** @brief A worst (@p rank from 1) or exceeding (@p rank 0) sample; JSON names its edge. */
cells sample_cells(const db::sample_row& s, std::size_t rank, export_format f)
{
    cells c;
    if (rank)
        c.push_back({"rank", integer(std::uint64_t(rank))});
    c.push_back({"seq", integer(s.seq)});
    c.push_back({"unix_ns", integer(s.unix_ns)});
    c.push_back({"latency_ns", integer(s.latency_ns)});
    c.push_back({"gap_ns", integer(s.gap_ns)});
    c.push_back({"flags", integer(std::uint64_t(s.flags))});
    if (f == export_format::json)
        c.push_back({"edge", text((s.flags & db::flag_rising) ? "rising" : "falling")});
    c.push_back({"bracket_ns", integer(s.bracket_ns)});
    return c;
}

cells event_cells(const db::event_row& e)
{
    return {{"unix_ns", integer(e.unix_ns)},
            {"seq", integer(e.seq)},
            {"kind", text(e.kind)},
            {"value", integer(e.value)},
            {"detail", text(e.detail)}};
}

cells bucket_cells(const db::bucket_row& b)
{
    return {{"lo_ns", integer(b.lo_ns)}, {"hi_ns", integer(b.hi_ns)}, {"count", integer(b.count)}};
}

cells raw_cells(const db::sample_row& x)
{
    return {{"seq", integer(x.seq)},
            {"latency_ns", integer(x.latency_ns)},
            {"gap_ns", integer(x.gap_ns)},
            {"flags", integer(std::uint64_t(x.flags))},
            {"bracket_ns", integer(x.bracket_ns)}};
}

/** @brief The rows of @p part (not raw: it is streamed) of run @p r, for format @p f. */
std::vector<cells> part_rows(db::catalog& cat, const db::run_record& r, std::string_view part,
                             export_format f)
{
    std::vector<cells> rows;
    if (part == "summary") {
        rows.push_back(summary_cells(r, f));
    } else if (part == "histogram") {
        for (const auto& b : cat.histogram(r))
            rows.push_back(bucket_cells(b));
    } else if (part == "intervals") {
        for (const auto& w : cat.intervals(r))
            rows.push_back(interval_cells(w, r.bracketed, r.meta.timeout_ns));
    } else if (part == "worst") {
        std::size_t rank = 0;
        for (const auto& x : cat.worst(r))
            rows.push_back(sample_cells(x, ++rank, f));
    } else if (part == "exceedances") {
        for (const auto& x : cat.exceedances(r))
            rows.push_back(sample_cells(x, 0, f));
    } else if (part == "events") {
        for (const auto& e : cat.events(r))
            rows.push_back(event_cells(e));
    }
    return rows;
}

/** @brief The columns of @p part: the names of a row built from empty store rows. */
cells part_columns(std::string_view part)
{
    if (part == "raw")
        return raw_cells({});
    if (part == "summary")
        return summary_cells({}, export_format::csv);
    if (part == "histogram")
        return bucket_cells({});
    if (part == "intervals")
        return interval_cells({}, false, 0);
    if (part == "events")
        return event_cells({});
    return sample_cells({}, part == "worst" ? 1 : 0, export_format::csv);
}

// ---- JSON -----------------------------------------------------------------------------------

/** @brief A figure in ns to 0.001 ns, as the export has always printed it. */
double ns3(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

ojson json_of(const cell& c)
{
    switch (c.k) {
    case cell::kind::integer:
        return c.i;
    case cell::kind::figure:
        return ns3(c.d);
    case cell::kind::text:
        return c.s;
    case cell::kind::none:
        break;
    }
    return nullptr;
}

ojson object_of(const cells& row)
{
    ojson o = ojson::object();
    for (const auto& [k, c] : row)
        o[k] = json_of(c);
    return o;
}

/** @brief A row as a bare array (histogram buckets, raw samples): the columns are known. */
ojson array_of(const cells& row)
{
    ojson a = ojson::array();
    for (const auto& kc : row)
        a.push_back(json_of(kc.second));
    return a;
}

ojson metadata_json(const db::run_row& m)
{
    ojson extra = ojson::object();
    for (const auto& [k, v] : m.metadata)
        extra[k] = v;
    // An object literal: ordered_json keeps its keys in the order written here.
    return ojson{{"command_line", m.command_line},
                 {"version", m.version},
                 {"uname", m.uname},
                 {"hostname", m.hostname},
                 {"backend", m.backend},
                 {"clock_source", m.clock_source},
                 {"clock_hz", ns3(m.clock_hz)},
                 {"clock_read_ns", ns3(m.clock_read_ns)},
                 {"interval_ns", m.interval_ns},
                 {"jitter_ns", m.jitter_ns},
                 {"timeout_ns", m.timeout_ns},
                 {"threshold_ns", m.threshold_ns},
                 {"gap_limit_ns", m.gap_limit_ns},
                 {"stats_interval_ns", m.stats_interval_ns},
                 {"warmup_samples", m.warmup_samples},
                 {"samples_requested", m.samples_requested},
                 {"duration_ns", m.duration_ns},
                 {"rt_settings", m.rt_settings},
                 {"target", m.target},
                 {"load", m.load},
                 {"extra", std::move(extra)}};
}

/** @brief The run's --target-info (table target_info and its facts); null without one. */
ojson target_info_json(const db::run_row& m)
{
    if (!m.target_info)
        return nullptr;
    const auto& t = *m.target_info;
    ojson facts = ojson::array();
    for (const auto& f : t.facts)
        facts.push_back({{"key", f.key}, {"value", f.value}, {"source", f.source}});
    return ojson{{"command", t.command},
                 {"status", std::string(db::to_text(t.status))},
                 {"exit_code", t.exit_code ? ojson(*t.exit_code) : ojson(nullptr)},
                 {"signal", t.signal ? ojson(*t.signal) : ojson(nullptr)},
                 {"error", t.error},
                 {"timeout_ns", t.timeout_ns},
                 {"duration_ns", t.duration_ns},
                 {"facts", std::move(facts)},
                 {"stdout", t.out},
                 {"stdout_bytes", t.out_bytes},
                 {"stderr", t.err},
                 {"stderr_bytes", t.err_bytes}};
}

/** @brief The run's stored verifications (irqloop verify), as verify prints them. */
ojson verifications_json(const db::run_record& r)
{
    ojson a = ojson::array();
    for (const auto& v : analysis::read_verifications(r.db_path, r.id)) {
        const auto& f = v.figures;
        ojson out = ojson::array();
        for (const auto& o : f.outside)
            out.push_back({{"seq", o.seq},
                           {"latency_ns", o.latency_ns},
                           {"bracket_ns", o.bracket_ns},
                           {"analyzer_ns", o.analyzer_ns}});
        auto diff = [&](std::int64_t x) { return f.both_answered ? ojson(x) : ojson(); };
        a.push_back({{"idx", v.idx},
                     {"unix_ns", v.unix_ns},
                     {"capture", v.capture},
                     {"stim", v.stim},
                     {"resp", v.resp},
                     {"samplerate_hz", v.samplerate_hz},
                     {"resolution_ps", f.resolution_ps},
                     {"capture_edges", f.capture_edges},
                     {"run_stimuli", f.run_stimuli},
                     {"matched", f.matched},
                     {"capture_only", f.capture_only},
                     {"run_only", f.run_only},
                     {"outside_capture", f.outside_capture},
                     {"both_answered", f.both_answered},
                     {"both_lost", f.both_lost},
                     {"lost_only_irqloop", f.lost_only_irqloop},
                     {"lost_only_analyzer", f.lost_only_analyzer},
                     {"not_compared", f.not_compared},
                     {"offset_ns", f.offset_ns},
                     {"drift_ppm", f.drift_ppm},
                     {"diff_min_ns", diff(f.diff_min_ns)},
                     {"diff_median_ns", diff(f.diff_median_ns)},
                     {"diff_p99_ns", diff(f.diff_p99_ns)},
                     {"diff_max_ns", diff(f.diff_max_ns)},
                     {"outside_bracket", std::move(out)}});
    }
    return a;
}

/** @brief The run's stored breakdowns (irqloop explain --store), by seq. */
ojson breakdowns_json(const db::run_record& r)
{
    ojson a = ojson::array();
    for (const auto& [seq, b] : analysis::read_breakdowns(r.db_path, r.id)) {
        ojson parts = ojson::array();
        for (const auto& p : b.parts)
            parts.push_back(
                {{"part", p.part}, {"ns", p.ns}, {"clock", p.clock}, {"measured", p.measured}});
        ojson largest = nullptr;
        if (b.largest)
            largest = {{"kind", b.largest->kind},
                       {"name", b.largest->name},
                       {"duration_ns", b.largest->duration_ns},
                       {"in_window_ns", b.largest->in_window_ns},
                       {"complete", b.largest->complete},
                       {"clock", "target"}};
        a.push_back(
            {{"seq", seq},
             {"unix_ns", b.unix_ns},
             {"trace", b.trace.path},
             {"trace_bytes", b.trace.bytes},
             {"trace_hash", b.trace.hash},
             {"trace_events", b.trace_events},
             {"paired", b.paired},
             {"residual_ns", ns3(b.residual_ns)},
             {"drift_ppm", b.drift_ppm},
             {"latency_ns", b.latency_ns},
             {"cpu", b.cpu},
             {"parts", std::move(parts)},
             {"largest_blocker", std::move(largest)},
             {"task", b.task ? ojson(*b.task) : ojson(nullptr)},
             // As explain --json says them; null both when stored before version 10.
             {"window_complete", b.dropped_events ? ojson(*b.dropped_events == 0) : ojson(nullptr)},
             {"dropped_events", b.dropped_events && *b.dropped_events > 0 ? ojson(*b.dropped_events)
                                                                          : ojson(nullptr)},
             {"why", analysis::why_text(b)}});
    }
    return a;
}

ojson run_json(db::catalog& cat, const db::run_record& r, const std::set<std::string>& what)
{
    ojson run = ojson::object();
    run["id"] = r.id;
    run["uuid"] = r.meta.uuid;
    run["file"] = r.db_path;
    run["label"] = r.meta.label;
    run["kind"] = std::string(db::to_text(r.meta.kind));
    run["status"] = std::string(db::to_text(r.status));
    run["partial"] = r.partial();
    run["start_unix_ns"] = r.meta.start_unix_ns;
    run["end_unix_ns"] = json_of(maybe(r.end_unix_ns.has_value(), r.end_unix_ns.value_or(0)));
    run["metadata"] = metadata_json(r.meta);
    if (r.meta.target_info) // run --target-info's, when the run was made with it
        run["target_info"] = target_info_json(r.meta);
    if (auto v = verifications_json(r); !v.empty()) // irqloop verify's, when there are any
        run["verifications"] = std::move(v);
    if (auto b = breakdowns_json(r); !b.empty()) // irqloop explain --store's, when there are any
        run["breakdowns"] = std::move(b);
    for (const char* part : json_parts) {
        if (std::string_view(part) == "raw" || !what.count(part))
            continue;
        const auto rows = part_rows(cat, r, part, export_format::json);
        if (std::string_view(part) == "summary") {
            run[part] = object_of(rows.front());
            continue;
        }
        ojson a = ojson::array();
        for (const auto& row : rows)
            a.push_back(std::string_view(part) == "histogram" ? array_of(row) : object_of(row));
        run[part] = std::move(a);
        if (std::string_view(part) == "exceedances")
            run["exceedances_dropped"] = r.summary.exceedances_dropped;
    }
    return run;
}

/**
 * @brief Serialise with nlohmann-json: UTF-8 out, invalid UTF-8 in stored text (a label typed
 * in another encoding) replaced by U+FFFD rather than passed through.
 */
std::string dump(const ojson& j, int indent)
{
    return j.dump(indent, ' ', false, ojson::error_handler_t::replace);
}

/** @brief Indent every line after the first of @p text by @p n spaces. */
std::string indent_rest(const std::string& text, std::size_t n)
{
    std::string o;
    o.reserve(text.size() + text.size() / 8);
    for (char c : text) {
        o += c;
        if (c == '\n')
            o.append(n, ' ');
    }
    return o;
}

/** @brief The parts that are lists of rows: one compact row per line, raw streamed. */
const char* const row_parts[] = {"histogram", "intervals", "worst", "exceedances", "events", "raw"};

/**
 * @brief One run object: nlohmann-json writes the object with each row list replaced by a
 * marker string, and each row of the list (compact, one per line) in the marker's place. The
 * row lists are the object's last keys, so each marker is found searching back from the end,
 * where no stored text can be; raw rows are read and written one at a time.
 */
void write_run(db::catalog& cat, const db::run_record& r, const std::set<std::string>& what,
               std::ostream& out)
{
    ojson run = run_json(cat, r, what);
    std::vector<std::pair<std::string, ojson>> lists;
    for (const char* part : row_parts) {
        if (std::string_view(part) == "raw" ? !what.count("raw") : !run.contains(part))
            continue;
        const std::string marker = std::string("\x01rows:") + part;
        lists.push_back({part, std::string_view(part) == "raw" ? ojson() : std::move(run[part])});
        run[part] = marker;
    }
    const std::string text = indent_rest(dump(run, 2), 4);
    std::vector<std::size_t> at(lists.size());
    std::size_t limit = std::string::npos;
    for (std::size_t i = lists.size(); i-- > 0;) {
        at[i] = text.rfind(dump(ojson(std::string("\x01rows:") + lists[i].first), -1), limit);
        limit = at[i] - 1;
    }
    std::size_t from = 0;
    for (std::size_t i = 0; i < lists.size(); ++i) {
        out << text.substr(from, at[i] - from) << '[';
        bool first = true;
        auto row = [&](const ojson& x) {
            out << (first ? "\n        " : ",\n        ") << dump(x, -1);
            first = false;
        };
        if (lists[i].first == "raw")
            cat.for_each_raw(r, [&](const db::sample_row& x) { row(array_of(raw_cells(x))); });
        else
            for (const auto& x : lists[i].second)
                row(x);
        out << (first ? "]" : "\n      ]");
        from = at[i] + dump(ojson(std::string("\x01rows:") + lists[i].first), -1).size();
    }
    out << text.substr(from);
}

void write_json(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                const std::set<std::string>& what, std::ostream& out)
{
    ojson top = ojson::object();
    top["format_version"] = export_format_version;
    top["generator"] = std::string("irqloop ") + version;
    top["units"] = "ns";
    top["runs"] = nullptr; // the last key: the runs are written in its place
    const std::string text = dump(top, 2);
    const auto at = text.rfind("null");
    out << text.substr(0, at) << '[';
    for (std::size_t i = 0; i < runs.size(); ++i) {
        out << (i ? ",\n    " : "\n    ");
        write_run(cat, *runs[i], what, out);
    }
    out << (runs.empty() ? "]" : "\n  ]") << text.substr(at + 4) << '\n';
}

// ---- CSV ------------------------------------------------------------------------------------

/** @brief A CSV field: "-" for an absent figure, figures as "%.3f", as CSV has always had. */
std::string csv_text(const cell& c)
{
    switch (c.k) {
    case cell::kind::integer:
        return std::to_string(c.i);
    case cell::kind::figure: {
        char b[64];
        std::snprintf(b, sizeof b, "%.3f", c.d);
        return b;
    }
    case cell::kind::text:
        return c.s;
    case cell::kind::none:
        break;
    }
    return "-";
}

/** @brief One table of @p part, each row led by its run's id, uuid and label; raw streamed. */
void write_csv(db::catalog& cat, const std::vector<const db::run_record*>& runs,
               const std::string& part, std::ostream& out)
{
    table t;
    for (auto h : {"run", "uuid", "label"})
        t.add_column(h);
    for (const auto& kc : part_columns(part))
        t.add_column(kc.first);
    const bool raw = part == "raw";
    if (raw)
        t.print(out, table_format::csv); // the header; rows stream below
    for (const auto* r : runs) {
        const std::vector<std::string> id{std::to_string(r->id), r->meta.uuid, r->meta.label};
        if (raw) {
            const std::string prefix =
                csv_field(id[0]) + "," + csv_field(id[1]) + "," + csv_field(id[2]);
            cat.for_each_raw(*r, [&](const db::sample_row& x) {
                out << prefix;
                for (const auto& kc : raw_cells(x))
                    out << ',' << csv_text(kc.second);
                out << '\n';
            });
            continue;
        }
        for (const auto& row : part_rows(cat, *r, part, export_format::csv)) {
            std::vector<std::string> v = id;
            for (const auto& kc : row)
                v.push_back(csv_text(kc.second));
            t.add_row(std::move(v));
        }
    }
    if (!raw)
        t.print(out, table_format::csv);
}

// ---- parse ----------------------------------------------------------------------------------

struct format_name final {
    const char* name;
    export_format format;
};
constexpr format_name format_names[] = {
    {"json", export_format::json},
    {"csv", export_format::csv},
    {"cyclictest-hist", export_format::cyclictest_hist},
    {"rt-tests-json", export_format::rt_tests_json},
    {"prometheus", export_format::prometheus},
    {"junit", export_format::junit},
    {"lava", export_format::lava},
    {"osadl-rtdataset", export_format::osadl_rtdataset},
    {"rtla-timerlat-hist", export_format::rtla_timerlat_hist},
    {"vcd", export_format::vcd},
};

bool is_lab(export_format f)
{
    return f == export_format::osadl_rtdataset || f == export_format::rtla_timerlat_hist;
}
bool has_bins(export_format f)
{
    return f == export_format::cyclictest_hist || f == export_format::rt_tests_json || is_lab(f);
}
bool is_ci(export_format f)
{
    return f == export_format::junit || f == export_format::lava;
}
bool is_table(export_format f)
{
    return f == export_format::json || f == export_format::csv;
}

/** @brief The text fields of the option table, checked and converted by parse_export(). */
struct export_args final {
    std::string fmt = "json", what, bins;
    gate_limit_args limits;
    export_vcd_args vcd;
};

constexpr command_help export_help = {
    "irqloop export --format json|csv|cyclictest-hist|rt-tests-json|prometheus|junit|lava|"
    "osadl-rtdataset|rtla-timerlat-hist|vcd "
    "[--what intervals|worst|raw|all] [--histogram N] [--seq S | --worst K] [--around N] "
    "[--run ID | --label L | --last] "
    "[--db F] [-o F] [--max 100us --p 99.99=50us ...]",
    "Write the selected runs (default: every measurement run) for other tools. JSON has\n"
    "\"format_version\": 2 (docs/export-format.md); all latencies are integers in ns.\n"
    "cyclictest-hist and rt-tests-json are cyclictest's own formats (1 us bins, rebinned\n"
    "from the stored histogram); prometheus is for node_exporter and Prometheus\n"
    "(docs/integration.md); junit and lava report each run's gates for CI (the same\n"
    "page); osadl-rtdataset is OSADL's RT dataset JSON (plot-rtdataset.py) and\n"
    "rtla-timerlat-hist the text of rtla timerlat hist --no-header (parse_rtla.py).\n"
    "vcd draws one run's chosen samples (--seq S or --worst K, --around N) as a value change\n"
    "dump for PulseView, GTKWave or sigrok-cli: STIM, RESP, TRIG and each bracket."};

/** @brief The option table of `irqloop export`, bound to @p r and the text fields @p a. */
void add_export_options(po::options_description& desc, export_request& r, export_args& a)
{
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("format", po::value(&a.fmt)->default_value(a.fmt),
        "json, csv, cyclictest-hist (cyclictest --histogram text, one column per run), "
        "rt-tests-json (cyclictest --json, one thread per run), prometheus (text exposition "
        "format), "
        "junit (JUnit XML, a testcase per limit), lava (LAVA test-case lines), "
        "osadl-rtdataset (OSADL's RT dataset JSON, a core per run), rtla-timerlat-hist "
        "(rtla timerlat hist text, an IRQ and a Thr column per run) or vcd (waveforms of "
        "chosen samples, below)");
    add("what", po::value(&a.what),
        "json and csv: what to export, comma-separated: summary, histogram, intervals, worst, "
        "exceedances, events, raw, or all (everything but raw). CSV takes exactly one. "
        "Default: all for json, intervals for csv");
    add("histogram", po::value(&a.bins),
        "cyclictest-hist, rt-tests-json, osadl-rtdataset and rtla-timerlat-hist: the number "
        "of 1 us bins, as cyclictest --histogram=N or rtla -E N (default: enough for the "
        "largest max)");
    add("output,o", po::value(&r.output), "output file (default: standard output)");
    // junit and lava report gates: these limits, or else the outcome stored with each run.
    po::options_description limits("limits of --format junit and lava (as irqloop check; "
                                   "default: the gates stored with each run by run --fail-*)");
    add_gate_limit_options(limits, a.limits);
    desc.add(limits);
    add_export_vcd_options(desc, a.vcd);
}

std::int64_t parse_bins(const std::string& text)
{
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || v < 1 || v > 10'000'000)
        throw error("bad --histogram", "'" + text + "' is not a number of bins",
                    "give 1 to 10000000 bins of 1 us, e.g. --histogram 400");
    return v;
}

/** @brief --what of json or csv (@p text empty: the format's default) as a set of parts. */
std::set<std::string> parse_what(std::string text, export_format f)
{
    const bool csv = f == export_format::csv;
    if (text.empty())
        text = csv ? "intervals" : "all";
    std::set<std::string> what;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item == "all") {
            for (auto p : json_parts)
                if (std::string_view(p) != "raw")
                    what.insert(p);
            continue;
        }
        if (std::find_if(std::begin(json_parts), std::end(json_parts),
                         [&](const char* p) { return item == p; }) == std::end(json_parts))
            throw error(
                "bad --what", "unknown part '" + item + "'",
                "use summary, histogram, intervals, worst, exceedances, events, raw or all");
        what.insert(item);
    }
    if (csv && (what.size() != 1 || text == "all"))
        throw error("bad --what",
                    "CSV holds one table, '" + text + "' asks for " + std::to_string(what.size()),
                    "pick one: --what intervals, worst, raw, ... (or use --format json)");
    if (!csv)
        what.insert("summary"); // JSON always carries it: without it a run's figures mean little
    return what;
}

/** @brief --format, and the options that only some formats take. */
void check_format(export_request& r, const export_args& a)
{
    const auto* f = std::find_if(std::begin(format_names), std::end(format_names),
                                 [&](const format_name& n) { return a.fmt == n.name; });
    if (f == std::end(format_names))
        throw error("bad --format", "unknown export format '" + a.fmt + "'",
                    "use json, csv, cyclictest-hist, rt-tests-json, prometheus, junit, lava, "
                    "osadl-rtdataset, rtla-timerlat-hist or vcd");
    r.format = f->format;
    if (!is_table(r.format) && !a.what.empty())
        throw error("bad --what", "--format " + a.fmt + " has a fixed content",
                    "drop --what, or use --format json or csv");
    if (!has_bins(r.format) && !a.bins.empty())
        throw error("bad --histogram", "--format " + a.fmt + " has no 1 us bins",
                    "use it with --format cyclictest-hist, rt-tests-json, osadl-rtdataset or "
                    "rtla-timerlat-hist");
}

/** @brief Check the text fields @p a into @p r: the format, then what goes with it. */
void check_export(export_request& r, const export_args& a)
{
    check_format(r, a);
    if (!a.bins.empty())
        r.bins = parse_bins(a.bins);
    r.limits = parse_gate_limits(a.limits);
    if (!is_ci(r.format) && !r.limits.empty())
        throw error("bad --format", "limits given to --format " + a.fmt,
                    "limits go with --format junit or lava");
    if (is_table(r.format))
        r.what = parse_what(a.what, r.format);
    r.vcd = check_export_vcd(a.vcd, r.format == export_format::vcd);
}

} // namespace

parsed<export_request> parse_export(int argc, char** argv)
{
    return parse_reading_table(argc, argv, export_help, add_export_options, check_export);
}

export_outcome execute_export(const export_request& r)
{
    export_outcome o;
    o.cat = std::make_unique<db::catalog>(r.sel.dbs);
    o.runs = o.cat->select(r.sel.sel);
    if (is_ci(r.format)) {
        o.gated = gate_runs(*o.cat, o.runs, r.limits, r.format == export_format::junit);
        return o;
    }
    if (r.format == export_format::vcd) {
        o.vcd = prepare_vcd_export(*o.cat, o.runs, r.vcd);
        return o;
    }
    if (r.what.count("raw")) {
        std::uint64_t n = 0;
        for (const auto* run : o.runs)
            n += o.cat->raw_count(*run);
        if (n == 0)
            throw error("export raw samples", "the selected runs have none",
                        "raw samples are kept only by 'irqloop run --raw'");
    }
    if (is_lab(r.format))
        check_lab_export(o.runs, r.format == export_format::rtla_timerlat_hist);
    o.bins = r.bins;
    if (has_bins(r.format) && o.bins == 0)
        o.bins = default_histogram_bins(o.runs);
    return o;
}

namespace
{

/**
 * @brief junit and lava, as they have always been written: to a plain file (truncated, not
 * removed on a failed write) or standard output, the flush checked.
 */
void present_ci(const export_outcome& o, const export_request& r)
{
    std::ofstream file;
    if (!r.output.empty()) {
        file.open(r.output, std::ios::out | std::ios::trunc);
        if (!file)
            throw_from_errno(errno, "export: write '" + r.output + "'", {}, exit_failure);
    }
    std::ostream& out = r.output.empty() ? std::cout : file;
    if (r.format == export_format::junit)
        write_junit(o.gated, out);
    else
        write_lava(o.gated, out);
    out.flush();
    if (!out)
        throw error("export: write '" + (r.output.empty() ? std::string("stdout") : r.output) + "'",
                    "the write failed", "check free disk space", exit_failure);
}

} // namespace

int present_export(const export_outcome& o, const export_request& r)
{
    if (is_ci(r.format)) {
        present_ci(o, r);
        return 0;
    }
    // To a file: checked, and removed again when a write fails. To standard output: run_main
    // checks the flush.
    std::optional<output_file> file;
    if (!r.output.empty())
        file.emplace(r.output, "export");
    std::ostream& out = file ? file->stream() : std::cout;
    auto& cat = *o.cat;
    switch (r.format) {
    case export_format::json:
        write_json(cat, o.runs, r.what, out);
        break;
    case export_format::csv:
        write_csv(cat, o.runs, *r.what.begin(), out);
        break;
    case export_format::cyclictest_hist:
        write_cyclictest_hist(cat, o.runs, o.bins, out);
        break;
    case export_format::rt_tests_json:
        write_rt_tests_json(cat, o.runs, o.bins, out);
        break;
    case export_format::prometheus:
        write_prometheus_export(cat, o.runs, out);
        break;
    case export_format::osadl_rtdataset:
        write_osadl_rtdataset(cat, o.runs, o.bins, out);
        break;
    case export_format::rtla_timerlat_hist:
        write_rtla_timerlat_hist(cat, o.runs, o.bins, out);
        break;
    case export_format::vcd:
        write_vcd_export(o.vcd, out);
        break;
    case export_format::junit:
    case export_format::lava:
        break; // present_ci(), above
    }
    if (file)
        file->commit();
    return 0;
}

int export_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_export, execute_export, present_export, std::cout);
}

} // namespace irqloop::logger
