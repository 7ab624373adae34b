// SPDX-License-Identifier: MIT
// OSADL's RT dataset JSON and rtla's `timerlat hist` text, written from the stored histogram
// rebinned into 1 us classes as the cyclictest formats are (export-formats.*). The JSON by
// nlohmann-json; the rtla text by hand, in the widths rtla prints.
#include "export-lab-formats.hpp"

#include "error.hpp"
#include "export-formats.hpp"
#include "gates.hpp"
#include "table.hpp"
#include "version.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>
#include <sstream>
#include <string>

namespace irqloop::logger
{

namespace
{

using lab_json = nlohmann::ordered_json;

/** @brief Unix ns as ISO 8601 in UTC to the second, as OSADL's timestamps: "...T...+00:00". */
std::string lab_iso_utc(std::int64_t unix_ns)
{
    return format_utc_as(unix_ns, "%Y-%m-%dT%H:%M:%S+00:00");
}

/** @brief The stored uname "sysname release version... machine" as its words. */
std::vector<std::string> lab_uname_words(const std::string& uname)
{
    std::istringstream in(uname);
    std::vector<std::string> w;
    for (std::string x; in >> x;)
        w.push_back(x);
    return w;
}

/** @brief The distinct non-empty values of @p field over @p runs, in order, joined by " / ". */
template <class F> std::string lab_distinct(const std::vector<const db::run_record*>& runs, F field)
{
    std::vector<std::string> seen;
    for (const auto* r : runs) {
        std::string v = field(*r);
        if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end())
            seen.push_back(std::move(v));
    }
    std::string o;
    for (const auto& v : seen)
        o += (o.empty() ? "" : " / ") + v;
    return o;
}

/** @brief "%9llu " as rtla prints every value of its histogram and summary. */
std::string rtla_cell(unsigned long long v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%9llu ", v);
    return b;
}

} // namespace

void check_lab_export(const std::vector<const db::run_record*>& runs, bool rtla)
{
    const char* format = rtla ? "rtla-timerlat-hist" : "osadl-rtdataset";
    for (const auto* r : runs) {
        const std::string run = "run " + std::to_string(r->id) + " (" + r->db_path + ")";
        if (!r->has_stats || r->summary.samples == 0)
            throw error(std::string("export --format ") + format,
                        run + " has no sample: it would be an empty " + (rtla ? "column" : "curve"),
                        "leave it out of the selection (--run ID, --label L)", exit_no_answer);
        const std::string why = rtla ? run_unfinished_reason(*r) : std::string();
        if (!why.empty())
            throw error("export --format rtla-timerlat-hist",
                        run + " cannot pass (" + why +
                            "): rtla's text has no place for that, and Linaro's parse_rtla.py "
                            "reads every file as a pass",
                        "export it with --format rt-tests-json, junit or lava, which fail it",
                        run_unfinished_status(*r));
    }
}

