// SPDX-License-Identifier: MIT
#pragma once

#include "far-end.hpp"

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
 * @brief A capability of a wire that knows the true latency of each edge it is driven with:
 * the simulated board's computed far end, which draws the delay when drive() makes the edge.
 * The sampler finds it once, before the run (dynamic_cast), and asks it once per sample, after
 * the wait; real wires do not have it.
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

/**
 * @brief A pair of lines: one this program drives, one it senses.
 *
 * drive() and sense() are the hot path: they never allocate, never throw and make at most
 * the backend's own line access (one ioctl, one port read, one shared-memory load). A failure
 * is recorded once in a sticky line_error; sense() then returns -1 until the pair is closed.
 *
 * The wire protocol is level based: the far end answers a stimulus edge by changing its
 * output line (toggle), so the caller watches for "response differs from the level sampled
 * before the edge" and survives missed edges.
 */
class lines
{
public:
    virtual ~lines() = default;
    lines(const lines&) = delete;
    lines& operator=(const lines&) = delete;

    /** @brief Set the driven line high (true) or low (false). */
    virtual void drive(bool high) noexcept = 0;

    /** @brief Read the sensed line: 0 or 1, or -1 once a failure has been recorded. */
    virtual int sense() noexcept = 0;

    /**
     * @brief Block until the sensed line shows an edge, for event-driven responders.
     * @param timeout_ns Longest wait; negative waits forever.
     * @return 1 on an edge (the sensed level may be read with sense()), 0 on timeout,
     *         -1 on failure (sticky error set) or when the backend cannot wait for edges.
     */
    virtual int wait_edge(std::int64_t timeout_ns) noexcept
    {
        (void)timeout_ns;
        return -1;
    }

    /** @brief True when the backend can block in wait_edge(). */
    virtual bool has_edge_events() const noexcept { return false; }

    /**
     * @brief The edge the last successful wait_edge() returned for, where the backend knows
     * it (gpiod: the kernel's edge event). Unknown fields stay at their defaults.
     */
    virtual edge_event last_edge() const noexcept { return {}; }

    /**
     * @brief Number of edge events the kernel reported as lost (sequence-number gaps, queue
     * overruns), for event-driven responders. 0 where not applicable.
     */
    virtual std::uint64_t missed_edges() const noexcept { return 0; }

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

    /**
     * @brief Open a third, output-only line that the logger raises when a sample exceeds
     * --trigger-above, so that the target can freeze its trace buffer (see the kernel
     * responder). @p line uses the backend's own line syntax.
     * @return false when the backend has no trigger line (the caller reports it).
     */
    virtual bool open_trigger(const std::string& line)
    {
        (void)line;
        return false;
    }

    /** @brief Drive the trigger line opened by open_trigger(); hot-path safe. */
    virtual void trigger(bool high) noexcept { (void)high; }

    /**
     * @brief True when the backend times a whole sample itself (measure()), on a clock of
     * its own such as an FTDI chip's TCK, instead of the logger spinning on sense().
     */
    virtual bool device_timed() const noexcept { return false; }

    /**
     * @brief Device-timed backends: drive the stimulus to @p high and measure the answer.
     * Hot path: no allocation, no exception.
     * @param timeout_ns an answer later than this is lost
     * @return 0, or -1 on a line failure (sticky error set) or when not device_timed().
     */
    virtual int measure(bool high, std::int64_t timeout_ns, device_sample& out) noexcept
    {
        (void)high;
        (void)timeout_ns;
        (void)out;
        return -1;
    }

    /**
     * @brief Device-timed backends: the widest bracket the device's own clock gives a sample
     * (its resolution, with the uncertainty of its tick). The run's automatic gap limit is at
     * least this, so that only brackets the host had to supply are flagged disturbed.
     */
    virtual std::int64_t device_bracket_ns() const noexcept { return 0; }

    /**
     * @brief Device-timed backends that take a floor run's share into their own reading (the
     * ftdi command offset): the wiring a floor run must have been recorded on to apply, also
     * stored with every run as metadata `<kind>.wiring`. Empty: no floor is taken in.
     */
    virtual std::string floor_wiring() const { return {}; }
    /**
     * @brief Take @p share_ns (db::floor_share_ns() of the floor run @p source names) into the
     * reading, before the run starts; the run stores it as `<kind>.floor_share_ns` and
     * `<kind>.floor_run`, so that report never subtracts it a second time.
     */
    virtual void use_floor(std::int64_t share_ns, const std::string& source)
    {
        (void)share_ns;
        (void)source;
    }

    /** @brief Called before the first drive(); e.g. starts the simulated board's thread. */
    virtual void start() {}

    /** @brief Called after the last sense(); stops threads, releases lines to a safe level. */
    virtual void stop() noexcept {}

    /** @brief The first failure since open. */
    line_error error() const noexcept { return error_; }

    /** @brief The canonical spec of this pair, with defaults filled in, for run metadata. */
    virtual std::string describe() const = 0;

    /** @brief Extra run metadata (poll cost, chip labels, ...). */
    virtual std::vector<metadata_item> metadata() const { return {}; }

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

} // namespace irqloop::hw
