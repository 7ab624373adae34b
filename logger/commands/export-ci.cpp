// SPDX-License-Identifier: MIT
#include "export-ci.hpp"

#include "error.hpp"
#include "percentiles.hpp"
#include "table.hpp"
#include "version.hpp"

#if IRQLOOP_HAVE_PUGIXML
#include <pugixml.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

namespace irqloop::logger
{

namespace
{

// Microseconds with 3 decimals, as every table prints them.
std::string us3(double ns)
{
    return format_latency(ns, latency_unit::us, 3);
}

std::string run_name(const db::run_record& r)
{
    return r.meta.label.empty() ? "run " + std::to_string(r.id)
                                : r.meta.label + " (run " + std::to_string(r.id) + ")";
}

// ISO 8601 without a zone, as JUnit's schema has it (UTC).
std::string iso_utc(std::int64_t unix_ns)
{
    return format_utc_as(unix_ns, "%Y-%m-%dT%H:%M:%S");
}

// A LAVA test name: [-_.A-Za-z0-9] only (LAVA's own rule for test names).
std::string lava_id(std::string_view s)
{
    std::string o;
    for (unsigned char c : s)
        o += std::isalnum(c) || c == '-' || c == '_' || c == '.' ? char(c) : '_';
    return o.empty() ? "_" : o;
}

// A probability as LAVA's decimal grammar takes it (no exponent): 4 significant digits.
std::string ci_lava_probability(double p)
{
    const int digits = p > 0 ? std::clamp(3 - int(std::floor(std::log10(p))), 0, 40) : 0;
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, p);
    return b;
}

std::string line_text(const gate_line& l)
{
    const std::string unit = l.latency ? " us" : "";
    return l.name + " " + gate_value_text(l) + (l.has_value ? unit : "") + ", limit " +
           gate_limit_text(l) + unit;
}

} // namespace

std::string xml_safe_text(std::string_view s)
{
    static const char replacement[] = "\xEF\xBF\xBD"; // U+FFFD
    std::string o;
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80           ? 1
                        : (c >> 5) == 0x6  ? 2
                        : (c >> 4) == 0xE  ? 3
                        : (c >> 3) == 0x1E ? 4
                                           : 0;
        std::uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
        bool ok = n != 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            ok = (cc & 0xC0) == 0x80;
            cp = (cp << 6) | (cc & 0x3F);
        }
        // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8; XML 1.0 also
        // forbids C0 controls but tab, newline and carriage return, and U+FFFE/U+FFFF.
        if (ok)
            ok = !(n == 2 && cp < 0x80) && !(n == 3 && cp < 0x800) && !(n == 4 && cp < 0x10000) &&
                 !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF &&
                 !(cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') && cp != 0xFFFE &&
                 cp != 0xFFFF;
        if (ok) {
            o.append(s.substr(i, n));
            i += n;
        } else {
            o += replacement;
            i += 1;
        }
    }
    return o;
}

std::vector<gated_run> gate_runs(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                                 const gate_limits& limits, bool need_gates)
{
    std::vector<gated_run> out;
    for (const auto* r : runs) {
        gated_run g{r, {}, run_unfinished_reason(*r)};
        if (!limits.empty()) {
            g.gates = evaluate_gates(cat, *r, limits);
        } else if (auto stored = stored_gates(*r)) {
            g.gates = std::move(*stored);
        } else if (need_gates && g.unfinished.empty()) {
            throw error("export: " + message_text(run_name(*r)),
                        "no gates: it was not run with --fail-* and "
                        "no limits were given",
                        "give export the limits (--max 100us, --p 99.99=50us, --lost 0, "
                        "--overflows 0), or select gated runs");
        }
        out.push_back(std::move(g));
    }
    return out;
}

