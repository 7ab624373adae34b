// SPDX-License-Identifier: MIT
// Exports in formats that other tools already read: cyclictest's histogram text and JSON, and
// the Prometheus text format. The cyclictest text and the Prometheus text are written by hand
// (no library writes them); the JSON by nlohmann-json.
#include "export-formats.hpp"

#include "error.hpp"
#include "gates.hpp"
#include "prometheus.hpp"
#include "table.hpp"
#include "version.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace irqloop::logger
{

namespace
{

using ojson = nlohmann::ordered_json;

std::string dump(const ojson& j)
{
    return j.dump(2, ' ', false, ojson::error_handler_t::replace);
}

std::string meta_value(const db::run_record& r, const std::string& key)
{
    for (const auto& [k, v] : r.meta.metadata)
        if (k == key)
            return v;
    return {};
}

/**
 * @brief The stimulus numbers of samples at or above @p bins us that the file knows (its raw
 * samples, else its stored exceedances), in order, at most @p cap of them. Only samples that
 * are in the statistics count: not lost, and not disturbed unless the run kept those.
 */
std::vector<std::uint64_t> overflow_cycles(db::catalog& cat, const db::run_record& r,
                                           std::int64_t bins, std::uint64_t cap)
{
    std::vector<std::uint64_t> seqs;
    const bool keep_disturbed = meta_value(r, "logger.keep_disturbed") == "yes";
    auto take = [&](const db::sample_row& s) {
        if ((s.flags & db::flag_lost) || ((s.flags & db::flag_disturbed) && !keep_disturbed))
            return;
        if (s.latency_ns >= bins * 1000)
            seqs.push_back(s.seq);
    };
    if (cat.raw_count(r) != 0)
        cat.for_each_raw(r, take);
    else
        for (const auto& s : cat.exceedances(r))
            take(s);
    std::sort(seqs.begin(), seqs.end());
    if (seqs.size() > cap)
        seqs.resize(cap);
    return seqs;
}

std::string fmt(const char* f, unsigned long long v)
{
    char b[32];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

/** @brief "Tue, 01 Dec 2026 09:45:48 +0000", as cyclictest writes start_time and end_time. */
std::string rfc2822(std::int64_t unix_ns)
{
    return format_utc_as(unix_ns, "%a, %d %b %Y %H:%M:%S +0000");
}

} // namespace

us_histogram rebin_1us(db::catalog& cat, const db::run_record& r, std::int64_t bins)
{
    us_histogram h;
    h.bins.assign(std::size_t(bins), 0);
    for (const auto& b : cat.histogram(r)) {
        const std::int64_t bin = (b.hi_ns - 1) / 1000;
        if (bin < bins)
            h.bins[std::size_t(bin)] += b.count;
        else
            h.overflows += b.count;
        h.cycles += b.count;
    }
    h.total = h.cycles - h.overflows;
    return h;
}

std::int64_t run_min_us(const db::run_record& r)
{
    return r.has_stats ? r.summary.min_ns / 1000 : 0;
}
std::int64_t run_avg_us(const db::run_record& r)
{
    return r.has_stats ? std::int64_t(r.summary.mean_ns / 1000) : 0;
}
std::int64_t run_max_us(const db::run_record& r)
{
    const auto m = r.max_at_least_ns();
    return m ? (*m + 999) / 1000 : 0;
}

std::int64_t default_histogram_bins(const std::vector<const db::run_record*>& runs)
{
    // The answered samples' range: the lost answers are in no bucket (their latency is unknown),
    // so the timeout they prove would only add empty bins.
    std::int64_t most = 0;
    for (const auto* r : runs)
        most = std::max(most, r->has_stats ? (r->summary.max_ns + 999) / 1000 : 0);
    return most + 1;
}

void write_cyclictest_hist(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                           std::int64_t bins, std::ostream& out)
{
    std::vector<us_histogram> cols;
    for (const auto* r : runs)
        cols.push_back(rebin_1us(cat, *r, bins));

    out << "# irqloop " << version << " export --format cyclictest-hist --histogram=" << bins
        << '\n'
        << "# rebinned from irqloop's stored histogram (buckets at most 0.1 % wide) into 1 us "
           "bins: a bucket across a 1 us boundary counts in the upper bin; Max is rounded up, "
           "Min and Avg down\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = *runs[i];
        out << "# irqloop column " << i << ": run " << r.id << ", uuid " << r.meta.uuid
            << ", label " << dump(ojson(r.meta.label)) << ", file " << dump(ojson(r.db_path));
        if (r.summary.lost > 0 && r.meta.timeout_ns > 0)
            out << "; " << r.summary.lost << " answers lost, each at least the "
                << (r.meta.timeout_ns + 999) / 1000
                << " us timeout: its Max is at least that, and they are in no bin";
        out << '\n';
    }
    out << "# Histogram\n";
    for (std::int64_t b = 0; b < bins; ++b) {
        out << fmt("%06llu", (unsigned long long)b);
        for (std::size_t i = 0; i < cols.size(); ++i)
            out << (i ? '\t' : ' ') << fmt("%06llu", cols[i].bins[std::size_t(b)]);
        out << '\n';
    }
    auto line = [&](const char* head, const char* f, auto value) {
        out << head;
        for (std::size_t i = 0; i < runs.size(); ++i)
            out << ' ' << fmt(f, (unsigned long long)value(i));
        out << '\n';
    };
    line("# Total:", "%09llu", [&](std::size_t i) { return cols[i].total; });
    line("# Min Latencies:", "%05llu", [&](std::size_t i) { return run_min_us(*runs[i]); });
    line("# Avg Latencies:", "%05llu", [&](std::size_t i) { return run_avg_us(*runs[i]); });
    line("# Max Latencies:", "%05llu", [&](std::size_t i) { return run_max_us(*runs[i]); });
    line("# Histogram Overflows:", "%05llu", [&](std::size_t i) { return cols[i].overflows; });
    out << "# Histogram Overflow at cycle number:\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        // cyclictest keeps at most as many cycle numbers as there are bins; so do we.
        const auto seqs =
            overflow_cycles(cat, *runs[i], bins, std::min<std::uint64_t>(cols[i].overflows, bins));
        out << "# Thread " << i << ':';
        for (auto s : seqs)
            out << ' ' << fmt("%05llu", s);
        if (seqs.size() < cols[i].overflows)
            out << " # " << fmt("%05llu", cols[i].overflows - seqs.size()) << " others";
        out << '\n';
    }
    out << '\n';
}

