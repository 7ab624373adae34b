// SPDX-License-Identifier: MIT
#include "trace-explain.hpp"

#include "error.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>

namespace irqloop::analysis
{

namespace trace_explain_detail
{

std::string ns_us(double ns)
{
    char b[48];
    std::snprintf(b, sizeof b, "%.1f us", ns / 1000.0);
    return b;
}

/** Median absolute deviation of @p v (changed). */
double mad(std::vector<std::int64_t>& v)
{
    if (v.empty())
        return 0;
    auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    const std::int64_t med = *mid;
    for (auto& x : v)
        x = x > med ? x - med : med - x;
    std::nth_element(v.begin(), mid, v.end());
    return double(*mid);
}

/** The index of the last stimulus at or before @p t, -1 when none. */
std::ptrdiff_t last_at_or_before(std::span<const run_stimulus> run, std::int64_t t)
{
    const auto it =
        std::upper_bound(run.begin(), run.end(), t,
                         [](std::int64_t v, const run_stimulus& s) { return v < s.t_ns; });
    return std::ptrdiff_t(it - run.begin()) - 1;
}

/**
 * How well the first edges fit when edge 0 is stimulus @p i0: the spread (MAD) of the
 * differences of the next edges' delays from edge 0's. Infinity when a quarter of them find no
 * stimulus of their own.
 */
double anchor_spread(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                     std::size_t i0, std::size_t count, std::int64_t tol_ns,
                     std::vector<std::int64_t>& diffs)
{
    const std::int64_t o = edges[0].entry_ns - run[i0].t_ns;
    diffs.clear();
    diffs.push_back(0);
    std::ptrdiff_t last = std::ptrdiff_t(i0);
    std::size_t misses = 0;
    for (std::size_t j = 1; j <= count; ++j) {
        const auto k = last_at_or_before(run, edges[j].entry_ns - o + tol_ns);
        if (k <= last) {
            if (++misses * 4 > count)
                return std::numeric_limits<double>::infinity();
            continue;
        }
        last = k;
        diffs.push_back(edges[j].entry_ns - run[std::size_t(k)].t_ns - o);
    }
    return mad(diffs);
}

/**
 * The walk: each edge to the last stimulus at or before it on the envelope so far, from
 * @p a.base_ns (the anchor's edge minus its stimulus), over the first @p max_edges edges; fills
 * @p a.pairs and @p a.trace_only, returns the edges inside the run. The anchor's edge need not
 * be the fastest: an edge may come earlier than the envelope so far by as much as the anchor's
 * delay, which its latency @p anchor_latency bounds (its handler entered before its answer);
 * and an edge may come after its stimulus by as much as that sample's latency.
 */
std::size_t walk_edges(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                       std::int64_t interval_ns, std::int64_t tol, std::int64_t anchor_latency,
                       std::size_t max_edges, trace_alignment& a)
{
    anchor_latency = std::max<std::int64_t>(anchor_latency, 0);
    std::deque<std::int64_t> recent{0};
    std::ptrdiff_t last = -1;
    std::size_t inside = 0;
    for (std::size_t j = 0; j < std::min(max_edges, edges.size()); ++j) {
        const std::int64_t env = *std::min_element(recent.begin(), recent.end());
        const std::int64_t at = edges[j].entry_ns - a.base_ns - env; // on the logger's clock
        if (at < run.front().t_ns - interval_ns || at > run.back().t_ns + 4 * interval_ns) {
            ++a.trace_only;
            continue;
        }
        ++inside;
        auto k = last_at_or_before(run, at + tol);
        const auto too_far = [&](std::ptrdiff_t i) {
            return at - run[std::size_t(i)].t_ns >
                   std::max(4 * interval_ns, run[std::size_t(i)].latency_ns + tol);
        };
        if (k <= last) {
            // A late answer's edge took this stimulus: it goes back to the unpaired one before.
            // Else an edge faster than the envelope so far: the next stimulus, when it is
            // within the anchor's delay.
            const std::ptrdiff_t before =
                a.pairs.size() >= 2 ? std::ptrdiff_t(a.pairs[a.pairs.size() - 2].run_index) : -1;
            const std::size_t next = std::size_t(last + 1);
            if (k >= 0 && k == last && k - 1 > before && !too_far(k)) {
                a.pairs.back().run_index = std::size_t(k - 1);
            } else if (last >= 0 && next < run.size() &&
                       run[next].t_ns <=
                           at + tol + std::max<std::int64_t>(anchor_latency + env, 0)) {
                k = std::ptrdiff_t(next);
            } else {
                ++a.trace_only;
                continue;
            }
        } else if (too_far(k)) {
            ++a.trace_only;
            continue;
        }
        a.pairs.push_back({std::size_t(k), j});
        last = k;
        recent.push_back(edges[j].entry_ns - run[std::size_t(k)].t_ns - a.base_ns);
        if (recent.size() > 32)
            recent.pop_front();
    }
    return inside;
}

/**
 * How far the run's latencies contradict pairs @p a (ns, 0 when they do not): each paired edge's
 * delay, the anchor's plus its difference, lies between its latency minus its bracket and
 * handler run (not when @p threaded: the thread answers) and its latency, and is not negative.
 */
double pairs_contradiction(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                           const trace_alignment& a, bool threaded)
{
    std::int64_t lo = 0, hi = std::numeric_limits<std::int64_t>::max();
    for (const auto& p : a.pairs) {
        const auto& s = run[p.run_index];
        const auto& e = edges[p.edge_index];
        if (s.latency_ns < 0)
            continue;
        const std::int64_t diff = e.entry_ns - s.t_ns - a.base_ns;
        hi = std::min(hi, s.latency_ns - diff);
        if (e.exit_ns && !threaded)
            lo = std::max(lo, s.latency_ns - s.bracket_ns - (*e.exit_ns - e.entry_ns) - diff);
    }
    return hi == std::numeric_limits<std::int64_t>::max() || lo <= hi ? 0.0 : double(lo - hi);
}

struct open_span final {
    std::int64_t start_ns = 0;
    std::string name;
};

} // namespace trace_explain_detail

std::vector<handler_edge> responder_edges(const trace_text& t, const std::string& irq_name)
{
    std::vector<handler_edge> out;
    std::map<int, std::size_t> open; // cpu -> edge without its exit yet
    for (const auto& e : t.events) {
        if (e.kind == trace_kind::irq_entry && e.name == irq_name) {
            open[e.cpu] = out.size();
            out.push_back({e.t_ns, std::nullopt, e.cpu, e.number, e.task});
        } else if (e.kind == trace_kind::irq_exit) {
            const auto it = open.find(e.cpu);
            if (it != open.end() && out[it->second].irq == e.number) {
                out[it->second].exit_ns = e.t_ns;
                open.erase(it);
            }
        }
    }
    return out;
}

trace_alignment align_trace(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                            std::int64_t interval_ns, bool threaded)
{
    using namespace trace_explain_detail;
    const std::string what = "explain: align the trace with the run";
    if (edges.size() < 8)
        throw error(what,
                    "the trace has " + std::to_string(edges.size()) +
                        " edges of the responder's IRQ, fewer than 8",
                    "trace longer, or name the IRQ: --irq-name (see /proc/interrupts)");
    if (run.size() < 8)
        throw error(what, "the run has " + std::to_string(run.size()) + " stimuli, fewer than 8",
                    "explain a longer run");
    if (interval_ns <= 0)
        interval_ns = (run.back().t_ns - run.front().t_ns) / std::int64_t(run.size() - 1);
    const std::int64_t tol = std::max<std::int64_t>(interval_ns / 8, 2000);

    // The anchor: stimulus i0 for edge j0. Every stimulus on the next 32 edges, then the 16
    // best on up to 256 (a spread's estimate on few edges is too rough to part two places).
    // Edge 0 first; when it fits nowhere (a stray edge before the run's), edges 1 to 3.
    struct anchor_fit final {
        double best = std::numeric_limits<double>::infinity(), next = best;
        std::size_t run_index = 0;
    };
    std::vector<std::int64_t> diffs;
    auto find_anchor = [&](std::size_t j0) {
        const auto from = edges.subspan(j0);
        const std::size_t first = std::min<std::size_t>(32, from.size() - 1);
        const std::size_t count = std::min<std::size_t>(256, from.size() - 1);
        std::vector<std::pair<double, std::size_t>> rough;
        for (std::size_t i0 = 0; i0 < run.size(); ++i0) {
            const double s = anchor_spread(run, from, i0, first, tol, diffs);
            if (std::isfinite(s))
                rough.emplace_back(s, i0);
        }
        const std::size_t keep = std::min<std::size_t>(16, rough.size());
        std::partial_sort(rough.begin(), rough.begin() + std::ptrdiff_t(keep), rough.end());
        // Each place walked over the same edges: a place whose pairs the run's latencies
        // contradict (stimuli back to back: the edge of the stimulus before fits as well) is
        // left out while another one is consistent.
        std::vector<std::pair<double, std::size_t>> refined, consistent;
        for (std::size_t c = 0; c < keep; ++c) {
            const std::size_t i0 = rough[c].second;
            const double s = anchor_spread(run, from, i0, count, tol, diffs);
            refined.emplace_back(s, i0);
            if (!std::isfinite(s))
                continue;
            trace_alignment trial;
            trial.base_ns = from[0].entry_ns - run[i0].t_ns;
            (void)walk_edges(run, from, interval_ns, tol, run[i0].latency_ns, count + 1, trial);
            if (pairs_contradiction(run, from, trial, threaded) <= 2000)
                consistent.emplace_back(s, i0);
        }
        anchor_fit f;
        for (const auto& [s, i0] : consistent.empty() ? refined : consistent) {
            if (s < f.best) {
                f.next = f.best;
                f.best = s;
                f.run_index = i0;
            } else if (s < f.next) {
                f.next = s;
            }
        }
        if (!std::isfinite(f.best))
            throw error(what,
                        "no stimulus of the run fits the trace's first " +
                            std::to_string(count + 1) + " edges",
                        "a trace of another run? give the trace taken during this run");
        // Ties within a nanosecond's spread are alike: the floor keeps a perfect fit comparable.
        if (std::isfinite(f.next) && std::max(f.best, 1.0) * 2 > f.next)
            throw error(what,
                        "the first edges fit two places of the run alike (spreads " +
                            ns_us(f.best) + " and " + ns_us(f.next) + ")",
                        "a trace of another run, or a strictly periodic run: record with --jitter");
        return f;
    };
    anchor_fit fit;
    std::size_t anchor_edge = 0;
    std::optional<error> first_refusal; // edge 0's, the one a user is told
    for (;; ++anchor_edge) {
        try {
            fit = find_anchor(anchor_edge);
            break;
        } catch (const error& e) {
            if (!first_refusal)
                first_refusal = e;
            if (anchor_edge == 3 || edges.size() - anchor_edge <= 8)
                throw *first_refusal;
        }
    }

    trace_alignment a;
    a.anchor_spread_ns = fit.best;
    a.next_spread_ns = std::isfinite(fit.next) ? fit.next : 0;
    a.base_ns = edges[anchor_edge].entry_ns - run[fit.run_index].t_ns;

    const std::size_t inside =
        walk_edges(run, edges, interval_ns, tol, run[fit.run_index].latency_ns, edges.size(), a);
    if (a.pairs.size() * 2 < inside || a.pairs.size() < 8)
        throw error(what,
                    std::to_string(a.pairs.size()) + " of the trace's " + std::to_string(inside) +
                        " edges inside the run pair with a stimulus",
                    "a trace of another run? give the trace taken during this run");

    // The envelope: the minimum of each window of 16 pairs, a line through them.
    a.t0_ns = run[a.pairs.front().run_index].t_ns;
    auto diff_of = [&](const trace_alignment::pair& p) {
        return edges[p.edge_index].entry_ns - run[p.run_index].t_ns - a.base_ns;
    };
    std::vector<std::pair<double, double>> minima; // (t - t0, diff)
    for (std::size_t w = 0; w < a.pairs.size(); w += 16) {
        const std::size_t end = std::min(a.pairs.size(), w + 16);
        if (end - w < 8 && !minima.empty())
            break; // a short last window's minimum would sit high
        std::size_t m = w;
        for (std::size_t p = w; p < end; ++p)
            if (diff_of(a.pairs[p]) < diff_of(a.pairs[m]))
                m = p;
        minima.emplace_back(double(run[a.pairs[m].run_index].t_ns - a.t0_ns),
                            double(diff_of(a.pairs[m])));
    }
    a.windows = minima.size();
    double slope = 0, icept = minima.front().second;
    if (minima.size() >= 2) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (const auto& [x, y] : minima) {
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
        }
        const double n = double(minima.size()), den = n * sxx - sx * sx;
        if (den > 0) {
            slope = (n * sxy - sx * sy) / den;
            icept = (sy - slope * sx) / n;
        } else {
            icept = sy / n;
        }
    }
    double ss = 0;
    for (const auto& [x, y] : minima)
        ss += (y - icept - slope * x) * (y - icept - slope * x);
    a.residual_ns = std::sqrt(ss / double(minima.size()));
    double lowest = 0;
    bool first_pair = true;
    for (const auto& p : a.pairs) {
        const double r =
            double(diff_of(p)) - icept - slope * double(run[p.run_index].t_ns - a.t0_ns);
        lowest = first_pair ? r : std::min(lowest, r);
        first_pair = false;
    }
    a.offset_ns = icept + lowest;
    a.drift_ppm = slope * 1e6;

