// SPDX-License-Identifier: MIT
// irqloop explain: where the worst samples' time went, from the target's own kernel trace.
#include "explain-command.hpp"

#include "breakdown-store.hpp"
#include "error.hpp"
#include "read.hpp"
#include "store.hpp"
#include "trace-dat.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

constexpr command_help explain_help = {
    "irqloop explain --db F --run N --trace FILE [--worst K | --seq S ... | --lost] [--store] "
    "[--json]",
    "Where a run's worst samples spent their time, from the target's own kernel trace:\n"
    "trace-cmd's .dat file (trace-cmd record; told by its magic, not its name), or the text\n"
    "of /sys/kernel/tracing/trace or of 'trace-cmd report -N -t', taken on the target during\n"
    "the run (recorded with --raw), with the events irq:irq_handler_entry/exit,\n"
    "irq:softirq_entry/exit, sched:sched_switch, and preemptirq:irq_disable/enable and\n"
    "nmi:nmi_handler where the kernel has them. The responder's handler entries (its IRQ\n"
    "named by --irq-name) are paired with the run's stimuli by order and by the two clocks'\n"
    "offset and drift, fitted on the lower envelope of their differences (the minimum-delay\n"
    "filter NTP uses), its drift chosen by each sample's bounds (its handler entered between\n"
    "its stimulus and its answer) when they disagree with it, and in pieces when the trace's\n"
    "clock bent; a trace of another run is refused. For each sample: the time before\n"
    "the handler and from the handler to the response (inferred on the logger's clock), the\n"
    "handler's run and what else the CPU did in the window (measured on the target's clock):\n"
    "other IRQs, softirqs, NMIs, IRQs-off sections and the task that ran. A lost sample\n"
    "(--lost, or by --seq) says where its answer was lost: the handler entered after the\n"
    "timeout, wrote its answer after it, or wrote it in time (lost on its way back).\n"
    "Reads only unless --store: then each explained sample's breakdown (its parts, the\n"
    "largest blocker, the events the tracer dropped in its window, the fit's residual and\n"
    "the trace's name, size and hash) is kept with the run, replacing that sample's\n"
    "earlier one; report, worst and export show it.\n"
    "Exit status: 0 explained, 2 for bad input (no such run,\n"
    "no stimulus times, a trace with no responder edges or of another tracer, a truncated\n"
    "line or .dat file, a .dat given to an irqloop built without libtracecmd, a trace that\n"
    "does not align with the run).\n"
    "Docs: docs/commands/explain.md"};

std::string explain_us(std::int64_t ns)
{
    char b[48];
    std::snprintf(b, sizeof b, "%.1f us", double(ns) / 1000.0);
    return b;
}

// The share of @p whole; blank where there is no whole (a lost sample's latency).
std::string explain_pct(std::int64_t part, std::int64_t whole)
{
    if (whole < 0)
        return "       ";
    char b[32];
    std::snprintf(b, sizeof b, "%5.1f %%", whole > 0 ? 100.0 * double(part) / double(whole) : 0.0);
    return b;
}

// Where a lost sample's answer went, as a sentence ("" for an answered one).
std::string lost_text(const analysis::sample_breakdown& s, std::int64_t timeout_ns)
{
    const auto at = [&](std::int64_t ns) { return "+" + explain_us(ns); };
    const std::string tmo = explain_us(timeout_ns);
    switch (analysis::lost_answer(s, timeout_ns)) {
    case analysis::lost_at::before_handler:
        return "the handler entered at " + at(s.before_handler_ns) + ", after the timeout (" + tmo +
               "): the stimulus reached the target's handler late";
    case analysis::lost_at::in_handler:
        return "the handler entered at " + at(s.before_handler_ns) + " and wrote its answer at " +
               at(s.before_handler_ns + *s.handler_to_response_measured_ns) +
               ", after the timeout (" + tmo + "): the answer was written late";
    case analysis::lost_at::after_write:
        return "the handler wrote its answer at " +
               at(s.before_handler_ns + *s.handler_to_response_measured_ns) +
               ", within the timeout (" + tmo +
               "): the answer was held up or lost on its way back (the target's GPIO path, "
               "the wire)";
    case analysis::lost_at::unknown:
        return "the handler entered at " + at(s.before_handler_ns) + ", within the timeout (" +
               tmo + "); the trace has no irqloop_response to say when it answered";
    case analysis::lost_at::not_lost:
        break;
    }
    return "";
}

} // namespace

