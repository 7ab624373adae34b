// SPDX-License-Identifier: MIT
#pragma once

#include "far-end.hpp"
#include "identity.hpp"
#include "interface.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace irqloop::hw
{

/**
 * @brief Which end of the wire a program is.
 *
 * The logger drives the stimulus and senses the response; the responder senses the stimulus
 * and drives the response. Backend keys `out` and `in` always mean "the line this program
 * drives" and "the line this program senses", whatever the role.
 */
enum class role { logger, responder };

/**
 * @brief A sticky error of a line pair: the first failure since open, checked outside the
 * hot loop. Holds no allocated memory so that recording it cannot fail.
 */
struct line_error final {
    int errnum = 0;           ///< errno value, 0 when there was no failure
    const char* op = nullptr; ///< static string: which operation failed ("drive", "sense")
    explicit operator bool() const noexcept { return errnum != 0; }
};

/**
 * @brief One sample measured by a device-timed backend (see lines::measure()): the latency
 * is known to lie in [latency_ns - bracket_ns, latency_ns].
 */
struct device_sample final {
    std::int64_t latency_ns = 0; ///< upper bound of the latency from the stimulus edge; 0 if lost
    std::int64_t bracket_ns = 0; ///< width of the interval proven to hold the true latency
    bool lost = false;           ///< no answer that could be bounded before the timeout
    bool late = false;           ///< the line already showed an answer to an earlier edge
    bool suspect = false;        ///< a glitch or a framing fault: the sample is flagged disturbed
};

/** @brief A key/value pair of run metadata reported by a backend (stored with every run). */
/** @brief An edge as the kernel reported it (lines::last_edge()). */
struct edge_event final {
    int rising = -1; ///< 1 rising, 0 falling, -1 not known
    std::int64_t kernel_ns =
        0; ///< CLOCK_MONOTONIC time the kernel stamped in its IRQ handler; 0 not known
};

struct metadata_item final {
    std::string key;
    std::string value;
};

/**
 * @brief The base of every wire: what each backend has whatever it can do. Its identity
 * (describe(), metadata()), its far end (how it answers, see take_far_end()), start/stop and
 * the sticky error. What a wire can do is a capability it implements beside this base, in
 * OpenOCD's manner: polled_wire (drive/sense), edge_waiter (a responder blocks for edges),
 * device_timed_wire (the chip times a whole sample), trigger_line, truth_source. The caller
 * finds each capability once, before the hot loop (find<>(), or polled() where it is required).
 */
class lines : public interface
{
public:
    /**
     * @brief True when the far end answers both stimulus edges (each edge is one sample).
     * False for single-edge targets (parallel-port nACK, `edges=rising`): the logger re-arms
     * on the return edge without measuring it. Every backend takes it, with `answer`, through
     * take_far_end() (far-end.hpp); the default of this base class is both edges, toggle.
     */
    bool far_end_answers_both_edges() const noexcept { return far_end_.both_edges; }

    /**
     * @brief True when the far end sets the response to the stimulus level (`answer=follow`)
     * instead of flipping it on each edge (`answer=toggle`, lpptest's way). A following far
     * end lets the logger reject a late answer to an earlier edge.
     */
    bool far_end_follows() const noexcept { return far_end_.follow; }

    /** @brief Called before the first drive(); e.g. starts the simulated board's thread. */
    virtual void start() {}

    /** @brief Called after the last sense(); stops threads, releases lines to a safe level. */
    virtual void stop() noexcept {}

    /** @brief The first failure since open. */
    line_error error() const noexcept { return error_; }

    /** @brief The canonical spec of this pair, with defaults filled in, for run metadata. */
    virtual std::string describe() const = 0;

    /** @brief Extra run metadata (poll cost, chip labels, ...), written once, for the file. */
    virtual std::vector<metadata_item> metadata() const { return {}; }

    /**
     * @brief Who this wire is, typed: its kind, canonical spec and lines, and for a
     * device-timed wire its clock and the floor share it took in (see identity.hpp).
     */
    virtual backend_identity identity() const { return identity_of_spec(describe()); }

protected:
    lines() = default;
    /** @brief For a backend: how its far end answers (see take_far_end()). */
    explicit lines(far_end f) : far_end_(f) {}

    /** @brief Record a failure; keeps the first one. Safe on the hot path. */
    void fail(int errnum, const char* op) noexcept
    {
        if (!error_)
            error_ = line_error{errnum, op};
    }

private:
    line_error error_;
    far_end far_end_;
};

/**
 * @brief The polled capability: a pair of lines, one this program drives, one it senses.
 * Every backend has it (ftdi's is host-timed, one round trip each, for re-synchronising).
 *
 * drive() and sense() are the hot path: they never allocate, never throw and make at most
 * the backend's own line access (one ioctl, one port read, one shared-memory load). A failure
 * is recorded once in the wire's sticky line_error; sense() then returns -1 until the pair is
 * closed.
 *
 * The wire protocol is level based: the far end answers a stimulus edge by changing its
 * output line (toggle), so the caller watches for "response differs from the level sampled
 * before the edge" and survives missed edges.
 */
class polled_wire
{
public:
    /** @brief Set the driven line high (true) or low (false). */
    virtual void drive(bool high) noexcept = 0;

    /** @brief Read the sensed line: 0 or 1, or -1 once a failure has been recorded. */
    virtual int sense() noexcept = 0;

protected:
    polled_wire() = default;
    ~polled_wire() = default;
};

/** @brief The capability of blocking until the sensed line shows an edge (responders). */
class edge_waiter
{
public:
    /**
     * @brief True when this wire, as opened, can block in wait_edge() (gpiod with edge
     * detection, ppdev with its interrupt, shm's responder side).
     */
    virtual bool has_edge_events() const noexcept = 0;

    /**
     * @brief Block until the sensed line shows an edge.
     * @param timeout_ns Longest wait; negative waits forever.
     * @return 1 on an edge (the sensed level may be read with sense()), 0 on timeout,
     *         -1 on failure (sticky error set) or when the wire cannot wait for edges.
     */
    virtual int wait_edge(std::int64_t timeout_ns) noexcept = 0;

    /**
     * @brief The edge the last successful wait_edge() returned for, where the backend knows
     * it (gpiod: the kernel's edge event). Unknown fields stay at their defaults.
     */
    virtual edge_event last_edge() const noexcept { return {}; }

    /**
     * @brief True when wait_edge() with a negative timeout blocks in one system call per edge
     * and returns 0 when a signal interrupts it (gpiod: a blocking read() of the line request,
     * instead of a poll followed by the read). A waiter that says so may be told to stop only
     * by a signal to its thread; the others are waited on with a timeout.
     */
    virtual bool wait_ends_on_signal() const noexcept { return false; }

    /**
     * @brief Number of edge events the kernel reported as lost (sequence-number gaps, queue
     * overruns). 0 where not known.
     */
    virtual std::uint64_t missed_edges() const noexcept { return 0; }

protected:
    edge_waiter() = default;
    ~edge_waiter() = default;
};

/**
 * @brief The capability of timing a whole sample on a clock of the device's own, such as an
 * FTDI chip's TCK, instead of the logger spinning on sense().
 */
class device_timed_wire
{
public:
    /**
     * @brief Drive the stimulus to @p high and measure the answer.
     * Hot path: no allocation, no exception.
     * @param timeout_ns an answer later than this is lost
     * @return 0, or -1 on a line failure (sticky error set).
     */
    virtual int measure(bool high, std::int64_t timeout_ns, device_sample& out) noexcept = 0;

    /**
     * @brief The widest bracket the device's own clock gives a sample (its resolution, with
     * the uncertainty of its tick). The run's automatic gap limit is at least this, so that
     * only brackets the host had to supply are flagged disturbed.
     */
    virtual std::int64_t device_bracket_ns() const noexcept = 0;

protected:
    device_timed_wire() = default;
    ~device_timed_wire() = default;
};

/**
 * @brief The capability of a third, output-only line that the logger raises when a sample
 * exceeds --trigger-above, so that the target can freeze its trace buffer (see the kernel
 * responder).
 */
class trigger_line
{
public:
    /**
     * @brief Open the trigger line; @p line uses the backend's own line syntax.
     * @throws irqloop::error when the line cannot be opened.
     */
    virtual void open_trigger(const std::string& line) = 0;

    /** @brief Drive the trigger line opened by open_trigger(); hot-path safe. */
    virtual void trigger(bool high) noexcept = 0;

protected:
    trigger_line() = default;
    ~trigger_line() = default;
};

/**
 * @brief A capability of a wire that knows the true latency of each edge it is driven with:
 * the simulated board's computed far end, which draws the delay when drive() makes the edge.
 * The sampler finds it once, before the run, and asks it once per sample, after the wait;
 * real wires do not have it.
 */
class truth_source
{
public:
    /**
     * @brief Cycles of hw::cycles() from the last measured edge to its answer, as the far end
     * drew them (also when the answer comes after the logger's timeout); -1 when the edge
     * gets no answer (a drawn loss) or is not answered (a single-edge target's re-arm).
     */
    virtual std::int64_t last_truth_cycles() const noexcept = 0;

protected:
    truth_source() = default;
    ~truth_source() = default;
};

/** @brief The capability @p Cap of @p wire, or nullptr when it has not got it. Not hot-path. */
template <class Cap> Cap* find(lines& wire) noexcept
{
    return dynamic_cast<Cap*>(&wire);
}
template <class Cap> const Cap* find(const lines& wire) noexcept
{
    return dynamic_cast<const Cap*>(&wire);
}

/**
 * @brief The polled capability of @p wire, which every backend has.
 * @throws irqloop::error when it has not got one.
 */
polled_wire& polled(lines& wire);

/** @brief The edge waiter of @p wire when it can wait for edges as opened, else nullptr. */
inline edge_waiter* find_edge_waiter(lines& wire) noexcept
{
    edge_waiter* w = find<edge_waiter>(wire);
    return w && w->has_edge_events() ? w : nullptr;
}

} // namespace irqloop::hw
