// SPDX-License-Identifier: MIT
#pragma once

#include "lines.hpp"
#include "spec.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct gpiod_line_request;
struct gpiod_edge_event_buffer;

namespace irqloop::hw
{

/**
 * @brief Where one line lives: the chip's device path and the offset on it, plus what the
 * kernel calls them, for messages and run metadata.
 */
struct gpiod_line_id final {
    std::string path;       ///< "/dev/gpiochip0"
    std::string chip_name;  ///< "gpiochip0"
    std::string chip_label; ///< "pinctrl-bcm2711", "irqloop-wire"
    unsigned offset = 0;    ///< offset on the chip
    std::string line_name;  ///< "GPIO17", empty when the chip names no lines
};

/** @brief A line as messages name it: `gpiochip0:17`, with ` ("GPIO17")` when it has a name. */
std::string gpiod_line_text(const gpiod_line_id& id);

/** @brief A line as run metadata names it: gpiod_line_text(), ` on PATH [CHIP LABEL]`. */
std::string gpiod_line_where(const gpiod_line_id& id);

/**
 * @brief Find a line from the backend's syntax: `[CHIP:]LINE`.
 *
 * CHIP is a chip name ("gpiochip0"), a path ("/dev/gpiochip0") or a chip label
 * ("pinctrl-bcm2711"); without it, @p default_chip is used, or, when that is empty and LINE is
 * a name, every chip is searched in order. LINE is an offset ("17") or a line name ("GPIO17").
 *
 * @param what For messages: which line this is ("out", "in", "trigger").
 * @throws irqloop::error (exit status 2) for: no such chip (listing the chips present), no
 *         permission on the chip's device, an offset out of range (giving the range), a line
 *         name no chip has.
 */
gpiod_line_id find_gpiod_line(const std::string& text, const std::string& default_chip,
                              const std::string& what);

/**
 * @brief Which kernel edge events the sensed line's request asks for (key `events`). A single
 * edge is filtered by the kernel: the other edge costs no event, no wake-up.
 */
enum class gpiod_events { none, both, rising, falling };

/** @brief Releases a libgpiod line request. */
struct gpiod_request_deleter final {
    void operator()(gpiod_line_request* r) const noexcept;
};
using gpiod_request_ptr = std::unique_ptr<gpiod_line_request, gpiod_request_deleter>;

/** @brief How request_gpiod_line() asks for one line. */
struct gpiod_request_args final {
    bool output = false;                     ///< an output starting inactive; else an input
    gpiod_events edges = gpiod_events::none; ///< input: the kernel edge events to request
    std::string bias = "as-is";              ///< input: as-is, disabled, pull-up, pull-down
    bool active_low = false;
    std::string consumer; ///< what gpioinfo shows: "irqloop", "irqloop-responder"
    std::string what;     ///< message context, e.g. "open gpiod line out"
};

/**
 * @brief Request one line from the kernel; the gpiod backend's requests, and the gpiomem
 * backend's (which then drives the line through the registers).
 * @throws irqloop::error (exit status 2): no permission on the chip (with the group hint), the
 *         line in use (naming the consumer that holds it).
 */
gpiod_request_ptr request_gpiod_line(const gpiod_line_id& id, const gpiod_request_args& a);

/** @brief What a `gpiod:` spec says (take_gpiod_options()); lines are resolved at open. */
struct gpiod_options final {
    role who = role::logger;
    std::string chip;           ///< default chip for lines given without one; empty: gpiochip0
    std::string out;            ///< `[CHIP:]LINE` this program drives
    std::string in;             ///< `[CHIP:]LINE` this program senses
    std::string bias = "as-is"; ///< as-is, disabled, pull-up or pull-down (checked)
    bool active_low = false;
    gpiod_events events = gpiod_events::none;
    far_end answers; ///< default both edges, toggle (irqloop-responder's defaults)
};

/**
 * @brief A line pair on the Linux GPIO character device through libgpiod 2 (`gpiod:` backend).
 *
 * Spec keys (see docs/backends/gpiod.md):
 * - `chip=` default chip for lines given without one (default gpiochip0, the Raspberry Pi
 *   header; see gpiod-defaults.hpp);
 * - `out=[CHIP:]LINE` the line this program drives (logger: stimulus; responder: response),
 *   default 17; `in=[CHIP:]LINE` the line it senses, default 27. The two may sit on
 *   different chips;
 * - `bias=as-is|disabled|pull-up|pull-down` for the sensed line (default as-is);
 * - `active_low=1` inverts both lines (for an inverting level shifter);
 * - `events=both|rising|falling|none` the kernel edge events requested on the sensed line:
 *   default both for the responder role (wait_edge() needs them), none for the logger, which
 *   only polls. With rising or falling the kernel drops the other edge before any wake-up;
 * - `edges=both|rising`, `answer=toggle|follow`: how the far end answers (see far_end).
 *
 * Each line is its own request, consumer "irqloop" (logger) or "irqloop-responder". The driven
 * line starts low. drive() and sense() are one ioctl each through the C API
 * (gpiod_line_request_set_value / get_value) and allocate nothing; wait_edge() blocks in
 * ppoll() and reads pending events into a buffer allocated at open. A line already held by
 * another consumer is refused at open, naming that consumer.
 *
 * The cost of one sense() is measured at open (median of 20 batches of 100 reads) and reported
 * in metadata() as `gpiod.poll_cost_ns`, next to chip labels and line names.
 */
class gpiod_lines final : public polled_wire, public lines, public edge_waiter, public trigger_line
{
public:
    /** @throws irqloop::error (status 2) as find_gpiod_line(), and for a busy line. */
    explicit gpiod_lines(gpiod_options o);
    ~gpiod_lines() override;

