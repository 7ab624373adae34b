// SPDX-License-Identifier: MIT
#include "recorder.hpp"

#include "percentiles.hpp"
#include "store.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

namespace irqloop::logger
{

namespace
{

// The sampler's flags are stored as they are, with the warm-up bit added here.
constexpr bool same_bit(sample::flag a, db::sample_flag b)
{
    return static_cast<std::uint32_t>(a) == static_cast<std::uint32_t>(b);
}
static_assert(same_bit(sample::rising, db::flag_rising) &&
                  same_bit(sample::disturbed, db::flag_disturbed) &&
                  same_bit(sample::lost, db::flag_lost),
              "a sample's flag bits are the stored encoding");
static_assert(((sample::rising | sample::disturbed | sample::lost) & db::flag_warmup) == 0,
              "the warm-up bit is the recorder's own");

// Welford's running mean and variance: stable over 1e9 samples where sum of squares is not.
struct moments {
    std::uint64_t n = 0;
    double mean = 0, m2 = 0;
    std::int64_t min = std::numeric_limits<std::int64_t>::max();
    std::int64_t max = std::numeric_limits<std::int64_t>::min();

    void add(std::int64_t x) noexcept
    {
        ++n;
        double d = static_cast<double>(x) - mean;
        mean += d / static_cast<double>(n);
        m2 += d * (static_cast<double>(x) - mean);
        min = std::min(min, x);
        max = std::max(max, x);
    }
    double stddev() const noexcept
    {
        return n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0;
    }
    std::int64_t lo() const noexcept { return n ? min : 0; }
    std::int64_t hi() const noexcept { return n ? max : 0; }
};

// A run of consecutive lost or disturbed samples, reported as one event.
// A lost burst says its largest poll gap (a logger stall while it waited); a disturbed burst
// its widest bracket, the rule that flagged it (docs/methodology.md), and what its samples
// still prove.
struct burst {
    std::uint64_t first_seq = 0, count = 0;
    std::int64_t unix_ns = 0, max_gap_ns = 0, max_bracket_ns = 0, max_proves_ns = 0;
};

// A sample with the figure it ranks by: its latency, or for a disturbed sample outside the
// statistics the lower bound it proves (db::rank_ns).
struct ranked {
    std::int64_t key;
    db::sample_row row;
};

// Worst first by the ranking figure, then by latency, then earliest.
bool worse(const ranked& a, const ranked& b) noexcept
{
    if (a.key != b.key)
        return a.key > b.key;
    return a.row.latency_ns > b.row.latency_ns ||
           (a.row.latency_ns == b.row.latency_ns && a.row.seq < b.row.seq);
}

// The largest proven latency so far and the sample that holds it: the reported max is that
// sample's upper bound, with its bracket when it was disturbed, so no reported max ever sits
// below a latency that certainly happened, nor below the truth.
struct proven_max {
    std::int64_t rank = std::numeric_limits<std::int64_t>::min();
    std::int64_t value = 0, bracket = 0;

    void add(const ranked& r) noexcept
    {
        if (r.key > rank || (r.key == rank && r.row.latency_ns > value)) {
            rank = r.key;
            value = r.row.latency_ns;
            bracket = r.key < r.row.latency_ns ? r.row.bracket_ns : 0;
        }
    }
    bool any() const noexcept { return rank != std::numeric_limits<std::int64_t>::min(); }
};

// The stored percentiles (db/percentiles.hpp): the run's summary takes all five, a window's
// row the first three (p50, p99, p99.9).
template <class Row, std::size_t N> struct percentile_fields {
    std::array<double, N> rank;
    std::array<std::int64_t Row::*, N> field;
};

constexpr percentile_fields<db::summary_row, db::stored_percentiles.size()> summary_percentiles =
    [] {
        percentile_fields<db::summary_row, db::stored_percentiles.size()> f{};
        for (std::size_t i = 0; i < f.rank.size(); ++i) {
            f.rank[i] = db::stored_percentiles[i].rank;
            f.field[i] = db::stored_percentiles[i].field;
        }
        return f;
    }();

constexpr percentile_fields<db::interval_row, 3> window_percentiles{
    {db::stored_percentiles[0].rank, db::stored_percentiles[1].rank,
     db::stored_percentiles[2].rank},
    {&db::interval_row::p50_ns, &db::interval_row::p99_ns, &db::interval_row::p999_ns}};

// @p h's percentiles into @p row's fields; 0 (stored NULL) when nothing was recorded.
template <class Row, std::size_t N>
void fill_percentiles(const histogram& h, bool any, Row& row, const percentile_fields<Row, N>& f)
{
    std::array<std::int64_t, N> v{};
    if (any)
        h.percentiles(f.rank, v);
    for (std::size_t i = 0; i < N; ++i)
        row.*f.field[i] = v[i];
}

} // namespace

struct recorder::state {
    recorder_config cfg;
    db::store* store;
    std::int64_t run_id;
    double ns_per_cycle;
    std::uint64_t interval_cycles;