namespace
{

/** @brief cpu=N of the run's stored real-time settings, or -1 when it was not pinned. */
int pinned_cpu(const db::run_record& r)
{
    // "cpu=N" when the sampler was pinned; "cpu=any" (or "cpu=any(pin refused)") when not,
    // which cyclictest writes as -1.
    const std::string& rt = r.meta.rt_settings;
    for (auto at = rt.find("cpu="); at != std::string::npos; at = rt.find("cpu=", at + 1))
        if ((at == 0 || rt[at - 1] == ' ') && at + 4 < rt.size() &&
            std::isdigit(static_cast<unsigned char>(rt[at + 4])))
            return std::atoi(rt.c_str() + at + 4);
    return -1;
}

/** @brief What `irqloop run` exits with for @p r, as rt-tests JSON's return_code. */
int run_return_code(const db::run_record& r)
{
    // A run that did not end complete, or without a sample, never reads as a pass (1 or 4);
    // then 3 when a stored gate failed (run --fail-*).
    int rc = run_unfinished_status(r);
    if (rc == exit_ok && meta_value(r, "gate.result") == "fail")
        rc = exit_limit;
    return rc;
}

/** @brief One run as a cyclictest thread: its histogram, figures and irqloop's counts. */
ojson rt_tests_thread(db::catalog& cat, const db::run_record& r, std::int64_t bins)
{
    const auto h = rebin_1us(cat, r, bins);
    ojson hist = ojson::object();
    for (std::size_t b = 0; b < h.bins.size(); ++b)
        if (h.bins[b] != 0)
            hist[std::to_string(b)] = h.bins[b];
    ojson t = ojson::object();
    t["histogram"] = std::move(hist);
    t["cycles"] = h.cycles;
    t["min"] = run_min_us(r);
    t["max"] = run_max_us(r);
    t["avg"] = r.has_stats ? std::round(r.summary.mean_ns / 10.0) / 100.0 : 0.0;
    t["cpu"] = pinned_cpu(r);
    t["node"] = 0;
    // irqloop's own: what `cycles` leaves out. cyclictest has no lost wake-up; Linaro's parser
    // reads min, avg, max and return_code only, so a --fail-on-lost gate shows there as 3.
    t["stimuli"] = r.summary.stimuli;
    t["lost"] = r.summary.lost;
    t["disturbed"] = r.summary.disturbed;
    return t;
}

} // namespace

