// SPDX-License-Identifier: MIT
// irqloop export: runs as JSON (format_version 1, docs/export-format.md), one table as CSV, or
// in the formats of cyclictest and Prometheus (export-formats.*).
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "export-ci.hpp"
#include "export-formats.hpp"
#include "output-file.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "version.hpp"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

/** @brief The JSON layout version; bump on any change a reader could trip over. */
constexpr int export_format_version = 1;

const char* const json_parts[] = {"summary",     "histogram", "intervals", "worst",
                                  "exceedances", "events",    "raw"};

using ojson = nlohmann::ordered_json;

/** @brief A figure in ns to 0.001 ns, as the export has always printed it. */
double ns3(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

/** @brief Keep CSV's figures as they were: "%.3f". */
std::string jnum(double v)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.3f", v);
    return b;
}

ojson opt_int(bool present, std::int64_t v)
{
    return present ? ojson(v) : ojson(nullptr);
}

ojson sample_json(const db::sample_row& s, std::size_t rank, bool with_time)
{
    ojson o = ojson::object();
    if (rank)
        o["rank"] = rank;
    o["seq"] = s.seq;
    if (with_time)
        o["unix_ns"] = s.unix_ns;
    o["latency_ns"] = s.latency_ns;
    o["gap_ns"] = s.gap_ns;
    o["flags"] = s.flags;
    o["edge"] = (s.flags & db::flag_rising) ? "rising" : "falling";
    o["bracket_ns"] = s.bracket_ns;
    return o;
}