parsed<explain_request> parse_explain(int argc, char** argv)
{
    explain_request r;
    std::string worst_text = "5";
    std::vector<std::string> seq_texts;
    po::options_description desc("options");
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("trace", po::value(&r.trace),
        "the target's trace taken during the run: trace-cmd's .dat or the trace's text (required)");
    add("worst", po::value(&worst_text)->default_value(worst_text),
        "explain the run's K worst samples, 1 to 1000");
    add("seq", po::value(&seq_texts)->composing(),
        "explain the sample with this sequence number instead (repeatable)");
    add("lost", po::bool_switch(&r.lost),
        "explain the run's lost samples instead (the first 1000), and where each answer was lost");
    add("irq-name", po::value(&r.irq_name)->default_value(r.irq_name),
        "the responder's IRQ as the kernel names it (/proc/interrupts)");
    add("store", po::bool_switch(&r.store),
        "keep the breakdowns with the run (replacing the same samples' earlier ones)");
    add("json", po::bool_switch(&r.json), "print JSON instead of text");
    return parse_reading(
        argc, argv, desc, explain_help, r,
        [&] {
            if (r.trace.empty())
                throw error("explain", "no --trace given",
                            "name the saved text of the target's /sys/kernel/tracing/trace");
            if (r.sel.dbs.size() > 1)
                throw error("explain", "more than one --db given", "name the run's one file");
            if (r.sel.sel.runs.size() + r.sel.sel.labels.size() == 0 && !r.sel.sel.last)
                throw error("explain", "no run named", "give --run N or --last");
            r.worst = parse_count_in(worst_text, "--worst", 1, 1000);
            for (const auto& s : seq_texts)
                r.seqs.push_back(parse_count(s, "--seq"));
            if (r.lost && !r.seqs.empty())
                throw error("explain", "--lost and --seq both given",
                            "name the samples one way: --seq N, or --lost for all lost ones");
        },
        bare_arguments::refused);
}