#if IRQLOOP_HAVE_PUGIXML
namespace
{

/** @brief A run's figures and identity, as the <properties> of its <testsuite>. */
void add_properties(pugi::xml_node suite, const db::run_record& r)
{
    const auto& s = r.summary;
    auto props = suite.append_child("properties");
    auto prop = [&](const std::string& name, const std::string& value) {
        auto p = props.append_child("property");
        p.append_attribute("name") = name.c_str();
        p.append_attribute("value") = xml_safe_text(value).c_str();
    };
    prop("uuid", r.meta.uuid);
    prop("label", r.meta.label);
    prop("status", std::string(db::to_text(r.status)));
    prop("backend", r.meta.backend);
    prop("target", r.meta.target);
    prop("load", r.meta.load);
    prop("file", r.db_path);
    prop("samples", std::to_string(s.samples));
    prop("lost", std::to_string(s.lost));
    prop("disturbed", std::to_string(s.disturbed));
    // The max never below what the lost answers prove (at least the timeout each), as the gate
    // compares it; then the largest answered one beside it.
    const auto max = r.max_at_least_ns();
    if (max && !r.has_stats)
        prop("max_us", us3(double(*max)));
    if (r.has_stats) {
        prop("min_us", us3(double(s.min_ns)));
        prop("avg_us", us3(s.mean_ns));
        prop("max_us", us3(double(*max)));
        if (s.lost > 0)
            prop("max_answered_us", us3(double(s.max_ns)));
        for (const double rank : {99.0, 99.99}) {
            const auto* p = db::find_stored_percentile(rank);
            prop(std::string(p->label) + "_us", us3(double(s.*p->field)));
        }
    }
    prop("generator", std::string("irqloop ") + version);
}

/** @brief One <testcase> per limit of @p g; a failed one has a <failure> with its figures. */
void add_testcases(pugi::xml_node suite, const gated_run& g)
{
    const auto& r = *g.run;
    const std::string cls =
        "irqloop." + (r.meta.label.empty() ? "run" + std::to_string(r.id) : r.meta.label);
    const std::string about = "run " + std::to_string(r.id) + " " + r.meta.uuid + ", " +
                              std::string(db::to_text(r.status)) + ", " +
                              std::to_string(r.summary.samples) + " samples, " + r.db_path;
    if (!g.unfinished.empty()) {
        // Not a limit: the run itself cannot pass (interrupted, failed, no samples).
        auto tc = suite.append_child("testcase");
        tc.append_attribute("classname") = xml_safe_text(cls).c_str();
        tc.append_attribute("name") = "complete";
        tc.append_attribute("time") = "0";
        auto f = tc.append_child("failure");
        f.append_attribute("type") = "run";
        f.append_attribute("message") = ("the run " + g.unfinished).c_str();
        f.text() = xml_safe_text("the run " + g.unfinished + "\n" + about).c_str();
    }
    for (const auto& l : g.gates.lines) {
        auto tc = suite.append_child("testcase");
        tc.append_attribute("classname") = xml_safe_text(cls).c_str();
        tc.append_attribute("name") = l.name.c_str();
        tc.append_attribute("time") = "0";
        if (l.pass)
            continue;
        auto f = tc.append_child("failure");
        f.append_attribute("type") = l.refused ? "not-claimed" : "limit";
        f.append_attribute("message") =
            (l.refused
                 ? l.name + " " + l.note
                 : l.name + " " + gate_value_text(l) + (l.latency && l.has_value ? " us" : "") +
                       // A value at or under its limit fails when it is only a lower bound
                       // (answers lost) or absent: then it is not shown within the limit.
                       (l.has_value && l.value > l.limit ? " is above the limit "
                                                         : " is not shown within the limit ") +
                       gate_limit_text(l) + (l.latency ? " us" : ""))
                .c_str();
        std::string body =
            line_text(l) + (l.note.empty() ? "" : " (" + l.note + ")") + "\n" + about;
        f.text() = xml_safe_text(body).c_str();
    }
}

} // namespace
#endif

