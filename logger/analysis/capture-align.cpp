// SPDX-License-Identifier: MIT
#include "capture-align.hpp"

#include "error.hpp"

#include <algorithm>
#include <cmath>

namespace irqloop::analysis
{

namespace
{

// The run's times from its first stimulus and the capture's in ns, as doubles: the fit's
// domain. Sizes are the caller's.
struct align_input final {
    std::span<const run_stimulus> run;
    std::span<const analyzer_stimulus> cap;
    std::vector<double> t; // run, ns from run[0]
    std::vector<double> c; // capture, ns from its start
    double res_ns = 1;     // one analyzer sample
    double tol_ns = 0;     // a match's largest distance
    double timeout_ns = 0;

    // The run stimulus nearest @p pred among indexes (lo, hi), or npos.
    std::size_t nearest(double pred, std::size_t lo_excl, std::size_t hi_excl) const
    {
        auto it = std::lower_bound(t.begin(), t.end(), pred);
        std::size_t best = npos;
        double bd = 0;
        for (auto k : {it - t.begin() - 1, it - t.begin()}) {
            if (k < 0 || std::size_t(k) >= t.size())
                continue;
            const auto i = std::size_t(k);
            if ((lo_excl != npos && i <= lo_excl) || (hi_excl != npos && i >= hi_excl))
                continue;
            const double d = std::fabs(t[i] - pred);
            if (best == npos || d < bd) {
                best = i;
                bd = d;
            }
        }
        return best;
    }

    // The analyzer's latency of capture edge j in ns of its own clock; <0 when none.
    double answer(std::size_t j) const
    {
        const auto& a = cap[j];
        return a.answer_ps < 0 ? double(a.answer_ps) : double(a.answer_ps - a.t_ps) / 1000.0;
    }

    // Whether the two sides say the same of one stimulus.
    bool agree(std::size_t i, std::size_t j) const
    {
        const auto& r = run[i];
        const double a = answer(j);
        if (cap[j].answer_ps == analyzer_stimulus::cut_short)
            return false;
        if (r.latency_ns < 0)
            return a < 0 || a > timeout_ns - res_ns;
        if (a < 0)
            return false;
        const double slack = res_ns + 200e-6 * a;
        return a >= double(r.latency_ns - r.bracket_ns) - slack &&
               a <= double(r.latency_ns) + slack;
    }