    // What the trace does not account for.
    const std::int64_t from =
        edges.front().entry_ns - a.base_ns - std::int64_t(a.envelope_at(run.front().t_ns));
    const std::int64_t to =
        edges.back().entry_ns - a.base_ns - std::int64_t(a.envelope_at(run.back().t_ns));
    std::size_t p = 0;
    for (std::size_t i = 0; i < run.size(); ++i) {
        while (p < a.pairs.size() && a.pairs[p].run_index < i)
            ++p;
        if (p < a.pairs.size() && a.pairs[p].run_index == i)
            continue;
        if (run[i].t_ns + tol < from || run[i].t_ns > to)
            ++a.outside;
        else
            ++a.run_only;
    }
    return a;
}

bool threaded_handler(const trace_text& t, int irq)
{
    const std::string thread = "irq/" + std::to_string(irq) + "-";
    for (const auto& e : t.events)
        if ((e.kind == trace_kind::sched_switch || e.kind == trace_kind::sched_wakeup) &&
            e.name.starts_with(thread))
            return true;
    return false;
}

delay_floor delay_floor_of(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                           const trace_alignment& a, bool threaded)
{
    std::int64_t lo = 0, hi = std::numeric_limits<std::int64_t>::max();
    for (const auto& p : a.pairs) {
        const auto& s = run[p.run_index];
        if (s.latency_ns < 0)
            continue;
        const auto& e = edges[p.edge_index];
        const std::int64_t excess =
            std::llround(double(e.entry_ns - s.t_ns - a.base_ns) - a.envelope_at(s.t_ns));
        hi = std::min(hi, s.latency_ns - excess);
        if (e.exit_ns && !threaded)
            lo = std::max(lo, s.latency_ns - s.bracket_ns - (*e.exit_ns - e.entry_ns) - excess);
    }
    if (hi == std::numeric_limits<std::int64_t>::max())
        return {};
    hi = std::max<std::int64_t>(hi, 0);
    if (lo > hi + 2000)
        throw error("explain: align the trace with the run",
                    "the run's latencies contradict the trace's handler times by " +
                        trace_explain_detail::ns_us(double(lo - hi)) +
                        " (answers before their handler's entry, or after its exit)",
                    "a trace of another run with the same stimulus times (the same --seed)? "
                    "give the trace taken during this run");
    if (lo > hi)
        return {lo, hi, hi, true};
    return {lo, hi, (lo + hi) / 2, false};
}