    histogram run_hist, interval_hist;
    moments run, interval;
    proven_max run_max, warm_max, interval_max;
    db::summary_row totals; // counters only; latency figures are filled in summary()
    db::interval_row cur;   // counters of the open interval
    std::uint64_t interval_index = 0;
    std::uint64_t interval_end_cycles;
    std::uint64_t committed = 0;
    std::uint64_t late_committed = 0;

    std::vector<ranked> worst_heap; // min-heap by rank: the best of the worst on top
    std::vector<db::sample_row> new_exceedances;
    std::vector<db::event_row> new_events;
    std::uint64_t capped_events = 0, events_dropped = 0;
    std::uint64_t lost_after_warmup = 0;
    std::vector<db::sample_row> raw;
    std::vector<db::window_bucket_row> window_rows; // the closing window's coarse histogram
    std::optional<std::uint32_t> smi_last;          // the SMI counter at the last commit
    bool smi_every_window = true;                   // no window so far without a count
    burst lost_burst, disturbed_burst;

    mutable std::mutex live_mutex;
    live live_{};
    std::int64_t latest_ns = -1; ///< the last sample's latency (what it proves), for live_

    state(const recorder_config& c, db::store* st, std::int64_t id)
        : cfg(c), store(st), run_id(id), ns_per_cycle(1e9 / c.clock.hz),
          interval_cycles(std::max<std::uint64_t>(
              1, c.clock.from_ns(static_cast<double>(c.stats_interval_ns)))),
          run_hist(), interval_hist(), interval_end_cycles(c.anchor_cycles + interval_cycles)
    {
        worst_heap.reserve(cfg.top_k + 1);
        new_exceedances.reserve(4096);
        new_events.reserve(256);
        window_rows.reserve(db::window_buckets::count);
        if (cfg.raw)
            raw.reserve(raw_batch);
        cur.start_unix_ns = cfg.anchor_unix_ns;
        smi_last = read_smi();
        if (smi_last)
            totals.smi_count = 0;
    }

    std::optional<std::uint32_t> read_smi() const
    {
        return cfg.smi_read ? cfg.smi_read() : std::nullopt;
    }

    // SMIs since the last commit: the counter's difference (32 bits, wrapping), or none when
    // either read failed. The run's total stays only while every window has a count.
    void count_smis()
    {
        const auto now = read_smi();
        cur.smi_count.reset();
        if (now && smi_last)
            cur.smi_count = static_cast<std::uint32_t>(*now - *smi_last);
        smi_last = now;
        if (cur.smi_count && smi_every_window)
            totals.smi_count = totals.smi_count.value_or(0) + *cur.smi_count;
        else {
            smi_every_window = false;
            totals.smi_count.reset();
        }
    }

    static constexpr std::size_t raw_batch = 65536;

    std::int64_t to_ns(std::uint64_t c) const noexcept
    {
        return static_cast<std::int64_t>(std::llround(static_cast<double>(c) * ns_per_cycle));
    }
    std::int64_t unix_at(std::uint64_t c) const noexcept
    {
        return cfg.anchor_unix_ns +
               static_cast<std::int64_t>(
                   std::llround((static_cast<double>(c) - static_cast<double>(cfg.anchor_cycles)) *
                                ns_per_cycle));
    }