void write_rt_tests_json(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                         std::int64_t bins, std::ostream& out)
{
    const auto& first = *runs.front();
    // uname as stored: "sysname release version... machine".
    std::istringstream un(first.meta.uname);
    std::vector<std::string> words;
    for (std::string w; un >> w;)
        words.push_back(w);
    std::string kversion;
    for (std::size_t i = 2; i + 1 < words.size(); ++i)
        kversion += (kversion.empty() ? "" : " ") + words[i];
    // Several runs: each its own command line, in thread order; the span of all of them; the
    // first return code that is not 0, so that no run's failure is hidden by another's pass.
    std::string cmdline;
    std::int64_t start = first.meta.start_unix_ns, end = start;
    int rc = exit_ok;
    for (const auto* r : runs) {
        cmdline += (cmdline.empty() ? "" : "; ") + r->meta.command_line;
        start = std::min(start, r->meta.start_unix_ns);
        end = std::max(end, r->end_unix_ns.value_or(r->meta.start_unix_ns));
        if (rc == exit_ok)
            rc = run_return_code(*r);
    }

    ojson j = ojson::object();
    j["file_version"] = 1;
    j["cmdline:"] = cmdline; // sic: cyclictest's keys end in a colon
    j["rt_test_version:"] = std::string("irqloop ") + version;
    j["start_time"] = rfc2822(start);
    j["end_time"] = rfc2822(end);
    j["return_code"] = rc;
    ojson sys = ojson::object();
    sys["sysname"] = words.size() > 0 ? words[0] : "";
    sys["nodename"] = first.meta.hostname;
    sys["release"] = words.size() > 1 ? words[1] : "";
    sys["version"] = kversion;
    sys["machine"] = words.size() > 2 ? words.back() : "";
    sys["realtime"] = kversion.find("PREEMPT_RT") != std::string::npos ? 1 : 0;
    j["sysinfo"] = std::move(sys);
    j["num_threads"] = runs.size();
    j["resolution_in_ns"] = 0;
    ojson threads = ojson::object();
    for (std::size_t i = 0; i < runs.size(); ++i)
        threads[std::to_string(i)] = rt_tests_thread(cat, *runs[i], bins);
    j["thread"] = std::move(threads);
    out << dump(j) << '\n';
}

void write_prometheus_export(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                             std::ostream& out)
{
    std::vector<metrics_run> m;
    for (const auto* rp : runs) {
        const auto& r = *rp;
        metrics_run x;
        x.label = r.meta.label;
        x.uuid = r.meta.uuid;
        x.backend = r.meta.backend;
        x.summary = r.summary;
        x.has_stats = r.has_stats;
        x.threshold_ns = r.meta.threshold_ns;
        x.timeout_ns = r.meta.timeout_ns;
        x.start_unix_ns = r.meta.start_unix_ns;
        x.windows = cat.intervals(r).size();
        x.active = r.status == db::run_status::running;
        for (const auto& b : cat.histogram(r))
            x.add_bucket(b.lo_ns, b.hi_ns, b.count);
        x.sum_ns = r.summary.mean_ns * double(x.count);
        // The stored gates (run --fail-*, campaign), and the run as a whole: it fails when a
        // limit failed or the run cannot pass (as the CI formats say it).
        const auto stored = stored_gates(r);
        const bool unfinished = !run_unfinished_reason(r).empty();
        if (stored)
            for (const auto& l : stored->lines)
                x.gates.emplace_back(l.key, l.pass);
        if (stored || unfinished)
            x.gates.emplace_back("all", !unfinished && stored->pass() &&
                                            meta_value(r, "gate.result") != "fail");
        m.push_back(std::move(x));
    }
    write_prometheus(out, m);
}

} // namespace irqloop::logger
