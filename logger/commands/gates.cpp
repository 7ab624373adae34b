// SPDX-License-Identifier: MIT
#include "gates.hpp"

#include "error.hpp"
#include "histogram.hpp"
#include "percentiles.hpp"
#include "session-core.hpp"
#include "store.hpp"
#include "table.hpp"
#include "tail-command.hpp"
#include "tail-fit.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>

namespace irqloop::logger
{

namespace
{

// Microseconds with 3 decimals, as every table prints them.
std::string us3(double ns)
{
    return format_latency(ns, latency_unit::us, 3);
}

// The five percentiles every run stores (db/percentiles.hpp); others come from its histogram.
std::optional<std::int64_t> stored_percentile(const db::summary_row& s, double p)
{
    if (const auto* sp = db::find_stored_percentile(p))
        return s.*sp->field;
    return std::nullopt;
}

gate_line count_line(const char* key, std::uint64_t value, std::uint64_t limit)
{
    gate_line l;
    l.key = key;
    l.name = key;
    l.value = double(value);
    l.limit = double(limit);
    l.pass = value <= limit;
    return l;
}

// The percentile @p p of a histogram read back from its buckets (as the store keeps it), by
// the recorder's rank rule (see stats of compare), clamped to the run's min and max.
template <class Buckets>
std::int64_t bucket_percentile(const db::run_record& r, double p, Buckets for_each_bucket)
{
    histogram h;
    for_each_bucket([&h](std::int64_t lo_ns, std::uint64_t n) { h.record_n(lo_ns, n); });
    return std::clamp(h.value_at_percentile(p), r.summary.min_ns, r.summary.max_ns);
}

// A percentile that is not stored: from the run's histogram, or nothing (a run without one).
using other_percentile = std::function<std::optional<std::int64_t>(double)>;
// The run's stored tail (histogram, exceedances, windows), or nothing (a run without a store).
using gate_tail_source = std::function<analysis::tail_data()>;

// "100us", "12.5us", "0.75us": X in us, the shortest decimal that reads back as it.
std::string gate_x_text(std::int64_t x_ns)
{
    return percentile_name(double(x_ns) / 1000).substr(1) + "us";
}

// A probability as stored and shown: 4 significant digits ("3.217e-10").
std::string gate_prob_text(double p)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", p);
    return b;
}

// The line of one P(latency > X) <= P limit, before it is judged: its name, stored key and limit.
gate_line p_exceed_line(std::int64_t x_ns, double p)
{
    gate_line l;
    l.name = "P(>" + gate_x_text(x_ns) + ")";
    l.key = "p_exceed_" + gate_x_text(x_ns);
    l.probability = true;
    l.limit = p;
    return l;
}

// P(latency > X) <= P for each limit, from one tail fit of the run.
void evaluate_p_exceed(const gate_tail_source& tail, const gate_limits& lim, gate_outcome& g)
{
    if (lim.p_exceed.empty())
        return;
    if (!tail)
        throw error("gate --p-exceed", "a run without a database keeps no tail to fit",
                    "drop --no-db");
    const analysis::tail_data d = tail();
    const analysis::tail_options opt; // as `irqloop tail` fits it: 95 % intervals
    const analysis::tail_fit fit = analysis::fit_tail(d, opt);
    // Every check that does not allow the claim, with its figures; empty when each one does.
    std::string failed;
    for (const auto& c : fit.checks)
        if (c.assessed && !c.passed)
            failed += (failed.empty() ? "the tail fit's " : "; its ") + c.name +
                      " check failed: " + c.detail;
    for (const auto& [x, p] : lim.p_exceed) {
        gate_line l = p_exceed_line(x, p);
        if (!failed.empty() || !fit.fitted) {
            l.refused = true;
            l.has_value = false;
            l.note = "not claimed: " + (failed.empty() ? "the tail fit failed" : failed);
        } else {
            const auto e = analysis::p_exceed(d, fit, double(x), opt.confidence);
            l.value = e.ci.hi;
            l.pass = !e.ci.hi_open && e.ci.hi <= p;
            char b[200];
            std::snprintf(b, sizeof b, "upper end of the 95 %% interval %s .. %s%s, estimate %s",
                          gate_prob_text(e.ci.lo).c_str(), gate_prob_text(e.ci.hi).c_str(),
                          e.ci.hi_open ? " (open: not bounded)" : "", gate_prob_text(e.p).c_str());
            l.note = b;
        }
        g.lines.push_back(std::move(l));
    }
}

gate_outcome evaluate(const other_percentile& other, const gate_tail_source& tail,
                      const db::run_record& r, const gate_limits& lim)
{
    gate_outcome g;
    const auto& s = r.summary;
    if (lim.max_ns) {
        gate_line l;
        l.key = "max_us";
        l.name = "max";
        l.latency = true;
        l.limit = double(*lim.max_ns);
        l.has_value = r.has_stats;
        if (r.has_stats) {
            l.value = double(s.max_ns);
            l.pass = s.max_ns <= *lim.max_ns;
            if (s.max_bracket_ns > 0)
                l.note = "upper bound of a disturbed sample, bracket " +
                         us3(double(s.max_bracket_ns)) +
                         " us: proven >= " + us3(double(s.max_ns - s.max_bracket_ns)) + " us";
        } else {
            l.note = "no samples in the statistics";
        }
        // A lost answer took at least the timeout, and how much longer nobody knows: the max
        // is proven at least that, and no limit can be shown met (the summary's "max >= ...").
        // The largest answered sample alone would hide that bound.
        if (s.lost > 0) {
            l.has_value = true;
            l.value = std::max(l.value, double(r.meta.timeout_ns));
            l.pass = false;
            const std::string lost =
                std::to_string(s.lost) +
                (r.meta.timeout_ns > 0
                     ? " lost, each at least the " + us3(double(r.meta.timeout_ns)) +
                           " us timeout: the max is at least that, above it "
                           "unknown"
                     : " lost: the max is not known");
            l.note =
                r.has_stats ? lost + "; largest answered " + us3(double(s.max_ns)) + " us" : lost;
        }
        g.lines.push_back(std::move(l));
    }
    for (const auto& [p, limit] : lim.percentiles) {
        gate_line l;
        l.name = percentile_name(p);
        l.key = l.name + "_us";
        l.latency = true;
        l.limit = double(limit);
        l.has_value = r.has_stats;
        if (r.has_stats) {
            auto st = stored_percentile(s, p);
            if (!st && other)
                st = other(p);
            if (!st)
                throw error("gate " + l.name,
                            "a run without a database stores only p50, p99, "
                            "p99.9, p99.99 and p99.9999",
                            "use one of those, or drop --no-db");
            l.value = double(*st);
            l.pass = *st <= limit;
            // The percentiles are of the statistics: disturbed samples are left out of them
            // unless the run kept them; the max line holds what they prove.
            if (s.disturbed)
                for (const auto& [k, val] : r.meta.metadata)
                    if (k == "logger.keep_disturbed")
                        l.note = std::to_string(s.disturbed) + " disturbed samples " +
                                 (val == "yes" ? "included (--keep-disturbed)"
                                               : "not in the percentiles");
        } else {
            l.note = "no samples in the statistics";
        }
        g.lines.push_back(std::move(l));
    }
    if (r.has_stats)
        evaluate_p_exceed(tail, lim, g);
    else
        for (const auto& [x, p] : lim.p_exceed) {
            gate_line l = p_exceed_line(x, p);
            l.has_value = false;
            l.note = "no samples in the statistics";
            g.lines.push_back(std::move(l));
        }
    if (lim.lost)
        g.lines.push_back(count_line("lost", s.lost, *lim.lost));
    if (lim.overflows)
        g.lines.push_back(count_line("overflows", s.overflows, *lim.overflows));
    return g;
}

} // namespace

