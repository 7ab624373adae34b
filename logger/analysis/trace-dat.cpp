// SPDX-License-Identifier: MIT
#include "trace-dat.hpp"

#include "error.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#if IRQLOOP_HAVE_TRACECMD
#include <cstdio>
#include <event-parse.h>
#include <fcntl.h>
#include <sched.h>
#include <trace-seq.h>
#include <unistd.h>

// libtracecmd's reading calls, as trace-cmd/trace-cmd.h (1.3) declares them. That header
// includes tracefs.h, which C++ refuses (an int passed as an enum in an inline function), so
// the few calls used here are declared on their own; the library links as usual.
extern "C" {
struct tracecmd_input;
tracecmd_input* tracecmd_open(const char* file, int flags);
void tracecmd_close(tracecmd_input* handle);
tep_handle* tracecmd_get_tep(tracecmd_input* handle);
int tracecmd_iterate_events(tracecmd_input* handle, cpu_set_t* cpus, int cpu_size,
                            int (*callback)(tracecmd_input* handle, tep_record*, int, void*),
                            void* callback_data);
void tracecmd_set_loglevel(enum tep_loglevel level);
}
#endif

namespace irqloop::analysis
{

namespace trace_dat_detail
{

// The first bytes of every trace-cmd file: 0x17 0x08 0x44 and "tracing" (then its version).
constexpr char dat_magic[] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};

std::string what_of(const std::string& path)
{
    return "explain: read trace '" + path + "'";
}

/**
 * Whether a version-6 file's CPU data are all there (the library maps them unchecked in this
 * version: a cut file crashed it). trace-cmd.dat.v6(5): after the first header (@p p), the
 * header page and header event ("header_page\0" and "header_event\0", each with a u64
 * size), the ftrace formats (u32 count, each u64 size), the event systems (u32 count, each
 * a name, u32 count, each u64 size), kallsyms and printk (u32 size each), the command lines
 * (u64 size), the CPU count (u32), the options ("options  \0", each u16 id and u32 size, to
 * id 0), then "flyrecord\0" and each CPU's u64 offset and u64 size.
 */
template <typename Number>
std::string dat_v6_cut(const std::string& b, std::size_t p, const Number& number)
{
    const std::string ends = "it ends inside its headers";
    const auto need = [&](std::uint64_t n) { return n <= b.size() && p <= b.size() - n; };
    const auto skip = [&](std::size_t size_bytes) {
        if (!need(size_bytes))
            return false;
        const auto n = number(p, size_bytes);
        p += size_bytes;
        if (!need(n))
            return false;
        p += std::size_t(n);
        return true;
    };
    for (const std::string tag : {"header_page", "header_event"}) {
        if (!need(tag.size() + 1) || b.compare(p, tag.size() + 1, tag + '\0') != 0)
            return ends;
        p += tag.size() + 1;
        if (!skip(8))
            return ends;
    }
    if (!need(4))
        return ends;
    auto count = number(p, 4);
    p += 4;
    for (std::uint64_t k = 0; k < count; ++k)
        if (!skip(8))
            return ends;
    if (!need(4))
        return ends;
    const auto systems = number(p, 4);
    p += 4;
    for (std::uint64_t sys = 0; sys < systems; ++sys) {
        const auto end = b.find('\0', p);
        if (end == std::string::npos)
            return ends;
        p = end + 1;
        if (!need(4))
            return ends;
        count = number(p, 4);
        p += 4;
        for (std::uint64_t k = 0; k < count; ++k)
            if (!skip(8))
                return ends;
    }
    if (!skip(4) || !skip(4) || !skip(8) || !need(4))
        return ends;
    const auto cpus = number(p, 4);
    p += 4;
    if (need(10) && b.compare(p, 10, std::string("options  \0", 10)) == 0) {
        p += 10;
        for (;;) {
            if (!need(2))
                return ends;
            const auto id = number(p, 2);
            p += 2;
            if (id == 0)
                break;
            if (!skip(4))
                return ends;
        }
    }
    if (!need(10))
        return ends;
    if (b.compare(p, 10, std::string("flyrecord\0", 10)) != 0)
        return {}; // a latency trace: no CPU sections (refused later: no responder edges)
    p += 10;
    for (std::uint64_t cpu = 0; cpu < cpus; ++cpu) {
        if (!need(16))
            return ends;
        const auto offset = number(p, 8), size = number(p + 8, 8);
        p += 16;
        if (size && (offset > b.size() || size > b.size() - offset))
            return "CPU " + std::to_string(cpu) + "'s data need " + std::to_string(offset + size) +
                   " bytes, the file has " + std::to_string(b.size());
    }
    return {};
}

/**
 * Whether the file is whole (libtracecmd reads a version-7 file cut inside or before its last
 * sections without a word, and crashes on a version-6 file cut in its CPU data). Version 7
 * (trace-cmd.dat.v7(5)): after the magic, the version string, the byte order, the long size, the
 * page size, the compression's name and version strings, the offset of the first options section;
 * from there the sections follow one another to the end of the file, each a 16-byte header (id u16,
 * flags u16, string id u32, size u64) and its data; trace-cmd writes the section-name strings (id
 * 15) last. The why of a cut file, or "".
 */
std::string dat_cut(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    const std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::size_t p = sizeof dat_magic;
    const auto cstring = [&](std::string& out) {
        const auto end = b.find('\0', p);
        if (end == std::string::npos)
            return false;
        out = b.substr(p, end - p);
        p = end + 1;
        return true;
    };
    std::string version, alg, alg_version;
    if (!cstring(version) || p + 6 > b.size())
        return "it ends inside its first header";
    const bool big = b[p] != 0;
    p += 6; // byte order, long size, page size
    const auto number = [&](std::size_t at, std::size_t bytes) {
        std::uint64_t v = 0;
        for (std::size_t k = 0; k < bytes; ++k) {
            const auto byte = std::uint64_t(static_cast<unsigned char>(b[at + k]));
            v |= big ? byte << (8 * (bytes - 1 - k)) : byte << (8 * k);
        }
        return v;
    };
    if (version != "7")
        return dat_v6_cut(b, p, number);
    if (!cstring(alg) || !cstring(alg_version) || p + 8 > b.size())
        return "it ends inside its first header";
    std::uint64_t at = number(p, 8);
    bool strings = false;
    std::size_t sections = 0;
    while (at < b.size()) {
        if (b.size() - at < 16)
            return "it ends inside the header of section " + std::to_string(sections + 1);
        const auto id = number(std::size_t(at), 2);
        const auto size = number(std::size_t(at) + 8, 8);
        if (size > b.size() - at - 16)
            return "section " + std::to_string(sections + 1) + " (id " + std::to_string(id) +
                   ") needs " + std::to_string(at + 16 + size) + " bytes, the file has " +
                   std::to_string(b.size());
        strings = id == 15;
        at += 16 + size;
        ++sections;
    }
    if (at != b.size() || sections == 0)
        return "its first options section lies beyond its end";
    if (!strings)
        return "its last section is not the strings section trace-cmd writes last";
    return {};
}

#if IRQLOOP_HAVE_TRACECMD

/** What the record loop carries: the output, and the first refusal (no throw through C). */
struct dat_reader final {
    tep_handle* tep = nullptr;
    trace_text out;
    trace_seq seq{};
    std::string failure; ///< set: stop and refuse
    trace_gap_tracker gaps;
    // The events explain reads, looked up once by system and name (nullptr: not in the file).
    tep_event *irq_entry = nullptr, *irq_exit = nullptr, *softirq_entry = nullptr,
              *softirq_exit = nullptr, *sched_switch = nullptr, *sched_wakeup = nullptr,
              *irq_disable = nullptr, *irq_enable = nullptr, *nmi = nullptr;
    tep_event* marker = nullptr; ///< ftrace:print, a trace_marker write
};

/** A numeric field of the record; false (and the reader's failure set) when it is missing. */
bool dat_number(dat_reader& r, tep_event* ev, tep_record* rec, const char* field, long long& v)
{
    unsigned long long raw = 0;
    if (tep_get_field_val(nullptr, ev, field, rec, &raw, 0) != 0) {
        r.failure = "record " + std::to_string(r.out.event_lines) + " (" + ev->name +
                    ") has no field " + field + " (a damaged file?)";
        return false;
    }
    const auto* f = tep_find_field(ev, field);
    // Signed fields of fewer than 8 bytes come back zero-extended.
    if (f && (f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
        const auto bits = unsigned(f->size) * 8;
        const unsigned long long sign = 1ULL << (bits - 1);
        raw &= (1ULL << bits) - 1;
        v = (long long)((raw ^ sign) - sign);
    } else {
        v = (long long)raw;
    }
    return true;
}

/** A string field (a char array or a __string); false when it is missing. */
bool dat_string(dat_reader& r, tep_event* ev, tep_record* rec, const char* field, std::string& s)
{
    int len = 0;
    const auto* p = static_cast<const char*>(tep_get_field_raw(nullptr, ev, field, rec, &len, 0));
    if (!p || len < 0) {
        r.failure = "record " + std::to_string(r.out.event_lines) + " (" + ev->name +
                    ") has no field " + field + " (a damaged file?)";
        return false;
    }
    s.assign(p, strnlen(p, std::size_t(len)));
    return true;
}

/** The event's text as the kernel's print format writes it (trace-cmd report -N). */
std::string_view dat_info(dat_reader& r, tep_record* rec)
{
    trace_seq_reset(&r.seq);
    tep_print_event(r.tep, &r.seq, rec, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&r.seq);
    return std::string_view(r.seq.buffer, std::size_t(r.seq.len));
}

/** The value of "key=" in @p info up to @p until (or a space), as the text parser takes it. */
std::string dat_info_value(std::string_view info, std::string_view key, char until = ' ')
{
    std::size_t at = 0;
    for (;;) {
        at = info.find(key, at);
        if (at == std::string_view::npos)
            return {};
        if ((at == 0 || info[at - 1] == ' ' || info[at - 1] == '[') &&
            info.substr(at + key.size()).starts_with("="))
            break;
        at += key.size();
    }
    auto v = info.substr(at + key.size() + 1);
    const auto end = v.find(until);
    return std::string(end == std::string_view::npos ? v : v.substr(0, end));
}

bool dat_text_from_info(dat_reader& r, tep_event* ev, tep_record* rec, std::string_view key,
                        char until, std::string& s)
{
    s = dat_info_value(dat_info(r, rec), key, until);
    if (s.empty()) {
        r.failure = "record " + std::to_string(r.out.event_lines) + " (" + ev->name +
                    ") prints no " + std::string(key) + "= (a damaged file?)";
        return false;
    }
    return true;
}

/** Fill @p e from the record; false for a record explain skips or a failure (r.failure). */
bool dat_fields(dat_reader& r, tep_event* ev, tep_record* rec, trace_event& e)
{
    long long n = 0, v = 0;
    if (ev == r.irq_entry) {
        e.kind = trace_kind::irq_entry;
        if (!dat_number(r, ev, rec, "irq", n) || !dat_string(r, ev, rec, "name", e.name))
            return false;
        e.number = int(n);
    } else if (ev == r.irq_exit) {
        e.kind = trace_kind::irq_exit;
        if (!dat_number(r, ev, rec, "irq", n))
            return false;
        e.number = int(n);
    } else if (ev == r.softirq_entry || ev == r.softirq_exit) {
        e.kind = ev == r.softirq_entry ? trace_kind::softirq_entry : trace_kind::softirq_exit;
        if (!dat_number(r, ev, rec, "vec", n) ||
            !dat_text_from_info(r, ev, rec, "action", ']', e.name))
            return false;
        e.number = int(n);
    } else if (ev == r.sched_switch) {
        e.kind = trace_kind::sched_switch;
        if (!dat_string(r, ev, rec, "next_comm", e.name) ||
            !dat_number(r, ev, rec, "next_pid", n) || !dat_number(r, ev, rec, "next_prio", v))
            return false;
        e.number = int(n);
        e.value = v;
    } else if (ev == r.sched_wakeup) {
        e.kind = trace_kind::sched_wakeup;
        if (!dat_string(r, ev, rec, "comm", e.name) || !dat_number(r, ev, rec, "pid", n) ||
            !dat_number(r, ev, rec, "prio", v))
            return false;
        e.number = int(n);
        e.value = v;
    } else if (ev == r.irq_disable || ev == r.irq_enable) {
        e.kind = ev == r.irq_disable ? trace_kind::irq_disable : trace_kind::irq_enable;
        // The caller is an offset from _stext that the print format resolves by kallsyms.
        if (!dat_text_from_info(r, ev, rec, "caller", ' ', e.name))
            return false;
    } else if (ev == r.nmi) {
        e.kind = trace_kind::nmi;
        if (!dat_text_from_info(r, ev, rec, "handler", ' ', e.name) ||
            !dat_number(r, ev, rec, "delta_ns", v))
            return false;
        e.value = v;
    } else {
        return false;
    }
    return true;
}

/**
 * The responder's own events (the kernel responder's irqloop:* tracepoints, the userspace
 * responder's trace_marker writes): the record as the line its text form would be, read by the
 * text reader itself, so that both forms agree on them by construction. False (r.failure set)
 * when the text reader refuses the line.
 */
bool dat_responder_event(dat_reader& r, tep_event* ev, tep_record* rec, const std::string& task)
{
    std::string body;
    if (ev == r.marker) {
        // buf is "char buf[]": the text runs to the record's end (the field's size is 0).
        const auto* f = tep_find_field(ev, "buf");
        if (!f || f->offset < 0 || f->offset > rec->size) {
            r.failure = "record " + std::to_string(r.out.event_lines) +
                        " (print) has no field buf (a damaged file?)";
            return false;
        }
        const auto* p = static_cast<const char*>(rec->data) + f->offset;
        std::string buf(p, strnlen(p, std::size_t(rec->size - f->offset)));
        while (!buf.empty() && buf.back() == '\n')
            buf.pop_back();
        if (buf.find('\n') != std::string::npos) {
            ++r.out.other_markers; // a marker of several lines: not the responder's
            return true;
        }
        body = "tracing_mark_write: " + buf;
    } else {
        body = std::string(ev->name) + ": " + std::string(dat_info(r, rec));
    }
    char stamp[48];
    std::snprintf(stamp, sizeof stamp, " [%03d] %lld.%09lld: ", rec->cpu,
                  (long long)(rec->ts / 1'000'000'000), (long long)(rec->ts % 1'000'000'000));
    std::istringstream line(task + stamp + body + "\n");
    try {
        auto one = parse_trace_text(line, "record " + std::to_string(r.out.event_lines));
        r.out.other_markers += one.other_markers;
        for (auto& e : one.events) {
            e.line = r.out.event_lines;
            r.out.events.push_back(std::move(e));
        }
    } catch (const irqloop::error& e) {
        r.failure =
            "record " + std::to_string(r.out.event_lines) + " (" + ev->name + "): " + e.why();
        return false;
    }
    return true;
}

int dat_record(tracecmd_input*, tep_record* rec, int, void* data)
{
    auto& r = *static_cast<dat_reader*>(data);
    // missed_events: > 0 that many dropped before this record on its CPU, < 0 some (the
    // buffer did not count them).
    if (rec->missed_events != 0)
        r.gaps.drop(rec->cpu, rec->missed_events > 0 ? std::int64_t(rec->missed_events) : -1);
    if (rec->missed_events > 0)
        r.out.lost_events = std::size_t(
            add_drop_counts(std::int64_t(r.out.lost_events), std::int64_t(rec->missed_events)));
    const auto t = std::int64_t(rec->ts);
    r.gaps.event(rec->cpu, t);
    if (r.out.event_lines == 0)
        r.out.first_ns = t;
    r.out.last_ns = t;
    ++r.out.event_lines;
    auto* ev = tep_find_event_by_record(r.tep, rec);
    if (!ev) {
        r.failure = "record " + std::to_string(r.out.event_lines) +
                    " is of an event the file has no format for (a damaged file?)";
        return 1;
    }
    if (ev == r.marker || (ev->system && std::string_view(ev->system) == "irqloop")) {
        trace_seq_reset(&r.seq);
        tep_print_event(r.tep, &r.seq, rec, "%s-%d", TEP_PRINT_COMM, TEP_PRINT_PID);
        trace_seq_terminate(&r.seq);
        const std::string task(r.seq.buffer, std::size_t(r.seq.len));
        return dat_responder_event(r, ev, rec, task) ? 0 : 1;
    }
    trace_event e;
    e.t_ns = t;
    e.cpu = rec->cpu;
    e.line = r.out.event_lines;
    if (!dat_fields(r, ev, rec, e))
        return r.failure.empty() ? 0 : 1;
    trace_seq_reset(&r.seq);
    tep_print_event(r.tep, &r.seq, rec, "%s-%d", TEP_PRINT_COMM, TEP_PRINT_PID);
    trace_seq_terminate(&r.seq);
    e.task.assign(r.seq.buffer, std::size_t(r.seq.len));
    r.out.events.push_back(std::move(e));
    return 0;
}

/** Closes the handle and frees the text buffer on every path. */
struct dat_handle final {
    tracecmd_input* in = nullptr;
    dat_reader* r = nullptr;
    ~dat_handle()
    {
        if (in)
            tracecmd_close(in);
        if (r)
            trace_seq_destroy(&r->seq);
    }
};

/**
 * The library prints its own notes (a truncated file's "File possibly truncated") to stdout,
 * where explain's output goes: stdout points at /dev/null while it opens the file.
 */
struct quiet_stdout final {
    int saved = -1;
    quiet_stdout()
    {
        std::fflush(stdout);
        const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null < 0)
            return;
        saved = ::dup(STDOUT_FILENO);
        if (saved >= 0)
            ::dup2(null, STDOUT_FILENO);
        ::close(null);
    }
    ~quiet_stdout()
    {
        if (saved < 0)
            return;
        std::fflush(stdout);
        ::dup2(saved, STDOUT_FILENO);
        ::close(saved);
    }
};

#endif

} // namespace trace_dat_detail