ojson run_json(db::catalog& cat, const db::run_record& r, const std::set<std::string>& what)
{
    const auto& m = r.meta;
    const auto& s = r.summary;
    ojson run = ojson::object();
    run["id"] = r.id;
    run["uuid"] = m.uuid;
    run["file"] = r.db_path;
    run["label"] = m.label;
    run["kind"] = std::string(db::to_text(m.kind));
    run["status"] = std::string(db::to_text(r.status));
    run["partial"] = r.partial();
    run["start_unix_ns"] = m.start_unix_ns;
    run["end_unix_ns"] = opt_int(r.end_unix_ns.has_value(), r.end_unix_ns.value_or(0));
    ojson md = ojson::object();
    md["command_line"] = m.command_line;
    md["version"] = m.version;
    md["uname"] = m.uname;
    md["hostname"] = m.hostname;
    md["backend"] = m.backend;
    md["clock_source"] = m.clock_source;
    md["clock_hz"] = ns3(m.clock_hz);
    md["clock_read_ns"] = ns3(m.clock_read_ns);
    md["interval_ns"] = m.interval_ns;
    md["jitter_ns"] = m.jitter_ns;
    md["timeout_ns"] = m.timeout_ns;
    md["threshold_ns"] = m.threshold_ns;
    md["gap_limit_ns"] = m.gap_limit_ns;
    md["stats_interval_ns"] = m.stats_interval_ns;
    md["warmup_samples"] = m.warmup_samples;
    md["samples_requested"] = m.samples_requested;
    md["duration_ns"] = m.duration_ns;
    md["rt_settings"] = m.rt_settings;
    md["target"] = m.target;
    md["load"] = m.load;
    ojson extra = ojson::object();
    for (const auto& [k, v] : m.metadata)
        extra[k] = v;
    md["extra"] = std::move(extra);
    run["metadata"] = std::move(md);
    if (what.count("summary")) {
        const bool st = r.has_stats;
        auto fig = [&](double v) { return st ? ojson(ns3(v)) : ojson(nullptr); };
        ojson sm = ojson::object();
        sm["samples"] = s.samples;
        sm["stimuli"] = s.stimuli;
        sm["lost"] = s.lost;
        sm["late"] = s.late;
        sm["disturbed"] = s.disturbed;
        sm["overflows"] = s.overflows;
        sm["above_threshold"] = s.above_threshold;
        sm["pct_above"] = fig(r.pct_above());
        sm["exceedances_dropped"] = s.exceedances_dropped;
        sm["rising"] = s.rising;
        sm["falling"] = s.falling;
        sm["min_ns"] = opt_int(st, s.min_ns);
        sm["avg_ns"] = fig(s.mean_ns);
        sm["max_ns"] = opt_int(st, s.max_ns);
        sm["warm_max_ns"] = opt_int(st && s.has_warm_max, s.warm_max_ns);
        sm["stddev_ns"] = fig(s.stddev_ns);
        sm["p50_ns"] = opt_int(st, s.p50_ns);
        sm["p99_ns"] = opt_int(st, s.p99_ns);
        sm["p99_9_ns"] = opt_int(st, s.p999_ns);
        sm["p99_99_ns"] = opt_int(st, s.p9999_ns);
        sm["p99_9999_ns"] = opt_int(st, s.p999999_ns);
        sm["max_bracket_ns"] = s.max_bracket_ns;
        sm["warm_max_bracket_ns"] = s.warm_max_bracket_ns;
        sm["interruptions"] = r.bracketed ? ojson(s.interruptions) : ojson(nullptr);
        run["summary"] = std::move(sm);
    }
    if (what.count("histogram")) {
        ojson a = ojson::array();
        for (const auto& b : cat.histogram(r))
            a.push_back(ojson::array({b.lo_ns, b.hi_ns, b.count}));
        run["histogram"] = std::move(a);
    }
    if (what.count("intervals")) {
        ojson a = ojson::array();
        for (const auto& w : cat.intervals(r)) {
            const bool st = w.samples != 0;
            auto fig = [&](double v) { return st ? ojson(ns3(v)) : ojson(nullptr); };
            ojson o = ojson::object();
            o["index"] = w.index;
            o["start_unix_ns"] = w.start_unix_ns;
            o["end_unix_ns"] = w.end_unix_ns;
            o["samples"] = w.samples;
            o["min_ns"] = opt_int(st, w.min_ns);
            o["max_ns"] = opt_int(st, w.max_ns);
            o["avg_ns"] = fig(w.mean_ns);
            o["stddev_ns"] = fig(w.stddev_ns);
            o["p50_ns"] = opt_int(st, w.p50_ns);
            o["p99_ns"] = opt_int(st, w.p99_ns);
            o["p99_9_ns"] = opt_int(st, w.p999_ns);
            o["above_threshold"] = w.above_threshold;
            o["lost"] = w.lost;
            o["disturbed"] = w.disturbed;
            o["overflows"] = w.overflows;
            o["interruptions"] = r.bracketed ? ojson(w.interruptions) : ojson(nullptr);
            o["max_bracket_ns"] = w.max_bracket_ns;
            a.push_back(std::move(o));
        }
        run["intervals"] = std::move(a);
    }
    if (what.count("worst")) {
        ojson a = ojson::array();
        std::size_t rank = 0;
        for (const auto& x : cat.worst(r))
            a.push_back(sample_json(x, ++rank, true));
        run["worst"] = std::move(a);
    }
    if (what.count("exceedances")) {
        ojson a = ojson::array();
        for (const auto& x : cat.exceedances(r))
            a.push_back(sample_json(x, 0, true));
        run["exceedances"] = std::move(a);
        run["exceedances_dropped"] = s.exceedances_dropped;
    }
    if (what.count("events")) {
        ojson a = ojson::array();
        for (const auto& e : cat.events(r)) {
            ojson o = ojson::object();
            o["unix_ns"] = e.unix_ns;
            o["seq"] = e.seq;
            o["kind"] = e.kind;
            o["value"] = e.value;
            o["detail"] = e.detail;
            a.push_back(std::move(o));
        }
        run["events"] = std::move(a);
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
            cat.for_each_raw(r, [&](const db::sample_row& x) {
                row(ojson::array({x.seq, x.latency_ns, x.gap_ns, x.flags, x.bracket_ns}));
            });
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

void write_csv(db::catalog& cat, const std::vector<const db::run_record*>& runs,
               const std::string& what, std::ostream& out)
{
    table t;
    for (auto h : {"run", "uuid", "label"})
        t.add_column(h);
    auto cols = [&](std::initializer_list<const char*> names) {
        for (auto n : names)
            t.add_column(n);
    };
    auto opt = [](bool st, std::int64_t v) { return st ? std::to_string(v) : std::string("-"); };
    if (what == "summary")
        cols({"kind",
              "status",
              "start_unix_ns",
              "end_unix_ns",
              "samples",
              "stimuli",
              "lost",
              "late",
              "disturbed",
              "overflows",
              "above_threshold",
              "threshold_ns",
              "min_ns",
              "avg_ns",
              "max_ns",
              "warm_max_ns",
              "stddev_ns",
              "p50_ns",
              "p99_ns",
              "p99_9_ns",
              "p99_99_ns",
              "p99_9999_ns",
              "max_bracket_ns",
              "warm_max_bracket_ns",
              "interruptions"});
    else if (what == "intervals")
        cols({"index", "start_unix_ns", "end_unix_ns", "samples", "min_ns", "max_ns", "avg_ns",
              "stddev_ns", "p50_ns", "p99_ns", "p99_9_ns", "above_threshold", "lost", "disturbed",
              "overflows", "interruptions", "max_bracket_ns"});
    else if (what == "histogram")
        cols({"lo_ns", "hi_ns", "count"});
    else if (what == "worst")
        cols({"rank", "seq", "unix_ns", "latency_ns", "gap_ns", "flags", "bracket_ns"});
    else if (what == "exceedances")
        cols({"seq", "unix_ns", "latency_ns", "gap_ns", "flags", "bracket_ns"});
    else if (what == "events")
        cols({"unix_ns", "seq", "kind", "value", "detail"});
    else if (what == "raw")
        cols({"seq", "latency_ns", "gap_ns", "flags", "bracket_ns"});
    const bool raw = what == "raw";
    if (raw)
        t.print(out, table_format::csv); // the header; rows stream below
    for (const auto* rp : runs) {
        const auto& r = *rp;
        const std::vector<std::string> id{std::to_string(r.id), r.meta.uuid, r.meta.label};
        auto row = [&](std::vector<std::string> v) {
            v.insert(v.begin(), id.begin(), id.end());
            t.add_row(std::move(v));
        };
        if (what == "summary") {
            const auto& s = r.summary;
            const bool st = r.has_stats;
            row({std::string(db::to_text(r.meta.kind)),
                 std::string(db::to_text(r.status)),
                 std::to_string(r.meta.start_unix_ns),
                 r.end_unix_ns ? std::to_string(*r.end_unix_ns) : "-",
                 std::to_string(s.samples),
                 std::to_string(s.stimuli),
                 std::to_string(s.lost),
                 std::to_string(s.late),
                 std::to_string(s.disturbed),
                 std::to_string(s.overflows),
                 std::to_string(s.above_threshold),
                 std::to_string(r.meta.threshold_ns),
                 opt(st, s.min_ns),
                 st ? jnum(s.mean_ns) : "-",
                 opt(st, s.max_ns),
                 opt(st && s.has_warm_max, s.warm_max_ns),
                 st ? jnum(s.stddev_ns) : "-",
                 opt(st, s.p50_ns),
                 opt(st, s.p99_ns),
                 opt(st, s.p999_ns),
                 opt(st, s.p9999_ns),
                 opt(st, s.p999999_ns),
                 std::to_string(s.max_bracket_ns),
                 std::to_string(s.warm_max_bracket_ns),
                 r.bracketed ? std::to_string(s.interruptions) : "-"});
        } else if (what == "intervals") {
            for (const auto& w : cat.intervals(r)) {
                const bool st = w.samples != 0;
                row({std::to_string(w.index), std::to_string(w.start_unix_ns),
                     std::to_string(w.end_unix_ns), std::to_string(w.samples), opt(st, w.min_ns),
                     opt(st, w.max_ns), st ? jnum(w.mean_ns) : "-", st ? jnum(w.stddev_ns) : "-",
                     opt(st, w.p50_ns), opt(st, w.p99_ns), opt(st, w.p999_ns),
                     std::to_string(w.above_threshold), std::to_string(w.lost),
                     std::to_string(w.disturbed), std::to_string(w.overflows),
                     r.bracketed ? std::to_string(w.interruptions) : "-",
                     std::to_string(w.max_bracket_ns)});
            }
        } else if (what == "histogram") {
            for (const auto& b : cat.histogram(r))
                row({std::to_string(b.lo_ns), std::to_string(b.hi_ns), std::to_string(b.count)});
        } else if (what == "worst") {
            std::size_t rank = 0;
            for (const auto& x : cat.worst(r))
                row({std::to_string(++rank), std::to_string(x.seq), std::to_string(x.unix_ns),
                     std::to_string(x.latency_ns), std::to_string(x.gap_ns),
                     std::to_string(x.flags), std::to_string(x.bracket_ns)});
        } else if (what == "exceedances") {
            for (const auto& x : cat.exceedances(r))
                row({std::to_string(x.seq), std::to_string(x.unix_ns), std::to_string(x.latency_ns),
                     std::to_string(x.gap_ns), std::to_string(x.flags),
                     std::to_string(x.bracket_ns)});
        } else if (what == "events") {
            for (const auto& e : cat.events(r))
                row({std::to_string(e.unix_ns), std::to_string(e.seq), e.kind,
                     std::to_string(e.value), e.detail});
        } else if (raw) {
            const std::string prefix =
                csv_field(id[0]) + "," + csv_field(id[1]) + "," + csv_field(id[2]) + ",";
            cat.for_each_raw(r, [&](const db::sample_row& x) {
                out << prefix << x.seq << ',' << x.latency_ns << ',' << x.gap_ns << ',' << x.flags
                    << ',' << x.bracket_ns << '\n';
            });
        }
    }
    if (!raw)
        t.print(out, table_format::csv);
}

} // namespace

int export_command(int argc, char** argv)
{
    selection_options sel;
    std::string fmt = "json", what_text, output, bins_text;
    po::options_description desc("options");
    add_selection_options(desc, sel);
    auto add = desc.add_options();
    add("format", po::value(&fmt)->default_value(fmt),
        "json, csv, cyclictest-hist (cyclictest --histogram text, one column per run), "
        "rt-tests-json (cyclictest --json, one run), prometheus (text exposition format), "
        "junit (JUnit XML, a testcase per limit) or lava (LAVA test-case lines)");
    add("what", po::value(&what_text),
        "json and csv: what to export, comma-separated: summary, histogram, intervals, worst, "
        "exceedances, events, raw, or all (everything but raw). CSV takes exactly one. "
        "Default: all for json, intervals for csv");
    add("histogram", po::value(&bins_text),
        "cyclictest-hist and rt-tests-json: the number of 1 us bins, as cyclictest "
        "--histogram=N (default: enough for the largest max)");
    add("output,o", po::value(&output), "output file (default: standard output)");
    // junit and lava report gates: these limits, or else the outcome stored with each run.
    gate_limit_args lt;
    po::options_description limits("limits of --format junit and lava (as irqloop check; "
                                   "default: the gates stored with each run by run --fail-*)");
    add_gate_limit_options(limits, lt);
    desc.add(limits);
    if (!parse_reading_command(
            argc, argv, desc,
            "irqloop export --format json|csv|cyclictest-hist|rt-tests-json|prometheus|junit|lava "
            "[--what intervals|worst|raw|all] [--histogram N] [--run ID | --label L | --last] "
            "[--db F] [-o F] [--max 100us --p 99.99=50us ...]",
            "Write the selected runs (default: every measurement run) for other tools. JSON has\n"
            "\"format_version\": 1 (docs/export-format.md); all latencies are integers in ns.\n"
            "cyclictest-hist and rt-tests-json are cyclictest's own formats (1 us bins, rebinned\n"
            "from the stored histogram); prometheus is for node_exporter and Prometheus\n"
            "(docs/integration.md); junit and lava report each run's gates for CI (the same\n"
            "page)."))
        return 0;
    const bool json = fmt == "json", csv = fmt == "csv", hist = fmt == "cyclictest-hist",
               rtjson = fmt == "rt-tests-json", prom = fmt == "prometheus";
    const bool ci = fmt == "junit" || fmt == "lava";
    if (!json && !csv && !hist && !rtjson && !prom && !ci)
        throw error("bad --format", "unknown export format '" + fmt + "'",
                    "use json, csv, cyclictest-hist, rt-tests-json, prometheus, junit or lava");
    if (!(json || csv) && !what_text.empty())
        throw error("bad --what", "--format " + fmt + " has a fixed content",
                    "drop --what, or use --format json or csv");
    if (!(hist || rtjson) && !bins_text.empty())
        throw error("bad --histogram", "--format " + fmt + " has no 1 us bins",
                    "use it with --format cyclictest-hist or rt-tests-json");
    std::int64_t bins = 0;
    if (!bins_text.empty()) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(bins_text.c_str(), &end, 10);
        if (errno != 0 || end == bins_text.c_str() || *end != '\0' || v < 1 || v > 10'000'000)
            throw error("bad --histogram", "'" + bins_text + "' is not a number of bins",
                        "give 1 to 10000000 bins of 1 us, e.g. --histogram 400");
        bins = v;
    }
    const gate_limits given = parse_gate_limits(lt);
    if (!ci && !given.empty())
        throw error("bad --format", "limits given to --format " + fmt,
                    "limits go with --format junit or lava");
    if (ci) {
        db::catalog cat(db_paths_or_default(sel.dbs));
        const auto gated = gate_runs(cat, cat.select(sel.sel), given, fmt == "junit");
        std::ofstream file;
        if (!output.empty()) {
            file.open(output, std::ios::out | std::ios::trunc);
            if (!file)
                throw_from_errno(errno, "export: write '" + output + "'", {}, exit_failure);
        }
        std::ostream& out = output.empty() ? std::cout : file;
        if (fmt == "junit")
            write_junit(gated, out);
        else
            write_lava(gated, out);
        out.flush();
        if (!out)
            throw error("export: write '" + (output.empty() ? std::string("stdout") : output) + "'",
                        "the write failed", "check free disk space", exit_failure);
        return 0;
    }
    if (what_text.empty())
        what_text = json ? "all" : "intervals";
    std::set<std::string> what;
    std::stringstream ss(what_text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item == "all") {
            for (auto p : json_parts)
                if (std::string_view(p) != "raw")
                    what.insert(p);
            continue;
        }
        bool known = false;
        for (auto p : json_parts)
            known |= item == p;
        if (!known)
            throw error(
                "bad --what", "unknown part '" + item + "'",
                "use summary, histogram, intervals, worst, exceedances, events, raw or all");
        what.insert(item);
    }
    if (csv && (what.size() != 1 || what_text == "all"))
        throw error("bad --what",
                    "CSV holds one table, '" + what_text + "' asks for " +
                        std::to_string(what.size()),
                    "pick one: --what intervals, worst, raw, ... (or use --format json)");
    what.insert("summary"); // JSON always carries it: without it a run's figures mean little
    base::options_parsed();
    db::catalog cat(db_paths_or_default(sel.dbs));
    const auto runs = cat.select(sel.sel);
    if (rtjson && runs.size() != 1)
        throw error("bad selection",
                    "--format rt-tests-json holds one run, " + std::to_string(runs.size()) +
                        " are selected",
                    "name one with --run ID, or add --last");
    if ((json || csv) && (what_text == "raw" || what.count("raw"))) {
        std::uint64_t n = 0;
        for (const auto* r : runs)
            n += cat.raw_count(*r);
        if (n == 0)
            throw error("export raw samples", "the selected runs have none",
                        "raw samples are kept only by 'irqloop run --raw'");
    }
    if ((hist || rtjson) && bins == 0)
        bins = default_histogram_bins(runs);
    // To a file: checked, and removed again when a write fails. To standard output: run_main
    // checks the flush.
    std::optional<output_file> file;
    if (!output.empty())
        file.emplace(output, "export");
    std::ostream& out = file ? file->stream() : std::cout;
    if (json)
        write_json(cat, runs, what, out);
    else if (csv)
        write_csv(cat, runs, what_text, out);
    else if (hist)
        write_cyclictest_hist(cat, runs, bins, out);
    else if (rtjson)
        write_rt_tests_json(cat, *runs.front(), bins, out);
    else
        write_prometheus_export(cat, runs, out);
    if (file)
        file->commit();
    return 0;
}

} // namespace irqloop::logger