explain_outcome execute_explain(const explain_request& r)
{
    explain_outcome o;
    std::vector<analysis::run_stimulus> stimuli;
    std::vector<std::uint64_t> wanted = r.seqs;
    std::int64_t interval_ns = 0;
    {
        db::catalog cat(r.sel.dbs);
        const auto runs = cat.select(r.sel.sel);
        if (runs.size() != 1)
            throw error("explain", std::to_string(runs.size()) + " runs selected",
                        "name one run: --run N");
        const auto& run = *runs[0];
        o.db_path = run.db_path;
        o.run_id = run.id;
        o.run_uuid = run.meta.uuid;
        o.run_name = run.name();
        interval_ns = run.meta.interval_ns;
        o.timeout_ns = run.meta.timeout_ns;
        bool untimed = false;
        cat.for_each_raw(run, [&](const db::sample_row& s) {
            untimed = untimed || s.unix_ns == 0;
            stimuli.push_back(
                {s.seq, s.unix_ns, s.flags & db::flag_lost ? -1 : s.latency_ns, s.bracket_ns});
        });
        if (stimuli.empty() || untimed)
            throw error("explain: run " + std::to_string(run.id) + " in '" + run.db_path + "'",
                        stimuli.empty() ? "it has no raw samples"
                                        : "its raw samples have no stimulus times (recorded "
                                          "before schema version 7)",
                        "record the run with 'irqloop run --raw' of this version");
        if (wanted.empty() && !r.lost)
            for (const auto& s : cat.worst(run, r.worst))
                wanted.push_back(s.seq);
    }
    std::sort(stimuli.begin(), stimuli.end(),
              [](const auto& a, const auto& b) { return a.seq < b.seq; });
    for (const auto& s : stimuli)
        if (s.latency_ns < 0 && ++o.lost <= 1000 && r.lost)
            wanted.push_back(s.seq);
    if (r.lost && wanted.empty())
        throw error("explain", "run " + std::to_string(o.run_id) + " has no lost sample (--lost)",
                    "explain its worst with --worst K");
    std::vector<std::size_t> index;
    for (const auto seq : wanted) {
        const auto it = std::lower_bound(stimuli.begin(), stimuli.end(), seq,
                                         [](const auto& s, std::uint64_t q) { return s.seq < q; });
        if (it == stimuli.end() || it->seq != seq)
            throw error("explain",
                        "run " + std::to_string(o.run_id) + " has no sample " +
                            std::to_string(seq) + " (--seq)",
                        "its samples are 0 to " + std::to_string(stimuli.back().seq));
        index.push_back(std::size_t(it - stimuli.begin()));
    }
    const auto trace = analysis::read_trace_file(r.trace); // .dat or text, by its magic
    const auto edges = analysis::responder_edges(trace, r.irq_name);
    if (edges.empty())
        throw error("explain: read trace '" + r.trace + "'",
                    "it has no irq_handler_entry of '" + r.irq_name + "' (" +
                        std::to_string(trace.event_lines) + " event lines)",
                    "enable irq:irq_handler_entry and irq:irq_handler_exit on the target, or "
                    "name its IRQ: --irq-name (see /proc/interrupts)");
    o.stimuli = stimuli.size();
    o.trace_events = trace.event_lines;
    o.lost_events = trace.lost_events;
    o.drops = trace.gaps.size();
    o.drops_uncounted = std::size_t(std::count_if(trace.gaps.begin(), trace.gaps.end(),
                                                  [](const auto& g) { return g.events < 0; }));
    o.edges = edges.size();
    o.threaded = analysis::threaded_handler(trace, edges.front().irq);
    o.alignment = analysis::align_trace(stimuli, edges, interval_ns, o.threaded);
    o.first_seq = stimuli[o.alignment.pairs.front().run_index].seq;
    o.last_seq = stimuli[o.alignment.pairs.back().run_index].seq;
    o.floor = analysis::delay_floor_of(stimuli, edges, o.alignment, o.threaded);
    const analysis::trace_text no_events; // a set-aside sample's window is not searched
    for (const auto i : index) {
        // A sample set aside by the floor: its parts would contradict its own latency.
        const auto c = std::lower_bound(
            o.floor.contradicted.begin(), o.floor.contradicted.end(), i,
            [](const analysis::floor_contradiction& x, std::size_t v) { return x.run_index < v; });
        const bool aside = c != o.floor.contradicted.end() && c->run_index == i;
        o.samples.push_back(analysis::explain_sample(stimuli, edges, o.alignment,
                                                     aside ? no_events : trace, i, o.floor.ns));
        if (aside) {
            o.samples.back().contradicts_ns = c->by_ns;
            o.samples.back().answer_before_entry = c->answer_before_entry;
        }
    }
    for (const auto& c : o.floor.contradicted)
        o.contradicted_seqs.push_back(stimuli[c.run_index].seq);
    for (const auto& p : o.alignment.pieces)
        o.piece_seqs.push_back(stimuli[p.run_index].seq);
    if (r.store) {
        // Everything is checked by now: a refused trace has thrown and the file is untouched.
        const auto id = analysis::identify_trace(r.trace);
        const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        std::vector<analysis::stored_breakdown> rows;
        for (const auto& s : o.samples)
            if (s.in_trace && !s.contradicts_ns)
                rows.push_back(analysis::to_stored(s, id, o.trace_events, o.alignment, now));
        if (!rows.empty()) {
            db::store st(o.db_path);
            analysis::store_breakdowns(st, o.run_id, rows);
        }
        o.stored = rows.size();
    }
    return o;
}

