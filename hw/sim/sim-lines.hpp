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

/** @brief How the simulated board's far end is played (`far=`). */
enum class sim_far {
    computed, ///< the answer's time is computed at the edge, on the logger's clock (default)
    thread,   ///< a thread of this process spins on the stimulus and answers (concurrency tests)
};

/** @brief What a `sim:` spec says (take_sim_options()). */
struct sim_options final {
    latency_model model;
    /** Default both edges, follow: the simulated board sets the response to the level. */
    far_end answers{true, true};
    sim_far far = sim_far::computed;
    int cpu = -1;     ///< far=thread: pin the target thread to this CPU; -1: not pinned
    int priority = 0; ///< far=thread: SCHED_FIFO priority of the target thread; 0: SCHED_OTHER
};

/** @brief What the simulation did for one stimulus edge it answered or lost. */
struct sim_truth final {
    double delay_ns; ///< the drawn delay (also for a drawn loss: then no answer follows)
    bool lost;
    bool rising;                  ///< the stimulus edge that triggered it
    std::uint64_t seen_cycles;    ///< when the target took the edge
    std::uint64_t answer_cycles;  ///< when it changed the response (0 when lost, or not yet)
    std::uint64_t max_gap_cycles; ///< far=thread: the target thread's largest poll gap for this
                                  ///< edge, large when it was preempted (its own disturbance,
                                  ///< beyond the drawn delay); 0 for the computed far end
};

/**
 * @brief The simulated target board. It knows every delay it drew (the ground truth), so tests
 * and `report` can compare measured against true.
 *
 * On each stimulus edge it answers after a delay drawn from a latency_model: answer=follow (the
 * default) sets the response to the stimulus level, answer=toggle flips it. edges=rising makes a
 * single-edge target (like the parallel-port nACK): falling edges are not answered and the
 * logger re-arms on them. Edges that come while an answer is still due collapse into one, like
 * an IRQ's pending bit, answered for the line's level when the earlier answer is out.
 *
 * Two ways to play the far end (`far=`):
 * - `computed` (the default): no thread. drive() notes the edge's time on the logger's own
 *   cycle clock and draws the delay; sense() shows the answer once the clock has passed it. The
 *   board delivers its model exactly, whatever the host's load: a measurement differs from the
 *   truth only by the logger's own poll and drive() costs and its own interruptions, which the
 *   sampler's bracket accounts for. Its truth of each sample reaches the sampler through
 *   hw::truth_source.
 * - `thread`: a thread of this process spins on the stimulus and answers after spinning the
 *   delay (`cpu=`, `priority=` place it). The host schedules it as it likes, so its answers
 *   are late by its own preemptions: for the concurrency and TSan tests, not for figures.
 *
 * Spec:
 * `sim[:model=...,mean=...,sd=...,spike_p=...,loss_p=...,seed=N,edges=both|rising,answer=follow|toggle,far=computed|thread,cpu=N,priority=N]`
 * (model keys: see latency_model; far-end keys: see far_end; cpu and priority only with
 * far=thread).
 */
class sim_lines : public polled_wire, public lines
{
public:
    using truth = sim_truth;

    ~sim_lines() override = default;

    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

    /**
     * @brief Keep the truth of the first @p n answered-or-lost edges (preallocated here, so
     * the far end does not allocate). Call before start().
     */
    void record_truth(std::size_t n);

    /** @brief The truth recorded so far; call after stop(). */
    const std::vector<truth>& truths() const noexcept { return truth_; }

    /** @brief Edges the target took (answered or lost), and how many it lost. */
    std::uint64_t edges_seen() const noexcept { return edges_.load(); }
    std::uint64_t edges_lost() const noexcept { return lost_.load(); }

    /** @brief How the far end is played. */
    sim_far far() const noexcept { return opt_.far; }

protected:
    explicit sim_lines(sim_options o);
    /** @brief Count an edge taken, keep its truth if there is room; nullptr when not kept. */
    truth* note_edge(const latency_model::draw_result& d, bool rising,
                     std::uint64_t seen_cycles) noexcept;

    sim_options opt_;

private:
    std::atomic<std::uint64_t> edges_{0};
    std::atomic<std::uint64_t> lost_{0};
    std::vector<truth> truth_;
    std::size_t truth_cap_ = 0;
};

/** @brief far=computed: the answer is computed on the logger's clock (see sim_lines). */
class sim_computed_lines final : public sim_lines, public truth_source
{
public:
    explicit sim_computed_lines(sim_options o);

    void drive(bool high) noexcept override;
    int sense() noexcept override;
    std::int64_t last_truth_cycles() const noexcept override { return last_truth_; }

private:
    /** @brief Put out the answer due by @p now, then take an edge that waited for it. */
    void settle(std::uint64_t now) noexcept;
    /** @brief The target takes the line's present level at @p now: draw, and schedule. */
    void take_edge(std::uint64_t now) noexcept;

    double cycles_per_ns_;
    int level_ = 0;               ///< the stimulus level
    int response_ = 0;            ///< the response line
    bool busy_ = false;           ///< an answer is due at answer_at_
    bool waiting_ = false;        ///< an edge came while busy: taken when the answer is out
    int answer_level_ = 0;        ///< what the response becomes at answer_at_
    std::uint64_t answer_at_ = 0; ///< cycles
    std::uint64_t edge_at_ = 0;   ///< the last edge driven, cycles
    std::int64_t last_truth_ = -1;
    truth* pending_ = nullptr; ///< the truth record of the answer due, if kept
};

/** @brief far=thread: a thread of this process plays the far end (see sim_lines). */
class sim_thread_lines final : public sim_lines
{
public:
    explicit sim_thread_lines(sim_options o);
    ~sim_thread_lines() override;

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

private:
    void target_loop() noexcept;

    alignas(64) std::atomic<std::uint64_t> stimulus_{0}; ///< edges driven; low bit = level
    alignas(64) std::atomic<int> response_{0};
    alignas(64) std::atomic<bool> running_{false};
    std::atomic<bool> ready_{false};
    std::thread thread_;
};

/**
 * @brief Read a `sim:` spec's keys. The simulated board only plays the target, so @p r must
 * be the logger.
 * @throws irqloop::error (exit status 2) on a bad value or the responder role.
 */
sim_options take_sim_options(spec& s, role r);

/** @brief The registry's open step: the far end the options name. */
std::unique_ptr<lines> open_sim_lines(const sim_options& o);

} // namespace irqloop::hw
