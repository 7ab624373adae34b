// SPDX-License-Identifier: MIT
#include "trace-text.hpp"

#include "error.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>
#include <utility>

namespace irqloop::analysis
{

namespace trace_text_detail
{

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

bool all_digits(std::string_view s)
{
    if (s.empty())
        return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c)))
            return false;
    return true;
}

std::optional<std::int64_t> to_int(std::string_view s)
{
    bool neg = false;
    if (!s.empty() && s.front() == '-') {
        neg = true;
        s.remove_prefix(1);
    }
    if (!all_digits(s) || s.size() > 18)
        return std::nullopt;
    std::int64_t v = 0;
    for (char c : s)
        v = v * 10 + (c - '0');
    return neg ? -v : v;
}

/** "SECONDS.FRACTION" (1 to 9 decimals) in ns. */
std::optional<std::int64_t> timestamp_ns(std::string_view s)
{
    const auto dot = s.find('.');
    if (dot == std::string_view::npos)
        return std::nullopt;
    const auto sec = s.substr(0, dot), frac = s.substr(dot + 1);
    if (!all_digits(sec) || !all_digits(frac) || frac.size() > 9 || sec.size() > 9)
        return std::nullopt;
    std::int64_t ns = *to_int(sec) * 1'000'000'000;
    std::int64_t f = *to_int(frac);
    for (std::size_t k = frac.size(); k < 9; ++k)
        f *= 10;
    return ns + f;
}

/** The value of "key=" in @p fields, up to the next space (or to @p until when given). */
std::optional<std::string_view> field(std::string_view fields, std::string_view key,
                                      std::string_view until = {})
{
    std::size_t at = 0;
    for (;;) {
        at = fields.find(key, at);
        if (at == std::string_view::npos)
            return std::nullopt;
        if ((at == 0 || fields[at - 1] == ' ') && at + key.size() < fields.size() + 1 &&
            fields.substr(at + key.size()).starts_with("="))
            break;
        at += key.size();
    }
    auto v = fields.substr(at + key.size() + 1);
    const auto end = until.empty() ? v.find(' ') : v.find(until);
    return trim(end == std::string_view::npos ? v : v.substr(0, end));
}

struct line_error final {
    std::string why;
};

std::int64_t int_field(std::string_view fields, std::string_view key, std::string_view event)
{
    const auto v = field(fields, key);
    const auto n = v ? to_int(*v) : std::nullopt;
    if (!n)
        throw line_error{"event " + std::string(event) + " has no " + std::string(key) +
                         "= (a truncated line?)"};
    return *n;
}

std::string text_field(std::string_view fields, std::string_view key, std::string_view event,
                       std::string_view until = {})
{
    const auto v = field(fields, key, until);
    if (!v || v->empty())
        throw line_error{"event " + std::string(event) + " has no " + std::string(key) +
                         "= (a truncated line?)"};
    return std::string(*v);
}

/** A responder event's seq= (1-based, as the responder counts its edges). */
std::int64_t responder_seq(std::string_view fields, std::string_view event)
{
    const auto seq = int_field(fields, "seq", event);
    if (seq < 1)
        throw line_error{"event " + std::string(event) + " has seq=" + std::to_string(seq) +
                         " (the responder counts its edges from 1)"};
    return seq;
}

/** Fill @p e from the event @p name and its @p fields; false for an event explain skips. */
bool read_fields(trace_event& e, std::string_view name, std::string_view fields)
{
    if (name == "irq_handler_entry") {
        e.kind = trace_kind::irq_entry;
        e.number = int(int_field(fields, "irq", name));
        e.name = text_field(fields, "name", name);
    } else if (name == "irq_handler_exit") {
        e.kind = trace_kind::irq_exit;
        e.number = int(int_field(fields, "irq", name));
        (void)text_field(fields, "ret", name);
    } else if (name == "softirq_entry" || name == "softirq_exit") {
        e.kind = name == "softirq_entry" ? trace_kind::softirq_entry : trace_kind::softirq_exit;
        e.number = int(int_field(fields, "vec", name));
        // "vec=7 [action=SCHED]" in the kernel's format; trace-cmd prints "action=SCHED".
        if (const auto a = field(fields, "[action", "]"); a && !a->empty())
            e.name = std::string(*a);
        else
            e.name = text_field(fields, "action", name);
    } else if (name == "sched_switch") {
        e.kind = trace_kind::sched_switch;
        (void)int_field(fields, "prev_pid", name);
        const auto next = fields.find("==> ");
        if (next == std::string_view::npos)
            throw line_error{"event sched_switch has no '==>' (a truncated line?)"};
        const auto after = fields.substr(next + 4);
        e.name = text_field(after, "next_comm", name, " next_pid=");
        e.number = int(int_field(after, "next_pid", name));
        e.value = int_field(after, "next_prio", name);
    } else if (name == "sched_wakeup") {
        e.kind = trace_kind::sched_wakeup;
        e.name = text_field(fields, "comm", name, " pid=");
        e.number = int(int_field(fields, "pid", name));
        e.value = int_field(fields, "prio", name);
    } else if (name == "irq_disable" || name == "irq_enable") {
        e.kind = name == "irq_disable" ? trace_kind::irq_disable : trace_kind::irq_enable;
        e.name = text_field(fields, "caller", name);
    } else if (name == "irqloop_edge" || name == "irqloop_response") {
        e.kind =
            name == "irqloop_edge" ? trace_kind::responder_edge : trace_kind::responder_response;
        e.number = responder_seq(fields, name);
        e.value = int_field(fields, "level", name);
    } else if (name == "irqloop_thread") {
        e.kind = trace_kind::responder_thread;
        e.number = responder_seq(fields, name);
    } else if (name == "nmi_handler") {
        e.kind = trace_kind::nmi;
        e.name = text_field(fields, "handler", name);
        e.value = int_field(fields, "delta_ns", name);
    } else {
        return false;
    }
    return true;
}