    static constexpr std::size_t npos = std::size_t(-1);
};

struct anchor final {
    std::size_t i = align_input::npos, j = 0;
    std::size_t hits = 0, agreed = 0;
    std::size_t score() const { return hits + agreed; }
};

anchor score_anchor(const align_input& in, std::size_t j0, std::size_t i0, std::size_t window)
{
    anchor a{i0, j0, 0, 0};
    const double off = in.c[j0] - in.t[i0];
    std::size_t last = align_input::npos;
    for (std::size_t k = j0; k < std::min(in.c.size(), j0 + window); ++k) {
        const double pred = in.c[k] - off;
        const std::size_t i = in.nearest(pred, last, align_input::npos);
        if (i == align_input::npos)
            continue;
        // Over a short window the clocks part by their drift only: 200 ppm at most, plus the
        // analyzer's sampling and the time to drive the edge.
        const double tol = 2 * in.res_ns + 1000 + 200e-6 * (in.c[k] - in.c[j0]);
        if (std::fabs(in.t[i] - pred) > std::min(tol, in.tol_ns))
            continue;
        ++a.hits;
        if (in.agree(i, k))
            ++a.agreed;
        last = i;
    }
    return a;
}

std::int64_t nearest_rank(const std::vector<std::int64_t>& sorted, double q)
{
    const auto n = sorted.size();
    const auto k = std::size_t(std::ceil(q * double(n)));
    return sorted[std::min(n - 1, k == 0 ? 0 : k - 1)];
}

} // namespace

std::vector<analyzer_stimulus> capture_stimuli(const capture& c, const capture_channel& stim,
                                               const capture_channel& resp)
{
    std::vector<analyzer_stimulus> out;
    out.reserve(stim.changes.size());
    std::size_t r = 0;
    for (std::size_t k = 0; k < stim.changes.size(); ++k) {
        const std::int64_t t = stim.changes[k].first;
        const std::int64_t next = k + 1 < stim.changes.size() ? stim.changes[k + 1].first : -1;
        while (r < resp.changes.size() && resp.changes[r].first <= t)
            ++r;
        analyzer_stimulus a{t, analyzer_stimulus::no_answer};
        if (r < resp.changes.size() && (next < 0 || resp.changes[r].first <= next))
            a.answer_ps = resp.changes[r].first;
        else if (next < 0)
            a.answer_ps = analyzer_stimulus::cut_short;
        out.push_back(a);
    }
    (void)c;
    return out;
}

verify_figures align_capture(std::span<const run_stimulus> run,
                             std::span<const analyzer_stimulus> cap, std::int64_t resolution_ps,
                             std::int64_t capture_end_ps, std::int64_t timeout_ns)
{
    const std::string what = "verify: align the capture with the run";
    if (run.size() < 2)
        throw error(what, "the run has " + std::to_string(run.size()) + " stored stimuli",
                    "verify a run recorded with --raw");
    if (cap.size() < 2)
        throw error(what, "the capture has " + std::to_string(cap.size()) + " STIM edges",
                    "check --stim, and that the capture covers the run");
    align_input in{run, cap, {}, {}, double(resolution_ps) / 1000.0, 0, double(timeout_ns)};
    in.t.reserve(run.size());
    for (const auto& r : run)
        in.t.push_back(double(r.t_ns - run[0].t_ns));
    for (const auto& a : cap)
        in.c.push_back(double(a.t_ps) / 1000.0);
    std::vector<double> gaps;
    for (std::size_t i = 1; i < in.t.size(); ++i)
        gaps.push_back(in.t[i] - in.t[i - 1]);
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    in.tol_ns = gaps[gaps.size() / 2] / 4;

    // Anchor: the best (run stimulus, capture edge) pair among the first capture edges.
    const std::size_t window = 32;
    anchor best;
    std::vector<std::pair<double, std::size_t>> tried; // (offset, score) of every anchor
    for (std::size_t j0 = 0; j0 < std::min<std::size_t>(cap.size(), 4); ++j0) {
        for (std::size_t i0 = 0; i0 < run.size(); ++i0) {
            const auto a = score_anchor(in, j0, i0, window);
            tried.emplace_back(in.c[j0] - in.t[i0], a.score());
            if (a.score() > best.score())
                best = a;
        }
    }
    // The best anchor of another alignment: one whose offset puts the run elsewhere.
    anchor second;
    const double best_off = in.c[best.j] - in.t[best.i == align_input::npos ? 0 : best.i];
    for (const auto& [off, score] : tried)
        if (std::fabs(off - best_off) > in.tol_ns && score > second.score()) {
            second.hits = score;
            second.i = 0;
        }
    const std::size_t looked = std::min(window, cap.size() - best.j);
    if (best.i == align_input::npos || best.agreed * 2 < looked || best.hits * 2 < looked)
        throw error(what,
                    "nothing aligns: no stimulus of the run has capture edges around it whose "
                    "latencies agree (best: " +
                        std::to_string(best.agreed) + " of " + std::to_string(looked) + ")",
                    "is the capture of this run, and are --stim and --resp the right channels?");
    if (second.i != align_input::npos && second.score() >= best.score())
        throw error(what, "two alignments fit equally well", "capture a longer stretch of the run");

    // Walk from the anchor both ways, the offset following each match.
    std::vector<std::size_t> match(cap.size(), align_input::npos);
    match[best.j] = best.i;
    auto walk = [&](int dir) {
        double off = in.c[best.j] - in.t[best.i], drift = 0;
        std::size_t last = best.i;
        for (std::size_t j = best.j; dir > 0 ? j + 1 < cap.size() : j > 0;) {
            j = dir > 0 ? j + 1 : j - 1;
            const double pred = (in.c[j] - off) / (1 + drift);
            const std::size_t i = dir > 0 ? in.nearest(pred, last, align_input::npos)
                                          : in.nearest(pred, align_input::npos, last);
            if (i == align_input::npos || std::fabs(in.t[i] - pred) > in.tol_ns)
                continue;
            match[j] = i;
            last = i;
            const double span = in.t[i] - in.t[best.i];
            if (std::fabs(span) > 1e6) // 1 ms on: the drift is known to the analyzer's sampling
                drift = (in.c[j] - in.c[best.j]) / span - 1;
            off = in.c[j] - in.t[i] * (1 + drift);
        }
    };
    walk(+1);
    walk(-1);

    verify_figures f;
    f.resolution_ps = resolution_ps;
    f.capture_edges = cap.size();
    f.run_stimuli = run.size();
    // Least squares c = off + (1 + drift) t over the matches.
    double st = 0, sc = 0, stt = 0, stc = 0, n = 0;
    for (std::size_t j = 0; j < cap.size(); ++j)
        if (match[j] != align_input::npos) {
            const double t = in.t[match[j]], c = in.c[j];
            st += t;
            sc += c;
            stt += t * t;
            stc += t * c;
            n += 1;
            f.pairs.push_back({match[j], j});
        }
    f.matched = f.pairs.size();
    const double den = n * stt - st * st;
    const double slope = den > 0 ? (n * stc - st * sc) / den : 1;
    f.offset_ns = (sc - slope * st) / n;
    f.drift_ppm = (slope - 1) * 1e6;
    f.capture_only = cap.size() - f.matched;

    std::vector<bool> seen(run.size(), false);
    for (const auto& p : f.pairs)
        seen[p.run_index] = true;
    const double end_ns = double(capture_end_ps) / 1000.0;
    for (std::size_t i = 0; i < run.size(); ++i) {
        if (seen[i])
            continue;
        const double at = f.offset_ns + slope * in.t[i];
        if (at < 0 || at > end_ns)
            ++f.outside_capture;
        else
            ++f.run_only;
    }

    for (const auto& p : f.pairs) {
        const auto& r = run[p.run_index];
        const auto& a = cap[p.capture_index];
        if (a.answer_ps == analyzer_stimulus::cut_short) {
            ++f.not_compared;
            continue;
        }
        const double an = a.answer_ps < 0 ? -1 : double(a.answer_ps - a.t_ps) / 1000.0 / slope;
        if (r.latency_ns < 0) {
            if (an < 0 || an > double(timeout_ns) - in.res_ns)
                ++f.both_lost;
            else
                ++f.lost_only_irqloop;
            continue;
        }
        if (an < 0) {
            ++f.lost_only_analyzer;
            continue;
        }
        ++f.both_answered;
        const auto an_ns = std::llround(an);
        f.diffs_ns.push_back(r.latency_ns - an_ns);
        if (an < double(r.latency_ns - r.bracket_ns) - in.res_ns ||
            an > double(r.latency_ns) + in.res_ns)
            f.outside.push_back({r.seq, r.latency_ns, r.bracket_ns, an_ns});
    }
    if (!f.diffs_ns.empty()) {
        auto s = f.diffs_ns;
        std::sort(s.begin(), s.end());
        f.diff_min_ns = s.front();
        f.diff_max_ns = s.back();
        f.diff_median_ns = nearest_rank(s, 0.5);
        f.diff_p99_ns = nearest_rank(s, 0.99);
    }
    return f;
}

} // namespace irqloop::analysis