sample_breakdown explain_sample(std::span<const run_stimulus> run,
                                std::span<const handler_edge> edges, const trace_alignment& a,
                                const trace_text& t, std::size_t run_index, std::int64_t floor_ns)
{
    using namespace trace_explain_detail;
    sample_breakdown b;
    const auto& s = run[run_index];
    b.seq = s.seq;
    b.latency_ns = s.latency_ns;
    const auto it = std::lower_bound(
        a.pairs.begin(), a.pairs.end(), run_index,
        [](const trace_alignment::pair& p, std::size_t i) { return p.run_index < i; });
    if (it == a.pairs.end() || it->run_index != run_index)
        return b;
    const auto& e = edges[it->edge_index];
    b.in_trace = true;
    b.cpu = e.cpu;
    b.excess_ns = std::llround(double(e.entry_ns - s.t_ns - a.base_ns) - a.envelope_at(s.t_ns));
    b.before_handler_ns = floor_ns + b.excess_ns;
    b.handler_to_response_ns = s.latency_ns >= 0 ? s.latency_ns - b.before_handler_ns : 0;
    if (e.exit_ns)
        b.handler_ns = *e.exit_ns - e.entry_ns;

    // The window on the target's clock: the stimulus (by the fit) to the handler's entry.
    const std::int64_t w0 = e.entry_ns - b.before_handler_ns, w1 = e.entry_ns;
    auto add = [&](std::vector<blocker>& to, std::string kind, std::string name, std::int64_t start,
                   std::int64_t end, bool complete) {
        const std::int64_t in = std::min(end, w1) - std::max(start, w0);
        if (in <= 0 && !(start <= w1 && end >= w0 && kind == "task"))
            return;
        to.push_back({std::move(kind), std::move(name), start - w0, end - start,
                      std::max<std::int64_t>(in, 0), complete});
    };
    std::map<int, open_span> irqs; // irq number -> open handler (not the responder's edge)
    std::optional<open_span> softirq, irqs_off, task;
    for (const auto& ev : t.events) {
        if (ev.cpu != e.cpu)
            continue;
        if (ev.t_ns > w1 && irqs.empty() && !softirq && !irqs_off && !task)
            break;
        switch (ev.kind) {
        case trace_kind::irq_entry:
            if (ev.t_ns != e.entry_ns)
                irqs[ev.number] = {ev.t_ns, "irq " + std::to_string(ev.number) + " " + ev.name};
            break;
        case trace_kind::irq_exit:
            if (auto o = irqs.find(ev.number); o != irqs.end()) {
                add(b.blockers, "irq", o->second.name, o->second.start_ns, ev.t_ns, true);
                irqs.erase(o);
            }
            break;
        case trace_kind::softirq_entry:
            softirq = open_span{ev.t_ns, ev.name};
            break;
        case trace_kind::softirq_exit:
            if (softirq)
                add(b.blockers, "softirq", softirq->name, softirq->start_ns, ev.t_ns, true);
            softirq.reset();
            break;
        case trace_kind::irq_disable:
            irqs_off = open_span{ev.t_ns, ev.name};
            break;
        case trace_kind::irq_enable:
            if (irqs_off)
                add(b.blockers, "irqs off", irqs_off->name, irqs_off->start_ns, ev.t_ns, true);
            irqs_off.reset();
            break;
        case trace_kind::nmi:
            add(b.blockers, "nmi", ev.name, ev.t_ns - ev.value, ev.t_ns, true);
            break;
        case trace_kind::sched_switch:
            if (task)
                add(b.tasks, "task", task->name, task->start_ns, ev.t_ns, true);
            task.reset();
            if (ev.t_ns <= w1)
                task = open_span{ev.t_ns, ev.name + "-" + std::to_string(ev.number) + " (prio " +
                                              std::to_string(ev.value) + ")"};
            break;
        case trace_kind::sched_wakeup:
            break;
        }
    }
    // Still open at the end of the trace: counted up to its last timestamp.
    for (const auto& [n, o] : irqs)
        add(b.blockers, "irq", o.name, o.start_ns, t.last_ns, false);
    if (softirq)
        add(b.blockers, "softirq", softirq->name, softirq->start_ns, t.last_ns, false);
    if (irqs_off)
        add(b.blockers, "irqs off", irqs_off->name, irqs_off->start_ns, t.last_ns, false);
    if (task)
        add(b.tasks, "task", task->name, task->start_ns, std::max(t.last_ns, w1), false);
    if (b.tasks.empty()) // no switch on the CPU in the trace: the task the handler interrupted
        b.tasks.push_back({"task", e.task, -b.before_handler_ns, 0, b.before_handler_ns, false});
    std::stable_sort(b.blockers.begin(), b.blockers.end(), [](const blocker& x, const blocker& y) {
        return x.in_window_ns > y.in_window_ns;
    });
    return b;
}

} // namespace irqloop::analysis
