// SPDX-License-Identifier: MIT
// irqloop export --format vcd: the chosen samples of a run as waveforms (issue 29).
#include "export-vcd.hpp"

#include "error.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

// A whole decimal number in [lo, hi], or refused naming @p option.
std::int64_t vcd_number(const std::string& text, const char* option, std::int64_t lo,
                        std::int64_t hi, const char* hint)
{
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || errno != 0 || *end != '\0' || !std::isdigit((unsigned char)text[0]) ||
        v < lo || v > hi)
        throw error(std::string("bad ") + option,
                    "'" + text + "' is not a whole number from " + std::to_string(lo) + " to " +
                        std::to_string(hi),
                    hint);
    return v;
}

// The run's --trigger-above, from its metadata "logger.trigger" ("LINE above N ns"); -1: none.
std::int64_t vcd_trigger_above(const db::run_row& meta)
{
    for (const auto& [k, v] : meta.metadata) {
        if (k != "logger.trigger")
            continue;
        const auto at = v.rfind(" above ");
        if (at == std::string::npos)
            return -1;
        return std::strtoll(v.c_str() + at + 7, nullptr, 10);
    }
    return -1;
}

// Whether @p a ranks above @p b in a worst list: by rank_ns, then the earlier seq.
bool vcd_ranks_above(const db::sample_row& a, const db::sample_row& b)
{
    const auto ra = db::rank_ns(a), rb = db::rank_ns(b);
    return ra != rb ? ra > rb : a.seq < b.seq;
}

// One drawn channel: its current level and its changes, in ns from the origin.
struct vcd_line final {
    analysis::capture_channel& ch;
    std::int64_t origin_ns;
    int level;

    void set(std::int64_t unix_ns, int to)
    {
        if (to == level)
            return;
        ch.changes.emplace_back((unix_ns - origin_ns) * 1000, to);
        level = to;
    }
};

} // namespace

void add_export_vcd_options(po::options_description& desc, export_vcd_args& a)
{
    po::options_description vcd("samples of --format vcd (one run: --run N)");
    auto add = vcd.add_options();
    add("seq", po::value(&a.seq)->composing(), "vcd: draw the sample with this seq (repeatable)");
    add("worst", po::value(&a.worst),
        "vcd: draw the K samples that rank highest, as irqloop worst ranks them (1..1000)");
    add("around", po::value(&a.around),
        "vcd: stimuli drawn on each side of each chosen sample (default 2)");
    desc.add(vcd);
}

export_vcd_choice check_export_vcd(const export_vcd_args& a, bool vcd)
{
    export_vcd_choice c;
    if (!vcd) {
        if (!a.seq.empty() || !a.worst.empty() || !a.around.empty())
            throw error("bad --format", "--seq, --worst and --around choose samples to draw",
                        "use them with --format vcd");
        return c;
    }
    if (a.seq.empty() == a.worst.empty())
        throw error("bad --format vcd",
                    a.seq.empty() ? "no sample chosen" : "--seq and --worst both given",
                    "give --seq S (repeatable) or --worst K");
    for (const auto& s : a.seq)
        c.seqs.push_back(std::uint64_t(
            vcd_number(s, "--seq", 0, INT64_MAX, "a sample's seq, as irqloop worst lists it")));
    std::sort(c.seqs.begin(), c.seqs.end());
    c.seqs.erase(std::unique(c.seqs.begin(), c.seqs.end()), c.seqs.end());
    if (!a.worst.empty())
        c.worst = vcd_number(a.worst, "--worst", 1, 1000, "e.g. --worst 3");
    if (!a.around.empty())
        c.around = vcd_number(a.around, "--around", 0, 100, "e.g. --around 2");
    return c;
}

