// SPDX-License-Identifier: MIT
// irqloop verify: the run's samples against a logic analyzer's capture, sample by sample.
#include "verify-command.hpp"

#include "capture-align.hpp"
#include "error.hpp"
#include "store.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

constexpr command_help verify_help = {
    "irqloop verify --db F --run N --capture FILE [--stim D0 --resp D1]",
    "Check one run (recorded with --raw) against a logic analyzer's capture of the same\n"
    "STIM and RESP lines: a sigrok session (.sr, read through sigrok-cli) or a VCD. Each\n"
    "STIM edge of the capture and its RESP answer is matched to the run's stimulus (by\n"
    "order and by the two clocks' fitted offset and drift), then irqloop's latency is held\n"
    "against the analyzer's: the distribution of (irqloop - analyzer), the samples whose\n"
    "bracket does not hold the analyzer's latency (beyond one analyzer sample), and the\n"
    "edges and answers only one side saw. Stored with the run, shown by report.\n"
    "Channels: --stim and --resp, else the capture's channels named STIM and RESP.\n"
    "Exit status: 0 when compared (whatever the figures), 2 for bad input (no such run or\n"
    "channel, a damaged capture, nothing aligns): the file is then left as it was.\n"
    "Docs: docs/commands/verify.md"};

std::string upper(std::string s)
{
    for (auto& c : s)
        c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

const analysis::capture_channel& channel(const analysis::capture& c, const std::string& given,
                                         const char* role, const std::string& path)
{
    std::string names;
    for (const auto& ch : c.channels)
        names += (names.empty() ? "" : ", ") + ch.name;
    if (!given.empty()) {
        if (const auto* ch = c.find(given))
            return *ch;
        throw error("verify: read capture '" + path + "'",
                    "it has no channel '" + given + "' (--" + std::string(role) + ")",
                    names.empty() ? "it has no 1-bit channel" : "its channels: " + names);
    }
    for (const auto& ch : c.channels)
        if (upper(ch.name) == upper(role))
            return ch;
    throw error("verify: read capture '" + path + "'",
                "no --" + std::string(role) + " given and no channel named " + upper(role),
                "name it: --" + std::string(role) +
                    " D0 (its channels: " + (names.empty() ? "none" : names) + ")");
}

std::string verify_ns_text(std::int64_t ns)
{
    char b[48];
    std::snprintf(b, sizeof b, "%lld ns", static_cast<long long>(ns));
    return b;
}

} // namespace

parsed<verify_request> parse_verify(int argc, char** argv)
{
    verify_request r;
    bool no_store = false;
    po::options_description desc("options");
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("capture", po::value(&r.capture),
        "the analyzer's capture: a sigrok session (.sr) or a VCD (required)");
    add("stim", po::value(&r.stim), "the capture's channel on STIM (default: one named STIM)");
    add("resp", po::value(&r.resp), "the capture's channel on RESP (default: one named RESP)");
    add("no-store", po::bool_switch(&no_store), "compare only; store nothing with the run");
    return parse_reading(
        argc, argv, desc, verify_help, r,
        [&] {
            r.store = !no_store;
            if (r.capture.empty())
                throw error("verify", "no --capture given", "name the analyzer's capture file");
            if (r.sel.dbs.size() > 1)
                throw error("verify", "more than one --db given", "name the run's one file");
            if (r.sel.sel.runs.size() + r.sel.sel.labels.size() == 0 && !r.sel.sel.last)
                throw error("verify", "no run named", "give --run N or --last");
        },
        bare_arguments::refused);
}

