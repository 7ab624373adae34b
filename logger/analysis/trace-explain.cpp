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

/** One answered pair's bounds on the fastest edge's delay (delay_floor_of()). */
struct delay_bound final {
    std::int64_t lo, hi; ///< lo at least 0: the delay is not negative
    std::size_t run_index;
};
/**
 * A trace of more pairs is not fitted in pieces: its fits cost about a second per 10,000 pairs
 * (split on a scripted bend: 3,000 pairs 1.2 s, 30,000 pairs 43 s, before the boundaries were
 * sought by halving), and a refusal is better than a wait of minutes.
 */
constexpr std::size_t max_pairs_in_pieces = 50'000;
/** Below a lower bound by this much is allowed: a trace clock's tick, a wire's return. */
constexpr std::int64_t bound_slack_ns = 2000;

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
 * differences of the next edges' delays from edge 0's, or, when smaller, of their entry-to-answer
 * times (each stimulus's latency less its edge's delay) from edge 0's, over the answered
 * stimuli when they are at least half. Where delays spread over more than the run's jitter (a
 * kernel that holds the IRQ for milliseconds), a wrong place fits the delays about as well as
 * the right one; the entry-to-answer times, the handler's own work, stay close at the right
 * place only. Infinity when a quarter of the edges find no stimulus of their own.
 */
double anchor_spread(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                     std::size_t i0, std::size_t count, std::int64_t tol_ns,
                     std::vector<std::int64_t>& diffs, std::vector<std::int64_t>& answers)
{
    const std::int64_t o = edges[0].entry_ns - run[i0].t_ns;
    diffs.clear();
    diffs.push_back(0);
    answers.clear();
    if (run[i0].latency_ns >= 0)
        answers.push_back(run[i0].latency_ns);
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
        const std::int64_t diff = edges[j].entry_ns - run[std::size_t(k)].t_ns - o;
        diffs.push_back(diff);
        if (run[std::size_t(k)].latency_ns >= 0)
            answers.push_back(run[std::size_t(k)].latency_ns - diff);
    }
    const double by_delay = mad(diffs);
    return answers.size() * 2 >= diffs.size() ? std::min(by_delay, mad(answers)) : by_delay;
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
 * The delay that the most of @p bounds allow, each [lo - slack, hi] (an empty one allows none),
 * and how many allow it: a sweep over their ends, the opening ones first at a tie.
 */
std::pair<std::int64_t, std::size_t> most_allowed(std::span<const delay_bound> bounds)
{
    std::vector<std::pair<std::int64_t, int>> ends; // (position, +1 opens, -1 closes)
    ends.reserve(bounds.size() * 2);
    for (const auto& b : bounds) {
        const std::int64_t open = b.lo - bound_slack_ns;
        if (open > b.hi)
            continue; // allows no delay
        ends.emplace_back(open, +1);
        ends.emplace_back(b.hi, -1);
    }
    std::sort(ends.begin(), ends.end(), [](const auto& x, const auto& y) {
        return x.first != y.first ? x.first < y.first : x.second > y.second;
    });
    std::size_t depth = 0, most = 0;
    std::int64_t at = 0;
    for (const auto& [pos, d] : ends) {
        depth = std::size_t(std::ptrdiff_t(depth) + d);
        if (d > 0 && depth > most) {
            most = depth;
            at = pos;
        }
    }
    return {at, most};
}

/**
 * The bounds each answered pair of @p pairs puts on the fastest edge's delay f under the envelope
 * base_ns + @p env(t) (delay_floor_of()): f + excess <= latency (the answer after the entry) and,
 * not @p threaded, f + excess >= latency - bracket - handler (the answer written before the
 * exit), f not negative; each widened by @p widen_ns both ways. Into @p out.
 */
template <class Envelope>
void floor_bounds(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                  std::span<const trace_alignment::pair> pairs, std::int64_t base_ns,
                  const Envelope& env, bool threaded, std::int64_t widen_ns,
                  std::vector<delay_bound>& out)
{
    out.clear();
    for (const auto& p : pairs) {
        const auto& s = run[p.run_index];
        if (s.latency_ns < 0)
            continue;
        const auto& e = edges[p.edge_index];
        const std::int64_t excess =
            std::llround(double(e.entry_ns - s.t_ns - base_ns) - env(s.t_ns));
        // Its delay f + excess is not negative (an excess below 0: a piece moved up, fit_pieces).
        const std::int64_t not_negative = std::max<std::int64_t>(0, -excess);
        const std::int64_t lo = e.exit_ns && !threaded
                                    ? std::max<std::int64_t>(s.latency_ns - s.bracket_ns -
                                                                 (*e.exit_ns - e.entry_ns) - excess,
                                                             not_negative)
                                    : not_negative;
        out.push_back({lo - widen_ns, s.latency_ns - excess + widen_ns, p.run_index});
    }
}

