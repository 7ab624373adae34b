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
    std::string guard;                     ///< irqloop-load-guard's path; "" = find_load_guard()
};

/**
 * @brief The path of irqloop-load-guard: $IRQLOOP_LOAD_GUARD (read with secure_getenv, so
 * not for a program with file capabilities), else next to this program (the build tree), else
 * in ../libexec/irqloop from it (installed).
 * @throws irqloop::error (exit 1) when none of those is an executable file.
 */
std::string find_load_guard();

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
 * The shell is not this process's child but the child of a guard, irqloop-load-guard
 * (logger/load-guard/), spawned with posix_spawn in a process group of its own and holding
 * one end of a socketpair. The guard is a child subreaper, so processes the shell orphans
 * (a `setsid` child included) are reparented to it. When the socket reads end of file —
 * stop() closing this end, or this process dying by SIGKILL or a crash — the guard ends the
 * load: SIGTERM to the load's group and to every process reparented to it, SIGKILL to all of
 * them after the grace. So no process of the load outlives irqloop, however irqloop ends.
 * Out of reach: processes that are not its descendants (what systemd-run, at or ssh's far
 * side start on the load's behalf), and everything once the guard itself is SIGKILLed (the
 * OOM killer, kill -9 by hand): then stop() is the only cleaner, as before the guard.
 *
 * Both groups are away from the terminal's: its SIGINT reaches irqloop, which decides when
 * the load ends. A monitor thread drains the output, reads the guard's reports and reaps;
 * nothing here blocks the caller except start() (until the guard reports the shell's group,
 * a few milliseconds) and stop().
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

    /** @brief The shell's pid, which is also the load's process group id; -1 before start(). */
    int pgid() const noexcept { return pid_; }

    /** @brief The guard's pid (leader of a group of its own); -1 before start(). */
    int guard_pid() const noexcept { return guard_pid_; }

    /** @brief True once the shell itself has exited (by itself or after stop()). */
    bool exited() const noexcept { return leader_done_.load(); }

    /**
     * @brief End the load: the guard sends SIGTERM to the whole group (and to orphans
     * reparented to it), SIGKILL after the grace period; wait until the guard has exited and
     * no process of the group is left. Should the guard not be done a second after its
     * SIGKILL, this sends SIGKILL to the guard and the group itself. Idempotent; the result
     * of a load that already ended by itself has by_itself set.
     */
    load_result stop();

    /** @brief The output tail so far. */
    std::string tail() const;

private:
    void monitor();
    bool group_gone() const noexcept;
    void take_reports(const char* data, std::size_t n);

    load_options opt_;
    int pid_ = -1, guard_pid_ = -1;
    int out_fd_ = -1;
    int ctl_fd_ = -1;     // this end of the guard's control socket; closed after the join
    std::string ctl_buf_; // the guard's reports not yet ended by '\n' (monitor thread only)
    std::atomic<bool> guard_killed_{false}, guard_done_{false};
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