namespace
{

nlohmann::ordered_json blocker_json(const analysis::blocker& b)
{
    return {{"kind", b.kind},
            {"name", b.name},
            {"start_ns", b.start_ns},
            {"duration_ns", b.duration_ns},
            {"in_window_ns", b.in_window_ns},
            {"complete", b.complete},
            {"clock", "target"}};
}

void present_explain_json(const explain_outcome& o, const explain_request& r)
{
    using oj = nlohmann::ordered_json;
    const auto& a = o.alignment;
    oj samples = oj::array();
    for (const auto& s : o.samples) {
        oj j = {{"seq", s.seq}, {"latency_ns", s.latency_ns}, {"in_trace", s.in_trace}};
        if (s.in_trace) {
            // Set aside by the delay floor: not explained (no parts, no blockers).
            j["contradicts_ns"] = s.contradicts_ns ? oj(*s.contradicts_ns) : oj(nullptr);
            if (s.contradicts_ns) {
                j["cpu"] = s.cpu;
                j["contradiction"] = s.answer_before_entry
                                         ? "answer before the handler's entry"
                                         : "answer after the handler's exit, beyond its bracket";
                samples.push_back(j);
                continue;
            }
            j["cpu"] = s.cpu;
            j["parts"] = oj::array({{{"part", "before the handler"},
                                     {"ns", s.before_handler_ns},
                                     {"clock", "logger"},
                                     {"inferred", true}}});
            // A lost sample has no latency to take the part before the handler from.
            if (s.latency_ns >= 0)
                j["parts"].push_back({{"part", "handler to response"},
                                      {"ns", s.handler_to_response_ns},
                                      {"clock", "logger"},
                                      {"inferred", true}});
            if (s.handler_to_response_measured_ns)
                j["parts"].push_back({{"part", "handler to its write"},
                                      {"ns", *s.handler_to_response_measured_ns},
                                      {"clock", "target"},
                                      {"inferred", false}});
            if (s.thread_run_ns)
                j["parts"].push_back({{"part", "thread wake-up to run"},
                                      {"ns", *s.thread_run_ns},
                                      {"clock", "target"},
                                      {"inferred", false}});
            const auto where = analysis::lost_answer(s, o.timeout_ns);
            j["lost_at"] = where == analysis::lost_at::not_lost ? oj(nullptr)
                                                                : oj(analysis::lost_at_name(where));
            j["responder_seq"] = s.responder_seq ? oj(*s.responder_seq) : oj(nullptr);
            j["excess_ns"] = s.excess_ns;
            j["handler_ns"] = s.handler_ns ? oj(*s.handler_ns) : oj(nullptr);
            // The tracer dropped events on its CPU in the window: blockers may be missing.
            j["window_complete"] = !s.dropped.has_value();
            j["dropped_events"] = s.dropped && *s.dropped >= 0 ? oj(*s.dropped) : oj(nullptr);
            oj bl = oj::array(), tk = oj::array();
            for (const auto& b : s.blockers)
                bl.push_back(blocker_json(b));
            for (const auto& b : s.tasks)
                tk.push_back(blocker_json(b));
            j["blockers"] = bl;
            j["tasks"] = tk;
        }
        samples.push_back(j);
    }
    // The envelope's pieces when the trace's clock bent: where each starts, its line.
    oj pieces_json = oj::array();
    for (std::size_t k = 0; k < a.pieces.size(); ++k)
        pieces_json.push_back({{"from_seq", o.piece_seqs[k]},
                               {"offset_ns", double(a.base_ns) + a.pieces[k].offset_ns},
                               {"drift_ppm", a.pieces[k].drift_ppm}});
    oj out = {{"db", o.db_path},
              {"run", o.run_id},
              {"uuid", o.run_uuid},
              {"trace", r.trace},
              {"irq_name", r.irq_name},
              {"trace_events", o.trace_events},
              {"lost_events", o.lost_events},
              {"drops", o.drops},
              {"drops_uncounted", o.drops_uncounted},
              {"edges", o.edges},
              {"threaded", o.threaded},
              {"stimuli", o.stimuli},
              {"lost", o.lost},
              {"timeout_ns", o.timeout_ns},
              {"alignment",
               {{"paired", a.pairs.size()},
                {"first_seq", o.first_seq},
                {"last_seq", o.last_seq},
                {"trace_only", a.trace_only},
                {"run_only", a.run_only},
                {"outside_trace", a.outside},
                {"offset_ns", double(a.base_ns) + a.offset_ns},
                {"drift_ppm", a.drift_ppm},
                {"residual_ns", a.residual_ns},
                {"fit_poor", analysis::fit_is_poor(a)},
                {"pieces", pieces_json},
                {"windows", a.windows},
                {"anchor_spread_ns", a.anchor_spread_ns},
                {"next_spread_ns", a.next_spread_ns},
                {"by_sequence", a.by_sequence},
                {"seq_offset", a.by_sequence ? oj(a.seq_offset) : oj(nullptr)},
                {"seq_edges", a.seq_edges},
                {"seq_agree", a.seq_agree},
                {"seq_corrected", a.seq_corrected},
                {"seq_fallback", a.seq_fallback},
                {"delay_floor_ns", o.floor.ns},
                {"delay_floor_lo_ns", o.floor.lo_ns},
                {"delay_floor_hi_ns", o.floor.hi_ns},
                {"delay_floor_bounding", o.floor.bounding},
                {"contradicted_seqs", o.contradicted_seqs}}},
              {"samples", samples}};
    if (r.store)
        out["stored"] = o.stored; // breakdowns kept with the run
    std::cout << out.dump(2) << '\n';
}

} // namespace