/** A line fitted to some of the pairs (fit_line()). */
struct line_fit final {
    double offset_ns = 0, drift_ppm = 0; ///< from the first pair's stimulus, lowered to the lowest
    double ss = 0;                       ///< the windows' minima's squared residuals, summed
    std::size_t windows = 0;
    std::size_t answered = 0, agree = 0; ///< answered pairs, and how many allow one delay
};

/**
 * The line through @p pairs (target - logger - @p base_ns over the logger's time from @p t0_ns):
 * the minimum difference of each window of 16 pairs, a least-squares line through them, lowered
 * to the lowest pair; unless a drift under which more of the answered pairs agree on one delay
 * of the fastest edge exists. Each answered sample puts its handler's entry between its stimulus
 * and its answer (and, not @p threaded, its answer before the exit), so it bounds the clock
 * offset at its time, as NTP bounds one by a round trip; a line through the minima of a few
 * edges is pulled by windows whose fastest edge was slow, and the line that the most of these
 * bounds allow is not. That drift is searched from 300 ppm either side of the minima's in
 * narrowing grids (41 drifts each, the bounds widened by what a step moves the line), each
 * centred on the middle of the longest run of its best drifts and at most half as wide as the
 * last, down to a step that moves the line by less than 100 ns over the pairs.
 */
line_fit fit_line(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                  std::span<const trace_alignment::pair> pairs, std::int64_t base_ns,
                  std::int64_t t0_ns, bool threaded, std::optional<double> from_ppm)
{
    line_fit f;
    auto diff_of = [&](const trace_alignment::pair& p) {
        return edges[p.edge_index].entry_ns - run[p.run_index].t_ns - base_ns;
    };
    std::vector<std::pair<double, double>> minima; // (t - t0, diff)
    for (std::size_t w = 0; w < pairs.size(); w += 16) {
        const std::size_t end = std::min(pairs.size(), w + 16);
        if (end - w < 8 && !minima.empty())
            break; // a short last window's minimum would sit high
        std::size_t m = w;
        for (std::size_t p = w; p < end; ++p)
            if (diff_of(pairs[p]) < diff_of(pairs[m]))
                m = p;
        minima.emplace_back(double(run[pairs[m].run_index].t_ns - t0_ns),
                            double(diff_of(pairs[m])));
    }
    f.windows = minima.size();
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
    if (from_ppm) { // a piece's few minima fix no drift: start from the whole trace's
        slope = *from_ppm * 1e-6;
        icept = 0;
        for (const auto& [x, y] : minima)
            icept += y - slope * x;
        icept /= double(minima.size());
    }

    // How many answered pairs agree on one delay under a drift, the line lowered to the lowest.
    std::int64_t span_ns = 0;
    for (const auto& p : pairs)
        if (run[p.run_index].latency_ns >= 0) {
            ++f.answered;
            span_ns = std::max(span_ns, run[p.run_index].t_ns - t0_ns);
        }
    // The line of drift ppm through the lowest pair: its offset at t0_ns.
    const auto lowest_at = [&](double ppm) {
        double lowest = std::numeric_limits<double>::infinity();
        for (const auto& p : pairs)
            lowest = std::min(lowest, double(diff_of(p)) -
                                          ppm * 1e-6 * double(run[p.run_index].t_ns - t0_ns));
        return lowest;
    };
    std::vector<delay_bound> bounds;
    const auto agree = [&](double ppm, std::int64_t widen_ns) {
        const double lowest = lowest_at(ppm);
        const auto env = [&](std::int64_t t) { return lowest + ppm * 1e-6 * double(t - t0_ns); };
        floor_bounds(run, edges, pairs, base_ns, env, threaded, widen_ns, bounds);
        return most_allowed(bounds).second;
    };
    if (f.answered)
        f.agree = agree(slope * 1e6, 0);
    if (f.answered >= 8 && span_ns > 0 && f.agree < f.answered) {
        double centre = slope * 1e6, half = 300;
        constexpr int steps = 20; // either side
        std::vector<std::size_t> counts(2 * steps + 1);
        for (;;) {
            const double step = half / steps;
            const auto widen = std::int64_t(std::ceil(step * 1e-6 * double(span_ns)));
            for (int k = -steps; k <= steps; ++k)
                counts[std::size_t(k + steps)] = agree(centre + k * step, widen);
            const std::size_t most = *std::max_element(counts.begin(), counts.end());
            int run_from = 0, run_len = 0;
            for (int k = 0; k <= 2 * steps;) {
                int e = k;
                while (e <= 2 * steps && counts[std::size_t(e)] == most)
                    ++e;
                if (e - k > run_len) {
                    run_len = e - k;
                    run_from = k;
                }
                k = std::max(e, k + 1);
            }
            centre += (run_from + (run_len - 1) / 2.0 - steps) * step;
            half = std::min(half / 2, (run_len / 2.0 + 1) * step);
            if (widen < 100)
                break;
        }
        if (const std::size_t n = agree(centre, 0); n > f.agree) {
            f.agree = n;
            slope = centre * 1e-6;
            icept = 0;
            for (const auto& [x, y] : minima)
                icept += y - slope * x;
            icept /= double(minima.size());
        }
    }
    for (const auto& [x, y] : minima)
        f.ss += (y - icept - slope * x) * (y - icept - slope * x);
    f.drift_ppm = slope * 1e6;
    f.offset_ns = lowest_at(f.drift_ppm);
    return f;
}

