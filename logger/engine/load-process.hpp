// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace irqloop::logger
{

/** @brief How a load command is run. */
struct load_options final {
    std::string command; ///< a /bin/sh command line, e.g. "ssh target hackbench -l 100000"
    std::int64_t grace_ns = 5'000'000'000; ///< SIGTERM, then SIGKILL after this long
    std::size_t tail_bytes = 1024;         ///< how much of the end of its output is kept
};

/** @brief How a load ended. */
struct load_result final {
    bool started = false;
    bool by_itself = false; ///< it exited before stop() was called (an early death during a run)
    int status = -1;        ///< exit code, or 128 + signal number when killed
    int signal = 0;         ///< the signal that ended it, 0 when it exited
    bool killed = false;    ///< stop() had to send SIGKILL after the grace period
    double seconds = 0;     ///< from start to the end of the last process of its group
    std::string tail;       ///< the last tail_bytes of its standard output and error

    /** @brief "exit 0", "exit 3", "killed by SIGTERM". */
    std::string describe() const;
};

/**
 * @brief A load command that the run starts itself (rteval's load modules, Linaro's
 * BACKGROUND_CMD): `/bin/sh -c COMMAND` in a process group of its own, standard input from
 * /dev/null, standard output and error captured (the tail is kept), scheduled SCHED_OTHER
 * whatever the caller's policy.
 *
 * Its own process group keeps the terminal's SIGINT away from it (irqloop decides when it
 * ends) and lets stop() reach every process it started. start() makes this process a child
 * subreaper (PR_SET_CHILD_SUBREAPER), so members orphaned by the shell are reaped here and a
 * stopped group is really gone, even where PID 1 does not reap. A process that leaves the
 * group itself (setsid, daemons) is out of reach: that is documented, not detected.
 *
 * A monitor thread drains the output and reaps; nothing here blocks the caller except stop().
 */
class load_process final
{
public:
    explicit load_process(load_options o);
    /** @brief stop() if still running; never throws. */
    ~load_process();
    load_process(const load_process&) = delete;
    load_process& operator=(const load_process&) = delete;

    /** @throws irqloop::error (exit 1) when the shell cannot be spawned or the pipe made. */
    void start();

    /** @brief The shell's pid, which is also the process group id; -1 before start(). */
    int pgid() const noexcept { return pid_; }

    /** @brief True once the shell itself has exited (by itself or after stop()). */
    bool exited() const noexcept { return leader_done_.load(); }

    /**
     * @brief End the load: SIGTERM to the whole group, SIGKILL to it after the grace period,
     * and wait until no process of the group is left (a second grace at most after SIGKILL).
     * Idempotent; the result of a load that already ended by itself has by_itself set.
     */
    load_result stop();

    /** @brief The output tail so far. */
    std::string tail() const;

private:
    void monitor();
    bool group_gone() const noexcept;

    load_options opt_;
    int pid_ = -1;
    int out_fd_ = -1;
    std::thread thread_;
    std::atomic<bool> leader_done_{false}, gone_{false}, stopping_{false}, stopped_{false};
    std::atomic<bool> by_itself_{false};
    int raw_status_ = 0;
    std::int64_t start_ns_ = 0, end_ns_ = 0;
    mutable std::mutex mu_;
    std::string tail_;
    load_result result_;
};

} // namespace irqloop::logger