/**
 * One event line. nullopt for a line explain skips (another event); throws line_error for a
 * line that is no event line.
 */
std::optional<trace_event> event_line(std::string_view line, trace_text& out,
                                      trace_gap_tracker& gaps)
{
    // The CPU field: the first " [NNN]" (a comm may hold '-' and spaces, not this).
    std::size_t open = 0, close = 0;
    for (std::size_t at = 0;; ++at) {
        at = line.find(" [", at);
        if (at == std::string_view::npos)
            throw line_error{"no [CPU] field: not an event line (a truncated or foreign text?)"};
        close = line.find(']', at + 2);
        if (close != std::string_view::npos && all_digits(line.substr(at + 2, close - at - 2))) {
            open = at + 1;
            break;
        }
    }
    trace_event e;
    e.cpu = int(*to_int(line.substr(open + 1, close - open - 1)));
    auto task = trim(line.substr(0, open));
    // trace-cmd's "comm-pid (tgid)" or the "-P" option's "( tgid)" column.
    if (!task.empty() && task.back() == ')') {
        const auto p = task.rfind('(');
        if (p != std::string_view::npos)
            task = trim(task.substr(0, p));
    }
    const auto dash = task.rfind('-');
    if (dash == std::string_view::npos || !all_digits(task.substr(dash + 1)))
        throw line_error{"no TASK-PID before the [CPU] field (a truncated or foreign text?)"};
    e.task = std::string(task);
    // Then: an optional flags column, the timestamp with its ':', the event with its ':'.
    auto rest = trim(line.substr(close + 1));
    auto next_word = [&] {
        const auto sp = rest.find(' ');
        const auto w = rest.substr(0, sp);
        rest = sp == std::string_view::npos ? std::string_view{} : trim(rest.substr(sp));
        return w;
    };
    auto w = next_word();
    if (w.empty() || w.back() != ':')
        w = next_word(); // the flags column
    if (w.size() < 2 || w.back() != ':')
        throw line_error{"no timestamp (a truncated line?)"};
    const auto ts = timestamp_ns(w.substr(0, w.size() - 1));
    if (!ts)
        throw line_error{"'" + std::string(w) +
                         "' is not a timestamp in seconds with 1 to 9 decimals (a counter "
                         "trace clock?)"};
    e.t_ns = *ts;
    gaps.event(e.cpu, *ts);
    if (out.event_lines == 0)
        out.first_ns = *ts;
    out.last_ns = *ts;
    ++out.event_lines;
    const auto name = next_word();
    if (name.size() < 2 || name.back() != ':') {
        if (rest.starts_with("<-"))
            return std::nullopt; // a function tracer's line ("func <-parent")
        throw line_error{"no event name ending in ':' (a truncated line?)"};
    }
    auto event = name.substr(0, name.size() - 1);
    // A trace_marker write: "tracing_mark_write: TEXT" in the kernel's text, "print:
    // tracing_mark_write: TEXT" in trace-cmd report's. The responder's text is an event line's
    // "EVENT: FIELDS"; any other text is someone else's marker.
    if (event == "print" && rest.starts_with("tracing_mark_write:"))
        event = "tracing_mark_write", rest = trim(rest.substr(19));
    if (event == "tracing_mark_write") {
        const auto colon = rest.find(": ");
        const auto inner = rest.substr(0, colon);
        if (colon == std::string_view::npos || !inner.starts_with("irqloop_")) {
            ++out.other_markers;
            return std::nullopt;
        }
        event = inner;
        rest = trim(rest.substr(colon + 2));
        if (!read_fields(e, event, rest)) {
            ++out.other_markers;
            return std::nullopt;
        }
        return e;
    }
    if (!read_fields(e, event, rest))
        return std::nullopt;
    return e;
}

