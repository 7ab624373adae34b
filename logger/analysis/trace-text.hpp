// SPDX-License-Identifier: MIT
// The text form of a kernel trace (/sys/kernel/tracing/trace with trace events enabled, or
// `trace-cmd report`'s text), read into the events `irqloop explain` uses: IRQ handler entry
// and exit, softirq entry and exit, scheduler switch and wake-up, the IRQs-off sections of the
// preemptirq events, and NMI handlers. The .dat form (libtracefs/libtraceevent) is a later
// step. Plain vectors out, no store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace irqloop::analysis
{

/** @brief The trace events explain reads; every other event is counted and skipped. */
enum class trace_kind {
    irq_entry,     ///< irq:irq_handler_entry: number = irq, name = its handler's name
    irq_exit,      ///< irq:irq_handler_exit: number = irq
    softirq_entry, ///< irq:softirq_entry: number = vec, name = action (NET_RX, TIMER, ...)
    softirq_exit,  ///< irq:softirq_exit
    sched_switch,  ///< sched:sched_switch: name = next_comm, number = next_pid, value = next_prio
    sched_wakeup,  ///< sched:sched_wakeup: name = comm, number = pid, value = prio
    irq_disable,   ///< preemptirq:irq_disable: name = caller
    irq_enable,    ///< preemptirq:irq_enable: name = caller
    nmi,           ///< nmi:nmi_handler: name = handler, value = delta_ns (its duration)
    /// The responder's own events (irqloop:irqloop_edge, ..._response, ..._thread of the kernel
    /// responder, or the same text written to trace_marker by the userspace one): number = its
    /// sequence number (its count of handled edges, 1-based), value = the level (-1: none).
    responder_edge,
    responder_response,
    responder_thread,
};

/** @brief One event line of the trace. */
struct trace_event final {
    std::int64_t t_ns = 0; ///< the trace's timestamp, on the target's trace clock
    int cpu = 0;
    trace_kind kind = trace_kind::irq_entry;
    std::string task;         ///< the current task, as "comm-pid"
    std::int64_t number = -1; ///< see trace_kind (a sequence number needs 64 bits)
    std::int64_t value = 0;
    std::string name;
    std::size_t line = 0; ///< 1-based line of the text
};

/**
 * @brief Where the tracer dropped events: on one CPU, between two of its events. The kernel
 * notes a drop before the CPU's next event ("CPU:N [LOST K EVENTS]", trace-cmd report's "CPU:N
 * [K EVENTS DROPPED]", a .dat record's missed events); what happened on that CPU between its
 * event before and that one is partly unknown.
 */
struct trace_gap final {
    int cpu = 0;
    /// The CPU's last event before the drop (INT64_MIN: none, the trace's start).
    std::int64_t after_ns = std::numeric_limits<std::int64_t>::min();
    /// Its first event after the drop (INT64_MAX: none, the trace's end).
    std::int64_t before_ns = std::numeric_limits<std::int64_t>::max();
    std::int64_t events = -1; ///< how many were dropped (-1: the tracer did not say)
};

/** @brief Two drops' counts together: -1 when either is (no count), at most INT64_MAX. */
constexpr std::int64_t add_drop_counts(std::int64_t a, std::int64_t b) noexcept
{
    if (a < 0 || b < 0)
        return -1;
    return a > std::numeric_limits<std::int64_t>::max() - b
               ? std::numeric_limits<std::int64_t>::max()
               : a + b;
}

/**
 * @brief Builds the gaps of a trace as its reader goes: every event line or record through
 * event(), every drop note through drop() (before the event it precedes).
 */
class trace_gap_tracker final
{
public:
    void drop(int cpu, std::int64_t events);
    void event(int cpu, std::int64_t t_ns);
    std::vector<trace_gap> finish() &&;

private:
    std::map<int, std::int64_t> last_ns_; ///< each CPU's last event so far
    std::map<int, std::size_t> open_;     ///< each CPU's gap waiting for its next event
    std::vector<trace_gap> gaps_;
};

/** @brief What the text held. */
struct trace_text final {
    std::string tracer;              ///< from "# tracer: X" (empty in trace-cmd report's text)
    std::vector<trace_event> events; ///< in the text's order (time order per CPU)
    std::size_t event_lines = 0;     ///< every event line, read or not
    std::size_t lost_events = 0;     ///< the drops' counts, where the tracer said them
    std::vector<trace_gap> gaps;     ///< the drops, in the order the trace noted them
    std::size_t other_markers = 0;   ///< trace_marker lines that are no responder event
    std::int64_t first_ns = 0, last_ns = 0; ///< the first and last timestamps of any event
};

/**
 * @brief Read the text of a trace. Comment lines ("#"), blank lines, trace-cmd report's
 * header lines ("cpus=N", "version = N", "CPU N is empty") and drop notes ("CPU:N [LOST K
 * EVENTS]" or "[LOST EVENTS]" of the kernel, "CPU:N [K EVENTS DROPPED]" or "[EVENTS DROPPED]"
 * of trace-cmd report: gaps) are taken;
 * every other line must be an event line: "TASK-PID [CPU] [FLAGS] SECONDS.FRACTION: EVENT:
 * FIELDS", the fields of the events above complete. The responder's events are read in
 * both forms: "irqloop_edge: seq=N level=L" (the kernel responder's tracepoint) and
 * "tracing_mark_write: irqloop_edge: seq=N level=L" (a trace_marker write; trace-cmd report
 * prints it as "print: tracing_mark_write: ..."); a marker of another text is counted in
 * other_markers and skipped.
 * @param source the file's name, for messages.
 * @throws irqloop::error (exit 2) "explain: read trace 'F'": the text is the output of another
 *         tracer than nop (the function or latency tracers: events only); a line that is no
 *         event line (line N, a truncated or foreign text); an event of the list above with
 *         fields missing (truncated); a timestamp with more than 9 decimals or none.
 */
trace_text parse_trace_text(std::istream& in, const std::string& source);

/** @brief parse_trace_text() of the file at @p path (exit 2 when it cannot be read). */
trace_text read_trace_text(const std::string& path);

} // namespace irqloop::analysis
