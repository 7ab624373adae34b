// SPDX-License-Identifier: MIT
#pragma once
// The core session of one run: wire, sampler, ring and recorder, and what its plug-ins see of
// them (session.hpp). Built by execute_run() (run.cpp), in the order of its members, torn down
// in reverse: the recorder and the store go first, the sampler's thread is joined before the
// wire stops.
#include "recorder.hpp"
#include "rt-setup.hpp"
#include "run.hpp"
#include "sampler.hpp"
#include "session.hpp"
#include "smi-counter.hpp"
#include "spsc-ring.hpp"
#include "store.hpp"

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace irqloop::logger
{

/** @brief Wall-clock time, ns since the epoch (events' times). */
std::int64_t unix_now_ns();

/** @brief "1.500 s": a duration in event texts. */
std::string seconds_text(std::int64_t ns);

// The wire is started for the run and stopped when the session goes, whatever happened.
struct started_wire {
    hw::lines& w;
    explicit started_wire(hw::lines& wire) : w(wire) { w.start(); }
    ~started_wire() { w.stop(); }
    started_wire(const started_wire&) = delete;
    started_wire& operator=(const started_wire&) = delete;
};

// The sampler's own thread. It applies the real-time settings, then parks until release():
// blocking, not spinning, since a SCHED_FIFO thread spinning there would starve the set-up
// work on its CPU and use up the RT throttling budget before the first stimulus. Destroyed
// without release (a set-up error), it halts the sampler and joins the thread.
class sampler_thread
{
public:
    sampler_thread(sampler& smp, base::rt_session& rt, sampler_end& end);
    ~sampler_thread();
    sampler_thread(const sampler_thread&) = delete;
    sampler_thread& operator=(const sampler_thread&) = delete;

    void release();
    void halt() noexcept { halt_.store(true); }
    bool done() const noexcept { return done_.load(std::memory_order_acquire); }
    void join();

private:
    std::atomic<bool> halt_{false}; // the sampler's stop flag: the caller's stop, or a failure
    std::atomic<bool> go_{false}, started_{false}, done_{false};
    std::thread thread_; // last: the flags above exist before it starts
};

/**
 * @brief One run's core. Plug-ins read the options, the clock, the anchor and the sampler's
 * counters, and act through halt(), post(), add_event() and claim_stop().
 */
class session final
{
public:
    session(const run_options& o, hw::lines& w, const std::atomic<bool>& s,
            std::span<run_plugin* const> p)
        : opt(o), wire(w), stop(s), plugins(p.begin(), p.end())
    {
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    const run_options& opt;
    hw::lines& wire;
    const std::atomic<bool>& stop;
    std::vector<run_plugin*> plugins;
    run_outcome out;

    std::optional<base::rt_session> rt;
    std::optional<started_wire> started;
    sampler_config sc;
    std::int64_t quiet_ns = 0;
    std::optional<spsc_ring<sample>> ring;
    std::optional<sampler> smp;
    std::optional<sampler_thread> sampling;
    std::unique_ptr<db::store> store;
    std::optional<smi_counter> smi;
    std::uint64_t anchor_cycles = 0; ///< window 0 starts here (after the run row was begun)
    std::int64_t anchor_unix = 0;
    std::uint64_t release_cycles = 0; ///< the sampler's release
    std::optional<recorder> rec;
    std::exception_ptr failure; ///< a store failure on the recorder's thread

    const hw::clock_info& clock() const noexcept { return out.clock; }
    const sampler_counters& counters() const noexcept { return smp->counters(); }
    std::uint64_t stimuli() const noexcept { return counters().stimuli.load(); }
    /** @brief ns from the run's start (window 0) to @p t; 0 for a time before it. */
    std::int64_t since_start_ns(std::uint64_t t) const noexcept;
    /** @brief Stop the sampler (any thread). */
    void halt() noexcept { sampling->halt(); }
    bool sampler_done() const noexcept { return sampling->done(); }
    /** @brief An event from any thread, handed to the recorder's thread. */
    void post(db::event_row e);
    /** @brief An event on the recorder's thread (or once it has ended); after a store
     *  failure nothing more is recorded. */
    void add_event(db::event_row e)
    {
        if (!failure)
            rec->add_event(std::move(e));
    }
    /** @brief Posted events into the recorder: on the recorder's thread. */
    void drain_inbox();
    /** @brief In on_end(): this plug-in stopped the run; @p why is the closing event. The
     *  first claim wins (the plug-ins' order); without one a stop is the signal's. */
    void claim_stop(db::event_row why);
    bool stop_claimed() const noexcept { return stop_event_.has_value(); }
    /** @brief The claimed stop's event, or the signal's, for a stopped run. */
    std::optional<db::event_row> take_stop_event();

private:
    std::mutex inbox_mu_;
    std::vector<db::event_row> inbox_, posted_;
    std::optional<db::event_row> stop_event_;
};

} // namespace irqloop::logger
