// SPDX-License-Identifier: MIT
// irqloop export: runs as JSON (format_version 1, docs/export-format.md) or one table as CSV.
#include "commands.hpp"
#include "error.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "version.hpp"

#include <boost/program_options.hpp>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
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

std::string jstr(std::string_view s)
{
    std::string o = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            o += "\\\"";
            break;
        case '\\':
            o += "\\\\";
            break;
        case '\n':
            o += "\\n";
            break;
        case '\r':
            o += "\\r";
            break;
        case '\t':
            o += "\\t";
            break;
        default:
            if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                o += b;
            } else {
                o += char(c);
            }
        }
    }
    return o + '"';
}

std::string jnum(double v)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.3f", v);
    return b;
}

/** @brief A tiny streaming JSON object writer: keys in insertion order, 2-space indent. */
class json_object final
{
public:
    json_object(std::ostream& out, int depth) : out_(out), depth_(depth) { out_ << '{'; }
    void raw(std::string_view key, const std::string& value)
    {
        out_ << (first_ ? "\n" : ",\n") << std::string(std::size_t(depth_ + 1) * 2, ' ')
             << jstr(key) << ": " << value;
        first_ = false;
    }
    void str(std::string_view key, std::string_view v) { raw(key, jstr(v)); }
    void i(std::string_view key, std::int64_t v) { raw(key, std::to_string(v)); }
    void u(std::string_view key, std::uint64_t v) { raw(key, std::to_string(v)); }
    void d(std::string_view key, double v) { raw(key, jnum(v)); }
    void opt(std::string_view key, bool present, std::int64_t v)
    {
        raw(key, present ? std::to_string(v) : "null");
    }
    void close()
    {
        out_ << (first_ ? "}" : "\n" + std::string(std::size_t(depth_) * 2, ' ') + "}");
    }

private:
    std::ostream& out_;
    int depth_;
    bool first_ = true;
};

std::string sample_json(const db::sample_row& s, std::size_t rank, bool with_time)
{
    std::ostringstream o;
    o << '{';
    if (rank)
        o << "\"rank\": " << rank << ", ";
    o << "\"seq\": " << s.seq << ", ";
    if (with_time)
        o << "\"unix_ns\": " << s.unix_ns << ", ";
    o << "\"latency_ns\": " << s.latency_ns << ", \"gap_ns\": " << s.gap_ns
      << ", \"flags\": " << s.flags << ", \"edge\": \""
      << ((s.flags & db::flag_rising) ? "rising" : "falling")
      << "\", \"bracket_ns\": " << s.bracket_ns << '}';
    return o.str();
}