    void flush_burst(burst& b, const char* kind)
    {
        if (!b.count)
            return;
        std::string detail = std::to_string(b.count) + " consecutive";
        if (std::string_view(kind) == "disturbed")
            detail += ", widest bracket " + std::to_string(b.max_bracket_ns) +
                      " ns, proves up to " + std::to_string(b.max_proves_ns) + " ns";
        else if (b.max_gap_ns)
            detail += ", largest poll gap " + std::to_string(b.max_gap_ns) + " ns";
        push_event({b.unix_ns, b.first_seq, kind, static_cast<std::int64_t>(b.count), detail});
        b = burst{};
    }

    // A target that loses every other answer makes an event per lost sample: those kinds are
    // capped like exceedances; the rare kinds (signal, load, action, error...) never are.
    void push_event(db::event_row ev)
    {
        if (ev.kind == "lost" || ev.kind == "disturbed" || ev.kind == "overflow") {
            if (capped_events >= cfg.max_events) {
                ++events_dropped;
                return;
            }
            ++capped_events;
        }
        new_events.push_back(std::move(ev));
    }

    void extend_burst(burst& b, const db::sample_row& r)
    {
        if (!b.count) {
            b.first_seq = r.seq;
            b.unix_ns = r.unix_ns;
        }
        ++b.count;
        b.max_gap_ns = std::max(b.max_gap_ns, r.gap_ns);
        b.max_bracket_ns = std::max(b.max_bracket_ns, r.bracket_ns);
        b.max_proves_ns = std::max(b.max_proves_ns, db::rank_ns(r));
    }

    void keep_worst(const ranked& r)
    {
        if (cfg.top_k == 0)
            return;
        auto cmp = [](const ranked& a, const ranked& b) { return worse(a, b); };
        if (worst_heap.size() < cfg.top_k) {
            worst_heap.push_back(r);
            std::push_heap(worst_heap.begin(), worst_heap.end(), cmp);
        } else if (worse(r, worst_heap.front())) {
            std::pop_heap(worst_heap.begin(), worst_heap.end(), cmp);
            worst_heap.back() = r;
            std::push_heap(worst_heap.begin(), worst_heap.end(), cmp);
        }
    }

    void account(const sample& s)
    {
        db::sample_row r;
        r.seq = s.seq;
        r.unix_ns = unix_at(s.t0_cycles);
        r.gap_ns = to_ns(s.max_gap_cycles);
        r.flags = s.flags | (s.seq < cfg.warmup_samples ? db::flag_warmup : 0u);
        const bool lost = s.flags & sample::lost;
        const bool disturbed = (s.flags & sample::disturbed) && !lost;
        r.latency_ns = lost ? -1 : to_ns(s.latency_cycles);
        r.bracket_ns = lost ? 0 : std::min(r.latency_ns, to_ns(s.bracket_cycles));
        // The wire's truth (the sim board's drawn delay), converted as the latency is: to_ns()
        // is monotonic, so truth <= latency in cycles stays so in ns. Kept for a lost sample
        // too (an answer drawn past the timeout), but only answered samples make the window's
        // truth max, as only they make its measured max.
        if (s.truth != sample::no_truth)
            r.truth_ns = to_ns(s.truth);
        ++totals.stimuli;
        totals.interruptions += s.interruptions;
        cur.interruptions += s.interruptions;
        if (cfg.raw) {
            raw.push_back(r);
            if (raw.size() >= raw_batch)
                flush_raw();
        }
        if (lost) {
            ++totals.lost;
            ++cur.lost;
            if (s.seq >= cfg.warmup_samples)
                ++lost_after_warmup;
            extend_burst(lost_burst, r);
            return;
        }
        flush_burst(lost_burst, "lost");
        if (r.truth_ns && (!cur.truth_max_ns || *r.truth_ns > *cur.truth_max_ns))
            cur.truth_max_ns = r.truth_ns;
        const bool in_stats = !disturbed || cfg.keep_disturbed;
        if (disturbed) {
            ++totals.disturbed;
            ++cur.disturbed;
            extend_burst(disturbed_burst, r);
        } else {
            flush_burst(disturbed_burst, "disturbed");
        }
        if (in_stats) {
            ++totals.samples;
            ++cur.samples;
            (r.flags & db::flag_rising ? totals.rising : totals.falling)++;
            run.add(r.latency_ns);
            interval.add(r.latency_ns);
            run_hist.record(r.latency_ns);
            interval_hist.record(r.latency_ns);
        }
        // Whether or not it is in the statistics, a sample counts for the maxima, the
        // threshold and the worst list by what it proves: a disturbed sample by its lower
        // bound. A long answer is never thrown away.
        const ranked rr{in_stats ? r.latency_ns : db::rank_ns(r), r};
        latest_ns = rr.key;
        run_max.add(rr);
        interval_max.add(rr);
        if (s.seq >= cfg.warmup_samples)
            warm_max.add(rr);
        if (rr.key > cfg.threshold_ns) {
            ++totals.above_threshold;
            ++cur.above_threshold;
            if (totals.above_threshold - totals.exceedances_dropped <= cfg.max_exceedances)
                new_exceedances.push_back(r);
            else
                ++totals.exceedances_dropped;
        }
        keep_worst(rr);
    }