/** @brief At most this many of @p answered pairs may contradict the rest: 1 %, or one. */
std::size_t contradictions_allowed(std::size_t answered)
{
    return std::max<std::size_t>(1, answered / 100);
}

/**
 * The envelope in pieces, when no one line lets all but contradictions_allowed() of @p a's
 * answered pairs agree on one delay (the trace's clock bent: a VM or target stalled, its clock
 * then stepped or slewed): from the first pair, each piece as long as its own line (fit_line())
 * lets all but that many of its answered pairs agree, found by doubling then halving in windows
 * of 16 pairs; at least 32 pairs each. Empty when the pairs are too few or more than
 * max_pairs_in_pieces, or a piece of 32
 * pairs fits no line (a trace of another run); else at least two pieces, and @p ss and
 * @p windows their minima's.
 */
std::vector<trace_alignment::piece> fit_pieces(std::span<const run_stimulus> run,
                                               std::span<const handler_edge> edges,
                                               const trace_alignment& a, bool threaded, double& ss,
                                               std::size_t& windows)
{
    constexpr std::size_t min_len = 32;
    const std::size_t n = a.pairs.size();
    std::vector<trace_alignment::piece> out;
    if (n < 2 * min_len || n > max_pairs_in_pieces)
        return out;
    const auto fit = [&](std::size_t from, std::size_t to) {
        return fit_line(run, edges, std::span(a.pairs).subspan(from, to - from), a.base_ns,
                        run[a.pairs[from].run_index].t_ns, threaded, a.drift_ppm);
    };
    const auto fits = [&](std::size_t from, std::size_t to) {
        const line_fit f = fit(from, to);
        return f.answered - f.agree <= contradictions_allowed(f.answered);
    };
    std::vector<std::size_t> starts; // each piece's first pair
    for (std::size_t p0 = 0; p0 < n;) {
        const std::size_t rest = n - p0;
        std::size_t len = rest;
        if (rest >= 2 * min_len) {
            len = min_len;
            if (!fits(p0, p0 + len))
                return {};
            std::size_t bad = 0;
            while (len < rest) {
                const std::size_t next = std::min(len * 2, rest);
                if (!fits(p0, p0 + next)) {
                    bad = next;
                    break;
                }
                len = next;
            }
            while (bad && bad - len > 16) {
                const std::size_t mid = len + std::max<std::size_t>(16, (bad - len) / 32 * 16);
                (fits(p0, p0 + mid) ? len : bad) = mid;
            }
            if (len < rest && rest - len < min_len)
                len = rest - min_len; // the rest a piece of its own; a part of one that fits
        }
        if (len == rest && !fits(p0, n))
            return {};
        starts.push_back(p0);
        p0 += len;
    }
    if (starts.size() < 2)
        return out;
    starts.push_back(n);
    // A piece grown as long as its bounds allow runs on into the bend, its line tilted by what
    // its 1 % and the 2 us of slack let pass: each boundary moves to where the two pieces beside
    // it leave the fewest answered pairs outside their lines, and of those where their windows'
    // minima lie closest to them (17 places, then either side of the best, halving down to 16
    // pairs).
    const auto cost = [&](std::size_t from, std::size_t to) {
        const line_fit f = fit(from, to);
        return std::pair(f.answered - f.agree, f.ss);
    };
    for (std::size_t k = 1; k + 1 < starts.size(); ++k) {
        const std::size_t lo = starts[k - 1] + min_len, hi = starts[k + 1] - min_len;
        if (lo >= hi)
            continue;
        const auto cost_at = [&](std::size_t b) {
            const auto [o1, s1] = cost(starts[k - 1], b);
            const auto [o2, s2] = cost(b, starts[k + 1]);
            return std::pair(o1 + o2, s1 + s2);
        };
        std::size_t best = starts[k];
        auto least = cost_at(best);
        const auto try_at = [&](std::size_t b) {
            if (const auto c = cost_at(b); c < least) {
                least = c;
                best = b;
            }
        };
        std::size_t step = std::max<std::size_t>(16, (hi - lo) / 16 / 16 * 16);
        for (std::size_t b = lo; b <= hi; b += step)
            try_at(b);
        while (step > 16) { // then either side of the best, each step half the last
            step = std::max<std::size_t>(16, step / 2 / 16 * 16);
            const std::size_t centre = best;
            if (centre >= lo + step)
                try_at(centre - step);
            if (centre + step <= hi)
                try_at(centre + step);
        }
        starts[k] = best;
    }
    ss = 0;
    windows = 0;
    for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
        const line_fit f = fit(starts[k], starts[k + 1]);
        if (f.answered - f.agree > contradictions_allowed(f.answered))
            return {};
        out.push_back({run[a.pairs[starts[k]].run_index].t_ns, a.pairs[starts[k]].run_index,
                       f.offset_ns, f.drift_ppm});
        ss += f.ss;
        windows += f.windows;
    }
    // Each piece is lowered to its own fastest edge, which in a few dozen pairs is slower than
    // the run's fastest by up to the delays' spread: the pieces would disagree on the one delay
    // of the fastest edge that the floor takes. Each moves so that the middle of the delays its
    // pairs allow is the first piece's.
    std::vector<delay_bound> bounds;
    std::optional<double> first;
    for (std::size_t k = 0; k < out.size(); ++k) {
        const auto& pc = out[k];
        floor_bounds(
            run, edges, std::span(a.pairs).subspan(starts[k], starts[k + 1] - starts[k]), a.base_ns,
            [&](std::int64_t t) {
                return pc.offset_ns + pc.drift_ppm * 1e-6 * double(t - pc.t0_ns);
            },
            threaded, 0, bounds);
        if (bounds.empty())
            continue;
        const std::int64_t at = most_allowed(bounds).first;
        std::int64_t end = std::numeric_limits<std::int64_t>::max();
        for (const auto& b : bounds)
            if (b.lo - bound_slack_ns <= at && at <= b.hi)
                end = std::min(end, b.hi);
        const double middle = (double(at) + double(end)) / 2;
        if (!first)
            first = middle;
        else
            out[k].offset_ns += *first - middle;
    }
    return out;
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