bool trace_dat_supported() noexcept
{
    return IRQLOOP_HAVE_TRACECMD != 0;
}

bool is_trace_dat(const std::string& path)
{
    using namespace trace_dat_detail;
    std::ifstream f(path, std::ios::binary);
    char head[sizeof dat_magic] = {};
    if (!f.read(head, sizeof head))
        return false;
    return std::memcmp(head, dat_magic, sizeof dat_magic) == 0;
}

trace_text read_trace_dat(const std::string& path)
{
    using namespace trace_dat_detail;
    const auto what = what_of(path);
    {
        std::ifstream f(path, std::ios::binary);
        if (!f)
            throw error(what, std::strerror(errno), "name the .dat file 'trace-cmd record' wrote");
    }
    if (!is_trace_dat(path))
        throw error(what, "it is not a trace-cmd file (no trace-cmd magic at its start)",
                    "give the .dat file of 'trace-cmd record', or the text of 'trace-cmd report'");
    if (const auto cut = dat_cut(path); !cut.empty())
        throw error(what, cut + " (a truncated file?)",
                    "copy the whole file 'trace-cmd record' wrote (it is complete once "
                    "trace-cmd has ended)");
#if IRQLOOP_HAVE_TRACECMD
    tracecmd_set_loglevel(TEP_LOG_NONE);
    tep_set_loglevel(TEP_LOG_NONE);
    dat_reader r;
    dat_handle h;
    trace_seq_init(&r.seq);
    h.r = &r;
    {
        quiet_stdout quiet;
        // No plugins: the events print as the kernel's formats say, as 'trace-cmd report -N'.
        // TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS
        constexpr int no_plugins = (1 << 0) | (1 << 1);
        h.in = tracecmd_open(path.c_str(), no_plugins);
    }
    if (!h.in)
        throw error(what,
                    "libtracecmd cannot open it: cut in its headers or its CPU sections (a "
                    "truncated file?)",
                    "copy the whole file 'trace-cmd record' wrote (it is complete once "
                    "trace-cmd has ended)");
    r.tep = tracecmd_get_tep(h.in);
    if (!r.tep)
        throw error(what, "libtracecmd read no event formats from it (a damaged file?)",
                    "record it again with trace-cmd record");
    const auto find = [&](const char* sys, const char* name) {
        return tep_find_event_by_name(r.tep, sys, name);
    };
    r.irq_entry = find("irq", "irq_handler_entry");
    r.irq_exit = find("irq", "irq_handler_exit");
    r.softirq_entry = find("irq", "softirq_entry");
    r.softirq_exit = find("irq", "softirq_exit");
    r.sched_switch = find("sched", "sched_switch");
    r.sched_wakeup = find("sched", "sched_wakeup");
    r.irq_disable = find("preemptirq", "irq_disable");
    r.irq_enable = find("preemptirq", "irq_enable");
    r.nmi = find("nmi", "nmi_handler");
    r.marker = find("ftrace", "print");
    r.out.tracer = "nop";
    const int rc = tracecmd_iterate_events(h.in, nullptr, 0, dat_record, &r);
    if (!r.failure.empty())
        throw error(what, r.failure, "record it again with trace-cmd record");
    if (rc < 0)
        throw error(what,
                    "libtracecmd stopped reading its events after record " +
                        std::to_string(r.out.event_lines) + " (a truncated file?)",
                    "copy the whole file 'trace-cmd record' wrote");
    r.out.gaps = std::move(r.gaps).finish();
    return std::move(r.out);
#else
    throw error(what, "it is a trace-cmd .dat file, and this irqloop was built without libtracecmd",
                "read it as text: trace-cmd report -N -t -i FILE > FILE.txt, then --trace "
                "FILE.txt; or build with libtracecmd-dev (IRQLOOP_WITH_TRACECMD)");
#endif
}

trace_text read_trace_file(const std::string& path)
{
    if (is_trace_dat(path))
        return read_trace_dat(path);
    return read_trace_text(path);
}

} // namespace irqloop::analysis