    void drive(bool high) noexcept override;
    int sense() noexcept override;

    /**
     * @brief Wait for edges on the sensed line and consume every pending event.
     *
     * Several queued events (the far end toggled again before we woke) count as one return;
     * events the kernel dropped (its queue overflowed) show as gaps in the per-line sequence
     * numbers and are added to missed_edges().
     */
    int wait_edge(std::int64_t timeout_ns) noexcept override;
    bool has_edge_events() const noexcept override { return edge_buffer_ != nullptr; }
    /** @brief wait_edge(-1) is one blocking read() of the request per edge; EINTR returns 0. */
    bool wait_ends_on_signal() const noexcept override { return true; }
    /** @brief The newest event of the last wait_edge(): its type and hard-IRQ timestamp. */
    edge_event last_edge() const noexcept override { return last_edge_; }
    /** @brief Safe to call from another thread (a reporter) while wait_edge() runs. */
    std::uint64_t missed_edges() const noexcept override
    {
        return missed_edges_.load(std::memory_order_relaxed);
    }

    /** @brief Number of edge events read by wait_edge() so far; thread-safe as missed_edges(). */
    std::uint64_t edges_seen() const noexcept
    {
        return edges_seen_.load(std::memory_order_relaxed);
    }

    /** @brief @p line in the `[CHIP:]LINE` syntax; requested as an output, low. */
    void open_trigger(const std::string& line) override;
    void trigger(bool high) noexcept override;

    /** @brief Drives the out and trigger lines low. */
    void stop() noexcept override;

    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

    /** @brief Cost of one sense() measured at open, in ns. */
    double poll_cost_ns() const noexcept { return poll_cost_ns_; }

    const gpiod_line_id& out_line() const noexcept { return out_; }
    const gpiod_line_id& in_line() const noexcept { return in_; }

private:
    struct buffer_deleter {
        void operator()(gpiod_edge_event_buffer* b) const noexcept;
    };
    using request_ptr = gpiod_request_ptr;
    using buffer_ptr = std::unique_ptr<gpiod_edge_event_buffer, buffer_deleter>;

    request_ptr request_line(const gpiod_line_id& id, bool output, gpiod_events edges,
                             const std::string& bias, const std::string& what);
    void measure_poll_cost();

    gpiod_options opt_;
    std::string consumer_;
    gpiod_line_id out_;
    gpiod_line_id in_;
    gpiod_line_id trigger_;
    request_ptr out_request_;
    request_ptr in_request_;
    request_ptr trigger_request_;
    buffer_ptr edge_buffer_;
    std::size_t edge_capacity_ = 0;
    std::uint64_t last_seqno_ = 0;
    edge_event last_edge_;
    std::atomic<std::uint64_t> missed_edges_{0};
    std::atomic<std::uint64_t> edges_seen_{0};
    double poll_cost_ns_ = 0;
};

/**
 * @brief Read a `gpiod:` spec's keys; opens no chip.
 * @throws irqloop::error (exit status 2) on a bad value.
 */
gpiod_options take_gpiod_options(spec& s, role r);

/** @brief The registry's open step: gpiod_lines(o). */
std::unique_ptr<lines> open_gpiod_lines(const gpiod_options& o);

} // namespace irqloop::hw