    std::vector<db::sample_row> sorted_worst() const
    {
        std::vector<ranked> w(worst_heap);
        std::sort(w.begin(), w.end(), worse);
        std::vector<db::sample_row> rows;
        rows.reserve(w.size());
        for (const auto& x : w)
            rows.push_back(x.row);
        return rows;
    }

    void flush_raw()
    {
        if (store && !raw.empty())
            store->append_raw(run_id, raw);
        raw.clear();
    }

    db::summary_row make_summary(std::int64_t now_unix) const
    {
        db::summary_row s = totals;
        s.min_ns = run.lo();
        s.max_ns = run_max.value;
        s.max_bracket_ns = run_max.bracket;
        s.warm_max_ns = warm_max.value;
        s.warm_max_bracket_ns = warm_max.bracket;
        s.has_warm_max = warm_max.any();
        s.mean_ns = run.mean;
        s.stddev_ns = run.stddev();
        fill_percentiles(run_hist, run.n > 0, s, summary_percentiles);
        s.end_unix_ns = now_unix;
        return s;
    }

    // The closing window's histogram regrouped into the coarse log-spaced buckets of the
    // interval_histograms table. Every fine bucket lies inside one coarse bucket (both are
    // power-of-two aligned, and the fine ones are exact below 2048 ns), so counts move whole.
    void window_histogram()
    {
        window_rows.clear();
        interval_hist.for_each_bucket([&](std::int64_t lo, std::int64_t, std::uint64_t n) {
            const int b = db::window_buckets::index_of(lo);
            if (!window_rows.empty() && window_rows.back().bucket == b)
                window_rows.back().count += n;
            else
                window_rows.push_back({interval_index, b, n});
        });
    }

    void commit(std::int64_t end_unix)
    {
        flush_burst(lost_burst, "lost");
        flush_burst(disturbed_burst, "disturbed");
        cur.index = interval_index;
        cur.end_unix_ns = end_unix;
        count_smis();
        cur.min_ns = interval.lo();
        cur.max_ns = interval_max.value;
        cur.max_bracket_ns = interval_max.bracket;
        cur.mean_ns = interval.mean;
        cur.stddev_ns = interval.stddev();
        fill_percentiles(interval_hist, interval.n > 0, cur, window_percentiles);
        db::summary_row summary;
        if (store || cfg.on_window)
            summary = make_summary(end_unix);
        if (store) {
            flush_raw();
            std::vector<db::sample_row> worst_sorted = sorted_worst();
            std::vector<db::bucket_row> buckets;
            run_hist.for_each_bucket([&](std::int64_t lo, std::int64_t hi, std::uint64_t n) {
                buckets.push_back({lo, hi, n});
            });
            window_histogram();
            db::interval_commit c{cur,     summary,    new_exceedances, worst_sorted,
                                  buckets, new_events, window_rows};
            store->commit_interval(run_id, c);
        }
        ++committed;
        if (cfg.on_window)
            cfg.on_window(summary, run_hist, committed);
        late_committed = totals.late;
        new_exceedances.clear();
        new_events.clear();
        interval = moments{};
        interval_max = proven_max{};
        interval_hist.reset();
        cur = db::interval_row{};
        cur.start_unix_ns = end_unix;
        ++interval_index;
    }