void write_run_json(db::catalog& cat, const db::run_record& r, const std::set<std::string>& what,
                    std::ostream& out)
{
    const auto& m = r.meta;
    const auto& s = r.summary;
    const std::string ind = "        ";
    json_object run(out, 2);
    run.i("id", r.id);
    run.str("uuid", m.uuid);
    run.str("file", r.db_path);
    run.str("label", m.label);
    run.str("kind", std::string(db::to_text(m.kind)));
    run.str("status", std::string(db::to_text(r.status)));
    run.raw("partial", r.partial() ? "true" : "false");
    run.i("start_unix_ns", m.start_unix_ns);
    run.opt("end_unix_ns", r.end_unix_ns.has_value(), r.end_unix_ns.value_or(0));
    {
        std::ostringstream mo;
        json_object md(mo, 3);
        md.str("command_line", m.command_line);
        md.str("version", m.version);
        md.str("uname", m.uname);
        md.str("hostname", m.hostname);
        md.str("backend", m.backend);
        md.str("clock_source", m.clock_source);
        md.d("clock_hz", m.clock_hz);
        md.d("clock_read_ns", m.clock_read_ns);
        md.i("interval_ns", m.interval_ns);
        md.i("jitter_ns", m.jitter_ns);
        md.i("timeout_ns", m.timeout_ns);
        md.i("threshold_ns", m.threshold_ns);
        md.i("gap_limit_ns", m.gap_limit_ns);
        md.i("stats_interval_ns", m.stats_interval_ns);
        md.u("warmup_samples", m.warmup_samples);
        md.u("samples_requested", m.samples_requested);
        md.i("duration_ns", m.duration_ns);
        md.str("rt_settings", m.rt_settings);
        md.str("target", m.target);
        md.str("load", m.load);
        std::ostringstream eo;
        json_object extra(eo, 4);
        for (const auto& [k, v] : m.metadata)
            extra.str(k, v);
        extra.close();
        md.raw("extra", eo.str());
        md.close();
        run.raw("metadata", mo.str());
    }
    if (what.count("summary")) {
        std::ostringstream so;
        json_object sm(so, 3);
        const bool st = r.has_stats;
        sm.u("samples", s.samples);
        sm.u("stimuli", s.stimuli);
        sm.u("lost", s.lost);
        sm.u("late", s.late);
        sm.u("disturbed", s.disturbed);
        sm.u("overflows", s.overflows);
        sm.u("above_threshold", s.above_threshold);
        sm.raw("pct_above", st ? jnum(r.pct_above()) : "null");
        sm.u("exceedances_dropped", s.exceedances_dropped);
        sm.u("rising", s.rising);
        sm.u("falling", s.falling);
        sm.opt("min_ns", st, s.min_ns);
        sm.raw("avg_ns", st ? jnum(s.mean_ns) : "null");
        sm.opt("max_ns", st, s.max_ns);
        sm.opt("warm_max_ns", st, s.warm_max_ns);
        sm.raw("stddev_ns", st ? jnum(s.stddev_ns) : "null");
        sm.opt("p50_ns", st, s.p50_ns);
        sm.opt("p99_ns", st, s.p99_ns);
        sm.opt("p99_9_ns", st, s.p999_ns);
        sm.opt("p99_99_ns", st, s.p9999_ns);
        sm.opt("p99_9999_ns", st, s.p999999_ns);
        sm.i("max_bracket_ns", s.max_bracket_ns);
        sm.i("warm_max_bracket_ns", s.warm_max_bracket_ns);
        sm.raw("interruptions", r.bracketed ? std::to_string(s.interruptions) : "null");
        sm.close();
        run.raw("summary", so.str());
    }
    auto array = [&](const char* key, const std::vector<std::string>& items) {
        std::string a = "[";
        for (std::size_t k = 0; k < items.size(); ++k)
            a += (k ? ",\n" : "\n") + ind + items[k];
        a += items.empty() ? "]" : "\n      ]";
        run.raw(key, a);
    };
    if (what.count("histogram")) {
        std::vector<std::string> v;
        for (const auto& b : cat.histogram(r))
            v.push_back("[" + std::to_string(b.lo_ns) + ", " + std::to_string(b.hi_ns) + ", " +
                        std::to_string(b.count) + "]");
        array("histogram", v);
    }
    if (what.count("intervals")) {
        std::vector<std::string> v;
        for (const auto& w : cat.intervals(r)) {
            std::ostringstream o;
            const bool st = w.samples != 0;
            o << "{\"index\": " << w.index << ", \"start_unix_ns\": " << w.start_unix_ns
              << ", \"end_unix_ns\": " << w.end_unix_ns << ", \"samples\": " << w.samples
              << ", \"min_ns\": " << (st ? std::to_string(w.min_ns) : "null")
              << ", \"max_ns\": " << (st ? std::to_string(w.max_ns) : "null")
              << ", \"avg_ns\": " << (st ? jnum(w.mean_ns) : "null")
              << ", \"stddev_ns\": " << (st ? jnum(w.stddev_ns) : "null")
              << ", \"p50_ns\": " << (st ? std::to_string(w.p50_ns) : "null")
              << ", \"p99_ns\": " << (st ? std::to_string(w.p99_ns) : "null")
              << ", \"p99_9_ns\": " << (st ? std::to_string(w.p999_ns) : "null")
              << ", \"above_threshold\": " << w.above_threshold << ", \"lost\": " << w.lost
              << ", \"disturbed\": " << w.disturbed << ", \"overflows\": " << w.overflows
              << ", \"interruptions\": " << (r.bracketed ? std::to_string(w.interruptions) : "null")
              << ", \"max_bracket_ns\": " << w.max_bracket_ns << '}';
            v.push_back(o.str());
        }
        array("intervals", v);
    }
    if (what.count("worst")) {
        std::vector<std::string> v;
        std::size_t rank = 0;
        for (const auto& x : cat.worst(r))
            v.push_back(sample_json(x, ++rank, true));
        array("worst", v);
    }
    if (what.count("exceedances")) {
        std::vector<std::string> v;
        for (const auto& x : cat.exceedances(r))
            v.push_back(sample_json(x, 0, true));
        array("exceedances", v);
        run.u("exceedances_dropped", s.exceedances_dropped);
    }
    if (what.count("events")) {
        std::vector<std::string> v;
        for (const auto& e : cat.events(r))
            v.push_back("{\"unix_ns\": " + std::to_string(e.unix_ns) +
                        ", \"seq\": " + std::to_string(e.seq) + ", \"kind\": " + jstr(e.kind) +
                        ", \"value\": " + std::to_string(e.value) +
                        ", \"detail\": " + jstr(e.detail) + "}");
        array("events", v);
    }
    if (what.count("raw")) {
        // Streamed: a --raw run can hold millions of rows.
        out << ",\n      \"raw\": [";
        bool first = true;
        cat.for_each_raw(r, [&](const db::sample_row& x) {
            out << (first ? "\n" : ",\n") << ind << '[' << x.seq << ", " << x.latency_ns << ", "
                << x.gap_ns << ", " << x.flags << ", " << x.bracket_ns << ']';
            first = false;
        });
        out << (first ? "]" : "\n      ]");
    }
    run.close();
}

