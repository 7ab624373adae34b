// SPDX-License-Identifier: MIT
#pragma once

#include "cycle-clock.hpp"
#include "histogram.hpp"
#include "rows.hpp"
#include "sample.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace irqloop::db
{
class store;
}

namespace irqloop::logger
{

/** @brief What the recorder keeps, from the run's options. */
struct recorder_config final {
    hw::clock_info clock;                            ///< converts cycles to ns
    std::int64_t threshold_ns = 30'000;              ///< --threshold: exceedances and % above
    std::uint64_t warmup_samples = 1000;             ///< --warmup: excluded from WARM MAX
    std::int64_t stats_interval_ns = 10'000'000'000; ///< --stats-interval
    std::int64_t gap_limit_ns = 0; ///< poll gaps above this flag "disturbed" (for events)
    std::size_t top_k = 1000;      ///< --top-k worst samples kept
    std::uint64_t max_exceedances = 1'000'000; ///< --max-exceedances
    /// --max-events: lost, disturbed and overflow events stored at most; the rest are counted
    /// and finish() stores one "capped" event with their number. Other kinds are never capped.
    std::uint64_t max_events = 100'000;
    bool raw = false;                ///< --raw: every sample to the store
    bool keep_disturbed = false;     ///< --keep-disturbed: disturbed samples count in stats
    std::int64_t anchor_unix_ns = 0; ///< wall-clock time at anchor_cycles
    std::uint64_t anchor_cycles = 0; ///< cycle count at anchor_unix_ns; interval 0 starts here
    /// Called on the recorder's thread after every committed window, with the run's summary
    /// so far, its histogram and the number of windows committed (run --metrics-file). It
    /// must not throw. Empty: none.
    std::function<void(const db::summary_row&, const histogram&, std::uint64_t)> on_window;
    /// The SMI counter (MSR 0x34, smi_counter::read), read when the recorder starts and at
    /// each window commit, on the recorder's thread; empty or returning nothing: "n/a".
    std::function<std::optional<std::uint32_t>()> smi_read;
};

/**
 * @brief Turns the sampler's stream into statistics and store rows.
 *
 * Runs on the consumer thread, never on the sampler's (the ring is between them). Memory
 * that grows with nothing: the two histograms and the top-K heap, sized at construction.
 * Memory per window: the window's exceedances (at most --max-exceedances over the run) and
 * events are buffered until its commit (capacity reserved at construction, grown when a
 * window has more), and each commit allocates what it hands to the store (the sorted worst
 * list, the bucket list); with raw, sample rows are buffered and flushed in batches.
 * Intervals are cut on the samples' own timestamps (t0), so a replayed stream yields the same
 * rows; close_idle() also cuts intervals when no sample arrives (a dead target still produces
 * lost samples, but a stalled sampler produces none).
 *
 * Without a store the recorder still computes everything (used by benchmarks and tests).
 */
class recorder final
{
public:
    /** @param store may be null; run_id is the id begin_run() returned. */
    recorder(const recorder_config& cfg, db::store* store, std::int64_t run_id);
    ~recorder();
    recorder(const recorder&) = delete;
    recorder& operator=(const recorder&) = delete;

    /** @brief Account a batch of samples in seq order. May commit intervals to the store. */
    void add(std::span<const sample> batch);

    /** @brief Record an event (signal, warning, overflow...) in the current interval. */
    void add_event(db::event_row ev);

    /** @brief Count samples the sampler could not push (ring full). */
    void add_overflows(std::uint64_t n);

    /** @brief Count a response that arrived after its timeout (seen while re-synchronising). */
    void add_late(std::uint64_t n);

    /** @brief Close intervals whose end lies before @p now_cycles even without samples. */
    void close_idle(std::uint64_t now_cycles);

    /**
     * @brief Close the current (partial) interval and commit it with the final histogram,
     * worst list and summary. Call once at the end; the caller then sets the run status.
     */
    void finish(std::uint64_t now_cycles);

    /** @brief Cumulative figures so far. */
    db::summary_row summary() const;

    /** @brief Lost answers to stimuli after the warm-up (seq >= warmup_samples): each proves a
     *  latency of at least the timeout after the warm-up (WARM MAX's lower bound). Exact, not
     *  capped as the stored "lost" events are. */
    std::uint64_t lost_after_warmup() const noexcept;

    /** @brief Thread-safe copy of the live figures for the progress line. */
    struct live final {
        std::uint64_t samples, lost, disturbed, overflows;
        std::int64_t min_ns, max_ns;
        double mean_ns;
        std::int64_t latest_ns;    ///< the last sample's latency (what it proves); -1 = none
        std::uint64_t above;       ///< samples above the threshold (recorder_config)
        std::int64_t threshold_ns; ///< that threshold
    };
    live snapshot() const;

    /** @brief The whole-run histogram (ns). */
    const histogram& run_histogram() const noexcept;

    /** @brief The worst samples so far, worst first. */
    std::vector<db::sample_row> worst() const;

    /** @brief Events over max_events so far, counted and not stored. */
    std::uint64_t events_dropped() const noexcept;
    /** @brief Number of intervals committed so far. */
    std::uint64_t intervals_committed() const noexcept;

private:
    struct state;
    std::unique_ptr<state> s_;
};

} // namespace irqloop::logger
