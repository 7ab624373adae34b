// SPDX-License-Identifier: MIT
#pragma once

#include <pthread.h>
#include <sched.h>
#include <string>
#include <vector>

namespace irqloop::base
{

/** @brief The real-time settings the user asked for. */
struct rt_request final {
    int priority = 80;       ///< SCHED_FIFO priority of the sampler thread; 0 = SCHED_OTHER
    int cpu = -1;            ///< pin the sampler thread to this CPU; -1 = no pinning
    bool mlock = true;       ///< mlockall(MCL_CURRENT | MCL_FUTURE)
    bool dma_latency = true; ///< hold /dev/cpu_dma_latency at 0 for the whole run
    bool strict = false;     ///< a setting not obtained is an error
};

/**
 * @brief Applies and holds the real-time settings for the life of a run.
 *
 * Process-wide settings (mlockall, /dev/cpu_dma_latency) are taken in the constructor and
 * released by the destructor. Thread settings (priority, CPU) are applied by
 * apply_to_this_thread() from the sampler thread itself. Each setting is reported as
 * obtained or not; with strict, a miss throws irqloop::error naming the setting.
 */
class rt_session final
{
public:
    explicit rt_session(const rt_request& req);
    ~rt_session();
    rt_session(const rt_session&) = delete;
    rt_session& operator=(const rt_session&) = delete;

    /** @brief Set priority and affinity of the calling thread; never throws (see misses()). */
    void apply_to_this_thread() noexcept;

    /**
     * @brief Makes @p thread an ordinary one: SCHED_OTHER, on the CPUs the thread that made
     * this session had then. For a helper started by a thread that has applied the settings
     * (a new thread inherits its creator's policy and pin), called by that creator at once:
     * the helper itself could not, queued at the creator's priority on the creator's CPU
     * behind a spinning loop. There it would delay the responses it exists to leave alone.
     * Never throws; a failure leaves the thread as it was.
     */
    void demote_thread(pthread_t thread) const noexcept;

    /** @brief After apply: throws if strict and anything was missed. */
    void check_strict() const;
    /**
     * @brief Before anything is started: with strict, throws as check_strict() would when a
     * process-wide setting was missed or when the thread settings, tried on a short-lived
     * thread of their own, are refused. Without strict it does nothing.
     */
    void check_strict_early() const;

    /** @brief e.g. "sched=fifo:80 cpu=1 mlockall=yes cpu_dma_latency=0" (stored with the run). */
    std::string summary() const;

    /** @brief Human-readable lines for what was not obtained, with the reason. */
    const std::vector<std::string>& misses() const noexcept { return misses_; }

private:
    rt_request req_;
    cpu_set_t start_cpus_{}; ///< the creating thread's CPUs when the session was made
    bool have_start_cpus_ = false;
    int dma_fd_ = -1;
    bool mlocked_ = false;
    bool sched_ok_ = false;
    bool cpu_ok_ = false;
    std::vector<std::string> misses_;
};

} // namespace irqloop::base