vcd_waveform draw_vcd_waveform(const std::vector<db::sample_row>& rows,
                               const std::vector<std::uint64_t>& chosen, std::int64_t around,
                               const vcd_drawing_settings& settings)
{
    vcd_waveform w;
    w.chosen = chosen;
    w.wave.samplerate_hz = 1e9;
    w.wave.channels = {{"STIM", 0, {}}, {"RESP", 0, {}}, {"TRIG", 0, {}}, {"BRACKET", 0, {}}};
    if (rows.empty() || chosen.empty())
        return w;
    auto sorted = chosen;
    std::sort(sorted.begin(), sorted.end());
    // Windows of seqs [lo, hi], merged where they touch.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
    for (const auto c : sorted) {
        const std::uint64_t lo = c > std::uint64_t(around) ? c - std::uint64_t(around) : 0;
        const std::uint64_t hi = c + std::uint64_t(around);
        if (!windows.empty() && lo <= windows.back().second + 1)
            windows.back().second = std::max(windows.back().second, hi);
        else
            windows.emplace_back(lo, hi);
    }
    auto rising = [](const db::sample_row& r) { return (r.flags & db::flag_rising) != 0; };
    const std::int64_t pad = settings.pad_ns;
    auto first_of = [&](std::uint64_t lo) {
        return std::size_t(
            std::lower_bound(rows.begin(), rows.end(), lo,
                             [](const db::sample_row& r, std::uint64_t s) { return r.seq < s; }) -
            rows.begin());
    };
    std::size_t a0 = first_of(windows.front().first);
    if (a0 >= rows.size())
        return w;
    w.origin_unix_ns = rows[a0].unix_ns - pad;
    const int start = rising(rows[a0]) ? 0 : 1;
    for (auto& ch : w.wave.channels)
        ch.initial = 0;
    w.wave.channels[0].initial = w.wave.channels[1].initial = start;
    vcd_line stim{w.wave.channels[0], w.origin_unix_ns, start};
    vcd_line resp{w.wave.channels[1], w.origin_unix_ns, start};
    vcd_line trig{w.wave.channels[2], w.origin_unix_ns, 0};
    vcd_line bracket{w.wave.channels[3], w.origin_unix_ns, 0};
    std::int64_t last = w.origin_unix_ns; // the latest change drawn
    std::size_t drawn_to = 0;             // rows before this index are drawn
    for (const auto& [lo, hi] : windows) {
        std::size_t a = first_of(lo);
        std::size_t b = a;
        while (b < rows.size() && rows[b].seq <= hi)
            ++b;
        if (a == b)
            continue;
        // A window whose first edge would not change STIM starts one stored stimulus earlier
        // when that one would: a real edge rather than a drawn one.
        if (a > drawn_to && stim.level == (rising(rows[a]) ? 1 : 0) &&
            rows[a - 1].seq + 1 == rows[a].seq && rising(rows[a - 1]) != rising(rows[a]))
            --a;
        for (std::size_t i = a; i < b; ++i) {
            const auto& r = rows[i];
            const std::int64_t t = r.unix_ns;
            const int before = rising(r) ? 0 : 1;
            if (stim.level != before || resp.level != before) {
                const std::int64_t f = t - std::min(pad, std::max<std::int64_t>(2, t - last) / 2);
                if (stim.level != before) {
                    stim.set(f, before);
                    ++w.unmeasured;
                    resp.set(f + 1, before); // after: the drawn STIM edge's, not a stimulus's
                } else {
                    resp.set(f, before);
                }
            }
            stim.set(t, 1 - before);
            last = t;
            ++w.drawn;
            if (r.flags & db::flag_lost)
                continue;
            const std::int64_t up = t + r.latency_ns;
            if (r.bracket_ns > 0) {
                bracket.set(up - r.bracket_ns, 1);
                bracket.set(up, 0);
            }
            resp.set(up, 1 - before);
            last = up;
            if (settings.trigger_above_ns >= 0 &&
                r.latency_ns - r.bracket_ns > settings.trigger_above_ns) {
                const std::int64_t next = i + 1 < b ? rows[i + 1].unix_ns : up + 2 * pad;
                trig.set(up, 1);
                trig.set(up + std::max<std::int64_t>(1, (next - up) / 2), 0);
                last = up + std::max<std::int64_t>(1, (next - up) / 2);
            }
        }
        drawn_to = b;
    }
    w.wave.end_ps = (last + pad - w.origin_unix_ns) * 1000;
    return w;
}

