// SPDX-License-Identifier: MIT
#pragma once
// A run as a core session (wire, sampler, ring, recorder) and plug-ins behind one small
// interface, in the manner of rtla's tool_ops and HdrHistogram's split of histogram, interval
// recorder and log writer. The core measures and stores; everything else a run does (the
// dead-wire watchdog, the late-start note, the threshold actions, the load process, the
// metrics file, the progress line, the ring's counters, a command's gates) is a plug-in.
#include "histogram.hpp"
#include "rows.hpp"
#include "sample.hpp"

#include <cstdint>
#include <span>

namespace irqloop::logger
{

class session;
struct run_outcome;

/**
 * @brief One part of a run that is not the measurement itself. Every hook has an empty
 * default; a plug-in overrides the ones it needs. Hooks run on the thread named, in the order
 * the plug-ins were given; none of them runs on the sampler's thread.
 */
class run_plugin
{
public:
    virtual ~run_plugin() = default;

    /** @brief Caller's thread: the session is set up (wire started, sampler parked), the run
     *  row not yet begun. A plug-in may refuse the run here by throwing. */
    virtual void on_start(session&) {}
    /** @brief Recorder's thread: a batch from the ring, before the recorder takes it. */
    virtual void on_batch(std::span<const sample>) {}
    /** @brief Recorder's thread: the ring was found empty (at least every few ms). */
    virtual void on_idle() {}
    /** @brief Caller's thread, every 20 ms while the sampler runs. */
    virtual void on_tick() {}
    /** @brief Recorder's thread, after each window's commit: the run so far. Must not throw. */
    virtual void on_window(const db::summary_row&, const histogram&, std::uint64_t) noexcept {}
    /** @brief Caller's thread: the sampler has ended, the recording is still open. Closing
     *  events go to session::add_event(); a stop of one's own is claimed by claim_stop(). */
    virtual void on_end(run_outcome&) {}
    /** @brief Caller's thread: the recording is closed and @p out holds the whole run (its
     *  summary, status and run histogram); the run row may still take metadata. */
    virtual void on_finish(run_outcome&, const histogram&) {}
    /** @brief Caller's thread: after every plug-in's on_finish, so @p out is whole (the
     *  gates' verdicts included); the last word, e.g. the metrics file's final write. */
    virtual void on_closed(run_outcome&, const histogram&) noexcept {}
};

} // namespace irqloop::logger
