// SPDX-License-Identifier: MIT
#pragma once

#include "rows.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace irqloop::logger
{

/** @brief What an action does when a sample crosses the threshold (rtla's --on-threshold). */
enum class action_kind { shell, signal, stop, trace };

/** @brief One parsed `--on-threshold` value. */
struct action_spec final {
    action_kind kind = action_kind::stop;
    std::string command; ///< shell: the /bin/sh command line
    int pid = 0;         ///< signal: the process to signal
    int signum = 0;      ///< signal: the signal number
    std::string text;    ///< the value as given, for events and metadata
};

/**
 * @brief Parse `shell,command=CMD` (CMD is the rest of the value, commas included),
 * `signal,pid=N,num=S` (N a pid or `parent`; S a number or a name such as USR1 or SIGUSR1),
 * `stop` or `trace`.
 * @throws irqloop::error (exit 2) naming the bad part.
 */
action_spec parse_action(const std::string& text);

/** @brief The sample that set an action off. */
struct action_trigger final {
    std::uint64_t seq = 0;
    std::int64_t unix_ns = 0;
    std::int64_t latency_ns = 0;
};

/**
 * @brief Runs the actions of a run on a worker thread of its own, so that neither the sampler
 * nor the thread that offers triggers (the recorder) ever waits for one.
 *
 * Rate limit: after a trigger fires, triggers whose sample time is less than the holdoff later
 * are counted as suppressed, not run; the next event that fires says how many were. All the
 * actions run for each trigger that fires, in the order given.
 *
 * - shell: `/bin/sh -c CMD` in its own process group (a load_process), with IRQLOOP_SEQ,
 *   IRQLOOP_LATENCY_NS and IRQLOOP_UNIX_NS exported; waited for; event value = its exit status.
 * - signal: kill(pid, num); event value = 0 or the errno.
 * - stop: calls the on_stop callback (the run ends as if interrupted); value 0.
 * - trace: the sampler already raised the trigger line for this sample; the event records it.
 *
 * Each action taken is an event of kind "action" at the trigger's seq and time.
 */
class action_runner final
{
public:
    /**
     * @param holdoff_ns minimum sample-time distance between two triggers that fire (>= 0).
     * @param on_stop called on the worker thread by a stop action; may be empty.
     * @param finish_grace_ns how long finish() lets a running shell action go on before
     *        stopping it (SIGTERM, then SIGKILL).
     */
    action_runner(std::vector<action_spec> actions, std::int64_t holdoff_ns,
                  std::function<void()> on_stop, std::int64_t finish_grace_ns = 10'000'000'000);
    /** @brief finish(); never throws. */
    ~action_runner();
    action_runner(const action_runner&) = delete;
    action_runner& operator=(const action_runner&) = delete;

    /**
     * @brief Offer a sample above the threshold. Returns at once (a short lock, no action
     * runs here); true when it fires, false when the holdoff suppressed it or finish() began.
     * Triggers must come in sample order.
     */
    bool offer(const action_trigger& t);

    /** @brief The events of the actions completed since the last call. */
    std::vector<db::event_row> take_events();

    /** @brief Run what is queued (shell actions get the finish grace), then end the worker. */
    void finish();

    std::uint64_t fired() const noexcept { return fired_.load(); }
    std::uint64_t suppressed() const noexcept { return suppressed_total_.load(); }

private:
    struct queued {
        action_trigger t;
        std::uint64_t suppressed_before;
    };
    void work();
    db::event_row run_one(const action_spec& a, const queued& q);

    std::vector<action_spec> actions_;
    std::int64_t holdoff_ns_;
    std::function<void()> on_stop_;
    std::int64_t finish_grace_ns_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<queued> queue_;
    std::vector<db::event_row> done_;
    bool have_last_ = false;
    std::int64_t last_fire_ns_ = 0;
    std::uint64_t suppressed_since_ = 0;
    std::atomic<std::uint64_t> fired_{0}, suppressed_total_{0};
    std::atomic<bool> finishing_{false};
    std::atomic<std::int64_t> deadline_ns_{0};
    std::thread worker_;
};

} // namespace irqloop::logger