int present_explain(const explain_outcome& o, const explain_request& r)
{
    if (r.json) {
        present_explain_json(o, r);
        return 0;
    }
    const auto& a = o.alignment;
    auto& out = std::cout;
    char line[256];
    out << message_text(o.run_name) << ": run " << o.run_id << " of " << o.db_path << ", uuid "
        << o.run_uuid << ", trace " << r.trace << '\n';
    out << "trace: " << o.trace_events << " events, " << o.edges << " edges of IRQ '" << r.irq_name
        << "'";
    if (o.drops) {
        out << ", ";
        if (o.lost_events)
            out << o.lost_events << ' ';
        out << "events lost by the tracer in " << o.drops << (o.drops == 1 ? " gap" : " gaps");
        if (o.drops_uncounted)
            out << " (" << o.drops_uncounted << " without a count)";
    }
    out << '\n';
    out << "paired: " << a.pairs.size() << " of " << o.stimuli << " stimuli; " << a.trace_only
        << " edges trace-only, " << a.run_only << " stimuli with no edge, " << a.outside
        << " outside the trace (it covers seq " << o.first_seq << " to " << o.last_seq << ")\n";
    if (o.lost)
        out << "lost: " << o.lost << " of " << o.stimuli
            << " stimuli had no answer within the timeout (" << explain_us(o.timeout_ns) << ")"
            << (r.lost ? o.lost > 1000 ? "; the first 1000 are explained" : ""
                       : "; --lost explains them")
            << '\n';
    std::snprintf(line, sizeof line,
                  "clock fit: target - logger = %.6f s %+.3f ppm, residual %.1f us over %zu "
                  "windows (lower envelope)\n",
                  (double(a.base_ns) + a.offset_ns) / 1e9, a.drift_ppm, a.residual_ns / 1000.0,
                  a.windows);
    out << line;
    if (!a.pieces.empty()) {
        out << "clock fit in " << a.pieces.size()
            << " pieces: no one line lets all but 1 % of the answered samples agree on one delay "
               "(the trace's clock bent: a VM or target stalled?); from seq";
        for (std::size_t k = 0; k < a.pieces.size(); ++k) {
            std::snprintf(line, sizeof line, "%s %" PRIu64 " %+.3f ppm", k ? "," : "",
                          o.piece_seqs[k], a.pieces[k].drift_ppm);
            out << line;
        }
        out << '\n';
    }
    if (analysis::fit_is_poor(a))
        out << "warning: the clock fit is poor (a residual above 100 us or a drift beyond 200 "
               "ppm): the trace's times do not follow the logger's (a target or VM stalled "
               "during the run?); each window may be misplaced by about the residual, and the "
               "parts and blockers below are uncertain by as much\n";
    std::snprintf(
        line, sizeof line, "anchor: spread %.1f us, next best %s\n", a.anchor_spread_ns / 1000.0,
        a.next_spread_ns > 0 ? (explain_us(std::int64_t(a.next_spread_ns))).c_str() : "none");
    out << line;
    if (const std::string seqs = analysis::sequence_summary(a); !seqs.empty())
        out << seqs << '\n';
    if (o.threaded) {
        const bool thread_runs = std::any_of(o.samples.begin(), o.samples.end(), [](const auto& s) {
            return s.thread_run_ns.has_value();
        });
        out << "threaded: the IRQ's thread is in the trace; "
            << (thread_runs ? "its wake-up to run is measured from the responder's irqloop_thread "
                              "events\n"
                            : "without the responder's irqloop_thread events (-e irqloop) its "
                              "wake-up and run are not a part of the breakdown\n");
    }
    out << "fastest edge's delay (stimulus to handler entry): " << explain_us(o.floor.ns);
    if (o.floor.crossed)
        out << " (the answered samples' bounds crossed: their upper one)\n";
    else
        out << " (the answered samples bound it to " << explain_us(o.floor.lo_ns) << " .. "
            << explain_us(o.floor.hi_ns) << ")\n";
    if (!o.contradicted_seqs.empty()) {
        out << "set aside: " << o.contradicted_seqs.size() << " of "
            << o.floor.bounding + o.contradicted_seqs.size()
            << " answered paired samples contradict the delay the others allow, and are not "
               "explained (seq";
        for (std::size_t k = 0; k < o.contradicted_seqs.size() && k < 8; ++k)
            out << ' ' << o.contradicted_seqs[k];
        out << (o.contradicted_seqs.size() > 8 ? " ...)\n" : ")\n");
    }
    for (const auto& s : o.samples) {
        out << '\n';
        out << "seq " << s.seq << "  latency "
            << (s.latency_ns < 0 ? std::string("lost") : explain_us(s.latency_ns));
        if (!s.in_trace) {
            out << "  not in the trace: no edge paired with it\n";
            continue;
        }
        out << "  CPU " << s.cpu;
        if (s.responder_seq)
            out << "  responder seq " << *s.responder_seq;
        out << '\n';
        if (s.contradicts_ns) {
            out << "  not explained: its latency contradicts its edge's handler times by "
                << explain_us(*s.contradicts_ns)
                << (s.answer_before_entry
                        ? " (its answer came before the handler's entry: an edge paired "
                          "wrongly, or an answer that was not the handler's)\n"
                        : " (its answer reached the logger after the handler's exit by more than "
                          "its bracket: held up after the handler, in the target's GPIO path or "
                          "on the wire, or an edge paired wrongly)\n");
            continue;
        }
        const std::int64_t whole = s.latency_ns;
        std::snprintf(line, sizeof line, "  %-22s %12s %s  inferred (logger clock, via the fit)\n",
                      "before the handler", explain_us(s.before_handler_ns).c_str(),
                      explain_pct(s.before_handler_ns, whole).c_str());
        out << line;
        if (s.latency_ns >= 0) {
            std::snprintf(line, sizeof line, "  %-22s %12s %s  inferred (latency - before)\n",
                          "handler to response", explain_us(s.handler_to_response_ns).c_str(),
                          explain_pct(s.handler_to_response_ns, whole).c_str());
            out << line;
        }
        if (const auto lost = lost_text(s, o.timeout_ns); !lost.empty())
            out << "  lost: " << lost << '\n';
        if (s.handler_ns) {
            std::snprintf(line, sizeof line, "  %-22s %12s          measured (target clock)\n",
                          "handler ran", explain_us(*s.handler_ns).c_str());
            out << line;
        }
        if (s.handler_to_response_measured_ns) {
            std::snprintf(line, sizeof line,
                          "  %-22s %12s          measured (target clock, to irqloop_response)\n",
                          "handler to its write",
                          explain_us(*s.handler_to_response_measured_ns).c_str());
            out << line;
        }
        if (s.thread_run_ns) {
            std::snprintf(line, sizeof line,
                          "  %-22s %12s          measured (target clock, to irqloop_thread)\n",
                          "thread wake-up to run", explain_us(*s.thread_run_ns).c_str());
            out << line;
        }
        if (s.dropped)
            out << "  in the window: the tracer dropped "
                << (*s.dropped >= 0 ? std::to_string(*s.dropped) + " events" : "events")
                << " on CPU " << s.cpu << ": blockers may be missing or cut\n";
        if (s.blockers.empty()) {
            if (!s.dropped)
                out << "  in the window: no other IRQ, softirq, NMI or IRQs-off section traced\n";
        } else
            out << "  in the window (stimulus to handler entry, CPU " << s.cpu
                << ", measured on the target's clock):\n";
        for (const auto& b : s.blockers) {
            std::snprintf(line, sizeof line, "    %-9s %10s of %10s at %+.1f us  %s%s\n",
                          b.kind.c_str(), explain_us(b.in_window_ns).c_str(),
                          explain_us(b.duration_ns).c_str(), double(b.start_ns) / 1000.0,
                          b.name.c_str(), b.complete ? "" : " (cut by the trace)");
            out << line;
        }
        for (const auto& b : s.tasks) {
            std::snprintf(line, sizeof line, "    %-9s %10s in the window  %s\n", "task",
                          explain_us(b.in_window_ns).c_str(), b.name.c_str());
            out << line;
        }
    }
    if (r.store) {
        const auto absent = std::size_t(std::count_if(o.samples.begin(), o.samples.end(),
                                                      [](const auto& s) { return !s.in_trace; }));
        const std::size_t set_aside = o.samples.size() - o.stored - absent;
        out << "\nstored: " << o.stored << " breakdown" << (o.stored == 1 ? "" : "s")
            << " with run " << o.run_id << " in '" << message_text(o.db_path) << "'";
        if (absent)
            out << " (" << absent << " not in the trace: none stored for them)";
        if (set_aside)
            out << " (" << set_aside << " not explained: none stored for them)";
        out << '\n';
    }
    return 0;
}

int explain_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_explain, execute_explain, present_explain, std::cout);
}

} // namespace irqloop::logger
