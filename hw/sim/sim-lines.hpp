// SPDX-License-Identifier: MIT
#pragma once

#include "latency-model.hpp"
#include "lines.hpp"
#include "spec.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace irqloop::hw
{

/** @brief What a `sim:` spec says (take_sim_options()). */
struct sim_options final {
    latency_model model;
    /** Default both edges, follow: the simulated board sets the response to the level. */
    far_end answers{true, true};
    int cpu = -1;     ///< pin the target thread to this CPU; -1: not pinned
    int priority = 0; ///< SCHED_FIFO priority of the target thread; 0: SCHED_OTHER
};

/**
 * @brief The simulated target board: a thread of this process plays the far end.
 *
 * It spins on the stimulus level, and on each edge it answers after a delay drawn from a
 * latency_model, spinning on the cycle clock: answer=follow (the default) sets the response
 * to the stimulus level, answer=toggle flips it. edges=rising makes a single-edge target
 * (like the parallel-port nACK): falling edges are not answered and the logger re-arms on
 * them. It knows every delay it injected (the ground truth), so tests can compare measured
 * against true.
 *
 * Spec:
 * `sim[:model=...,mean=...,sd=...,spike_p=...,loss_p=...,seed=N,edges=both|rising,answer=follow|toggle,cpu=N,priority=N]`
 * (model keys: see latency_model; far-end keys: see far_end). cpu pins the target thread;
 * priority gives it SCHED_FIFO (0: SCHED_OTHER, the default).
 */
class sim_lines final : public lines
{
public:
    /** @brief What the simulation did for one stimulus edge it answered or lost. */
    struct truth final {
        double delay_ns; ///< injected delay (0 when lost)
        bool lost;
        bool rising;                  ///< the stimulus edge that triggered it
        std::uint64_t seen_cycles;    ///< when the target saw the edge
        std::uint64_t answer_cycles;  ///< when it changed the response (0 when lost)
        std::uint64_t max_gap_cycles; ///< the target thread's largest poll gap for this edge:
                                      ///< large when it was preempted (the simulated target's
                                      ///< own "disturbance", beyond the injected delay)
    };

    explicit sim_lines(sim_options o);
    ~sim_lines() override;

    void drive(bool high) noexcept override
    {
        // One word holds both the edge count and the level (its low bit): the target reads
        // them together, and like an edge-triggered IRQ's pending bit it cannot miss a short
        // pulse (the single-edge re-arm) while it is preempted. Only this thread writes it;
        // the locked add still matters: it publishes the edge at once instead of leaving it
        // in the store buffer while the spin starts.
        const std::uint64_t c = stimulus_.load(std::memory_order_relaxed);
        if ((c & 1u) != (high ? 1u : 0u))
            stimulus_.fetch_add(1, std::memory_order_acq_rel);
    }
    int sense() noexcept override { return response_.load(std::memory_order_acquire); }
    void start() override;
    void stop() noexcept override;
    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

    /**
     * @brief Keep the truth of the first @p n answered-or-lost edges (preallocated here, so
     * the target thread does not allocate). Call before start().
     */
    void record_truth(std::size_t n);

    /** @brief The truth recorded so far; call after stop(). */
    const std::vector<truth>& truths() const noexcept { return truth_; }

    /** @brief Edges the target saw (answered or lost), and how many it lost. */
    std::uint64_t edges_seen() const noexcept { return edges_.load(); }
    std::uint64_t edges_lost() const noexcept { return lost_.load(); }

private:
    void target_loop() noexcept;

    sim_options opt_;
    alignas(64) std::atomic<std::uint64_t> stimulus_{0}; ///< edges driven; low bit = level
    alignas(64) std::atomic<int> response_{0};
    alignas(64) std::atomic<bool> running_{false};
    std::atomic<bool> ready_{false};
    std::atomic<std::uint64_t> edges_{0};
    std::atomic<std::uint64_t> lost_{0};
    std::vector<truth> truth_;
    std::size_t truth_cap_ = 0;
    std::thread thread_;
};

/**
 * @brief Read a `sim:` spec's keys. The simulated board only plays the target, so @p r must
 * be the logger.
 * @throws irqloop::error (exit status 2) on a bad value or the responder role.
 */
sim_options take_sim_options(spec& s, role r);

/** @brief The registry's open step: a board whose thread starts in start(). */
std::unique_ptr<lines> open_sim_lines(const sim_options& o);

} // namespace irqloop::hw