void write_json(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                const std::set<std::string>& what, std::ostream& out)
{
    out << "{\n  \"format_version\": " << export_format_version
        << ",\n  \"generator\": " << jstr(std::string("irqloop ") + version)
        << ",\n  \"units\": \"ns\",\n  \"runs\": [";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        out << (i ? ",\n    " : "\n    ");
        write_run_json(cat, *runs[i], what, out);
    }
    out << (runs.empty() ? "]\n}\n" : "\n  ]\n}\n");
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
                 opt(st, s.warm_max_ns),
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
    std::string fmt = "json", what_text, output;
    po::options_description desc("options");
    add_selection_options(desc, sel);
    auto add = desc.add_options();
    add("format", po::value(&fmt)->default_value(fmt), "json or csv");
    add("what", po::value(&what_text),
        "what to export, comma-separated: summary, histogram, intervals, worst, exceedances, "
        "events, raw, or all (everything but raw). CSV takes exactly one. "
        "Default: all for json, intervals for csv");
    add("output,o", po::value(&output), "output file (default: standard output)");
    if (!parse_reading_command(
            argc, argv, desc,
            "irqloop export --format json|csv [--what intervals|worst|raw|all] [--run ID | "
            "--label L | --last] [--db F] [-o F]",
            "Write the selected runs (default: every measurement run) for other tools. JSON has\n"
            "\"format_version\": 1 (docs/export-format.md); all latencies are integers in ns."))
        return 0;
    if (fmt != "json" && fmt != "csv")
        throw error("bad --format", "unknown export format '" + fmt + "'", "use json or csv");
    const bool json = fmt == "json";
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
    if (!json && (what.size() != 1 || what_text == "all"))
        throw error("bad --what",
                    "CSV holds one table, '" + what_text + "' asks for " +
                        std::to_string(what.size()),
                    "pick one: --what intervals, worst, raw, ... (or use --format json)");
    what.insert("summary"); // JSON always carries it: without it a run's figures mean little
    db::catalog cat(db_paths_or_default(sel.dbs));
    const auto runs = cat.select(sel.sel);
    if (what_text == "raw" || what.count("raw")) {
        std::uint64_t n = 0;
        for (const auto* r : runs)
            n += cat.raw_count(*r);
        if (n == 0)
            throw error("export raw samples", "the selected runs have none",
                        "raw samples are kept only by 'irqloop run --raw'");
    }
    std::ofstream file;
    if (!output.empty()) {
        file.open(output, std::ios::out | std::ios::trunc);
        if (!file)
            throw_from_errno(errno, "export: write '" + output + "'", {}, exit_failure);
    }
    std::ostream& out = output.empty() ? std::cout : file;
    if (json)
        write_json(cat, runs, what, out);
    else
        write_csv(cat, runs, what_text, out);
    out.flush();
    if (!out)
        throw error("export: write '" + (output.empty() ? std::string("stdout") : output) + "'",
                    "the write failed", "check free disk space", exit_failure);
    return 0;
}

} // namespace irqloop::logger