void write_junit(const std::vector<gated_run>& runs, std::ostream& out)
{
#if !IRQLOOP_HAVE_PUGIXML
    (void)runs;
    (void)out;
    throw error("export --format junit", "this irqloop was built without pugixml",
                "install libpugixml-dev and build again", exit_failure);
#else
    pugi::xml_document doc;
    auto decl = doc.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    decl.append_attribute("encoding") = "UTF-8";
    auto suites = doc.append_child("testsuites");
    suites.append_attribute("name") = "irqloop";
    std::size_t tests = 0, failures = 0;
    double total_s = 0;
    for (const auto& g : runs) {
        const auto& r = *g.run;
        const std::size_t extra = g.unfinished.empty() ? 0 : 1; // the "complete" testcase
        auto suite = suites.append_child("testsuite");
        const double secs =
            r.end_unix_ns ? double(*r.end_unix_ns - r.meta.start_unix_ns) / 1e9 : 0.0;
        suite.append_attribute("name") = xml_safe_text(run_name(r)).c_str();
        suite.append_attribute("tests") =
            static_cast<unsigned long long>(g.gates.lines.size() + extra);
        suite.append_attribute("failures") =
            static_cast<unsigned long long>(g.gates.failed() + extra);
        suite.append_attribute("errors") = 0;
        suite.append_attribute("skipped") = 0;
        suite.append_attribute("time") = std::to_string(secs).c_str();
        suite.append_attribute("timestamp") = iso_utc(r.meta.start_unix_ns).c_str();
        suite.append_attribute("hostname") = xml_safe_text(r.meta.hostname).c_str();
        add_properties(suite, r);
        add_testcases(suite, g);
        tests += g.gates.lines.size() + extra;
        failures += g.gates.failed() + extra;
        total_s += secs;
    }
    suites.append_attribute("tests") = static_cast<unsigned long long>(tests);
    suites.append_attribute("failures") = static_cast<unsigned long long>(failures);
    suites.append_attribute("errors") = 0;
    suites.append_attribute("time") = std::to_string(total_s).c_str();
    doc.save(out, "  ", pugi::format_indent, pugi::encoding_utf8);
#endif
}

void write_lava(const std::vector<gated_run>& runs, std::ostream& out)
{
    for (const auto& g : runs) {
        const auto& r = *g.run;
        const auto& s = r.summary;
        const std::string prefix =
            lava_id(r.meta.label.empty() ? "run" + std::to_string(r.id)
                                         : r.meta.label + ".run" + std::to_string(r.id)) +
            ".";
        auto line = [&](const std::string& id, const char* result, const std::string& value,
                        const char* units) {
            out << "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=" << prefix << lava_id(id)
                << " RESULT=" << result;
            if (!value.empty())
                out << " MEASUREMENT=" << value << " UNITS=" << units;
            out << ">\n";
        };
        // Figures: measured, so pass; a run without samples has none to give (skip).
        auto figure = [&](const std::string& id, double v) {
            if (r.has_stats)
                line(id, "pass", us3(v), "us");
            else
                line(id, "skip", "", "");
        };
        figure("min_us", double(s.min_ns));
        figure("avg_us", s.mean_ns);
        // The max never below what the lost answers prove (at least the timeout each), as the
        // gate compares it; then the largest answered one beside it.
        if (const auto max = r.max_at_least_ns())
            line("max_us", "pass", us3(double(*max)), "us");
        else
            line("max_us", "skip", "", "");
        if (s.lost > 0)
            figure("max_answered_us", double(s.max_ns));
        for (const auto& p : db::stored_percentiles)
            figure(std::string(p.label) + "_us", double(s.*p.field));
        const std::pair<const char*, std::uint64_t> counts[] = {{"samples", s.samples},
                                                                {"lost", s.lost},
                                                                {"disturbed", s.disturbed},
                                                                {"overflows", s.overflows}};
        for (const auto& [id, v] : counts)
            line(id, "pass", std::to_string(v), "count");
        // A run that cannot pass (interrupted, failed, no samples) fails whatever its gates.
        if (!g.unfinished.empty())
            line("complete", "fail", "", "");
        // Limits: the measurement is the value, the result the gate's.
        for (const auto& l : g.gates.lines)
            line("gate." + l.key, l.pass ? "pass" : "fail",
                 !l.has_value    ? ""
                 : l.probability ? ci_lava_probability(l.value)
                                 : gate_value_text(l),
                 l.latency       ? "us"
                 : l.probability ? "probability"
                                 : "count");
        if (!g.gates.lines.empty() || !g.unfinished.empty())
            line("gate", g.pass() ? "pass" : "fail", "", "");
    }
}

} // namespace irqloop::logger
