// SPDX-License-Identifier: MIT
// Exact time for the sampler's logic: a scripted clock and a scripted wire on which every
// answer, stall and loss falls at an exact cycle. Nothing here reads the machine's clock, so a
// test on it gives the same samples on any machine, busy or idle, and runs in parallel.
#pragma once

#include "far-end.hpp"
#include "lines.hpp"
#include "sample.hpp"
#include "sampler-loop.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace irqloop::test
{

/**
 * @brief The scripted time line: each clock read costs read_cost cycles; optionally the logger
 * is interrupted every tick_every cycles for tick_cost cycles (a timer tick, a host's steal),
 * wherever it is at that moment: in a poll, in drive(), in the pacing wait.
 */
class scripted_time final
{
public:
    explicit scripted_time(std::uint64_t read_cost = 10, std::uint64_t tick_every = 0,
                           std::uint64_t tick_cost = 0)
        : read_cost_(read_cost), tick_every_(tick_every), tick_cost_(tick_cost),
          next_tick_(tick_every ? now_ + tick_every : UINT64_MAX)
    {
    }
    /** @brief A clock read: time passes by the read's cost, and the read sees the end. */
    std::uint64_t read() noexcept
    {
        advance(read_cost_);
        return now_;
    }
    /** @brief Time passes by @p c cycles (a stall, a line access), and any tick on the way. */
    void advance(std::uint64_t c) noexcept
    {
        now_ += c;
        while (now_ >= next_tick_) {
            now_ += tick_cost_;
            next_tick_ += tick_every_;
            ++ticks;
        }
    }
    std::uint64_t now() const noexcept { return now_; }
    std::uint64_t ticks = 0; ///< interruptions so far

private:
    std::uint64_t now_ = 1'000'000;
    std::uint64_t read_cost_, tick_every_, tick_cost_, next_tick_;
};

/** @brief The sampler's clock on scripted time (logger::basic_sampler's Clock). */
struct scripted_clock final {
    scripted_time* time;
    std::uint64_t now() const noexcept { return time->read(); }
};

/** @brief What the far end does with one stimulus edge, and what the logger suffers meanwhile. */
struct edge_script final {
    std::uint64_t delay = 0;       ///< answer this long after the edge left, in cycles
    bool lost = false;             ///< never answer this edge
    std::uint64_t drive_stall = 0; ///< drive() stalls this long before the edge leaves
    /** A stall of the logger inside the first poll whose read is at or after this long from
     * the edge (before that poll reads the line); 0 stall_cycles: none. */
    std::uint64_t stall_after = 0;
    std::uint64_t stall_cycles = 0;
    bool stall_after_read = false; ///< the stall comes after that poll's read, not before
};

/**
 * @brief A far end on scripted time (follow or toggle, both edges or rising only). Edge k (from
 * 0, the k-th edge the far end answers) is given by the script; a line access costs
 * access_cost cycles, and the line is read at its end. It is a truth_source, like the
 * simulated board, and keeps every edge's truth.
 */
class scripted_wire final : public hw::polled_wire,
                            public hw::lines,
                            public hw::trigger_line,
                            public hw::truth_source
{
public:
    struct truth final {
        std::uint64_t left_at;   ///< the edge left (inside drive())
        std::uint64_t answer_at; ///< the far end answered; 0: never
    };

    scripted_wire(scripted_time& t, hw::far_end f, std::function<edge_script(std::uint64_t)> script,
                  std::uint64_t access_cost = 20)
        : hw::lines(f), time_(t), script_(std::move(script)), access_cost_(access_cost)
    {
    }

    void drive(bool high) noexcept override
    {
        const int h = high ? 1 : 0;
        if (h == stimulus_) {
            time_.advance(access_cost_);
            return;
        }
        stimulus_ = h;
        const bool answers = far_end_answers_both_edges() || h == 1;
        edge_script e{};
        if (answers)
            e = script_(edges_++);
        time_.advance(e.drive_stall + access_cost_);
        const std::uint64_t left = time_.now();
        current_ = e;
        stalled_ = false;
        if (!answers) {
            last_truth_ = -1;
            return;
        }
        answer_level_ = far_end_follows() ? h : response_ ^ 1;
        answer_at_ = e.lost ? 0 : left + e.delay;
        left_at_ = left;
        truths.push_back({left, answer_at_});
        last_truth_ = e.lost ? -1 : static_cast<std::int64_t>(e.delay);
    }

    int sense() noexcept override
    {
        ++polls;
        const bool stall =
            current_.stall_cycles && !stalled_ && time_.now() >= left_at_ + current_.stall_after;
        stalled_ = stalled_ || stall;
        if (stall && !current_.stall_after_read)
            time_.advance(current_.stall_cycles);
        time_.advance(access_cost_);
        if (answer_at_ && time_.now() >= answer_at_) {
            response_ = answer_level_;
            answer_at_ = 0;
        }
        if (stall && current_.stall_after_read)
            time_.advance(current_.stall_cycles);
        return response_;
    }

    std::int64_t last_truth_cycles() const noexcept override { return last_truth_; }
    std::string describe() const override { return "scripted"; }

    std::vector<truth> truths;
    std::uint64_t polls = 0;
    std::uint64_t trigger_raised = 0;
    void trigger(bool high) noexcept override { trigger_raised += high; }
    void open_trigger(const std::string&) override {}

private:
    scripted_time& time_;
    std::function<edge_script(std::uint64_t)> script_;
    std::uint64_t access_cost_;
    int stimulus_ = 0, response_ = 0, answer_level_ = 0;
    std::uint64_t answer_at_ = 0, left_at_ = 0, edges_ = 0;
    std::int64_t last_truth_ = -1;
    edge_script current_{};
    bool stalled_ = false;
};

/** @brief A sampler run on scripted time: every sample it pushed, and its counters. */
struct scripted_run final {
    std::vector<logger::sample> samples;
    logger::sampler_end end{};
    std::uint64_t stimuli = 0, lost = 0, late = 0, overflows = 0, triggers = 0;
};

inline scripted_run run_scripted(scripted_time& t, scripted_wire& w, logger::sampler_config cfg,
                                 std::size_t ring_size = 0)
{
    logger::spsc_ring<logger::sample> ring(ring_size ? ring_size : cfg.samples + 1);
    std::atomic<bool> stop{false};
    logger::basic_sampler<scripted_clock> s(w, ring, cfg, scripted_clock{&t});
    scripted_run r;
    r.end = s.run(stop);
    r.samples.resize(ring_size ? ring_size : cfg.samples + 1);
    r.samples.resize(ring.pop(std::span<logger::sample>(r.samples)));
    r.stimuli = s.counters().stimuli.load();
    r.lost = s.counters().lost.load();
    r.late = s.counters().late.load();
    r.overflows = s.counters().overflows.load();
    r.triggers = s.counters().triggers.load();
    return r;
}

} // namespace irqloop::test