std::int64_t parse_gate_duration(const std::string& text, const std::string& what)
{
    const std::int64_t v = parse_duration_ns(text, what);
    if (v != 0 && !text.empty() && std::isdigit(static_cast<unsigned char>(text.back())))
        throw error("bad value for " + what, "'" + text + "' has no unit",
                    "give one, e.g. " + text + "us");
    return v;
}

bool is_stored_percentile(double p) noexcept
{
    return stored_percentile(db::summary_row{}, p).has_value();
}

bool gate_outcome::pass() const noexcept
{
    return failed() == 0;
}

std::size_t gate_outcome::failed() const noexcept
{
    return std::size_t(
        std::count_if(lines.begin(), lines.end(), [](const gate_line& l) { return !l.pass; }));
}

const gate_line* gate_outcome::refused() const noexcept
{
    for (const auto& l : lines)
        if (l.refused)
            return &l;
    return nullptr;
}

void throw_if_refused(const gate_outcome& g, const std::string& run_name)
{
    const auto* l = g.refused();
    if (!l)
        return;
    throw error("gate " + l->name + " on " + run_name, l->note,
                "irqloop tail shows the fit and its checks; a gate on what was measured "
                "is --max or --p",
                exit_usage);
}

gate_outcome evaluate_gates(db::catalog& cat, const db::run_record& run, const gate_limits& limits)
{
    return evaluate(
        [&](double p) {
            return bucket_percentile(run, p, [&](auto record) {
                for (const auto& b : cat.histogram(run))
                    record(b.lo_ns, b.count);
            });
        },
        [&] { return read_tail_data(cat, run); }, run, limits);
}