verify_outcome execute_verify(const verify_request& r)
{
    verify_outcome o;
    std::vector<analysis::run_stimulus> stimuli;
    std::int64_t run_id = 0, timeout_ns = 0;
    {
        db::catalog cat(r.sel.dbs);
        const auto runs = cat.select(r.sel.sel);
        if (runs.size() != 1)
            throw error("verify", std::to_string(runs.size()) + " runs selected",
                        "name one run: --run N");
        const auto& run = *runs[0];
        run_id = run.id;
        o.db_path = run.db_path;
        timeout_ns = run.meta.timeout_ns;
        bool untimed = false;
        cat.for_each_raw(run, [&](const db::sample_row& s) {
            untimed = untimed || s.unix_ns == 0;
            stimuli.push_back(
                {s.seq, s.unix_ns, s.flags & db::flag_lost ? -1 : s.latency_ns, s.bracket_ns});
        });
        if (stimuli.empty() || untimed)
            throw error("verify: run " + std::to_string(run_id) + " in '" + run.db_path + "'",
                        stimuli.empty() ? "it has no raw samples"
                                        : "its raw samples have no stimulus times (recorded "
                                          "before schema version 7)",
                        "record the run with 'irqloop run --raw' of this version");
    }
    const auto cap = analysis::read_capture(r.capture);
    const auto& stim = channel(cap, r.stim, "stim", r.capture);
    const auto& resp = channel(cap, r.resp, "resp", r.capture);
    if (&stim == &resp)
        throw error("verify", "--stim and --resp name the same channel '" + stim.name + "'",
                    "give the two lines' channels");
    const auto edges = analysis::capture_stimuli(cap, stim, resp);
    o.v.figures =
        analysis::align_capture(stimuli, edges, cap.resolution_ps(), cap.end_ps, timeout_ns);
    o.v.run_id = run_id;
    o.v.capture = r.capture;
    o.v.stim = stim.name;
    o.v.resp = resp.name;
    o.v.samplerate_hz = cap.samplerate_hz;
    o.v.unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    if (r.store) {
        db::store s(o.db_path);
        analysis::store_verification(s, o.v);
        o.stored = true;
    }
    return o;
}

std::string format_verification(const analysis::verification& v)
{
    const auto& f = v.figures;
    std::ostringstream o;
    char b[256];
    o << "verification " << (v.idx ? std::to_string(v.idx) : std::string("(not stored)"))
      << " of run " << v.run_id << ": capture '" << message_text(v.capture) << "', STIM "
      << message_text(v.stim) << ", RESP " << message_text(v.resp) << '\n';
    std::snprintf(
        b, sizeof b,
        "  analyzer: %.6g MHz, resolution %.1f ns; clocks: offset %.0f ns, drift %+.2f ppm\n",
        v.samplerate_hz / 1e6, double(f.resolution_ps) / 1000.0, f.offset_ns, f.drift_ppm);
    o << b;
    o << "  stimuli: " << f.capture_edges << " in the capture, " << f.run_stimuli << " in the run, "
      << f.matched << " matched; only in the capture " << f.capture_only << ", only in the run "
      << f.run_only << " (outside the capture " << f.outside_capture << ")\n";
    o << "  answers: both " << f.both_answered << ", lost by both " << f.both_lost
      << ", lost by irqloop only " << f.lost_only_irqloop << ", missed by the analyzer only "
      << f.lost_only_analyzer << ", after the capture's end " << f.not_compared << '\n';
    if (f.both_answered)
        o << "  irqloop - analyzer: min " << verify_ns_text(f.diff_min_ns) << ", median "
          << verify_ns_text(f.diff_median_ns) << ", p99 " << verify_ns_text(f.diff_p99_ns)
          << ", max " << verify_ns_text(f.diff_max_ns) << '\n';
    o << "  outside their bracket (beyond one analyzer sample): " << f.outside.size() << '\n';
    const std::size_t shown = std::min<std::size_t>(f.outside.size(), 20);
    for (std::size_t k = 0; k < shown; ++k) {
        const auto& s = f.outside[k];
        o << "    seq " << s.seq << ": bracket [" << s.latency_ns - s.bracket_ns << ", "
          << s.latency_ns << "] ns, analyzer " << s.analyzer_ns << " ns\n";
    }
    if (shown < f.outside.size())
        o << "    ... " << f.outside.size() - shown << " more\n";
    return o.str();
}

int present_verify(const verify_outcome& o, const verify_request&)
{
    std::cout << format_verification(o.v);
    if (o.stored)
        std::cout << "stored with run " << o.v.run_id << " in '" << message_text(o.db_path)
                  << "'\n";
    std::cout.flush();
    if (!std::cout)
        throw_from_errno(errno, "verify: write to standard output", {}, exit_failure);
    return 0;
}

int verify_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_verify, execute_verify, present_verify, std::cout);
}

} // namespace irqloop::logger
