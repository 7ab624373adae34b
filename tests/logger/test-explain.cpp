// SPDX-License-Identifier: MIT
// irqloop explain (issue 26): the text of a kernel trace, the pairing of its responder edges
// with a run's stimuli (scripted clocks: an offset, a drift, lost and late answers, a trace of
// another run), the breakdown of a sample, and the command end to end on a stored run and a
// trace, both scripted; bad input refused with exit 2 and the file left as it was.
#include "error.hpp"
#include "run-process.hpp"
#include "sim-raw-run.hpp"
#include "temp-dir.hpp"
#include "trace-explain.hpp"
#include "trace-text.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

using irqloop::error;
using irqloop::analysis::align_trace;
using irqloop::analysis::blocker;
using irqloop::analysis::delay_floor_of;
using irqloop::analysis::explain_sample;
using irqloop::analysis::handler_edge;
using irqloop::analysis::parse_trace_text;
using irqloop::analysis::responder_edges;
using irqloop::analysis::run_stimulus;
using irqloop::analysis::trace_kind;
using irqloop::analysis::trace_text;
using irqloop::test::read_bytes;
using irqloop::test::run_irqloop;
using irqloop::test::scripted_raw_run;
using irqloop::test::temp_dir;

namespace explain_test
{

trace_text parse(const std::string& text)
{
    std::istringstream in(text);
    return parse_trace_text(in, "t.txt");
}

/** The message parse() refuses @p text with (exit 2), or "" when it accepts it. */
std::string refusal(const std::string& text)
{
    try {
        (void)parse(text);
    } catch (const error& e) {
        CHECK(e.status() == irqloop::exit_usage);
        return e.message();
    }
    return "";
}

/** A trace line in the kernel's format at @p ns on the trace clock (6 decimals, as printed). */
std::string kline(std::int64_t ns, int cpu, const std::string& event,
                  const std::string& task = "<idle>-0")
{
    char b[256];
    std::snprintf(b, sizeof b, "%16s [%03d] d.h1. %5lld.%06lld: %s\n", task.c_str(), cpu,
                  static_cast<long long>(ns / 1'000'000'000),
                  static_cast<long long>(ns % 1'000'000'000 / 1000), event.c_str());
    return b;
}

/** A scripted run: @p n stimuli @p interval_ns apart with up to +-jitter (seeded). */
std::vector<run_stimulus> scripted_run(std::size_t n, std::int64_t interval_ns,
                                       std::int64_t jitter_ns, unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> j(-jitter_ns, jitter_ns);
    std::vector<run_stimulus> run;
    std::int64_t t = 1'764'900'000'000'000'000;
    for (std::size_t i = 0; i < n; ++i) {
        run.push_back({i, t, 10'000, 0});
        t += interval_ns + (jitter_ns ? j(rng) : 0);
    }
    return run;
}

/**
 * The target's edges for @p run: entry = 5000 s + offset + t * (1 + drift) + delay, where the
 * delay is 4 us + 0..1 us of noise, or @p delays' value for the stimuli it names; the stimuli of
 * @p missing have no edge; the edges cover stimuli [from, to).
 */
std::vector<handler_edge> scripted_edges(const std::vector<run_stimulus>& run, double drift_ppm,
                                         std::size_t from, std::size_t to,
                                         const std::map<std::size_t, std::int64_t>& delays = {},
                                         const std::set<std::size_t>& missing = {})
{
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<std::int64_t> noise(0, 1000);
    std::vector<handler_edge> edges;
    for (std::size_t i = from; i < to; ++i) {
        if (missing.count(i))
            continue;
        const auto d = delays.count(i) ? delays.at(i) : 4000 + noise(rng);
        const double since = double(run[i].t_ns - run[0].t_ns);
        const std::int64_t u = 5'000'000'000'000 + std::int64_t(since * (1 + drift_ppm * 1e-6)) + d;
        edges.push_back({u, u + 3000, 1, 25, "<idle>-0"});
    }
    std::sort(edges.begin(), edges.end(),
              [](const handler_edge& a, const handler_edge& b) { return a.entry_ns < b.entry_ns; });
    return edges;
}

/**
 * Each stimulus of @p run gets a delay to its handler's entry drawn from 4 to 9 us, and a
 * latency of that plus @p answer_after(rng) (both from @p rng, in that order); the delays by
 * stimulus, for scripted_edges().
 */
template <class After>
std::map<std::size_t, std::int64_t> random_delays(std::vector<run_stimulus>& run,
                                                  std::mt19937_64& rng, After answer_after)
{
    std::uniform_int_distribution<std::int64_t> d(4'000, 9'000);
    std::map<std::size_t, std::int64_t> delays;
    for (std::size_t i = 0; i < run.size(); ++i) {
        delays[i] = d(rng);
        run[i].latency_ns = delays[i] + answer_after(rng);
    }
    return delays;
}

/** The run index each edge was paired with, by edge index (-1: none). */
std::vector<long> paired_runs(const irqloop::analysis::trace_alignment& a, std::size_t edges)
{
    std::vector<long> by_edge(edges, -1);
    for (const auto& p : a.pairs)
        by_edge[p.edge_index] = long(p.run_index);
    return by_edge;
}

/** The refusal (exit 2) that @p f throws, or "" when it does not refuse. */
template <class F> std::string refusal_of(F&& f)
{
    try {
        f();
    } catch (const error& e) {
        CHECK(e.status() == irqloop::exit_usage);
        return e.message();
    }
    return "";
}

/** delay_floor_of()'s refusal, or "". */
std::string floor_refusal(const std::vector<run_stimulus>& run,
                          const std::vector<handler_edge>& edges,
                          const irqloop::analysis::trace_alignment& a)
{
    return refusal_of([&] { (void)delay_floor_of(run, edges, a); });
}

std::string align_refusal(const std::vector<run_stimulus>& run,
                          const std::vector<handler_edge>& edges, std::int64_t interval_ns)
{
    return refusal_of([&] { (void)align_trace(run, edges, interval_ns); });
}

/**
 * The text a target would have traced during @p raw's stimuli [from, to): the responder's
 * entry 3 us before the logger saw the answer (or 40 us after the stimulus for a lost one), its
 * exit 4 us after the entry, the target's clock at 2000 s + 20 ppm; with @p inject, a 3 us
 * IRQs-off section 1 us after that sample's stimulus. 6 decimals, as the kernel prints.
 */
std::string trace_of_run(const std::vector<irqloop::db::sample_row>& raw, std::size_t from,
                         std::size_t to, const std::string& irq_name, long inject = -1,
                         long held = -1)
{
    std::string text = "# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:2\n#\n";
    for (std::size_t i = from; i < to; ++i) {
        const auto& s = raw[i];
        const std::int64_t stim =
            2'000'000'000'000 + std::int64_t(double(s.unix_ns - raw[0].unix_ns) * (1 + 20e-6));
        // @p held: its handler runs from 2 to 2.5 us after the stimulus whatever the answer's
        // latency, as if the answer had been held up after the handler's exit.
        const std::int64_t entry = stim + (long(s.seq) == held ? 2000
                                           : s.latency_ns >= 0 ? s.latency_ns - 3000
                                                               : 40'000);
        if (long(s.seq) == inject) {
            text += kline(stim + 1000, 1, "irq_disable: caller=injected_lock+0x1/0x2 parent=0x0");
            text += kline(stim + 4000, 1, "irq_enable: caller=injected_unlock+0x1/0x2 parent=0x0");
        }
        text += kline(entry, 1, "irq_handler_entry: irq=41 name=" + irq_name);
        text += kline(entry + (long(s.seq) == held ? 500 : 4000), 1,
                      "irq_handler_exit: irq=41 ret=handled");
    }
    return text;
}

void write_text(const std::string& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace explain_test

using namespace explain_test;

TEST_CASE("explain: trace text: the kernel's and trace-cmd's lines read, fields and times exact",
          "[explain]")
{
    const std::string kernel =
        "# tracer: nop\n"
        "#\n"
        "# entries-in-buffer/entries-written: 7/7   #P:2\n"
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
        "          <idle>-0       [001] d.h1.  4321.000100: irq_handler_entry: irq=25 "
        "name=irqloop_responder\n"
        "          <idle>-0       [001] d.h1.  4321.000104: irq_handler_exit: irq=25 ret=handled\n"
        "          <idle>-0       [001] ..s1.  4321.000200: softirq_entry: vec=3 [action=NET_RX]\n"
        "          <idle>-0       [001] ..s1.  4321.000250: softirq_exit: vec=3 [action=NET_RX]\n"
        "          <idle>-0       [001] d..2.  4321.000300: sched_switch: prev_comm=swapper/1 "
        "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=stress ng next_pid=812 next_prio=120\n"
        "     stress ng-812       [001] d..1.  4321.000400: irq_disable: "
        "caller=_raw_spin_lock_irqsave+0x2a/0x50 parent=0x0\n"
        "     stress ng-812       [001] d..1.  4321.000900: irq_enable: "
        "caller=_raw_spin_unlock_irqrestore+0x1f/0x40 parent=0x0\n"
        "     stress ng-812       [001] d..1.  4321.000901: nmi_handler: "
        "handler=perf_event_nmi_handler delta_ns=2300 handled=1\n"
        "     stress ng-812       [001] ....1  4321.000950: sys_enter: NR 1 (1, 2, 3)\n";
    const auto t = parse(kernel);
    CHECK(t.tracer == "nop");
    CHECK(t.event_lines == 9);
    REQUIRE(t.events.size() == 8);
    CHECK(t.events[0].kind == trace_kind::irq_entry);
    CHECK(t.events[0].t_ns == 4321'000'100'000);
    CHECK(t.events[0].number == 25);
    CHECK(t.events[0].name == "irqloop_responder");
    CHECK(t.events[0].cpu == 1);
    CHECK(t.events[0].task == "<idle>-0");
    CHECK(t.events[2].kind == trace_kind::softirq_entry);
    CHECK(t.events[2].name == "NET_RX");
    CHECK(t.events[4].kind == trace_kind::sched_switch);
    CHECK(t.events[4].name == "stress ng");
    CHECK(t.events[4].number == 812);
    CHECK(t.events[4].value == 120);
    CHECK(t.events[5].kind == trace_kind::irq_disable);
    CHECK(t.events[5].name == "_raw_spin_lock_irqsave+0x2a/0x50");
    CHECK(t.events[5].task == "stress ng-812");
    CHECK(t.events[7].kind == trace_kind::nmi);
    CHECK(t.events[7].value == 2300);
    CHECK(t.last_ns == 4321'000'950'000);

    const std::string tracecmd = "version = 6\n"
                                 "cpus=2\n"
                                 "CPU 0 is empty\n"
                                 "          <idle>-0     [001]  4321.000100123: irq_handler_entry: "
                                 "   irq=25 name=irqloop_responder\n"
                                 "CPU:1 [LOST 12 EVENTS]\n"
                                 "  kworker/1:2-77    (   77) [001]  4321.000104: softirq_entry:   "
                                 "     vec=7 action=SCHED\n";
    const auto c = parse(tracecmd);
    REQUIRE(c.events.size() == 2);
    CHECK(c.events[0].t_ns == 4321'000'100'123);
    CHECK(c.events[1].name == "SCHED");
    CHECK(c.events[1].task == "kworker/1:2-77");
    CHECK(c.lost_events == 12);
}

TEST_CASE("explain: trace text: another tracer's output, a truncated line, a cut event and a "
          "foreign text are refused with exit 2 and the line",
          "[explain]")
{
    CHECK(refusal("# tracer: function\n#\n  bash-1 [000] ...1. 1.000001: do_irq <-common\n")
              .find("it is the output of the 'function' tracer, not of trace events") !=
          std::string::npos);
    CHECK(refusal("# tracer: irqsoff\n").find("'irqsoff' tracer") != std::string::npos);
    const std::string ok = kline(1'000'000'000, 0, "irq_handler_entry: irq=25 name=x");
    CHECK(refusal(ok).empty());
    CHECK(refusal(ok + "          <idle>-0       [001] d.h1.  4321.00\n")
              .find("line 2: no timestamp") != std::string::npos);
    CHECK(refusal(ok + "          <idle>-0       [00\n").find("line 2: no [CPU] field") !=
          std::string::npos);
    CHECK(refusal(ok + "          <idle>-0       [001] d.h1.  4321.000001: irq_hand\n")
              .find("line 2: no event name ending in ':'") != std::string::npos);
    CHECK(refusal(
              ok +
              "          <idle>-0       [001] d.h1.  4321.000001: irq_handler_exit: irq=25 ret=han")
              .find("line 2 has no end of line (a truncated file?)") != std::string::npos);
    CHECK(refusal(ok + kline(2'000'000'000, 0, "irq_handler_entry: irq=25"))
              .find("line 2: event irq_handler_entry has no name=") != std::string::npos);
    CHECK(refusal("<html><body>404</body></html>\n").find("line 1:") != std::string::npos);
    CHECK(refusal(ok + "  bash-1 [000] ...1. 1.0000000001: irq_handler_entry: irq=1 name=x\n")
              .find("line 2: '1.0000000001:' is not a timestamp") != std::string::npos);
}

TEST_CASE("explain: trace text: the tracer's drop notes, the kernel's and trace-cmd's, counted "
          "or not, are gaps on their CPU between its events before and after",
          "[explain]")
{
    constexpr std::int64_t s0 = 1'000'000'000;
    const std::string entry = "irq_handler_entry: irq=25 name=x";
    const auto t = parse(kline(s0, 0, entry) + kline(s0 + 10'000, 1, entry) +
                         "CPU:0 [LOST 12 EVENTS]\n" +   // the kernel's, before CPU 0's next
                         kline(s0 + 20'000, 1, entry) + // CPU 1's: leaves CPU 0's gap open
                         kline(s0 + 30'000, 0, entry) + "CPU:1 [5 EVENTS DROPPED]\n" +
                         "CPU:1 [EVENTS DROPPED]\n" + // a second note, no count: one gap
                         kline(s0 + 40'000, 1, entry) +
                         "CPU:3 [LOST EVENTS]\n"); // no event of CPU 3 before or after
    REQUIRE(t.events.size() == 5);
    REQUIRE(t.gaps.size() == 3);
    CHECK(t.gaps[0].cpu == 0);
    CHECK(t.gaps[0].after_ns == s0);
    CHECK(t.gaps[0].before_ns == s0 + 30'000);
    CHECK(t.gaps[0].events == 12);
    CHECK(t.gaps[1].cpu == 1);
    CHECK(t.gaps[1].after_ns == s0 + 20'000);
    CHECK(t.gaps[1].before_ns == s0 + 40'000);
    CHECK(t.gaps[1].events == -1);
    CHECK(t.gaps[2].cpu == 3);
    CHECK(t.gaps[2].after_ns == std::numeric_limits<std::int64_t>::min());
    CHECK(t.gaps[2].before_ns == std::numeric_limits<std::int64_t>::max());
    CHECK(t.gaps[2].events == -1);
    CHECK(t.lost_events == 17);
    // Huge counts saturate, merged or summed (no overflow).
    const std::string huge = "CPU:0 [999999999999999999 EVENTS DROPPED]\n";
    std::string many = kline(s0, 0, entry);
    for (int k = 0; k < 12; ++k)
        many += huge;
    const auto h = parse(many + kline(s0 + 1, 0, entry));
    REQUIRE(h.gaps.size() == 1);
    CHECK(h.gaps[0].events == std::numeric_limits<std::int64_t>::max());
    CHECK(h.lost_events == std::size_t(std::numeric_limits<std::int64_t>::max()));
    // A note that is none of the four forms is no event line either.
    for (const std::string bad : {"CPU:1 [LOST many EVENTS]\n", "CPU:x [LOST 3 EVENTS]\n",
                                  "CPU:1 [LOST -3 EVENTS]\n", "CPU:1 [3 EVENTS GONE]\n"})
        CHECK(refusal(kline(s0, 0, entry) + bad).find("line 2: no [CPU] field") !=
              std::string::npos);
}

TEST_CASE("explain: breakdown: a drop of the tracer inside a sample's window marks it; one "
          "after its handler's entry or on another CPU does not",
          "[explain]")
{
    auto run = scripted_run(400, 100'000, 10'000, 6);
    for (auto& s : run)
        s.latency_ns = 9'000;
    auto edges = scripted_edges(run, 0, 0, 400);
    std::string text = "# tracer: nop\n#\n";
    for (std::size_t k = 0; k < edges.size(); ++k) {
        if (k == 300) // between edge 299's exit and edge 300's entry: in 300's window
            text += "CPU:1 [LOST 3 EVENTS]\n";
        if (k == 200) // another CPU's drop
            text += "CPU:0 [LOST 4 EVENTS]\n";
        text += kline(edges[k].entry_ns, 1, "irq_handler_entry: irq=25 name=irqloop_responder");
        if (k == 100) // after edge 100's entry: outside its window (stimulus to entry)
            text += "CPU:1 [EVENTS DROPPED]\n";
        text += kline(edges[k].entry_ns + 3'000, 1, "irq_handler_exit: irq=25 ret=handled");
    }
    const auto t = parse(text);
    REQUIRE(t.gaps.size() == 3);
    const auto traced = responder_edges(t, "irqloop_responder");
    REQUIRE(traced.size() == edges.size());
    const auto a = align_trace(run, traced, 100'000);
    REQUIRE(a.pairs.size() == 400);
    const auto floor = delay_floor_of(run, traced, a).ns;
    const auto hit = explain_sample(run, traced, a, t, 300, floor);
    REQUIRE(hit.in_trace);
    REQUIRE(hit.dropped);
    CHECK(*hit.dropped == 3);
    CHECK(hit.blockers.empty());
    CHECK(!explain_sample(run, traced, a, t, 200, floor).dropped);
    CHECK(!explain_sample(run, traced, a, t, 100, floor).dropped);
    CHECK(!explain_sample(run, traced, a, t, 101, floor).dropped);
    CHECK(!explain_sample(run, traced, a, t, 299, floor).dropped);
}

TEST_CASE("explain: alignment: an offset and a 40 ppm drift over 20 s are fitted and every edge "
          "pairs with its stimulus",
          "[explain]")
{
    const auto run = scripted_run(20000, 1'000'000, 100'000, 1); // 1 ms +- 100 us, 20 s
    const auto edges = scripted_edges(run, 40.0, 3000, 19000);
    const auto a = align_trace(run, edges, 1'000'000);
    REQUIRE(a.pairs.size() == edges.size());
    for (const auto& p : a.pairs)
        REQUIRE(p.run_index == p.edge_index + 3000);
    CHECK(a.trace_only == 0);
    CHECK(a.run_only == 0);
    CHECK(a.outside == 4000);
    CHECK(std::abs(a.drift_ppm - 40.0) < 0.2);
    CHECK(a.residual_ns < 1000); // the delays' noise is 0..1 us
    // The envelope sits at the fastest edges: every excess is >= 0 and below the noise + 1 us.
    for (const auto& p : a.pairs) {
        const double ex = double(edges[p.edge_index].entry_ns - run[p.run_index].t_ns - a.base_ns) -
                          a.envelope_at(run[p.run_index].t_ns);
        REQUIRE(ex >= -0.5);
        REQUIRE(ex < 2000);
    }
}

TEST_CASE("explain: alignment: lost answers, edges the target never saw and late answers pair "
          "with the right stimulus",
          "[explain]")
{
    auto run = scripted_run(3000, 100'000, 10'000, 2); // 100 us +- 10 us
    for (std::size_t i : {500u, 900u, 1500u})
        run[i].latency_ns = -1; // lost: the logger's timeout; the target saw the edge
    // Late: the edge after the next stimulus (150 us and 180 us), the answer 3 us after it, as
    // the logger measured it; missing: never traced.
    const std::map<std::size_t, std::int64_t> delays = {{700, 150'000}, {1200, 180'000}};
    for (const auto& [i, d] : delays)
        run[i].latency_ns = d + 3'000;
    const std::set<std::size_t> missing = {800, 1800, 1801};
    const auto edges = scripted_edges(run, -15.0, 100, 2900, delays, missing);
    const auto a = align_trace(run, edges, 100'000);
    const auto by_edge = paired_runs(a, edges.size());
    std::size_t j = 0;
    for (std::size_t i = 100; i < 2900; ++i) {
        if (missing.count(i))
            continue;
        INFO("stimulus " << i << ", edge " << j);
        REQUIRE(by_edge[j] == long(i));
        ++j;
    }
    CHECK(a.run_only == missing.size());
    CHECK(a.trace_only == 0);
    CHECK(std::abs(a.drift_ppm + 15.0) < 1.0);
}

TEST_CASE("explain: alignment: delays spread over 1.5 ms, more than the run's jitter, anchor at "
          "the right stimulus by the handlers' entry-to-answer times",
          "[explain]")
{
    // 5 ms +- 0.5 ms apart; each handler entered 4 us to 1.5 ms after its stimulus (IRQs held
    // off for up to that long) and answered 5 to 7 us after its entry. By the delays alone,
    // the place one stimulus off fits the first edges about as well as the right one.
    auto run = scripted_run(2000, 5'000'000, 500'000, 11);
    std::mt19937_64 rng(12);
    std::uniform_int_distribution<std::int64_t> held(4'000, 1'500'000), work(5'000, 7'000);
    std::map<std::size_t, std::int64_t> delays;
    for (std::size_t i = 0; i < run.size(); ++i) {
        delays[i] = held(rng);
        run[i].latency_ns = delays[i] + work(rng);
    }
    for (std::size_t i : {300u, 1000u})
        run[i].latency_ns = -1; // lost: these have no entry-to-answer time
    // The first traced edge is a fast one: the walk moves an anchor edge that is slower than
    // the next by more than the interval's jitter back to the stimulus before, as a late
    // answer's (explain.md, "Limits").
    delays[100] = 4'000;
    run[100].latency_ns = 10'000;
    auto edges = scripted_edges(run, 10.0, 100, 1900, delays);
    for (auto& e : edges)
        e.exit_ns = e.entry_ns + 8'000; // the answer written inside the handler
    const auto a = align_trace(run, edges, 5'000'000);
    INFO("anchor spread " << a.anchor_spread_ns << " ns, next " << a.next_spread_ns << " ns");
    CHECK(a.anchor_spread_ns * 10 < a.next_spread_ns);
    REQUIRE(a.pairs.size() == edges.size());
    for (const auto& p : a.pairs) {
        INFO("edge " << p.edge_index);
        REQUIRE(p.run_index == p.edge_index + 100);
    }
    CHECK(std::abs(a.drift_ppm - 10.0) < 2.0);
}

TEST_CASE("explain: alignment: a trace of another run, and a strictly periodic run, are refused",
          "[explain]")
{
    const auto run = scripted_run(3000, 100'000, 10'000, 3);
    const auto other = scripted_run(3000, 100'000, 10'000, 4);
    const auto msg = align_refusal(run, scripted_edges(other, 0, 200, 1200), 100'000);
    INFO(msg);
    CHECK(msg.find("a trace of another run") != std::string::npos);
    // The same trace aligns with its own run.
    CHECK(align_refusal(other, scripted_edges(other, 0, 200, 1200), 100'000).empty());

    const auto periodic = scripted_run(3000, 100'000, 0, 5);
    const auto p = align_refusal(periodic, scripted_edges(periodic, 0, 200, 1200), 100'000);
    CHECK(p.find("fit two places of the run alike") != std::string::npos);
    CHECK(p.find("--jitter") != std::string::npos);
    CHECK(align_refusal(run, scripted_edges(run, 0, 200, 205), 100'000).find("fewer than 8") !=
          std::string::npos);

    // Another run with the same stimulus times (the same --seed): the times pair, but its
    // latencies contradict the edges (an answer before its handler's entry).
    auto mine = scripted_run(3000, 100'000, 10'000, 3), theirs = mine;
    std::mt19937_64 rng(9);
    std::uniform_int_distribution<std::int64_t> lat(6'000, 14'000);
    std::map<std::size_t, std::int64_t> delays;
    for (std::size_t i = 0; i < mine.size(); ++i) {
        mine[i].latency_ns = lat(rng);
        theirs[i].latency_ns = lat(rng);
        delays[i] = mine[i].latency_ns - 3'000;
    }
    auto edges = scripted_edges(mine, 0, 200, 1200, delays);
    for (auto& e : edges)
        e.exit_ns = e.entry_ns + 4'000;
    const auto ok = delay_floor_of(mine, edges, align_trace(mine, edges, 100'000));
    CHECK(!ok.crossed);
    CHECK(ok.lo_ns <= ok.hi_ns);
    const auto a = align_trace(theirs, edges, 100'000);
    std::string why;
    try {
        (void)delay_floor_of(theirs, edges, a);
    } catch (const error& e) {
        CHECK(e.status() == irqloop::exit_usage);
        why = e.message();
    }
    CHECK(why.find("the run's latencies contradict the trace's handler times") !=
          std::string::npos);
}

TEST_CASE("explain: a sample whose answer was held up after its handler, or came before it, is "
          "set aside by the delay floor, not a reason to refuse the trace; more than 1 % are (a "
          "tenth of late ones, where the seqs put each edge on its own sample)",
          "[explain]")
{
    // 400 stimuli; each answer comes 2 us after its handler's entry (inside the 3 us handler).
    auto run = scripted_run(400, 100'000, 10'000, 41);
    std::mt19937_64 rng(5);
    auto delays = random_delays(run, rng, [](std::mt19937_64&) { return 2'000; });
    const auto edges = scripted_edges(run, 0, 0, 400, delays);
    const auto a = align_trace(run, edges, 100'000);
    REQUIRE(a.pairs.size() == 400);
    const auto clean = delay_floor_of(run, edges, a);
    CHECK(clean.contradicted.empty());
    CHECK(clean.bounding == 400);

    // Sample 200's answer reached the logger 5 ms after its handler (a stalled target's GPIO
    // path, a wire held up), its bracket small: the handler exited 5 ms before the answer.
    // Sample 300's (or the next one slower than 7 us) came 5 us before its handler's entry;
    // 1.5 us before would be within the 2 us the floor allows for a trace clock's tick.
    auto held = run;
    std::size_t early = 300;
    while (delays[early] <= 7'000)
        ++early;
    held[200].latency_ns = delays[200] + 5'000'000;
    held[early].latency_ns = delays[early] - 5'000;
    const auto f = delay_floor_of(held, edges, a);
    REQUIRE(f.contradicted.size() == 2);
    CHECK(f.bounding == 398);
    CHECK(f.contradicted[0].run_index == 200);
    CHECK_FALSE(f.contradicted[0].answer_before_entry);
    CHECK(f.contradicted[0].by_ns > 4'900'000);
    CHECK(f.contradicted[0].by_ns < 5'000'000);
    CHECK(f.contradicted[1].run_index == early);
    CHECK(f.contradicted[1].answer_before_entry);
    CHECK(f.contradicted[1].by_ns > 0);
    // The others bound the floor as before, and they alone.
    CHECK(f.lo_ns == clean.lo_ns);
    CHECK(f.hi_ns == clean.hi_ns);
    CHECK(f.ns == clean.ns);

    // Five held up of 400 (more than 1 %): the latencies do not belong to these edges.
    auto many = run;
    for (std::size_t i : {50, 120, 200, 260, 330})
        many[i].latency_ns = delays[i] + 5'000'000;
    CHECK(floor_refusal(many, edges, a).find("5 of 400 answered samples contradict the rest") !=
          std::string::npos);
    // Four (1 %) are set aside.
    many[330].latency_ns = run[330].latency_ns;
    CHECK(delay_floor_of(many, edges, a).contradicted.size() == 4);

    // With the responder's seqs on the edges, each on its own sample: a pairing error is ruled
    // out, so answers held up after their handler (late only) may be up to a tenth.
    auto seqd = edges;
    for (std::size_t j = 0; j < seqd.size(); ++j)
        seqd[j].seq = std::int64_t(j) + 7;
    const auto as = align_trace(run, seqd, 100'000);
    REQUIRE(as.by_sequence);
    many[330].latency_ns = delays[330] + 5'000'000;
    auto fs = delay_floor_of(many, seqd, as);
    CHECK(fs.contradicted.size() == 5);
    CHECK(fs.bounding == 395);
    CHECK(fs.ns == clean.ns);
    for (const auto& c : fs.contradicted)
        CHECK_FALSE(c.answer_before_entry);
    for (std::size_t i = 0; i < 400; i += 10) // 40 of 400 held up: a tenth
        many[i].latency_ns = delays[i] + 5'000'000;
    CHECK(delay_floor_of(many, seqd, as).contradicted.size() == 40);
    many[5].latency_ns = delays[5] + 5'000'000; // 41: more than a tenth
    CHECK(floor_refusal(many, seqd, as).find("41 of 400 answered samples contradict the rest") !=
          std::string::npos);
    // Answers before their entry keep the 1 % cap, seqs or not.
    auto before = run;
    for (std::size_t i = 300, n = 0; n < 5; ++i)
        if (delays[i] > 7'000) {
            before[i].latency_ns = delays[i] - 5'000;
            ++n;
        }
    CHECK(floor_refusal(before, seqd, as).find("5 of 400 answered samples contradict the rest") !=
          std::string::npos);
    // Seqs one off for one edge (not each on its own sample): the 1 % cap again.
    auto off = seqd;
    off[3].seq = 0;
    const auto ao = align_trace(run, off, 100'000);
    auto five = run;
    for (std::size_t i : {50, 120, 200, 260, 330})
        five[i].latency_ns = delays[i] + 5'000'000;
    CHECK_THROWS_AS(delay_floor_of(five, off, ao), error);
    CHECK(delay_floor_of(five, seqd, as).contradicted.size() == 5);
}

TEST_CASE("explain: alignment: a trace whose clock bends mid-run (a VM stalled, then slewed) is "
          "fitted in pieces, every sample within its bounds, where one line is refused",
          "[explain]")
{
    // 3000 stimuli 100 us +- 10 us apart; each answer 2 us after its handler's entry (inside
    // the 3 us handler), so each sample bounds the clock offset to 3 us. The target's clock
    // follows the logger's until stimulus 1500, then runs 150 ppm slow: 22 us behind by the end.
    auto run = scripted_run(3000, 100'000, 10'000, 43);
    std::mt19937_64 rng(6);
    const auto delay = random_delays(run, rng, [](std::mt19937_64&) { return 2'000; });
    std::vector<handler_edge> edges;
    for (std::size_t i = 0; i < run.size(); ++i) {
        const std::int64_t since = run[i].t_ns - run[0].t_ns;
        const std::int64_t bent = i < 1500 ? 0 : (run[i].t_ns - run[1500].t_ns) * 150 / 1'000'000;
        const std::int64_t u = 5'000'000'000'000 + since - bent + delay.at(i);
        edges.push_back({u, u + 3000, 1, 25, "<idle>-0"});
    }
    const auto a = align_trace(run, edges, 100'000);
    REQUIRE(a.pairs.size() == 3000);
    for (const auto& p : a.pairs)
        REQUIRE(p.run_index == p.edge_index);
    // In two pieces, the first ending at the bend (to a window of 16), the second on the slow
    // clock.
    REQUIRE(a.pieces.size() == 2);
    CHECK(a.pieces[0].run_index == 0);
    CHECK(a.pieces[1].run_index >= 1500 - 16);
    CHECK(a.pieces[1].run_index <= 1500 + 16);
    CHECK(std::abs(a.pieces[0].drift_ppm) < 5);
    CHECK(std::abs(a.pieces[1].drift_ppm + 150) < 5);
    CHECK_FALSE(irqloop::analysis::fit_is_poor(a));
    const auto f = delay_floor_of(run, edges, a);
    CHECK(f.contradicted.empty());
    CHECK(f.bounding == 3000);
    // Each sample's inferred delay before its handler is its scripted one, within the bounds.
    for (std::size_t i = 0; i < run.size(); i += 7) {
        trace_text t;
        const auto b = explain_sample(run, edges, a, t, i, f.ns);
        INFO("sample " << i);
        REQUIRE(std::abs(b.before_handler_ns - delay.at(i)) <= 3'000);
    }

    // One line through the same bounds: the floor contradicts about a third of the samples.
    auto line = a;
    line.pieces.clear();
    std::string why;
    try {
        (void)delay_floor_of(run, edges, line);
    } catch (const error& e) {
        why = e.message();
    }
    INFO(why);
    CHECK(why.find("answered samples contradict the rest") != std::string::npos);
}

TEST_CASE("explain: a real kernel's trace whose clock bent under a loaded host (the testbed's "
          "kmod-trace-events) is explained in two pieces, every sample on its seq's edge",
          "[explain]")
{
    // tests/data/explain/README.md: one line left 33 of the 300 samples outside their bounds.
    const std::string from = std::string(IRQLOOP_SOURCE_DIR) + "/tests/data/explain/";
    temp_dir dir;
    const auto db = dir.file("bent-hard.db"), trace = dir.file("bent-hard.txt");
    for (const auto& [packed, to] :
         {std::pair(from + "bent-hard.db.xz", db), std::pair(from + "bent-hard.txt.xz", trace)}) {
        const auto r = irqloop::test::run_shell("xz -dc " + irqloop::test::shell_program(packed) +
                                                " > '" + to + "'");
        REQUIRE(r.status == 0);
    }
    const auto r = run_irqloop(
        {"explain", "--db", db, "--run", "1", "--trace", trace, "--worst", "300", "--json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& al = j["alignment"];
    CHECK(al["paired"] == 300);
    CHECK(al["fit_poor"] == false);
    REQUIRE(al["pieces"].size() == 2);
    CHECK(al["pieces"][0]["from_seq"] == 0);
    CHECK(al["pieces"][1]["from_seq"].get<int>() >= 128);
    CHECK(al["pieces"][1]["from_seq"].get<int>() <= 172);
    CHECK(al["pieces"][1]["drift_ppm"].get<double>() < -100);
    CHECK(al["contradicted_seqs"].size() <= 3);
    // The responder counted the same edges (logger seq - responder seq = -21): each sample is
    // paired with the edge of its seq, and none has a part below zero.
    REQUIRE(j["samples"].size() == 300);
    for (const auto& s : j["samples"]) {
        INFO("seq " << s["seq"]);
        REQUIRE(s["in_trace"] == true);
        if (!s["contradicts_ns"].is_null())
            continue;
        CHECK(s["responder_seq"].get<std::int64_t>() == s["seq"].get<std::int64_t>() + 21);
        CHECK(s["parts"][0]["ns"].get<std::int64_t>() >= 0); // before the handler
        CHECK(s["parts"][1]["ns"].get<std::int64_t>() >= 0); // handler to response
    }
}

TEST_CASE("explain: breakdown: an injected IRQs-off section, another IRQ and a softirq in the "
          "worst sample's window are named with their durations; a clean sample has none",
          "[explain]")
{
    auto run = scripted_run(400, 100'000, 10'000, 6);
    for (auto& s : run)
        s.latency_ns = 9'000; // delay 4 us + 5 us from entry to the answer
    // Sample 300: its edge 60 us late, behind a 50 us IRQs-off section, a 6 us IRQ and a softirq.
    run[300].latency_ns = 69'000;
    auto edges = scripted_edges(run, 0, 0, 400, {{300, 64'000}});
    for (std::size_t k = 0; k < edges.size(); ++k)
        edges[k].exit_ns = edges[k].entry_ns + 6'000;
    // The trace text: every edge's entry and exit, and the injected causes.
    std::string text = "# tracer: nop\n#\n";
    auto at = [&](std::int64_t ns, const std::string& ev, const std::string& task = "<idle>-0") {
        text += kline(ns, 1, ev, task);
    };
    const std::int64_t stim300 = edges[300].entry_ns - 64'000; // the stimulus on the target's clock
    for (std::size_t k = 0; k < edges.size(); ++k) {
        if (k == 300) {
            at(stim300 - 20'000, "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 "
                                 "prev_state=R ==> next_comm=hog next_pid=99 next_prio=120");
            at(stim300 + 2'000, "irq_disable: caller=hog_lock+0x10/0x20 parent=0x0", "hog-99");
            at(stim300 + 52'000, "irq_enable: caller=hog_unlock+0x8/0x20 parent=0x0", "hog-99");
            at(stim300 + 53'000, "irq_handler_entry: irq=17 name=eth0", "hog-99");
            at(stim300 + 59'000, "irq_handler_exit: irq=17 ret=handled", "hog-99");
            at(stim300 + 60'000, "softirq_entry: vec=3 [action=NET_RX]", "hog-99");
            at(stim300 + 63'000, "softirq_exit: vec=3 [action=NET_RX]", "hog-99");
        }
        at(edges[k].entry_ns, "irq_handler_entry: irq=25 name=irqloop_responder");
        at(*edges[k].exit_ns, "irq_handler_exit: irq=25 ret=handled");
    }
    const auto t = parse(text);
    const auto traced = responder_edges(t, "irqloop_responder");
    REQUIRE(traced.size() == edges.size());
    const auto a = align_trace(run, traced, 100'000);
    REQUIRE(a.pairs.size() == 400);
    // The delays are 4..5 us: the answered samples bound the fastest to [3, 8] us here (each
    // answer 4..5 us after its entry, the handler 6 us long), the trace's ticks 1 us.
    const auto bounds = delay_floor_of(run, traced, a);
    CHECK(!bounds.crossed);
    CHECK(bounds.lo_ns <= 4000);
    CHECK(bounds.hi_ns >= 4000);
    CHECK(bounds.hi_ns - bounds.lo_ns <= 6000);
    const auto floor = bounds.ns;

    const auto b = explain_sample(run, traced, a, t, 300, floor);
    REQUIRE(b.in_trace);
    CHECK(std::abs(b.before_handler_ns - 64'000) <= 2'000);
    CHECK(std::abs(b.handler_to_response_ns - 5'000) <= 2'000);
    REQUIRE(b.handler_ns);
    CHECK(*b.handler_ns == 6'000);
    REQUIRE(b.blockers.size() >= 3);
    CHECK(b.blockers[0].kind == "irqs off");
    CHECK(b.blockers[0].name == "hog_lock+0x10/0x20");
    CHECK(b.blockers[0].duration_ns == 50'000);
    CHECK(b.blockers[0].in_window_ns == 50'000);
    CHECK(b.blockers[1].kind == "irq");
    CHECK(b.blockers[1].name == "irq 17 eth0");
    CHECK(b.blockers[1].duration_ns == 6'000);
    CHECK(b.blockers[2].kind == "softirq");
    CHECK(b.blockers[2].name == "NET_RX");
    REQUIRE(!b.tasks.empty());
    CHECK(b.tasks[0].name == "hog-99 (prio 120)");

    const auto clean = explain_sample(run, traced, a, t, 200, floor);
    REQUIRE(clean.in_trace);
    CHECK(clean.blockers.empty());
    CHECK(clean.before_handler_ns >= bounds.lo_ns);
    CHECK(clean.before_handler_ns <= bounds.hi_ns + 2'000);
    irqloop::analysis::trace_alignment fewer = a; // a stimulus with no edge paired
    CHECK(explain_sample(run, traced, a, t, 399, floor).in_trace);
    fewer.pairs.pop_back();
    CHECK(!explain_sample(run, traced, fewer, t, 399, floor).in_trace);
}

TEST_CASE("explain: breakdown: a softirq whose task was switched out (PREEMPT_RT runs softirqs "
          "in threads) counts only its running time, in its duration and in the window",
          "[explain]")
{
    auto run = scripted_run(400, 1'000'000, 100'000, 6); // 1 ms apart: room for 300 us
    for (auto& s : run)
        s.latency_ns = 9'000;
    run[300].latency_ns = 305'000; // its edge 300 us late
    run[301].latency_ns = 25'000;  // its edge 20 us late, the softirq running meanwhile
    auto edges = scripted_edges(run, 0, 0, 400, {{300, 300'000}, {301, 20'000}});
    for (auto& e : edges)
        e.exit_ns = e.entry_ns + 3'000;
    std::string text = "# tracer: nop\n#\n";
    auto at = [&](std::int64_t ns, const std::string& ev, const std::string& task = "<idle>-0") {
        text += kline(ns, 1, ev, task);
    };
    const std::int64_t s300 = edges[300].entry_ns - 300'000, s301 = edges[301].entry_ns - 20'000;
    for (std::size_t k = 0; k < edges.size(); ++k) {
        if (k == 300) {
            // TIMER in ksoftirqd from 100 us before the stimulus; switched out 10 us after it
            // for 490 us (a higher-priority thread), back, and done 100 us later: it ran 210 us,
            // 10 us of them in the window, though its span is 700 us.
            at(s300 - 100'000, "softirq_entry: vec=1 [action=TIMER]", "ksoftirqd/1-20");
            at(s300 + 10'000,
               "sched_switch: prev_comm=ksoftirqd/1 prev_pid=20 prev_prio=120 prev_state=R+ ==> "
               "next_comm=rt next_pid=50 next_prio=9",
               "ksoftirqd/1-20");
            at(s300 + 500'000,
               "sched_switch: prev_comm=rt prev_pid=50 prev_prio=9 prev_state=S ==> "
               "next_comm=ksoftirqd/1 next_pid=20 next_prio=120",
               "rt-50");
            at(s300 + 600'000, "softirq_exit: vec=1 [action=TIMER]", "ksoftirqd/1-20");
        }
        if (k == 301) // not switched out: its span is its running time, as on a stock kernel
            at(s301 - 5'000, "softirq_entry: vec=3 [action=NET_RX]", "hog-99");
        at(edges[k].entry_ns, "irq_handler_entry: irq=25 name=irqloop_responder");
        at(*edges[k].exit_ns, "irq_handler_exit: irq=25 ret=handled");
        if (k == 301)
            at(s301 + 40'000, "softirq_exit: vec=3 [action=NET_RX]", "hog-99");
    }
    const auto t = parse(text);
    const auto traced = responder_edges(t, "irqloop_responder");
    const auto a = align_trace(run, traced, 1'000'000);
    REQUIRE(a.pairs.size() == 400);
    const auto floor = delay_floor_of(run, traced, a).ns;
    const auto b = explain_sample(run, traced, a, t, 300, floor);
    REQUIRE(b.in_trace);
    REQUIRE(b.blockers.size() == 1);
    CHECK(b.blockers[0].kind == "softirq");
    CHECK(b.blockers[0].name == "TIMER");
    CHECK(b.blockers[0].duration_ns == 210'000);
    // The window (stimulus to entry) starts where the fit infers the stimulus: w0.
    const std::int64_t w0 = edges[300].entry_ns - b.before_handler_ns;
    CHECK(std::abs(w0 - s300) <= 5'000);
    CHECK(b.blockers[0].in_window_ns == s300 + 10'000 - w0); // running until the switch
    CHECK(b.blockers[0].start_ns == s300 - 100'000 - w0);    // from the window's start
    const auto c = explain_sample(run, traced, a, t, 301, floor);
    REQUIRE(c.blockers.size() == 1);
    CHECK(c.blockers[0].name == "NET_RX");
    CHECK(c.blockers[0].duration_ns == 45'000);
    CHECK(c.blockers[0].in_window_ns == c.before_handler_ns); // the whole window
}

TEST_CASE("explain: the command on a scripted stored run and trace: paired, the injected "
          "section named, JSON; bad input exit 2 with the file untouched",
          "[explain]")
{
    temp_dir dir;
    const auto db = dir.file("e.db"), other_db = dir.file("o.db");
    const auto raw = scripted_raw_run(db, 2000, "explained", 11);
    const auto other = scripted_raw_run(other_db, 2000, "other", 12);
    // The run's worst sample, as `irqloop explain` picks it.
    std::size_t worst = 200;
    for (std::size_t i = 200; i < 1800; ++i)
        if (raw[i].latency_ns > raw[worst].latency_ns)
            worst = i;
    const auto trace = dir.file("trace.txt");
    write_text(trace, trace_of_run(raw, 200, 1800, "irqloop_responder", long(raw[worst].seq)));
    const auto before = read_bytes(db);

    auto r = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--seq",
                          std::to_string(raw[worst].seq)});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("paired: 1600 of 2000 stimuli; 0 edges trace-only, 0 stimuli with no edge, "
                     "400 outside the trace (it covers seq 200 to 1799)") != std::string::npos);
    CHECK(r.out.find("seq " + std::to_string(raw[worst].seq) + "  latency") != std::string::npos);
    CHECK(r.out.find("irqs off") != std::string::npos);
    CHECK(r.out.find("injected_lock+0x1/0x2") != std::string::npos);

    r = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--worst", "3"});
    REQUIRE(r.status == 0);
    std::size_t listed = 0;
    for (auto at = r.out.find("\nseq "); at != std::string::npos; at = r.out.find("\nseq ", at + 1))
        ++listed;
    CHECK(listed == 3);

    r = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--seq",
                     std::to_string(raw[worst].seq), "--seq", "50", "--json"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["alignment"]["paired"] == 1600);
    CHECK(j["alignment"]["first_seq"] == 200);
    CHECK(j["alignment"]["last_seq"] == 1799);
    CHECK(std::abs(j["alignment"]["drift_ppm"].get<double>() - 20.0) < 2.0);
    REQUIRE(j["samples"].size() == 2);
    CHECK(j["samples"][0]["in_trace"] == true);
    CHECK(j["samples"][0]["blockers"][0]["kind"] == "irqs off");
    CHECK(j["samples"][0]["blockers"][0]["duration_ns"] == 3000);
    CHECK(j["samples"][0]["parts"][0]["inferred"] == true);
    CHECK(j["samples"][1]["in_trace"] == false); // seq 50: before the trace

    // Bad input: exit 2, the message's what and why, the file as it was.
    auto refused = [&](const std::string& text, const std::string& why,
                       std::vector<std::string> extra = {}) {
        const auto bad = dir.file("bad.txt");
        write_text(bad, text);
        std::vector<std::string> args = {"explain", "--db", db, "--run", "1", "--trace", bad};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto b = run_irqloop(args);
        INFO(b.out << b.err);
        CHECK(b.status == 2);
        CHECK(b.err.find("irqloop: explain") != std::string::npos);
        CHECK(b.err.find(why) != std::string::npos);
        CHECK(b.out.empty());
        CHECK((read_bytes(db) == before)); // not decomposed: a failure prints no file
    };
    refused(trace_of_run(raw, 200, 1800, "eth0"),
            "it has no irq_handler_entry of 'irqloop_responder'");
    refused("# tracer: function\n", "it is the output of the 'function' tracer");
    const auto whole = trace_of_run(raw, 200, 400, "irqloop_responder");
    refused(whole.substr(0, whole.size() - 30), "a truncated file?");
    refused(whole.substr(0, whole.size() - 30) + "\n", "a truncated line?");
    refused(trace_of_run(other, 200, 1800, "irqloop_responder"), "a trace of another run");
    refused(whole, "--irq-name", {"--irq-name", "nope"});
    const auto b =
        run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--seq", "99999"});
    CHECK(b.status == 2);
    CHECK(b.err.find("run 1 has no sample 99999 (--seq)") != std::string::npos);
    CHECK((read_bytes(db) == before)); // not decomposed: a failure prints no file
}

TEST_CASE("explain: alignment: a stray edge before the run's first is left trace-only and the "
          "anchor found from the next edge",
          "[explain]")
{
    const auto run = scripted_run(3000, 100'000, 10'000, 21);
    auto edges = scripted_edges(run, 5.0, 0, 3000);
    edges.insert(edges.begin(), {edges.front().entry_ns - 5'000'000, std::nullopt, 1, 25, "x-1"});
    const auto a = align_trace(run, edges, 100'000);
    CHECK(a.trace_only == 1);
    CHECK(a.run_only == 0);
    REQUIRE(a.pairs.size() == 3000);
    for (const auto& p : a.pairs)
        REQUIRE(p.run_index + 1 == p.edge_index);
}

TEST_CASE("explain: threaded mode: the IRQ's thread in the trace drops the lower bound that an "
          "answer written after the hard handler's exit would break",
          "[explain]")
{
    auto run = scripted_run(400, 100'000, 10'000, 22);
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<std::int64_t> thread(20'000, 60'000);
    // The thread answers 20 to 60 us after the handler's entry.
    const auto delays = random_delays(run, rng, [&](std::mt19937_64& g) { return thread(g); });
    auto edges = scripted_edges(run, 0, 0, 400, delays);
    for (auto& e : edges)
        e.exit_ns = e.entry_ns + 2'000; // the hard handler only wakes the thread
    const auto a = align_trace(run, edges, 100'000);
    std::string why;
    try {
        (void)delay_floor_of(run, edges, a);
    } catch (const error& e) {
        why = e.message();
    }
    CHECK(why.find("contradict") != std::string::npos); // as if not threaded: refused
    const auto f = delay_floor_of(run, edges, a, true);
    CHECK(f.lo_ns == 0);
    CHECK(f.hi_ns >= 4'000); // the fastest edge's true delay, inside the bounds
    CHECK(!f.crossed);
    CHECK(f.contradicted.empty());
    // An answer before its handler's entry contradicts in threaded mode too: the thread answers
    // after the hard handler, never before it. One such sample is set aside; five of 400 refuse.
    // (An edge 8 us or more above the fastest, its answer 1 us after the stimulus.)
    std::vector<std::size_t> slow;
    for (std::size_t i = 0; i < run.size(); ++i)
        if (delays.at(i) >= 8'500)
            slow.push_back(i);
    REQUIRE(slow.size() >= 5);
    auto early = run;
    early[slow[0]].latency_ns = 1'000;
    const auto g = delay_floor_of(early, edges, a, true);
    REQUIRE(g.contradicted.size() == 1);
    CHECK(g.contradicted[0].run_index == slow[0]);
    CHECK(g.contradicted[0].answer_before_entry);
    CHECK(g.hi_ns == f.hi_ns);
    for (std::size_t k = 1; k < 5; ++k)
        early[slow[k]].latency_ns = 1'000;
    std::string refused;
    try {
        (void)delay_floor_of(early, edges, a, true);
    } catch (const error& e) {
        refused = e.message();
    }
    CHECK(refused.find("5 of 400 answered samples contradict the rest") != std::string::npos);

    const auto plain =
        parse(kline(1'000'000'000, 1, "irq_handler_entry: irq=41 name=irqloop_responder"));
    CHECK(!irqloop::analysis::threaded_handler(plain, 41));
    const auto woken =
        parse(kline(1'000'000'000, 1, "irq_handler_entry: irq=41 name=irqloop_responder") +
              kline(1'000'002'000, 1,
                    "sched_wakeup: comm=irq/41-irqloop_r pid=95 prio=49 target_cpu=001"));
    CHECK(irqloop::analysis::threaded_handler(woken, 41));
    CHECK(!irqloop::analysis::threaded_handler(woken, 4));
}

TEST_CASE("explain: alignment: stimuli back to back (latency above the interval), a slow first "
          "edge and edges 1 ms late pair each edge with its own stimulus",
          "[explain]")
{
    // The shape of the QEMU testbed's explain-irq trace: the wire delays each edge 500 us (plus
    // 0 to 10 us), each answer comes 20 to 30 us after its handler's entry and the next
    // stimulus 3 us after the answer (the 100 us interval is shorter than a round trip), the
    // first edge is 164 us slower than the rest, and one sample in 20 waits 1 ms more behind
    // another IRQ's handler. The logger starts the second stimulus 5.4 ms late (as the real
    // run did) and stalls 4 ms after one answer in 37: the gaps that place the anchor. Before,
    // every edge after the first paired with the stimulus before its own (the walk took the first
    // edge's delay for the fastest), and the 1 ms ones, further than 4 intervals from their
    // stimulus, were counted trace-only.
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<std::int64_t> wire(0, 10'000), answer(20'000, 30'000);
    std::vector<run_stimulus> run;
    std::vector<handler_edge> edges;
    std::int64_t t = 1'764'900'000'000'000'000;
    for (std::size_t i = 0; i < 600; ++i) {
        const std::int64_t delay =
            500'000 + wire(rng) + (i == 0 ? 164'000 : 0) + (i % 20 == 7 ? 1'000'000 : 0);
        const std::int64_t to_answer = answer(rng); // written by the handler, 2 us before its exit
        run.push_back({i, t, delay + to_answer, 1'000});
        const std::int64_t entry = 7'000'000'000'000 + (t - run[0].t_ns) + delay;
        edges.push_back({entry, entry + to_answer + 2'000, 0, 26, "irqloop-sampler-130"});
        t += delay + to_answer + 3'000 + (i == 0 ? 5'400'000 : 0) + (i % 37 == 5 ? 4'000'000 : 0);
    }
    const auto a = align_trace(run, edges, 100'000);
    CHECK(a.trace_only == 0);
    CHECK(a.run_only == 0);
    REQUIRE(a.pairs.size() == run.size());
    for (const auto& p : a.pairs)
        REQUIRE(p.run_index == p.edge_index);
    const auto f = delay_floor_of(run, edges, a);
    CHECK(!f.crossed);
    CHECK(f.lo_ns <= 500'000);
    CHECK(f.hi_ns >= 500'000);
}

namespace explain_test
{

/** Every row of every table of @p path but the breakdown tables, as text: the rest of a file. */
std::string rows_but_breakdowns(const std::string& path)
{
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    SQLite::Statement tables(d, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') "
                                "AND name NOT IN ('breakdowns', 'breakdown_parts') ORDER BY name");
    std::string out;
    while (tables.executeStep()) {
        const std::string name = tables.getColumn(0).getString();
        SQLite::Statement q(d, "SELECT * FROM " + name);
        out += "== " + name + "\n";
        while (q.executeStep()) {
            for (int c = 0; c < q.getColumnCount(); ++c)
                out += q.getColumn(c).getString() + "|";
            out += "\n";
        }
    }
    return out;
}

std::int64_t count_of(const std::string& path, const std::string& sql)
{
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    return d.execAndGet(sql).getInt64();
}

} // namespace explain_test

TEST_CASE("explain --store: each explained sample's breakdown is kept with the run and nothing "
          "else in the file changes; explaining again replaces it; a refused trace writes nothing",
          "[explain]")
{
    temp_dir dir;
    const auto db = dir.file("e.db"), other_db = dir.file("o.db");
    const auto raw = scripted_raw_run(db, 2000, "kept", 11);
    const auto other = scripted_raw_run(other_db, 2000, "other", 12);
    // The run's worst sample as explain --worst picks it (the stored top-K's rank 1).
    const auto seq = std::to_string(count_of(db, "SELECT seq FROM worst WHERE rank = 1"));
    const auto trace = dir.file("trace.txt");
    write_text(trace, trace_of_run(raw, 0, 2000, "irqloop_responder", std::stol(seq)));

    // Refused traces write nothing: the file byte for byte as it was, --store or not.
    auto before = read_bytes(db);
    auto refused = [&](const std::string& text, const std::string& why) {
        const auto bad = dir.file("bad.txt");
        write_text(bad, text);
        const auto b = run_irqloop(
            {"explain", "--db", db, "--run", "1", "--trace", bad, "--seq", seq, "--store"});
        INFO(b.out << b.err);
        CHECK(b.status == 2);
        CHECK(b.err.find(why) != std::string::npos);
        CHECK((read_bytes(db) == before)); // not decomposed: a failure prints no file
    };
    refused(trace_of_run(raw, 200, 1800, "eth0"),
            "it has no irq_handler_entry of 'irqloop_responder'");
    refused(trace_of_run(other, 200, 1800, "irqloop_responder"), "a trace of another run");
    refused("# tracer: function\n", "it is the output of the 'function' tracer");
    // Without --store, explain reads only.
    REQUIRE(
        run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--seq", seq}).status ==
        0);
    CHECK((read_bytes(db) == before)); // not decomposed: a failure prints no file
    const auto rest = rows_but_breakdowns(db);

    // Stored: the worst sample's breakdown; a sample outside the trace gets none.
    const auto cut = dir.file("cut.txt");
    write_text(cut, trace_of_run(raw, 0, 1800, "irqloop_responder", std::stol(seq)));
    auto r = run_irqloop(
        {"explain", "--db", db, "--run", "1", "--trace", cut, "--seq", "1900", "--store"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("stored: 0 breakdowns with run 1 in '") != std::string::npos);
    CHECK(r.out.find("(1 not in the trace: none stored for them)") != std::string::npos);
    CHECK(count_of(db, "SELECT count(*) FROM breakdowns") == 0);
    r = run_irqloop(
        {"explain", "--db", db, "--run", "1", "--trace", trace, "--seq", seq, "--store", "--json"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["stored"] == 1);
    CHECK(rows_but_breakdowns(db) == rest);
    CHECK(count_of(db, "SELECT count(*) FROM breakdowns") == 1);
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    {
        SQLite::Statement q(d, "SELECT run_id, seq, trace, trace_bytes, trace_hash, trace_events, "
                               "paired, residual_ns, latency_ns, blocker_kind, blocker_name, "
                               "blocker_ns, blocker_in_window_ns, blocker_complete FROM "
                               "breakdowns");
        REQUIRE(q.executeStep());
        CHECK(q.getColumn(0).getInt64() == 1);
        CHECK(q.getColumn(1).getString() == seq);
        CHECK(q.getColumn(2).getString() == trace);
        const auto bytes = read_bytes(trace);
        CHECK(q.getColumn(3).getInt64() == std::int64_t(bytes.size()));
        // FNV-1a 64 of the trace's bytes, computed here on its own.
        std::uint64_t h = 0xcbf29ce484222325ull;
        for (const auto c : bytes)
            h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
        CHECK(q.getColumn(4).getString() == hex);
        CHECK(q.getColumn(5).getInt64() == j["trace_events"].get<std::int64_t>());
        CHECK(q.getColumn(6).getInt64() == 2000);
        CHECK(q.getColumn(7).getDouble() == j["alignment"]["residual_ns"].get<double>());
        CHECK(q.getColumn(8).getInt64() ==
              count_of(db, "SELECT latency_ns FROM worst WHERE rank = 1"));
        CHECK(q.getColumn(9).getString() == "irqs off");
        CHECK(q.getColumn(10).getString() == "injected_lock+0x1/0x2");
        CHECK(q.getColumn(11).getInt64() == 3000);
        CHECK(q.getColumn(12).getInt64() == 3000);
        CHECK(q.getColumn(13).getInt() == 1);
    }
    {
        SQLite::Statement q(d, "SELECT idx, part, ns, clock, measured FROM breakdown_parts "
                               "WHERE seq = " +
                                   seq + " ORDER BY idx");
        const auto& parts = j["samples"][0]["parts"];
        std::size_t n = 0;
        while (q.executeStep()) {
            ++n;
            if (n <= parts.size()) {
                CHECK(q.getColumn(1).getString() == parts[n - 1]["part"]);
                CHECK(q.getColumn(2).getInt64() == parts[n - 1]["ns"]);
                CHECK(q.getColumn(3).getString() == "logger");
                CHECK(q.getColumn(4).getInt() == 0); // inferred
            } else {
                CHECK(q.getColumn(1).getString() == "handler ran");
                CHECK(q.getColumn(2).getInt64() == 4000);
                CHECK(q.getColumn(3).getString() == "target");
                CHECK(q.getColumn(4).getInt() == 1); // measured
            }
        }
        CHECK(n == 3);
    }

    // Explained again, with the worst 3 (the same sample among them): replaced, not doubled.
    for (int pass = 0; pass < 2; ++pass) {
        r = run_irqloop(
            {"explain", "--db", db, "--run", "1", "--trace", trace, "--worst", "3", "--store"});
        REQUIRE(r.status == 0);
        CHECK(r.out.find("stored: 3 breakdowns with run 1 in '") != std::string::npos);
        CHECK(count_of(db, "SELECT count(*) FROM breakdowns") == 3);
        CHECK(count_of(db, "SELECT count(*) FROM breakdowns WHERE seq = " + seq) == 1);
        CHECK(count_of(db, "SELECT count(*) FROM breakdown_parts") == 9);
        CHECK(count_of(db, "SELECT count(*) FROM breakdown_parts WHERE seq = " + seq) == 3);
        CHECK(rows_but_breakdowns(db) == rest);
    }

    // A refusal after storing leaves the stored breakdowns, and the whole file, as they were.
    before = read_bytes(db);
    refused(trace_of_run(other, 200, 1800, "irqloop_responder"), "a trace of another run");
    refused(trace_of_run(raw, 0, 2000, "eth0"), "it has no irq_handler_entry");
    CHECK(count_of(db, "SELECT count(*) FROM breakdowns") == 3);

    // The real consumers: worst and report show the why column on the explained samples,
    // export gives the breakdowns, merge carries them into another file.
    const std::string why = "irqs off injected_lock+0x1/0x2 3.0us (target clock)";
    for (const auto& cmd :
         {std::vector<std::string>{"worst", "--db", db, "--top", "5"},
          std::vector<std::string>{"report", "--db", db, "--run", "1", "--top", "5"}}) {
        const auto w = run_irqloop(cmd);
        INFO(w.out << w.err);
        REQUIRE(w.status == 0);
        CHECK(w.out.find(" why") != std::string::npos);
        const auto at = w.out.find(why);
        REQUIRE(at != std::string::npos);
        // On the worst sample's own line.
        const auto line = w.out.substr(w.out.rfind('\n', at) + 1,
                                       w.out.find('\n', at) - w.out.rfind('\n', at) - 1);
        CHECK(line.find(" " + seq + " ") != std::string::npos);
    }
    const auto e = run_irqloop({"export", "--db", db, "--run", "1", "--what", "summary"});
    REQUIRE(e.status == 0);
    const auto x = nlohmann::json::parse(e.out);
    const auto& kept = x["runs"][0]["breakdowns"];
    REQUIRE(kept.size() == 3);
    std::size_t named = 0;
    for (const auto& b : kept) {
        CHECK(b["parts"].size() == 3);
        CHECK(b["trace"] == trace);
        if (std::to_string(b["seq"].get<std::int64_t>()) == seq) {
            ++named;
            CHECK(b["why"] == why);
            CHECK(b["largest_blocker"]["duration_ns"] == 3000);
            CHECK(b["parts"][2]["measured"] == true);
            CHECK(b["parts"][0]["measured"] == false);
        }
    }
    CHECK(named == 1);
    // The trace noted no drop: every window complete.
    CHECK(count_of(db, "SELECT count(*) FROM breakdowns WHERE dropped_events = 0") == 3);
    for (const auto& b : kept) {
        CHECK(b["window_complete"] == true);
        CHECK(b["dropped_events"].is_null());
    }
    const auto merged = dir.file("merged.db");
    REQUIRE(run_irqloop({"merge", "--db", merged, db}).status == 0);
    CHECK(count_of(merged, "SELECT count(*) FROM breakdowns") == 3);
    CHECK(count_of(merged, "SELECT count(*) FROM breakdown_parts") == 9);
}

TEST_CASE("explain: the command sets aside a sample whose answer came long after its handler's "
          "exit: not explained, not stored, named in the header; the others are",
          "[explain]")
{
    temp_dir dir;
    const auto db = dir.file("e.db");
    const auto raw = scripted_raw_run(db, 2000, "held", 11);
    std::size_t worst = 200;
    for (std::size_t i = 200; i < 1800; ++i)
        if (raw[i].latency_ns > raw[worst].latency_ns)
            worst = i;
    REQUIRE(raw[worst].latency_ns > 10'000); // its answer 7.5 us or more after the exit
    const auto w = std::to_string(raw[worst].seq);
    const auto trace = dir.file("trace.txt");
    write_text(trace, trace_of_run(raw, 200, 1800, "irqloop_responder", -1, long(raw[worst].seq)));
    auto r = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--seq", w,
                          "--seq", "500", "--store"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("set aside: 1 of 1600 answered paired samples contradict the delay the "
                     "others allow, and are not explained (seq " +
                     w + ")\n") != std::string::npos);
    CHECK(r.out.find("seq " + w + "  latency") != std::string::npos);
    CHECK(r.out.find("  not explained: its latency contradicts its edge's handler times by ") !=
          std::string::npos);
    CHECK(r.out.find("after the handler's exit by more than its bracket") != std::string::npos);
    CHECK(r.out.find("(1 not explained: none stored for them)") != std::string::npos);
    CHECK(count_of(db, "SELECT count(*) FROM breakdowns") == 1);
    CHECK(count_of(db, "SELECT seq FROM breakdowns") == 500);
    r = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--seq", w, "--json"});
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["alignment"]["contradicted_seqs"] == nlohmann::json::array({raw[worst].seq}));
    CHECK(j["alignment"]["delay_floor_bounding"] == 1599);
    const auto& s = j["samples"][0];
    CHECK(s["contradicts_ns"].get<std::int64_t>() > 2'000);
    CHECK(s["contradiction"] == "answer after the handler's exit, beyond its bracket");
    CHECK_FALSE(s.contains("parts"));
}

TEST_CASE("explain --store keeps what the tracer dropped in each window: the count, a drop "
          "without one, none; worst, report and export say it, and merge carries it",
          "[explain]")
{
    temp_dir dir;
    const auto db = dir.file("d.db");
    const auto raw = scripted_raw_run(db, 2000, "drops", 13);
    const auto seq = count_of(db, "SELECT seq FROM worst WHERE rank = 1");
    const auto second = count_of(db, "SELECT seq FROM worst WHERE rank = 2");
    const auto third = count_of(db, "SELECT seq FROM worst WHERE rank = 3");
    auto text = trace_of_run(raw, 0, 2000, "irqloop_responder", seq);
    // A counted note before the worst sample's IRQs-off section (inside its window), one with
    // no count before the second's handler entry; the third's window has none.
    const auto at = [&](std::size_t pos) { return text.rfind('\n', pos) + 1; };
    text.insert(at(text.find("irq_disable: caller=injected_lock")), "CPU:1 [LOST 7 EVENTS]\n");
    std::size_t entry = 0;
    for (std::int64_t k = 0; k <= second; ++k)
        entry = text.find("irq_handler_entry: irq=41", entry + 1);
    REQUIRE(entry != std::string::npos);
    text.insert(at(entry), "CPU:1 [EVENTS DROPPED]\n");
    const auto trace = dir.file("dropped.txt");
    write_text(trace, text);
    const auto r = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--seq",
                                std::to_string(seq), "--seq", std::to_string(second), "--seq",
                                std::to_string(third), "--store"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("the tracer dropped 7 events on CPU 1") != std::string::npos);
    CHECK(r.out.find("stored: 3 breakdowns with run 1 in '") != std::string::npos);
    const auto dropped = [&](const std::string& path, std::int64_t s) {
        return count_of(path,
                        "SELECT dropped_events FROM breakdowns WHERE seq = " + std::to_string(s));
    };
    CHECK(dropped(db, seq) == 7);
    CHECK(dropped(db, second) == -1);
    CHECK(dropped(db, third) == 0);

    const std::string why = "irqs off injected_lock+0x1/0x2 3.0us (target clock); the tracer "
                            "dropped 7 events in the window";
    const auto w = run_irqloop({"worst", "--db", db, "--top", "3"});
    INFO(w.out << w.err);
    REQUIRE(w.status == 0);
    CHECK(w.out.find(why) != std::string::npos);
    CHECK(w.out.find("nothing traced; the tracer dropped events in the window") !=
          std::string::npos);
    const auto rep = run_irqloop({"report", "--db", db, "--run", "1", "--top", "3"});
    REQUIRE(rep.status == 0);
    CHECK(rep.out.find(why) != std::string::npos);

    const auto e = run_irqloop({"export", "--db", db, "--run", "1", "--what", "summary"});
    REQUIRE(e.status == 0);
    const auto x = nlohmann::json::parse(e.out);
    std::size_t seen = 0;
    for (const auto& b : x["runs"][0]["breakdowns"]) {
        const auto s = b["seq"].get<std::int64_t>();
        if (s == seq) {
            CHECK(b["window_complete"] == false);
            CHECK(b["dropped_events"] == 7);
            CHECK(b["why"] == why);
        } else if (s == second) {
            CHECK(b["window_complete"] == false);
            CHECK(b["dropped_events"].is_null());
        } else {
            CHECK(s == third);
            CHECK(b["window_complete"] == true);
            CHECK(b["dropped_events"].is_null());
            CHECK(b["why"] == "nothing traced");
        }
        ++seen;
    }
    CHECK(seen == 3);
    const auto merged = dir.file("merged.db");
    REQUIRE(run_irqloop({"merge", "--db", merged, db}).status == 0);
    CHECK(dropped(merged, seq) == 7);
    CHECK(dropped(merged, second) == -1);
    CHECK(dropped(merged, third) == 0);
}