/**
 * The pairs of walk_edges() checked against the edges' sequence numbers (align_trace()'s
 * comment says how); fills @p a's seq_ fields and changes its pairs and trace_only.
 */
void pair_by_sequence(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                      std::int64_t interval_ns, std::int64_t tol, trace_alignment& a)
{
    const std::string what = "explain: align the trace with the run";
    // d = run seq - responder seq of each pair, in edge order.
    std::vector<std::int64_t> d(a.pairs.size());
    std::vector<bool> has(a.pairs.size(), false);
    std::map<std::int64_t, std::size_t> votes;
    std::size_t with_seq = 0;
    for (std::size_t p = 0; p < a.pairs.size(); ++p) {
        const auto& e = edges[a.pairs[p].edge_index];
        if (!e.seq)
            continue;
        has[p] = true;
        d[p] = std::int64_t(run[a.pairs[p].run_index].seq) - *e.seq;
        ++votes[d[p]];
        ++with_seq;
    }
    for (const auto& e : edges)
        a.seq_edges += e.seq ? 1 : 0;
    if (with_seq == 0)
        return;
    const auto best =
        std::max_element(votes.begin(), votes.end(),
                         [](const auto& x, const auto& y) { return x.second < y.second; });
    if (with_seq >= 8 && best->second * 2 < with_seq)
        throw error(what,
                    "the paired edges' sequence numbers agree on no offset (the most, " +
                        std::to_string(best->first) + ", by " + std::to_string(best->second) +
                        " of " + std::to_string(with_seq) + " pairs)",
                    "a trace of another run, or of a responder restarted during it? give the "
                    "trace taken during this run");
    const std::int64_t k = best->first;
    a.by_sequence = true;
    a.seq_offset = k;
    a.seq_agree = best->second;

    // The sample of run seq @p s (the run's seqs ascend).
    const auto sample_of = [&](std::int64_t s) -> std::optional<std::size_t> {
        if (s < 0)
            return std::nullopt;
        const auto it =
            std::lower_bound(run.begin(), run.end(), std::uint64_t(s),
                             [](const run_stimulus& x, std::uint64_t v) { return x.seq < v; });
        if (it == run.end() || it->seq != std::uint64_t(s))
            return std::nullopt;
        return std::size_t(it - run.begin());
    };
    // Whether edge @p j can be sample @p i's: on the logger's clock by the fit, not before the
    // stimulus (less the tolerance), not after its answer; a lost one's not after the next
    // stimulus by more than 4 intervals.
    const auto plausible = [&](std::size_t j, std::size_t i) {
        const std::int64_t at = edges[j].entry_ns - a.base_ns;
        const std::int64_t after = at - run[i].t_ns - std::llround(a.envelope_at(run[i].t_ns));
        if (after < -tol)
            return false;
        if (run[i].latency_ns >= 0)
            return after <= run[i].latency_ns + tol;
        const std::int64_t next = i + 1 < run.size() ? run[i + 1].t_ns - run[i].t_ns : 0;
        return after <= next + 4 * interval_ns;
    };

    // Stretches of disagreeing pairs: at most 2, between agreeing ones (or an end), are the
    // clock's mistakes; the rest are stretches of another offset.
    std::map<std::size_t, std::size_t> edge_to_run; // the result, by edge index
    for (const auto& p : a.pairs)
        edge_to_run[p.edge_index] = p.run_index;
    std::vector<bool> fix(a.pairs.size(), false);
    for (std::size_t p = 0; p < a.pairs.size();) {
        if (!has[p] || d[p] == k) {
            ++p;
            continue;
        }
        std::size_t q = p;
        while (q < a.pairs.size() && (!has[q] || d[q] != k))
            ++q;
        const std::size_t n = std::size_t(
            std::count(has.begin() + std::ptrdiff_t(p), has.begin() + std::ptrdiff_t(q), true));
        for (std::size_t r = p; r < q; ++r) {
            if (!has[r])
                continue;
            const auto i = sample_of(*edges[a.pairs[r].edge_index].seq + k);
            if (n <= 2 && i && plausible(a.pairs[r].edge_index, *i))
                fix[r] = true;
            else
                ++a.seq_fallback;
        }
        p = q;
    }
    // The runs the clock's pairs hold: a corrected edge takes its sample from whoever had it.
    std::map<std::size_t, std::size_t> run_to_edge;
    for (const auto& [j, i] : edge_to_run)
        run_to_edge[i] = j;
    auto take = [&](std::size_t j, std::size_t i) {
        if (const auto o = run_to_edge.find(i); o != run_to_edge.end())
            edge_to_run.erase(o->second);
        if (const auto o = edge_to_run.find(j); o != edge_to_run.end())
            run_to_edge.erase(o->second);
        edge_to_run[j] = i;
        run_to_edge[i] = j;
        ++a.seq_corrected;
    };
    for (std::size_t p = 0; p < a.pairs.size(); ++p)
        if (fix[p])
            take(a.pairs[p].edge_index, *sample_of(*edges[a.pairs[p].edge_index].seq + k));
    // Edges the walk left unpaired, between agreeing neighbours: their seq's sample when free.
    std::optional<std::int64_t> last_d;
    for (std::size_t j = 0; j < edges.size(); ++j) {
        if (const auto it = edge_to_run.find(j); it != edge_to_run.end()) {
            if (edges[j].seq)
                last_d = std::int64_t(run[it->second].seq) - *edges[j].seq;
            continue;
        }
        if (!edges[j].seq || last_d != k)
            continue;
        std::optional<std::int64_t> next_d;
        for (auto it = edge_to_run.upper_bound(j); it != edge_to_run.end(); ++it)
            if (edges[it->first].seq) {
                next_d = std::int64_t(run[it->second].seq) - *edges[it->first].seq;
                break;
            }
        const auto i = sample_of(*edges[j].seq + k);
        if ((next_d && next_d != k) || !i || run_to_edge.count(*i) || !plausible(j, *i))
            continue;
        take(j, *i);
        if (a.trace_only > 0)
            --a.trace_only;
    }
    // In order of both: a pair out of the run's order (a clock pair a correction crossed) goes.
    a.pairs.clear();
    for (const auto& [j, i] : edge_to_run) {
        while (!a.pairs.empty() && a.pairs.back().run_index >= i) {
            a.pairs.pop_back();
            ++a.trace_only;
        }
        a.pairs.push_back({i, j});
    }
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
    std::vector<const trace_event*> seq_events;
    for (const auto& e : t.events) {
        if (e.kind == trace_kind::irq_entry && e.name == irq_name) {
            open[e.cpu] = out.size();
            out.push_back({e.t_ns, std::nullopt, e.cpu, int(e.number), e.task});
        } else if (e.kind == trace_kind::irq_exit) {
            const auto it = open.find(e.cpu);
            if (it != open.end() && out[it->second].irq == e.number) {
                out[it->second].exit_ns = e.t_ns;
                open.erase(it);
            }
        } else if (e.kind == trace_kind::responder_edge ||
                   e.kind == trace_kind::responder_response ||
                   e.kind == trace_kind::responder_thread) {
            seq_events.push_back(&e);
        }
    }
    if (seq_events.empty())
        return out;
    const auto by_time = [](const trace_event* x, const trace_event* y) {
        return x->t_ns < y->t_ns;
    };
    std::stable_sort(seq_events.begin(), seq_events.end(), by_time);
    if (out.empty()) {
        // No handler entry of that name: the responder's edges stand for them.
        for (const auto* e : seq_events)
            if (e->kind == trace_kind::responder_edge)
                out.push_back({e->t_ns, std::nullopt, e->cpu, -1, e->task});
    }
    std::stable_sort(out.begin(), out.end(), [](const handler_edge& x, const handler_edge& y) {
        return x.entry_ns < y.entry_ns;
    });
    // Each irqloop_edge to the last entry at or before it, when that one has no seq yet.
    std::map<std::int64_t, std::size_t> by_seq;
    std::size_t j = 0;
    for (const auto* e : seq_events) {
        if (e->kind != trace_kind::responder_edge)
            continue;
        while (j + 1 < out.size() && out[j + 1].entry_ns <= e->t_ns)
            ++j;
        if (j < out.size() && out[j].entry_ns <= e->t_ns && !out[j].seq &&
            !by_seq.count(e->number)) {
            out[j].seq = e->number;
            by_seq[e->number] = j;
        }
    }
    for (const auto* e : seq_events) {
        const auto it = by_seq.find(e->number);
        if (it == by_seq.end())
            continue;
        auto& h = out[it->second];
        if (e->t_ns < h.entry_ns)
            continue;
        if (e->kind == trace_kind::responder_response && !h.response_ns)
            h.response_ns = e->t_ns;
        else if (e->kind == trace_kind::responder_thread && !h.thread_ns)
            h.thread_ns = e->t_ns;
    }
    // Threaded: the wake-up of the IRQ's thread between the entry and the thread's start.
    for (const auto& e : t.events) {
        if (e.kind != trace_kind::sched_wakeup || !e.name.starts_with("irq/"))
            continue;
        auto it =
            std::upper_bound(out.begin(), out.end(), e.t_ns,
                             [](std::int64_t v, const handler_edge& h) { return v < h.entry_ns; });
        if (it == out.begin())
            continue;
        auto& h = *std::prev(it);
        const std::string thread = "irq/" + std::to_string(h.irq) + "-";
        const auto end = h.thread_ns ? h.thread_ns : h.response_ns;
        if (!h.wakeup_ns && e.name.starts_with(thread) && end && e.t_ns <= *end)
            h.wakeup_ns = e.t_ns;
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
    std::vector<std::int64_t> diffs, answers;
    auto find_anchor = [&](std::size_t j0) {
        const auto from = edges.subspan(j0);
        const std::size_t first = std::min<std::size_t>(32, from.size() - 1);
        const std::size_t count = std::min<std::size_t>(256, from.size() - 1);
        std::vector<std::pair<double, std::size_t>> rough;
        for (std::size_t i0 = 0; i0 < run.size(); ++i0) {
            const double s = anchor_spread(run, from, i0, first, tol, diffs, answers);
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
            const double s = anchor_spread(run, from, i0, count, tol, diffs, answers);
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

    // The envelope: a line (fit_line()), in pieces when no one line fits (fit_pieces()).
    const auto fit_envelope = [&] {
        a.t0_ns = run[a.pairs.front().run_index].t_ns;
        const line_fit f =
            fit_line(run, edges, a.pairs, a.base_ns, a.t0_ns, threaded, std::nullopt);
        a.offset_ns = f.offset_ns;
        a.drift_ppm = f.drift_ppm;
        a.windows = f.windows;
        a.residual_ns = std::sqrt(f.ss / double(f.windows));
        a.pieces.clear();
        if (f.answered - f.agree > contradictions_allowed(f.answered)) {
            double ss = 0;
            std::size_t windows = 0;
            a.pieces = fit_pieces(run, edges, a, threaded, ss, windows);
            if (!a.pieces.empty()) {
                a.offset_ns = a.pieces.front().offset_ns;
                a.drift_ppm = a.pieces.front().drift_ppm;
                a.windows = windows;
                a.residual_ns = std::sqrt(ss / double(windows));
            }
        }
    };
    fit_envelope();
    // Checked by sequence, the envelope fitted again when that changed a pair.
    const auto before = a.pairs.size();
    pair_by_sequence(run, edges, interval_ns, tol, a);
    if (a.seq_corrected || a.pairs.size() != before)
        fit_envelope();

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

std::string sequence_summary(const trace_alignment& a)
{
    if (!a.by_sequence)
        return "";
    std::string s = "paired by sequence: offset " + std::to_string(a.seq_offset) + ", " +
                    std::to_string(a.seq_agree) + " of " + std::to_string(a.seq_edges) +
                    " edges agree";
    if (a.seq_corrected)
        s += ", " + std::to_string(a.seq_corrected) + " paired by their seq over the clock fit";
    if (a.seq_fallback)
        s += ", " + std::to_string(a.seq_fallback) +
             " in stretches of another offset (stimuli the target missed or extra edges) "
             "paired by the clock fit";
    return s;
}

bool fit_is_poor(const trace_alignment& a) noexcept
{
    double drift = std::abs(a.drift_ppm);
    for (const auto& p : a.pieces)
        drift = std::max(drift, std::abs(p.drift_ppm));
    return a.residual_ns > 100'000 || drift > 200;
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
    // Each answered pair bounds the fastest edge's delay f, which is not negative:
    // f + excess <= latency (the answer after the entry), and, not threaded, f + excess >=
    // latency - bracket - handler (the answer written before the exit), 2 us of slack below
    // (a trace clock's tick, a wire's return). A pair whose excess is above its latency allows
    // no delay at all: its answer came before its handler's entry, in threaded mode too.
    using namespace trace_explain_detail;
    constexpr std::int64_t slack = bound_slack_ns;
    std::vector<delay_bound> bounds;
    floor_bounds(
        run, edges, a.pairs, a.base_ns, [&](std::int64_t t) { return a.envelope_at(t); }, threaded,
        0, bounds);
    if (bounds.empty())
        return {};
    delay_floor f;
    const std::size_t allowed = contradictions_allowed(bounds.size());
    std::int64_t lo = 0, hi = std::numeric_limits<std::int64_t>::max();
    std::int64_t all_lo = 0, all_hi = hi;
    for (const auto& b : bounds) {
        all_lo = std::max(all_lo, b.lo);
        all_hi = std::min(all_hi, b.hi);
    }
    const bool consistent = all_lo <= all_hi + slack; // every pair allows one delay
    // Else the delay the most samples allow.
    const auto [at, most] =
        consistent ? std::pair(std::int64_t(0), bounds.size()) : most_allowed(bounds);
    // Answers held up on their way back (a slow GPIO path, a wire) only arrive late: they miss
    // the lower bound, never the upper. Where every edge is on its own sample by the responder's
    // seqs and the fit is good, a pairing or clock error is ruled out, so up to a tenth of the
    // samples may be such late answers (answers before their entry keep the 1 % cap).
    std::size_t early = 0, late = 0;
    if (!consistent)
        for (const auto& b : bounds) {
            early += at > b.hi;
            late += at <= b.hi && b.lo - slack > at;
        }
    const bool on_own_seq =
        a.by_sequence && std::all_of(a.pairs.begin(), a.pairs.end(), [&](const auto& p) {
            const auto& e = edges[p.edge_index];
            return e.seq && std::int64_t(run[p.run_index].seq) - *e.seq == a.seq_offset;
        });
    const bool held_up =
        on_own_seq && !fit_is_poor(a) && early <= allowed && late <= bounds.size() / 10;
    if (!consistent && bounds.size() - most > allowed && !held_up)
        throw error(
            "explain: align the trace with the run",
            "the run's latencies contradict the trace's handler times by " +
                ns_us(double(all_lo - all_hi)) + " (" + std::to_string(bounds.size() - most) +
                " of " + std::to_string(bounds.size()) +
                " answered samples contradict the rest: answers before their handler's entry, "
                "or after its exit)",
            fit_is_poor(a)
                ? "the clock fit is poor (a residual of " + ns_us(a.residual_ns) + ", a drift of " +
                      std::to_string(std::lround(a.drift_ppm)) +
                      " ppm): the trace's times do not follow the logger's (a target or VM "
                      "stalled during the run?), so its windows cannot be placed"
                : "a trace of another run with the same stimulus times (the same --seed)? give "
                  "the trace taken during this run");
    for (const auto& b : bounds) {
        const bool inside = consistent || (b.lo - slack <= at && at <= b.hi);
        if (!inside) {
            const bool early = at > b.hi;
            f.contradicted.push_back({b.run_index, early ? at - b.hi : b.lo - slack - at, early});
            continue;
        }
        ++f.bounding;
        lo = std::max(lo, b.lo);
        hi = std::min(hi, b.hi);
    }
    std::sort(f.contradicted.begin(), f.contradicted.end(),
              [](const auto& x, const auto& y) { return x.run_index < y.run_index; });
    hi = std::max<std::int64_t>(hi, 0);
    f.lo_ns = lo;
    f.hi_ns = hi;
    if (lo > hi) {
        f.ns = hi;
        f.crossed = true;
    } else {
        f.ns = (lo + hi) / 2;
    }
    return f;
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
    b.responder_seq = e.seq;
    if (e.response_ns)
        b.handler_to_response_measured_ns = *e.response_ns - e.entry_ns;
    // Threaded: from the thread's wake-up (else the hard handler's exit) to its start.
    if (const auto woke = e.wakeup_ns ? e.wakeup_ns : e.exit_ns;
        woke && e.thread_ns && *e.thread_ns >= *woke)
        b.thread_run_ns = *e.thread_ns - *woke;

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
    for (const auto& g : t.gaps) {
        if (g.cpu != e.cpu || g.after_ns >= w1 || g.before_ns <= w0)
            continue;
        b.dropped = b.dropped ? add_drop_counts(*b.dropped, g.events) : g.events;
    }
    std::map<int, open_span> irqs; // irq number -> open handler (not the responder's edge)
    std::optional<open_span> irqs_off, task;
    // A softirq runs in its task's context: on PREEMPT_RT (ksoftirqd, or the thread that raised
    // it) that task can be switched out with the softirq open, and then the softirq is not
    // running. Its duration and its part in the window are its running time.
    struct open_softirq final {
        std::int64_t start_ns = 0; ///< its entry
        std::string name, task;    ///< the action; the task it runs in ("comm-pid")
        std::int64_t since_ns = 0; ///< the current running stretch's start
        bool running = true;       ///< its task is on the CPU
        std::int64_t ran_ns = 0;   ///< the finished stretches' total
        std::int64_t in_ns = 0;    ///< of them, inside the window
    };
    std::optional<open_softirq> softirq;
    const auto stretch = [&](open_softirq& o, std::int64_t end) {
        o.ran_ns += end - o.since_ns;
        o.in_ns += std::max<std::int64_t>(0, std::min(end, w1) - std::max(o.since_ns, w0));
    };
    const auto close_softirq = [&](open_softirq& o, std::int64_t end, bool complete) {
        if (o.running)
            stretch(o, end);
        if (o.in_ns > 0)
            b.blockers.push_back({"softirq", o.name, o.start_ns - w0, o.ran_ns, o.in_ns, complete});
    };
    for (const auto& ev : t.events) {
        if (ev.cpu != e.cpu)
            continue;
        if (ev.t_ns > w1 && irqs.empty() && !softirq && !irqs_off && !task)
            break;
        switch (ev.kind) {
        case trace_kind::irq_entry:
            if (ev.t_ns != e.entry_ns)
                irqs[int(ev.number)] = {ev.t_ns,
                                        "irq " + std::to_string(ev.number) + " " + ev.name};
            break;
        case trace_kind::irq_exit:
            if (auto o = irqs.find(int(ev.number)); o != irqs.end()) {
                add(b.blockers, "irq", o->second.name, o->second.start_ns, ev.t_ns, true);
                irqs.erase(o);
            }
            break;
        case trace_kind::softirq_entry:
            softirq = open_softirq{ev.t_ns, ev.name, ev.task, ev.t_ns};
            break;
        case trace_kind::softirq_exit:
            if (softirq)
                close_softirq(*softirq, ev.t_ns, true);
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
            if (softirq && softirq->running && ev.task == softirq->task) {
                stretch(*softirq, ev.t_ns);
                softirq->running = false;
            } else if (softirq && !softirq->running &&
                       ev.name + "-" + std::to_string(ev.number) == softirq->task) {
                softirq->since_ns = ev.t_ns;
                softirq->running = true;
            }
            if (task)
                add(b.tasks, "task", task->name, task->start_ns, ev.t_ns, true);
            task.reset();
            if (ev.t_ns <= w1)
                task = open_span{ev.t_ns, ev.name + "-" + std::to_string(ev.number) + " (prio " +
                                              std::to_string(ev.value) + ")"};
            break;
        case trace_kind::sched_wakeup:
        case trace_kind::responder_edge:
        case trace_kind::responder_response:
        case trace_kind::responder_thread:
            break;
        }
    }
    // Still open at the end of the trace: counted up to its last timestamp.
    for (const auto& [n, o] : irqs)
        add(b.blockers, "irq", o.name, o.start_ns, t.last_ns, false);
    if (softirq)
        close_softirq(*softirq, t.last_ns, false);
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

lost_at lost_answer(const sample_breakdown& b, std::int64_t timeout_ns) noexcept
{
    if (b.latency_ns >= 0 || !b.in_trace || b.contradicts_ns)
        return lost_at::not_lost;
    if (b.before_handler_ns > timeout_ns)
        return lost_at::before_handler;
    if (!b.handler_to_response_measured_ns)
        return lost_at::unknown;
    return b.before_handler_ns + *b.handler_to_response_measured_ns > timeout_ns
               ? lost_at::in_handler
               : lost_at::after_write;
}

const char* lost_at_name(lost_at w) noexcept
{
    switch (w) {
    case lost_at::before_handler:
        return "before the handler";
    case lost_at::in_handler:
        return "in the handler";
    case lost_at::after_write:
        return "after the write";
    case lost_at::unknown:
        return "unknown";
    case lost_at::not_lost:
        break;
    }
    return "";
}

} // namespace irqloop::analysis