gate_outcome evaluate_gates(const db::run_record& run, const gate_limits& limits)
{
    return evaluate({}, {}, run, limits);
}

gate_outcome evaluate_gates(const db::run_record& run, const gate_limits& limits,
                            const histogram& run_histogram)
{
    return evaluate(
        [&](double p) {
            return bucket_percentile(run, p, [&](auto record) {
                run_histogram.for_each_bucket(
                    [&](std::int64_t lo, std::int64_t, std::uint64_t n) { record(lo, n); });
            });
        },
        {}, run, limits);
}

void gate_plugin::on_finish(run_outcome& out, const histogram& h)
{
    if (out.status == db::run_status::failed)
        return;
    db::run_record rec;
    rec.id = out.run_id;
    rec.status = out.status;
    rec.summary = out.summary;
    rec.has_stats = out.summary.samples > 0;
    rec.meta.timeout_ns = session_->opt.timing.timeout_ns; // what a lost answer proves
    rec.meta.metadata.emplace_back("logger.keep_disturbed",
                                   session_->opt.recording.keep_disturbed ? "yes" : "no");
    gate_limits other = limits_;
    other.p_exceed.clear();
    outcome_ = evaluate_gates(rec, other, h);
    if (!limits_.p_exceed.empty()) {
        // The tail fit reads the run as stored (its recording is closed): the same lines as
        // `irqloop check --p-exceed` gives on it, placed after the percentiles.
        db::catalog cat({db_path_});
        const db::run_record* stored = nullptr;
        for (const auto& r : cat.runs())
            if (r.id == out.run_id)
                stored = &r;
        gate_limits tail_only;
        tail_only.p_exceed = limits_.p_exceed;
        auto t = stored ? evaluate_gates(cat, *stored, tail_only)
                        : evaluate_gates(rec, tail_only); // not reached: the run is stored
        auto at = outcome_->lines.begin();
        while (at != outcome_->lines.end() && at->key != "lost" && at->key != "overflows")
            ++at;
        outcome_->lines.insert(at, t.lines.begin(), t.lines.end());
    }
    // The verdicts for the metrics file's last write: each limit, then the run as a whole,
    // which also fails when the run cannot pass (as the CI formats and check say).
    for (const auto& l : outcome_->lines)
        out.gates.emplace_back(l.key, l.pass);
    out.gates.emplace_back("all", outcome_->pass() && run_unfinished_reason(rec).empty());
    if (session_->store)
        session_->store->set_run_metadata(out.run_id, gate_metadata(*outcome_));
}

std::string run_unfinished_reason(const db::run_record& run)
{
    const std::string after = " after " + std::to_string(run.summary.stimuli) + " stimuli";
    switch (run.status) {
    case db::run_status::interrupted:
        return "was interrupted" + after + ": it did not reach its bound";
    case db::run_status::failed:
        return "failed" + after + " (a runtime failure)";
    case db::run_status::running:
        return "is still 'running'" + after + ": not ended, or its logger died";
    case db::run_status::complete:
        break;
    }
    if (!run.has_stats)
        return "has no sample in the statistics (" + std::to_string(run.summary.stimuli) +
               " stimuli, " + std::to_string(run.summary.lost) + " lost, " +
               std::to_string(run.summary.disturbed) + " disturbed)";
    return {};
}