    void close_through(std::uint64_t t_cycles)
    {
        while (t_cycles >= interval_end_cycles) {
            commit(unix_at(interval_end_cycles));
            interval_end_cycles += interval_cycles;
        }
    }

    void publish()
    {
        std::lock_guard lock(live_mutex);
        live_ = {totals.samples,   totals.lost, totals.disturbed,
                 totals.overflows, run.lo(),    run_max.value,
                 run.mean,         latest_ns,   totals.above_threshold,
                 cfg.threshold_ns};
    }
};

recorder::recorder(const recorder_config& cfg, db::store* store, std::int64_t run_id)
    : s_(std::make_unique<state>(cfg, store, run_id))
{
}

recorder::~recorder() = default;

void recorder::add(std::span<const sample> batch)
{
    for (const auto& smp : batch) {
        s_->close_through(smp.t0_cycles);
        s_->account(smp);
    }
    s_->publish();
}

void recorder::add_event(db::event_row ev)
{
    s_->push_event(std::move(ev));
}

std::uint64_t recorder::events_dropped() const noexcept
{
    return s_->events_dropped;
}

std::uint64_t recorder::lost_after_warmup() const noexcept
{
    return s_->lost_after_warmup;
}

void recorder::add_overflows(std::uint64_t n)
{
    s_->totals.overflows += n;
    s_->cur.overflows += n;
}

void recorder::add_late(std::uint64_t n)
{
    s_->totals.late += n;
}

void recorder::close_idle(std::uint64_t now_cycles)
{
    s_->close_through(now_cycles);
}

void recorder::finish(std::uint64_t now_cycles)
{
    s_->close_through(now_cycles);
    s_->flush_burst(s_->lost_burst, "lost");
    s_->flush_burst(s_->disturbed_burst, "disturbed");
    if (s_->events_dropped)
        s_->new_events.push_back({s_->unix_at(now_cycles), s_->totals.stimuli, "capped",
                                  static_cast<std::int64_t>(s_->events_dropped),
                                  "lost, disturbed and overflow events over --max-events " +
                                      std::to_string(s_->cfg.max_events) +
                                      ": counted, not stored"});
    // A run that ends just past a window boundary leaves an empty window: commit it only if
    // something happened in it (or nothing was committed yet), so reports show no empty row.
    const auto& c = s_->cur;
    const bool empty = c.samples == 0 && c.lost == 0 && c.disturbed == 0 && c.overflows == 0 &&
                       s_->new_events.empty() && s_->lost_burst.count == 0 &&
                       s_->disturbed_burst.count == 0 && s_->raw.empty() &&
                       s_->totals.late == s_->late_committed;
    if (!empty || s_->committed == 0)
        s_->commit(s_->unix_at(now_cycles));
    s_->publish();
}

db::summary_row recorder::summary() const
{
    std::int64_t end = s_->cur.start_unix_ns;
    return s_->make_summary(end);
}

recorder::live recorder::snapshot() const
{
    std::lock_guard lock(s_->live_mutex);
    return s_->live_;
}

const histogram& recorder::run_histogram() const noexcept
{
    return s_->run_hist;
}

std::vector<db::sample_row> recorder::worst() const
{
    return s_->sorted_worst();
}

std::uint64_t recorder::intervals_committed() const noexcept
{
    return s_->committed;
}

} // namespace irqloop::logger
