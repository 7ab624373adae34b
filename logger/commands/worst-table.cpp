// SPDX-License-Identifier: MIT
#include "worst-table.hpp"

#include "error.hpp"

#include <algorithm>
#include <cstdio>

namespace irqloop::logger
{

std::string latency_with_bracket(const db::sample_row& s, latency_unit unit)
{
    std::string v = format_latency(double(s.latency_ns), unit);
    if ((s.flags & db::flag_disturbed) && s.bracket_ns > 0)
        v += " (bracket " + format_latency(double(s.bracket_ns), unit) + ")";
    return v;
}

std::optional<rt_throttling_pause> stored_rt_throttling(const db::run_record& r)
{
    for (const auto& [k, v] : r.meta.metadata) {
        if (k != "preflight.sched.rt_throttling")
            continue;
        long long runtime = 0, period = 0;
        char tail = 0;
        // preflight.cpp: "FAIL on: 950000 us of every 1000000 us".
        if (std::sscanf(v.c_str(), "FAIL on: %lld us of every %lld us%c", &runtime, &period,
                        &tail) == 2 &&
            runtime >= 0 && period > runtime)
            return rt_throttling_pause{runtime, period};
    }
    return std::nullopt;
}

std::string disturbed_cause(const db::run_record& r, const db::sample_row& s,
                            const std::vector<db::interval_row>& intervals)
{
    if (!(s.flags & db::flag_disturbed))
        return {};
    std::string out;
    if (const auto t = stored_rt_throttling(r)) {
        const std::int64_t pause = t->pause_ns();
        if (s.bracket_ns >= pause - pause / 10 && s.bracket_ns <= pause + pause / 10) {
            char b[64];
            std::snprintf(b, sizeof b, "%.3f ms", double(s.bracket_ns) / 1e6);
            out = std::string("bracket ") + b + " matches RT throttling (sched_rt_runtime_us " +
                  std::to_string(t->runtime_us) + " of " + std::to_string(t->period_us) +
                  ", preflight FAIL)";
        }
    }
    for (const auto& w : intervals)
        if (s.unix_ns >= w.start_unix_ns && s.unix_ns < w.end_unix_ns) {
            if (w.smi_count && *w.smi_count > 0)
                out += (out.empty() ? "" : "; ") + format_count(*w.smi_count) + " SMI" +
                       (*w.smi_count == 1 ? "" : "s") + " counted in its window";
            break;
        }
    return out;
}

warm_lost lost_after_warmup(const db::run_record& r, const std::vector<db::event_row>& events)
{
    warm_lost w;
    const std::uint64_t warmup = r.meta.warmup_samples;
    std::uint64_t accounted = 0;
    for (const auto& e : events) {
        if (e.kind != "lost" || e.value <= 0)
            continue;
        const auto n = static_cast<std::uint64_t>(e.value);
        accounted += n;
        // The burst holds seq .. seq + n - 1 (the recorder's consecutive lost stimuli).
        const std::uint64_t from = std::max(e.seq, warmup), to = e.seq + n;
        if (to > from)
            w.after += to - from;
    }
    w.known = accounted == r.summary.lost;
    return w;
}

std::string format_warm_max(const db::run_record& r, const warm_lost& w, latency_unit unit,
                            std::int64_t shift_ns)
{
    const auto& s = r.summary;
    const std::int64_t timeout = r.meta.timeout_ns - shift_ns;
    if (!s.has_warm_max) {
        // No answer after the warm-up, yet lost ones there prove at least the timeout.
        if (w.after)
            return "\xe2\x89\xa5 " + format_latency(double(timeout), unit) + " (" +
                   (w.known ? "" : "at least ") + format_count(w.after) +
                   " lost after the warm-up)";
        return absent_value;
    }
    const max_figure clean{s.warm_max_ns - shift_ns, s.warm_max_bracket_ns, 0, timeout};
    const std::string value = format_max(clean, unit);
    if (w.after) {
        const std::string n =
            (w.known ? "" : "at least ") + format_count(w.after) + " lost after the warm-up";
        const max_figure lost{clean.max_ns, clean.bracket_ns, w.after, timeout};
        if (lost.bounded_by_timeout())
            return "\xe2\x89\xa5 " + format_latency(double(timeout), unit) + " (" + n + ")";
        return value + " (" + n + ")";
    }
    if (!w.known && s.lost)
        return value + " (" + format_count(s.lost) + " lost, warm-up unknown)";
    return value;
}

std::string run_max_line(const db::run_record& r, latency_unit unit)
{
    const max_figure m{r.has_stats ? std::optional<std::int64_t>(r.summary.max_ns) : std::nullopt,
                       r.summary.max_bracket_ns, r.summary.lost, r.meta.timeout_ns};
    std::string line = "run " + std::to_string(r.id);
    if (!r.meta.label.empty())
        line += " '" + message_text(r.meta.label) + "'";
    const std::string u = std::string(" ") + unit_name(unit);
    if (m.bounded_by_timeout())
        return line + ": max \xe2\x89\xa5 " + format_latency(double(m.timeout_ns), unit) + u +
               " (" + format_count(m.lost) + " lost)";
    line +=
        ": max " +
        format_latency(m.max_ns ? std::optional<double>(double(*m.max_ns)) : std::nullopt, unit) +
        u;
    if (m.bracket_ns > 0)
        line += " (bracket " + format_latency(double(m.bracket_ns), unit) + u + ")";
    return line + ", lost " + format_count(m.lost);
}

void print_worst_table(const std::vector<worst_entry>& rows, worst_columns cols, latency_unit unit,
                       table_format fmt, std::ostream& out)
{
    const bool run = cols != worst_columns::sample_only;
    const bool file = cols == worst_columns::with_run_file;
    const std::string u = std::string(" (") + unit_name(unit) + ")";
    // The truth column only where a listed sample has one (a sim run, schema version 6): the
    // tables of every other run stay as they were.
    const bool truth = std::any_of(rows.begin(), rows.end(), [](const worst_entry& e) {
        return e.sample.truth_ns.has_value();
    });
    // The why column only where a listed sample has a stored breakdown (irqloop explain
    // --store, schema version 8): the tables of every other run stay as they were.
    const bool why =
        std::any_of(rows.begin(), rows.end(), [](const worst_entry& e) { return !e.why.empty(); });
    table t;
    t.add_column("rank");
    if (run) {
        t.add_column("run");
        t.add_column("label", table::align::left, table::content::stored);
    }
    t.add_column("seq");
    t.add_column("time (UTC)", table::align::left);
    t.add_column("latency" + u);
    if (truth)
        t.add_column("truth" + u);
    t.add_column("bracket" + u);
    t.add_column("edge", table::align::left);
    t.add_column("flags", table::align::left);
    if (why)
        t.add_column("why", table::align::left, table::content::stored);
    if (file)
        t.add_column("file", table::align::left, table::content::stored);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i].run;
        const auto& s = rows[i].sample;
        const auto& cause = rows[i].cause;
        std::string flags;
        if (s.flags & db::flag_disturbed) {
            // Ranked by what it proves, its lower bound: said on its line, and why an upper
            // bound above the timeout is no answer later than the timeout.
            flags += "disturbed, proves " +
                     format_latency(double(s.latency_ns - s.bracket_ns), unit) +
                     (r && s.latency_ns > r->meta.timeout_ns ? " (above the timeout by its bracket)"
                                                             : "") +
                     " ";
        }
        if (!cause.empty()) {
            flags.pop_back();
            flags += "; " + cause + " ";
        }
        if (s.flags & db::flag_warmup)
            flags += "warmup ";
        if (run && r->partial())
            flags += "partial-run ";
        if (!flags.empty())
            flags.pop_back();
        std::vector<std::string> row{std::to_string(i + 1)};
        if (run) {
            row.push_back(std::to_string(r->id));
            row.push_back(r->meta.label);
        }
        row.push_back(std::to_string(s.seq));
        row.push_back(format_utc(s.unix_ns, 6));
        row.push_back(format_latency(double(s.latency_ns), unit));
        if (truth)
            row.push_back(format_latency(
                s.truth_ns ? std::optional<double>(double(*s.truth_ns)) : std::nullopt, unit));
        row.push_back(format_latency(double(s.bracket_ns), unit));
        row.push_back((s.flags & db::flag_rising) ? "rising" : "falling");
        row.push_back(flags);
        if (why)
            row.push_back(rows[i].why);
        if (file)
            row.push_back(r->db_path);
        t.add_row(std::move(row));
    }
    t.print(out, fmt);
}

} // namespace irqloop::logger