int run_unfinished_status(const db::run_record& run)
{
    if (run.status != db::run_status::complete)
        return exit_failure;
    return run.has_stats ? exit_ok : exit_no_answer;
}

std::string gate_value_text(const gate_line& l)
{
    if (!l.has_value)
        return "n/a";
    if (l.probability)
        return gate_prob_text(l.value);
    return l.latency ? us3(l.value) : std::to_string(std::uint64_t(l.value));
}

std::string gate_limit_text(const gate_line& l)
{
    if (l.probability)
        return gate_prob_text(l.limit);
    return l.latency ? us3(l.limit) : std::to_string(std::uint64_t(l.limit));
}

std::string format_gate_lines(const gate_outcome& g)
{
    std::string out;
    for (const auto& l : g.lines) {
        const char* unit = l.latency ? " us" : "   ";
        const char* verdict = l.refused ? "NOT CLAIMED" : l.pass ? "PASS" : "FAIL";
        char b[256];
        std::snprintf(b, sizeof b, "  gate %-10s %12s%s  limit %12s%s  %s", l.name.c_str(),
                      gate_value_text(l).c_str(), l.has_value ? unit : "   ",
                      gate_limit_text(l).c_str(), unit, verdict);
        out += b;
        if (!l.note.empty())
            out += "  (" + l.note + ")";
        out += '\n';
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> gate_metadata(const gate_outcome& g)
{
    std::vector<std::pair<std::string, std::string>> md;
    md.emplace_back("gate.result", g.pass() ? "pass" : "fail");
    for (const auto& l : g.lines)
        md.emplace_back("gate." + l.key, gate_value_text(l) + " " + gate_limit_text(l) + " " +
                                             (l.pass ? "pass" : "fail") +
                                             (l.note.empty() ? "" : " " + l.note));
    return md;
}

std::optional<gate_outcome> stored_gates(const db::run_record& run)
{
    bool has = false;
    gate_outcome g;
    for (const auto& [k, v] : run.meta.metadata) {
        if (k == "gate.result") {
            has = true;
            continue;
        }
        if (k.rfind("gate.", 0) != 0)
            continue;
        gate_line l;
        l.key = k.substr(5);
        const bool latency = l.key.size() > 3 && l.key.compare(l.key.size() - 3, 3, "_us") == 0;
        l.name = latency ? l.key.substr(0, l.key.size() - 3) : l.key;
        l.latency = latency;
        if (l.key.rfind("p_exceed_", 0) == 0) {
            l.probability = true;
            l.name = "P(>" + l.key.substr(9) + ")";
        }
        std::istringstream in(v);
        std::string value, limit, result;
        if (!(in >> value >> limit >> result))
            continue; // not ours: a key of another shape is left alone
        const double scale = latency ? 1000.0 : 1.0;
        try {
            l.has_value = value != "n/a";
            l.value = l.has_value ? std::stod(value) * scale : 0;
            l.limit = std::stod(limit) * scale;
        } catch (const std::exception&) {
            continue;
        }
        l.pass = result == "pass";
        std::getline(in >> std::ws, l.note);
        l.refused = l.probability && l.note.rfind("not claimed", 0) == 0;
        g.lines.push_back(std::move(l));
    }
    if (!has)
        return std::nullopt;
    // The order a reader expects: max, percentiles by p, lost, overflows.
    auto order = [](const gate_line& l) {
        if (l.name == "max")
            return 0.0;
        if (l.name == "lost")
            return 1000.0;
        if (l.name == "overflows")
            return 1001.0;
        if (l.probability)
            return 500.0;
        return 1.0 + (l.name.size() > 1 ? std::atof(l.name.c_str() + 1) : 0.0);
    };
    std::stable_sort(g.lines.begin(), g.lines.end(),
                     [&](const gate_line& a, const gate_line& b) { return order(a) < order(b); });
    return g;
}

void store_gate_outcome(const std::string& db_path, std::int64_t run_id, const gate_outcome& g)
{
    db::store st(db_path);
    const auto md = gate_metadata(g);
    st.set_run_metadata(run_id, md);
}

void add_gate_limit_options(boost::program_options::options_description& desc, gate_limit_args& t)
{
    namespace po = boost::program_options;
    auto add = desc.add_options();
    add("max", po::value(&t.max),
        "fail when the max (the upper bound of the highest-ranking sample) is above this, e.g. "
        "100us; a lost answer fails it at any limit");
    add("p", po::value(&t.p)->composing(),
        "fail when a percentile is above a limit: P=LIMIT, e.g. 99.99=50us; repeatable");
    add("p-exceed", po::value(&t.p_exceed)->composing(),
        "fail when the upper end of the 95 % interval of P(latency > X) per sample, from the "
        "tail fit (irqloop tail), is above P: X=P, e.g. 100us=1e-9; repeatable. When the "
        "fit's checks do not allow the claim it is 'not claimed': check exits 2, junit and "
        "lava report it failed");
    add("lost", po::value(&t.lost), "fail when more stimuli than this were lost (e.g. 0)");
    add("overflows", po::value(&t.overflows),
        "fail when the sample ring overflowed more often than this (e.g. 0)");
}

gate_limits parse_gate_limits(const gate_limit_args& t, const std::string& where)
{
    const std::string pre = where.empty() ? "--" : where;
    gate_limits lim;
    if (!t.max.empty())
        lim.max_ns = parse_gate_duration(t.max, pre + "max");
    for (const auto& p : t.p)
        lim.percentiles.push_back(parse_percentile_limit(p, pre + "p"));
    for (const auto& p : t.p_exceed)
        lim.p_exceed.push_back(parse_p_exceed_limit(p, pre + "p-exceed"));
    if (!t.lost.empty())
        lim.lost = parse_count(t.lost, pre + "lost");
    if (!t.overflows.empty())
        lim.overflows = parse_count(t.overflows, pre + "overflows");
    return lim;
}

std::pair<double, std::int64_t> parse_percentile_limit(const std::string& text,
                                                       const std::string& what)
{
    const auto eq = text.find('=');
    if (eq == std::string::npos)
        throw error("bad value for " + what, "'" + text + "' is not P=LIMIT", "e.g. 99.99=50us");
    std::string ptext = text.substr(0, eq);
    if (!ptext.empty() && (ptext[0] == 'p' || ptext[0] == 'P'))
        ptext.erase(0, 1);
    const double p = parse_number(ptext, what);
    if (!(p > 0 && p < 100))
        throw error("bad value for " + what, "percentile '" + ptext + "' is outside (0, 100)",
                    "e.g. 99.99=50us; for the largest value use --max");
    return {p, parse_gate_duration(text.substr(eq + 1), what)};
}

std::pair<std::int64_t, double> parse_p_exceed_limit(const std::string& text,
                                                     const std::string& what)
{
    const auto eq = text.find('=');
    if (eq == std::string::npos)
        throw error("bad value for " + what, "'" + text + "' is not X=P", "e.g. 100us=1e-9");
    const std::string xtext = text.substr(0, eq), ptext = text.substr(eq + 1);
    const std::int64_t x = parse_gate_duration(xtext, what);
    if (x <= 0)
        throw error("bad value for " + what, "latency '" + xtext + "' is not above 0",
                    "e.g. 100us=1e-9");
    const double p = parse_number(ptext, what);
    if (!(p > 0 && p < 1))
        throw error("bad value for " + what, "probability '" + ptext + "' is outside (0, 1)",
                    "a probability per sample, e.g. 100us=1e-9");
    return {x, p};
}

std::string percentile_name(double p)
{
    char b[40];
    for (int decimals = 0; decimals <= 12; ++decimals) {
        std::snprintf(b, sizeof b, "%.*f", decimals, p);
        if (std::strtod(b, nullptr) == p)
            break;
    }
    return std::string("p") + b;
}

} // namespace irqloop::logger
