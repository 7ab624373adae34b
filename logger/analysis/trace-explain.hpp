// SPDX-License-Identifier: MIT
// A run's samples beside the target's own trace (irqloop explain, docs/commands/explain.md):
// the responder's IRQ handler entries paired with the run's stimuli (by order, and by a fitted
// offset and drift between the two clocks on the lower envelope of their differences, the
// minimum-delay filter NTP uses), then, for a chosen sample, where its latency went: before the
// handler, handler to response, and what else the responder's CPU did in that window.
#pragma once

#include "capture-align.hpp"
#include "trace-text.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace irqloop::analysis
{

/** @brief One run of the responder's handler on the target: entry, and exit when traced. */
struct handler_edge final {
    std::int64_t entry_ns = 0;           ///< trace clock
    std::optional<std::int64_t> exit_ns; ///< its irq_handler_exit on the same CPU
    int cpu = 0;
    int irq = 0;
    std::string task; ///< the task it interrupted ("comm-pid", the entry line's)
    /// The responder's own events for this edge (irqloop_edge and the rest, trace-text.hpp),
    /// when the trace has them: its sequence number, and on the target's clock its response
    /// (irqloop_response), and in threaded mode the thread's wake-up (sched_wakeup of the
    /// IRQ's thread, else the handler's exit) and its start (irqloop_thread).
    std::optional<std::int64_t> seq;
    std::optional<std::int64_t> response_ns;
    std::optional<std::int64_t> wakeup_ns;
    std::optional<std::int64_t> thread_ns;
};

/**
 * @brief The responder's handler runs of a trace: irq_handler_entry named @p irq_name, each
 * with the responder's events that follow it (an irqloop_edge goes to the last entry at or
 * before it that has none yet: the kernel responder's is inside the handler, the userspace
 * responder's marker after it; its response and thread events by their seq). A trace with
 * irqloop_edge events and no entry of that name gives its edges from those events.
 */
std::vector<handler_edge> responder_edges(const trace_text& t, const std::string& irq_name);

/** @brief How the trace's edges pair with the run's stimuli. */
struct trace_alignment final {
    struct pair final {
        std::size_t run_index = 0;  ///< into the run's stimuli
        std::size_t edge_index = 0; ///< into the trace's edges
    };
    std::vector<pair> pairs;    ///< in order of both
    std::size_t trace_only = 0; ///< edges no stimulus of the run accounts for
    std::size_t run_only = 0;   ///< stimuli inside the trace's span with no edge
    std::size_t outside = 0;    ///< stimuli before the trace's first or after its last edge
    /// The lower envelope, target - logger = base_ns + offset_ns + drift_ppm * 1e-6 * (t -
    /// t0_ns): the fastest edges' difference, their own delay included (two clocks cannot part
    /// them). base_ns is the anchor's difference, kept whole (a double loses ns at 1e18).
    std::int64_t base_ns = 0;
    double offset_ns = 0;
    double drift_ppm = 0;
    std::int64_t t0_ns = 0;      ///< the logger's time of the first paired stimulus
    double residual_ns = 0;      ///< rms of the windows' minima about the fitted line
    std::size_t windows = 0;     ///< windows the envelope was fitted on
    double anchor_spread_ns = 0; ///< the anchor's delay spread (median absolute deviation)
    double next_spread_ns = 0;   ///< the next best anchor's (0: no other candidate)

    /// Pairing by sequence (the edges carry the responder's seq): run seq - responder seq =
    /// seq_offset over the stretches where both counted the same edges.
    bool by_sequence = false;
    std::int64_t seq_offset = 0;
    std::size_t seq_edges = 0;     ///< edges with a seq
    std::size_t seq_agree = 0;     ///< of them, the clock fit paired with run seq = seq + offset
    std::size_t seq_corrected = 0; ///< paired by sequence where the clock fit had not (or wrong)
    std::size_t seq_fallback = 0;  ///< paired by the clock fit: stretches of another offset
                                   ///< (stimuli the target missed, or edges it saw extra)

    /// The envelope in pieces when the trace's clock bent (no one line lets all but 1 % of the
    /// answered samples agree on one delay): each from its first pair's stimulus on, its own
    /// line lowered to its own lowest pair; offset_ns and drift_ppm are then the first's. Empty
    /// when one line fits.
    struct piece final {
        std::int64_t t0_ns = 0;    ///< the logger's time of its first pair's stimulus
        std::size_t run_index = 0; ///< that stimulus
        double offset_ns = 0, drift_ppm = 0;
    };
    std::vector<piece> pieces;

    /** @brief (target - logger - base_ns) on the envelope at the logger's time @p t_ns. */
    double envelope_at(std::int64_t t_ns) const noexcept
    {
        if (pieces.size() > 1) {
            auto it = std::upper_bound(pieces.begin(), pieces.end(), t_ns,
                                       [](std::int64_t t, const piece& p) { return t < p.t0_ns; });
            const piece& p = it == pieces.begin() ? pieces.front() : *(it - 1);
            return p.offset_ns + p.drift_ppm * 1e-6 * double(t_ns - p.t0_ns);
        }
        return offset_ns + drift_ppm * 1e-6 * double(t_ns - t0_ns);
    }
};

/**
 * @brief Pair @p edges with @p run.
 *
 * The anchor: the stimulus whose neighbours' times best fit the first edges' (edge 0's, else
 * edge 1's to 3's when edge 0 fits nowhere: a stray edge; the smallest
 * spread of their differences, over up to 256 edges); it must be at least 2 times tighter
 * than the next best, or the
 * trace cannot be told apart from another part or another run (a strictly periodic run is
 * refused so too). From it, each edge goes to the last stimulus at or before its time on the
 * logger's clock by the envelope so far (the minimum of the last 32 differences, which follows
 * the drift); an edge that lands on an already paired stimulus moves the earlier edge back to
 * the stimulus before when that one is unpaired (a late answer), else takes the next stimulus
 * when it is within the anchor's latency (an edge faster than the anchor's), else it is counted
 * trace-only; an edge further from its stimulus than 4 intervals and its latency is trace-only.
 * Anchor places whose first pairs the run's latencies contradict (as delay_floor_of() checks,
 * without the lower bound when @p threaded) are left out while another place is consistent.
 * When the edges carry the responder's sequence numbers, the pairs are checked against them:
 * the offset (run seq - responder seq) most of the pairs agree on is the run's; an edge whose
 * pair disagrees, in a stretch of at most 2 such edges between agreeing ones, goes to the
 * sample of its seq + offset when its time allows it (not before the stimulus, not after its
 * answer); so does an edge the walk left unpaired; longer stretches keep the clock's pairs
 * (seq_fallback). Then the envelope is fitted: the minimum difference of each window of 16
 * pairs, a least-squares line through them, lowered to the lowest pair.
 *
 * @param interval_ns the run's stimulus interval (tolerances are fractions of it).
 * @param threaded the responder's IRQ is threaded (its answer may follow the handler's exit).
 * @throws irqloop::error (exit 2) when the trace has fewer than 8 edges or the run fewer than 8
 *         stimuli; no anchor fits (another run's trace); two anchors fit alike (hint: --jitter);
 *         fewer than half of the edges inside the run pair; fewer than half of the pairs of
 *         edges with a seq agree on one offset (another run's trace, or a responder restarted).
 */
trace_alignment align_trace(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                            std::int64_t interval_ns, bool threaded = false);

/**
 * @brief The header line of a pairing by sequence ("paired by sequence: offset K, N of M edges
 * agree", and the edges it corrected and left to the clock fit), or "" without one.
 */
std::string sequence_summary(const trace_alignment& a);

/**
 * @brief The fit is too poor to place the windows: its residual is above 100 us (a few us on
 * real boards, tens under QEMU's TCG) or its drift beyond 200 ppm (two crystals of +-100 ppm
 * drift apart by 200 ppm at most). A target or VM stalled during the run, whose clock then did
 * not follow the logger's, gives such a fit.
 */
bool fit_is_poor(const trace_alignment& a) noexcept;

/** @brief Something else the responder's CPU did in a sample's window (target clock). */
struct blocker final {
    std::string kind;              ///< "irqs off", "irq", "softirq", "nmi", "task"
    std::string name;              ///< the caller, "N name" of an IRQ, the softirq action, the task
    std::int64_t start_ns = 0;     ///< from the stimulus on the target's clock (may be < 0)
    std::int64_t duration_ns = 0;  ///< its whole length (0 for a task: it was running)
    std::int64_t in_window_ns = 0; ///< the part of it inside the window before the handler
    bool complete = true;          ///< its start and end are both in the trace
};

/** @brief Where one sample's latency went. */
struct sample_breakdown final {
    std::uint64_t seq = 0;
    std::int64_t latency_ns = 0; ///< the logger's (-1: lost)
    bool in_trace = false;       ///< false: no edge paired with it (the rest is empty)
    int cpu = 0;
    /// Stimulus to handler entry, inferred on the logger's clock: the edge's excess over the
    /// envelope plus the fastest edge's own delay (delay_floor_ns).
    std::int64_t before_handler_ns = 0;
    std::int64_t excess_ns = 0; ///< the edge's difference above the envelope
    /// Handler entry to the logger seeing the answer: latency - before_handler (inferred).
    std::int64_t handler_to_response_ns = 0;
    std::optional<std::int64_t> handler_ns;    ///< entry to exit, measured on the target's clock
    std::optional<std::int64_t> responder_seq; ///< the responder's seq of the paired edge
    /// Handler entry to the responder's irqloop_response, measured on the target's clock (in
    /// threaded mode it includes thread_run_ns).
    std::optional<std::int64_t> handler_to_response_measured_ns;
    /// Threaded mode: the thread's wake-up (sched_wakeup of irq/N-..., else the handler's exit)
    /// to its start (irqloop_thread), measured on the target's clock.
    std::optional<std::int64_t> thread_run_ns;
    /// The tracer dropped events on the sample's CPU inside its window (a trace_gap of that CPU
    /// overlaps stimulus to handler entry): how many (-1: the tracer did not say). Blockers may
    /// be missing or cut.
    std::optional<std::int64_t> dropped;
    std::vector<blocker> blockers; ///< the largest part in the window first
    std::vector<blocker> tasks;    ///< the tasks that ran on the CPU in the window
    /// Set by the caller from delay_floor::contradicted: the sample's latency contradicts its
    /// edge's handler times by this much (ns), so it is not explained (its parts are empty).
    std::optional<std::int64_t> contradicts_ns;
    bool answer_before_entry = false; ///< with contradicts_ns: which way (else after the exit)
};

/** @brief An answered paired sample whose latency its edge's handler times contradict. */
struct floor_contradiction final {
    std::size_t run_index = 0;
    std::int64_t by_ns = 0;           ///< how far outside what the other samples allow
    bool answer_before_entry = false; ///< else the answer came after the handler's exit
};

/** @brief The fastest edge's delay, as the answered samples bound it (delay_floor_of()). */
struct delay_floor final {
    std::int64_t lo_ns = 0, hi_ns = 0; ///< the bounds
    std::int64_t ns = 0;               ///< the middle, taken as the delay
    bool crossed = false;              ///< the bounds crossed: ns is the upper one
    std::size_t bounding = 0;          ///< answered paired samples that bound it
    /// Samples set aside (at most 1 % of the answered pairs, or one; a tenth if the others are
    /// late answers on pairs confirmed by seq): each contradicts the delay every other sample
    /// allows, so it bounds nothing and is not explained. In run order.
    std::vector<floor_contradiction> contradicted;
};

/**
 * @brief The fastest edge's delay (stimulus to handler entry) that the envelope hides, bounded
 * by the answered paired samples: each has delay = floor + excess <= latency (the answer comes
 * after the entry) and >= latency - handler duration (the answer is written before the exit;
 * not so in threaded mode: with @p threaded, no lower bound but 0). The middle of [max lower, min
 * upper], or min upper alone when the bounds cross (a wire's return delay, a trace clock's tick);
 * all 0 when no sample bounds it. The lower bound takes each sample's bracket (latency - bracket).
 * A few samples may contradict the rest (an answer held up after the handler's exit, on a wire
 * or in a stalled target's GPIO path, beyond its bracket; or an edge paired wrongly): the delay
 * that the most samples allow is kept, and the others, at most 1 % of the answered pairs (or
 * one), are set aside in delay_floor::contradicted, by how far they miss it. Where every paired
 * edge is on its sample by the responder's seqs and the fit is not poor (fit_is_poor()), up to
 * a tenth may be late answers (only after the exit: held up on their way back).
 * @throws irqloop::error (exit 2) when more contradict by more than 2 us: the latencies do not
 *         belong to these edges (a trace of another run whose stimuli came at the same times).
 */
delay_floor delay_floor_of(std::span<const run_stimulus> run, std::span<const handler_edge> edges,
                           const trace_alignment& a, bool threaded = false);

/**
 * @brief Whether IRQ @p irq is threaded in @p t: its thread ("irq/N-...") was switched to or
 * woken. Then the answer is written after the hard handler's exit, by the thread.
 */
bool threaded_handler(const trace_text& t, int irq);

/** @brief The breakdown of the run's stimulus @p run_index (see sample_breakdown). */
sample_breakdown explain_sample(std::span<const run_stimulus> run,
                                std::span<const handler_edge> edges, const trace_alignment& a,
                                const trace_text& t, std::size_t run_index, std::int64_t floor_ns);

/** @brief Where a lost answer was lost, as its paired edge tells (lost_answer()). */
enum class lost_at {
    not_lost,       ///< answered, or not in the trace
    before_handler, ///< the handler entered after the timeout: the stimulus reached it late
    in_handler,     ///< entered in time, wrote its answer after the timeout: a slow handler
    after_write,    ///< wrote its answer in time: held up or lost on its way back
    unknown,        ///< entered in time; the trace has no irqloop_response to say when it wrote
};

/**
 * @brief Where the lost answer of @p b went, given the run's @p timeout_ns: the handler's entry
 * (before_handler_ns, inferred) and its write (entry + handler_to_response_measured_ns, on the
 * target's clock) against the timeout that the logger waited from the stimulus.
 */
lost_at lost_answer(const sample_breakdown& b, std::int64_t timeout_ns) noexcept;

/** @brief lost_at as JSON and docs name it: "before the handler", ... ("" for not_lost). */
const char* lost_at_name(lost_at w) noexcept;

} // namespace irqloop::analysis
