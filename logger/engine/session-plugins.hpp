// SPDX-License-Identifier: MIT
#pragma once
// The engine's own plug-ins of a run (session.hpp), one small unit each (session-*.cpp).
// execute_run() makes those the options ask for, in this order, which is also the order of
// their closing events and of their claims on a stop.
#include "actions.hpp"
#include "load-process.hpp"
#include "metrics-file.hpp"
#include "session.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <vector>

namespace irqloop::logger
{

class session;

/** @brief The dead-wire watchdog: the first run_options::dead_wire_stimuli stimuli (and
 *  dead_wire_ns) all lost halt the run before the soak; it is then failed (no_answer). */
class dead_wire_watch final : public run_plugin
{
public:
    explicit dead_wire_watch(session& s);
    void on_batch(std::span<const sample> batch) override;
    void on_end(run_outcome& out) override;
    /** @brief An answer came (or the check is off: --allow-silent). Any thread. */
    bool alive() const noexcept { return alive_.load(); }

private:
    session& s_;
    std::uint64_t silent_ = 0, first_t0_ = 0;
    std::atomic<bool> alive_{false}, dead_{false};
};

/** @brief The first stimulus timed from the run's start: a late one is a `late_start` event
 *  and an outcome flag (docs/commands/run.md, "A late start"). */
class late_start_note final : public run_plugin
{
public:
    explicit late_start_note(session& s) : s_(s) {}
    void on_batch(std::span<const sample> batch) override;
    void on_end(run_outcome& out) override;

private:
    session& s_;
    bool seen_ = false;
};

/** @brief The --load-cmd process: started once the warm-up is taken (and the wire answered),
 *  its early death an event (and with --load-required the run's end), stopped at the end. */
class load_runner final : public run_plugin
{
public:
    load_runner(session& s, const dead_wire_watch& wire) : s_(s), wire_(wire) {}
    void on_start(session&) override;
    void on_tick() override;
    void on_end(run_outcome& out) override;

private:
    void start(std::uint64_t stimuli);
    db::event_row end_event(const load_result& r, const char* how);
    session& s_;
    const dead_wire_watch& wire_;
    std::optional<load_process> load_;
    bool started_ = false, reported_ = false;
    std::atomic<bool> stopped_run_{false};
};

/** @brief The --on-threshold actions: samples above the threshold offered to their worker
 *  thread from the recorder's, never waiting; a stop action halts the run. */
class threshold_actions final : public run_plugin
{
public:
    explicit threshold_actions(session& s) : s_(s) {}
    void on_start(session&) override;
    void on_batch(std::span<const sample> batch) override;
    void on_idle() override;
    void on_end(run_outcome& out) override;

private:
    session& s_;
    std::optional<action_runner> runner_;
    std::uint64_t threshold_cycles_ = 0;
    std::atomic<bool> stopped_run_{false};
};

/** @brief --metrics-file: refused before the first stimulus when it cannot be written,
 *  rewritten at every window, written a last time (no longer recording) at the end. */
class metrics_writer final : public run_plugin
{
public:
    explicit metrics_writer(session& s) : s_(s) {}
    void on_start(session&) override;
    void on_window(const db::summary_row& s, const histogram& h,
                   std::uint64_t windows) noexcept override;
    void on_end(run_outcome& out) override;
    void on_closed(run_outcome& out, const histogram& h) noexcept override;

private:
    session& s_;
    std::optional<metrics_file> file_;
};

/** @brief The sampler's ring overflows and late answers, counted into the recorder (an
 *  `overflow` event each time the ring was found full). */
class ring_counters final : public run_plugin
{
public:
    explicit ring_counters(session& s) : s_(s) {}
    void on_idle() override;

private:
    session& s_;
    std::uint64_t overflows_ = 0, late_ = 0;
};

/** @brief The progress line on standard error: 1 s on a terminal, 10 s in a log. */
class progress_line final : public run_plugin
{
public:
    explicit progress_line(session& s) : s_(s) {}
    void on_tick() override;
    void on_end(run_outcome& out) override;

private:
    session& s_;
    std::optional<std::chrono::steady_clock::time_point> start_;
    std::chrono::steady_clock::time_point last_print_;
    std::uint64_t last_stimuli_ = 0;
};

/** @brief Marks (issue 31): each SIGUSR1 during the run is a `mark` event, at the stimulus
 *  count and wall time it was taken (within one 20 ms tick), with its sender's pid. The
 *  handler is this object's, for its life; the sampler's thread blocks SIGUSR1 so that a mark
 *  never interrupts a measurement. */
class run_marks final : public run_plugin
{
public:
    explicit run_marks(session& s);
    ~run_marks() override;
    run_marks(const run_marks&) = delete;
    run_marks& operator=(const run_marks&) = delete;
    void on_tick() override;
    void on_end(run_outcome& out) override;

private:
    void take(const char* when);
    session& s_;
    struct sigaction old_ {
    };
    std::uint64_t seen_ = 0, numbered_ = 0;
};

/** @brief The plug-ins @p s's options ask for, in their order. */
std::vector<std::unique_ptr<run_plugin>> engine_plugins(session& s);

} // namespace irqloop::logger