vcd_waveform prepare_vcd_export(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                                const export_vcd_choice& choice)
{
    if (runs.size() != 1)
        throw error("export --format vcd", std::to_string(runs.size()) + " runs selected",
                    "name one run: --run N");
    const auto& run = *runs[0];
    const std::string what =
        "export --format vcd: run " + std::to_string(run.id) + " in '" + run.db_path + "'";
    std::uint64_t n = 0, first_seq = 0, last_seq = 0;
    bool untimed = false;
    std::vector<db::sample_row> top; // a heap: the lowest-ranked of the K on top
    std::vector<std::uint64_t> found;
    const auto heap_order = [](const db::sample_row& a, const db::sample_row& b) {
        return vcd_ranks_above(a, b);
    };
    cat.for_each_raw(run, [&](const db::sample_row& s) {
        if (n++ == 0)
            first_seq = s.seq;
        last_seq = s.seq;
        untimed = untimed || s.unix_ns == 0;
        if (std::binary_search(choice.seqs.begin(), choice.seqs.end(), s.seq))
            found.push_back(s.seq);
        if (choice.worst <= 0 || (s.flags & db::flag_lost))
            return;
        top.push_back(s);
        std::push_heap(top.begin(), top.end(), heap_order);
        if (top.size() > std::size_t(choice.worst)) {
            std::pop_heap(top.begin(), top.end(), heap_order);
            top.pop_back();
        }
    });
    if (n == 0)
        throw error(what, "it has no raw samples, whose times the drawing needs",
                    "draw a run recorded with 'irqloop run --raw'");
    if (untimed)
        throw error(what,
                    "its raw samples have no stimulus times (recorded before schema version 7)",
                    "record the run with 'irqloop run --raw' of this version");
    std::vector<std::uint64_t> chosen;
    if (choice.worst > 0) {
        if (top.size() < std::size_t(choice.worst))
            throw error(what,
                        "it has " + std::to_string(top.size()) +
                            " answered samples; --worst asks for " + std::to_string(choice.worst),
                        "ask for fewer");
        std::sort(top.begin(), top.end(), vcd_ranks_above);
        for (const auto& s : top)
            chosen.push_back(s.seq);
    } else {
        for (const auto s : choice.seqs)
            if (!std::binary_search(found.begin(), found.end(), s))
                throw error(what, "it has no raw sample seq " + std::to_string(s),
                            "its raw samples run from seq " + std::to_string(first_seq) + " to " +
                                std::to_string(last_seq));
        chosen = choice.seqs;
    }
    // The windows' rows, and the one before each (a window may start one earlier).
    auto sorted = chosen;
    std::sort(sorted.begin(), sorted.end());
    const auto around = std::uint64_t(choice.around);
    std::vector<db::sample_row> rows;
    cat.for_each_raw(run, [&](const db::sample_row& s) {
        const std::uint64_t from = s.seq > around ? s.seq - around : 0;
        const auto it = std::lower_bound(sorted.begin(), sorted.end(), from);
        if (it != sorted.end() && *it <= s.seq + around + 1)
            rows.push_back(s);
    });
    vcd_drawing_settings settings;
    settings.trigger_above_ns = vcd_trigger_above(run.meta);
    if (run.meta.interval_ns > 0)
        settings.pad_ns = run.meta.interval_ns / 2;
    auto w = draw_vcd_waveform(rows, chosen, choice.around, settings);
    std::ostringstream about;
    about << "irqloop export --format vcd of run " << run.id << " (" << run.meta.uuid << ") in '"
          << run.db_path << "'\n  time 0 is the logger's Unix time " << w.origin_unix_ns
          << " ns; samples ";
    for (std::size_t k = 0; k < chosen.size(); ++k)
        about << (k ? ", " : "") << "seq " << chosen[k];
    about << (choice.worst > 0 ? " (the worst, worst first)" : "") << ", " << w.drawn
          << " stimuli drawn (" << choice.around << " each side), " << w.unmeasured
          << " STIM changes without a stored time\n"
          << "  STIM: the stimulus edges; RESP: each answer where the logger saw it (the "
             "bracket's upper bound);\n  BRACKET: high over each sample's bracket; TRIG: "
          << (settings.trigger_above_ns >= 0 ? "the trigger line, raised for a lower bound above " +
                                                   std::to_string(settings.trigger_above_ns) + " ns"
                                             : std::string("low (the run had no --trigger-line)"))
          << '\n';
    w.about = about.str();
    return w;
}

void write_vcd_export(const vcd_waveform& w, std::ostream& out)
{
    std::ostringstream vcd;
    analysis::write_vcd(vcd, w.wave, 1000);
    std::string text = vcd.str();
    const auto first = text.find('\n') + 1; // after "$version ... $end"
    std::string comment = "$comment\n  ";
    for (const char c : w.about) // stored text: never a "$end" of its own
        comment += c == '$' ? '_' : c;
    comment += "$end\n";
    text.insert(first, comment);
    out << text;
}

} // namespace irqloop::logger
