// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace irqloop::hw
{

class spec;

/**
 * @brief How the far end of the wire answers a stimulus edge, as the logger must know it.
 *
 * Every backend reads it from the same two spec keys, with one meaning, through
 * take_far_end():
 * - `edges=both|rising`: `both`, the far end answers both stimulus edges (each edge is one
 *   sample); `rising`, it answers the rising edge only (a parallel-port nACK interrupt) and
 *   the logger re-arms on the falling edge without measuring it;
 * - `answer=toggle|follow`: `toggle` (lpptest's way), the far end flips its response on each
 *   edge it answers; `follow`, it sets the response to the stimulus level, which lets the
 *   logger reject a late answer to an earlier edge. `follow` needs `edges=both`.
 *
 * On the responder's side of a wire the keys are accepted, so that one spec may serve both
 * ends, and change nothing: irqloop-responder answers as its --edge and --answer say.
 */
struct far_end final {
    bool both_edges = true; ///< edges=both (true) or edges=rising (false)
    bool follow = false;    ///< answer=follow (true) or answer=toggle (false)

    /** @brief The value of `edges=`: "both" or "rising". */
    const char* edges_text() const noexcept { return both_edges ? "both" : "rising"; }
    /** @brief The value of `answer=`: "follow" or "toggle". */
    const char* answer_text() const noexcept { return follow ? "follow" : "toggle"; }

    /**
     * @brief The keys that differ from @p usual, for a canonical spec: "", ",edges=rising",
     * ",answer=follow" or both.
     */
    std::string keys_unlike(const far_end& usual) const;
};

/**
 * @brief Take `edges` and `answer` from @p s.
 *
 * @p usual is what the backend's far end does when the spec says nothing: `edges` defaults to
 * usual.edges_text(). One rule gives the default of `answer`: `follow` where the usual far end
 * follows and the edges are both, `toggle` otherwise (a single-edge far end can only toggle).
 * Only the simulated board `sim` follows by default; irqloop-responder, the kernel module and
 * lpptest toggle.
 *
 * @throws irqloop::error (exit status 2) for another value, or for answer=follow with
 *         edges=rising; the message names the spec and the key.
 */
far_end take_far_end(spec& s, far_end usual);

/**
 * @brief The sensed line's `bias` key, the same for every backend that has one (gpiod,
 * gpiomem): as-is, disabled, pull-up or pull-down; @p fallback when absent.
 * @throws irqloop::error (exit status 2) for another value.
 */
std::string take_bias(spec& s, std::string_view fallback);

} // namespace irqloop::hw