/**
 * A drop note: "CPU:N [LOST K EVENTS]" or "CPU:N [LOST EVENTS]" (the kernel's), "CPU:N [K
 * EVENTS DROPPED]" or "CPU:N [EVENTS DROPPED]" (trace-cmd report's): (N, K), K = -1 where the
 * note has no count. Anything else: none.
 */
std::optional<std::pair<int, std::int64_t>> drop_note(std::string_view line)
{
    if (!line.starts_with("CPU:"))
        return std::nullopt;
    const auto open = line.find(" [");
    if (open == std::string_view::npos || line.back() != ']')
        return std::nullopt;
    const auto cpu = to_int(line.substr(4, open - 4));
    if (!cpu || *cpu < 0 || *cpu > std::numeric_limits<int>::max())
        return std::nullopt;
    const auto body = line.substr(open + 2, line.size() - open - 3);
    std::string_view count;
    if (body == "LOST EVENTS" || body == "EVENTS DROPPED")
        return std::pair{int(*cpu), std::int64_t(-1)};
    if (body.starts_with("LOST ") && body.ends_with(" EVENTS"))
        count = body.substr(5, body.size() - 5 - 7);
    else if (body.ends_with(" EVENTS DROPPED"))
        count = body.substr(0, body.size() - 15);
    else
        return std::nullopt;
    const auto k = to_int(count);
    if (!k || *k < 0)
        return std::nullopt;
    return std::pair{int(*cpu), std::int64_t(*k)};
}

} // namespace trace_text_detail

void trace_gap_tracker::drop(int cpu, std::int64_t events)
{
    if (const auto o = open_.find(cpu); o != open_.end()) {
        // A second note before the CPU's next event: one gap, the counts added.
        auto& g = gaps_[o->second];
        g.events = add_drop_counts(g.events, events);
        return;
    }
    trace_gap g;
    g.cpu = cpu;
    if (const auto l = last_ns_.find(cpu); l != last_ns_.end())
        g.after_ns = l->second;
    g.events = events;
    open_[cpu] = gaps_.size();
    gaps_.push_back(g);
}

void trace_gap_tracker::event(int cpu, std::int64_t t_ns)
{
    last_ns_[cpu] = t_ns;
    if (const auto o = open_.find(cpu); o != open_.end()) {
        gaps_[o->second].before_ns = t_ns;
        open_.erase(o);
    }
}

std::vector<trace_gap> trace_gap_tracker::finish() &&
{
    return std::move(gaps_);
}

trace_text parse_trace_text(std::istream& in, const std::string& source)
{
    using namespace trace_text_detail;
    trace_text out;
    trace_gap_tracker gaps;
    std::string raw;
    std::size_t n = 0;
    const std::string what = "explain: read trace '" + source + "'";
    while (std::getline(in, raw)) {
        ++n;
        if (in.eof() && !raw.empty())
            throw error(what,
                        "line " + std::to_string(n) + " has no end of line (a truncated file?)",
                        "give the whole text of /sys/kernel/tracing/trace or of 'trace-cmd "
                        "report'");
        const auto line = trim(raw);
        if (line.empty())
            continue;
        if (line.front() == '#') {
            constexpr std::string_view tag = "# tracer:";
            if (line.starts_with(tag)) {
                out.tracer = std::string(trim(line.substr(tag.size())));
                if (out.tracer != "nop")
                    throw error(what,
                                "it is the output of the '" + out.tracer +
                                    "' tracer, not of trace events",
                                "echo nop > /sys/kernel/tracing/current_tracer, enable the irq "
                                "and sched events, and read the trace again "
                                "(docs/commands/explain.md)");
            }
            continue;
        }
        if (line.starts_with("cpus=") || line.starts_with("version =") ||
            (line.starts_with("CPU ") && line.ends_with(" is empty")))
            continue;
        if (const auto drop = drop_note(line)) {
            gaps.drop(drop->first, drop->second);
            if (drop->second > 0)
                out.lost_events =
                    std::size_t(add_drop_counts(std::int64_t(out.lost_events), drop->second));
            continue;
        }
        try {
            if (auto e = event_line(line, out, gaps)) {
                e->line = n;
                out.events.push_back(std::move(*e));
            }
        } catch (const line_error& le) {
            throw error(what, "line " + std::to_string(n) + ": " + le.why,
                        "give the whole text of /sys/kernel/tracing/trace or of 'trace-cmd "
                        "report'");
        }
    }
    if (in.bad())
        throw error(what, "the read failed after line " + std::to_string(n), {}, exit_usage);
    out.gaps = std::move(gaps).finish();
    return out;
}

trace_text read_trace_text(const std::string& path)
{
    std::ifstream f(path);
    if (!f)
        throw error("explain: read trace '" + path + "'", std::strerror(errno),
                    "name the saved text of /sys/kernel/tracing/trace");
    return parse_trace_text(f, path);
}

} // namespace irqloop::analysis