void write_osadl_rtdataset(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                           std::int64_t bins, std::ostream& out)
{
    const auto& first = *runs.front();
    const auto words = lab_uname_words(first.meta.uname);
    std::int64_t origin = first.meta.start_unix_ns;
    for (const auto* r : runs)
        origin = std::min(origin, r->meta.start_unix_ns);
    const auto now = std::chrono::system_clock::now().time_since_epoch();

    lab_json j = lab_json::object();
    j["format"] = {{"name", "RT Dataset"}, {"version", "1.0"}};
    j["timestamps"] = {
        {"origin", lab_iso_utc(origin)},
        {"dataset",
         lab_iso_utc(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count())}};
    j["system"] = {{"hostname", first.meta.hostname}};
    // The processor OSADL's title names is the measured one: irqloop's target, as stored with
    // the run (else its backend); the family is the logger host's machine.
    std::string targets = lab_distinct(runs, [](const db::run_record& r) {
        return message_text(r.meta.target.empty() ? r.meta.backend : r.meta.target);
    });
    j["processor"] = {{"family", words.size() > 2 ? words.back() : std::string()},
                      {"vendor", "irqloop"},
                      {"type", "target " + targets}};
    j["kernel"] = {{"version", words.size() > 1 ? words[1] : std::string()},
                   {"config", lab_json::array()}};

    // The curves' names: OSADL's script numbers them from cyclictest's -a list, so the text
    // ends with one that numbers them 0..n-1, after every label (it takes the last one).
    std::string curves;
    std::uint64_t cycles = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = *runs[i];
        curves += (i ? ", Core #" : "Core #") + std::to_string(i) + " is run " +
                  std::to_string(r.id) + " \"" + message_text(r.meta.label) + "\" (" +
                  message_text(r.db_path) + ", " + std::string(db::to_text(r.status)) + ")";
        cycles = std::max<std::uint64_t>(cycles, r.summary.samples);
    }
    const std::string cpus = runs.size() == 1 ? "0" : "0-" + std::to_string(runs.size() - 1);
    j["condition"] = {
        {"load",
         lab_distinct(runs, [](const db::run_record& r) { return message_text(r.meta.load); })},
        {"cycles", cycles},
        {"interval", first.meta.interval_ns / 1000},
        {"cyclictest", std::string("irqloop ") + version + ": " + curves +
                           " (numbered as cyclictest -a" + cpus + " would)"}};

    lab_json classes = lab_json::array();
    for (std::int64_t b = 0; b < bins; ++b)
        classes.push_back(b);
    lab_json cores = lab_json::array();
    cores.push_back(std::move(classes));
    lab_json maxima = lab_json::array();
    lab_json listed = lab_json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = *runs[i];
        const auto h = rebin_1us(cat, r, bins);
        cores.push_back(h.bins);
        maxima.push_back(run_max_us(r));
        listed.push_back({{"core", i},
                          {"run", r.id},
                          {"uuid", r.meta.uuid},
                          {"file", r.db_path},
                          {"label", r.meta.label},
                          {"status", std::string(db::to_text(r.status))},
                          {"samples", r.summary.samples},
                          {"overflows", h.overflows}});
    }
    j["latency"] = {{"granularity", "microseconds"},
                    {"maxima", std::move(maxima)},
                    {"cores", std::move(cores)}};
    // irqloop's own: which run each curve is. OSADL's script reads the keys above only.
    j["irqloop"] = {{"generator", std::string("irqloop ") + version},
                    {"histogram_bins", bins},
                    {"runs", std::move(listed)}};
    // Indented as OSADL's own files are, but each row of cores on one line (one row holds a
    // count per 1 us class): the marker string stands for the rows until they are written.
    lab_json rows = std::move(j["latency"]["cores"]);
    j["latency"]["cores"] = "\x01"
                            "cores"; // (split: "\x01c" would be one hex escape)
    const std::string text = j.dump(4, ' ', false, lab_json::error_handler_t::replace);
    // Found by its key: a stored label is never a value of "cores".
    const std::string marker = "\"cores\": \"\\u0001cores\"";
    const auto at = text.rfind(marker);
    out << text.substr(0, at) << "\"cores\": [";
    for (std::size_t i = 0; i < rows.size(); ++i)
        out << (i ? ",\n            " : "\n            ") << rows[i].dump();
    out << "\n        ]" << text.substr(at + marker.size()) << '\n';
}

void write_rtla_timerlat_hist(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                              std::int64_t bins, std::ostream& out)
{
    std::vector<us_histogram> cols;
    for (const auto* r : runs)
        cols.push_back(rebin_1us(cat, *r, bins));
    // Bucket rows: "%-6d" index, then "%9d " per column (each run twice: IRQ, Thr); a row
    // whose counts are all 0 is left out, as rtla does without --with-zeros.
    for (std::int64_t b = 0; b < bins; ++b) {
        std::uint64_t total = 0;
        for (const auto& c : cols)
            total += c.bins[std::size_t(b)];
        if (total == 0)
            continue;
        char idx[32];
        std::snprintf(idx, sizeof idx, "%-6lld", (long long)b);
        out << idx;
        for (const auto& c : cols)
            out << rtla_cell(c.bins[std::size_t(b)]) << rtla_cell(c.bins[std::size_t(b)]);
        out << '\n';
    }
    auto row = [&](const char* head, auto value) {
        out << head;
        for (std::size_t i = 0; i < runs.size(); ++i)
            out << rtla_cell(value(i)) << rtla_cell(value(i));
        out << '\n';
    };
    row("over: ", [&](std::size_t i) { return cols[i].overflows; });
    row("count:", [&](std::size_t i) { return cols[i].cycles; });
    row("min:  ", [&](std::size_t i) { return (unsigned long long)run_min_us(*runs[i]); });
    row("avg:  ", [&](std::size_t i) { return (unsigned long long)run_avg_us(*runs[i]); });
    row("max:  ", [&](std::size_t i) { return (unsigned long long)run_max_us(*runs[i]); });
    // ALL: the columns together: every run counts once per column kind.
    std::uint64_t count = 0;
    double sum_ns = 0;
    std::int64_t lo = run_min_us(*runs.front()), hi = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        count += cols[i].cycles;
        sum_ns += runs[i]->summary.mean_ns * double(cols[i].cycles);
        lo = std::min(lo, run_min_us(*runs[i]));
        hi = std::max(hi, run_max_us(*runs[i]));
    }
    const auto avg = (unsigned long long)(sum_ns / double(count) / 1000.0);
    out << "ALL:        IRQ       Thr\n";
    out << "count:" << rtla_cell(count) << rtla_cell(count) << '\n';
    out << "min:  " << rtla_cell((unsigned long long)lo) << rtla_cell((unsigned long long)lo)
        << '\n';
    out << "avg:  " << rtla_cell(avg) << rtla_cell(avg) << '\n';
    out << "max:  " << rtla_cell((unsigned long long)hi) << rtla_cell((unsigned long long)hi)
        << '\n';
}

} // namespace irqloop::logger
