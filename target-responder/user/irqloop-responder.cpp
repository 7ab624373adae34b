// SPDX-License-Identifier: MIT
// irqloop-responder: the userspace far end. Waits for each stimulus edge and toggles the
// response line, so the logger measures IRQ (or poll) plus wake-up on this target.
#include "cli-main.hpp"
#include "error.hpp"
#include "registry.hpp"
#include "rt-options.hpp"
#include "spec.hpp"
#include "stop-signal.hpp"
#include "thread-name.hpp"
#include "trace-marker.hpp"
#include "units.hpp"

#include <array>
#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <limits>
#include <optional>
#include <pthread.h>
#include <signal.h>
#include <thread>

namespace po = boost::program_options;
using namespace irqloop;

namespace
{

struct counters {
    std::atomic<std::uint64_t> handled{0};
    std::atomic<std::uint64_t> ignored{0};
    std::atomic<std::uint64_t> wakeups{0}; ///< event mode: returns of wait_edge() with an edge
};

std::int64_t monotonic_ns() noexcept
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// One segment of the event-mode split, filled on the responding thread and read by the
// reporter: log-linear buckets (8 per power of two, 12.5 % wide), exact min and max, no
// allocation. Percentiles are reported as their bucket's upper bound: never below the truth.
class split_hist
{
public:
    void add(std::int64_t v) noexcept
    {
        if (v < 0)
            v = 0; // clocks agree to the ns; a negative span is rounding, counted as 0
        n_[index(v)].fetch_add(1, std::memory_order_relaxed);
        count_.fetch_add(1, std::memory_order_relaxed);
        sum_.fetch_add(static_cast<std::uint64_t>(v), std::memory_order_relaxed);
        if (v < min_.load(std::memory_order_relaxed))
            min_.store(v, std::memory_order_relaxed);
        if (v > max_.load(std::memory_order_relaxed))
            max_.store(v, std::memory_order_relaxed);
    }
    std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    std::int64_t min() const noexcept { return count() ? min_.load() : 0; }
    std::int64_t max() const noexcept { return max_.load(std::memory_order_relaxed); }
    std::int64_t mean() const noexcept
    {
        auto c = count();
        return c ? static_cast<std::int64_t>(sum_.load() / c) : 0;
    }
    /** @brief Upper bound of the bucket holding quantile @p q (0..1), capped at max(). */
    std::int64_t quantile(double q) const noexcept
    {
        std::uint64_t c = count();
        if (!c)
            return 0;
        auto want = static_cast<std::uint64_t>(q * static_cast<double>(c - 1)) + 1;
        std::uint64_t seen = 0;
        for (int i = 0; i < buckets; ++i) {
            seen += n_[i].load(std::memory_order_relaxed);
            if (seen >= want)
                return std::min(upper(i), max());
        }
        return max();
    }

private:
    static constexpr int buckets = 64 * 8;
    static int index(std::int64_t v) noexcept
    {
        if (v < 8)
            return static_cast<int>(v);
        int msb = 63 - __builtin_clzll(static_cast<unsigned long long>(v));
        return (msb - 2) * 8 + static_cast<int>((v >> (msb - 3)) & 7);
    }
    static std::int64_t upper(int i) noexcept
    {
        if (i < 8)
            return i;
        int msb = i / 8 + 2, sub = i % 8;
        std::int64_t step = std::int64_t{1} << (msb - 3);
        return (std::int64_t{8 + sub} << (msb - 3)) + step - 1;
    }
    std::array<std::atomic<std::uint64_t>, buckets> n_{};
    std::atomic<std::uint64_t> count_{0};
    std::atomic<std::uint64_t> sum_{0};
    std::atomic<std::int64_t> min_{std::numeric_limits<std::int64_t>::max()};
    std::atomic<std::int64_t> max_{0};
};

// Where event mode's time goes, per answered edge: the kernel's hard-IRQ timestamp of the edge
// -> this thread awake with the event read -> the response line written.
struct split {
    split_hist irq_to_wake;
    split_hist wake_to_response;
};

enum class edge_filter { both, rising, falling };

bool wanted(edge_filter f, int level)
{
    return f == edge_filter::both || (f == edge_filter::rising) == (level == 1);
}

// Busy-poll: the lowest latency a userspace responder can reach, at the cost of a CPU.
// With @p tm (--trace), each answered edge is marked before and after its answer: seq is the
// edge's number among the answered ones (1-based, the handled count it brings).
int poll_loop(hw::polled_wire& w, edge_filter f, bool follow, counters& c, std::uint64_t limit,
              const std::atomic<bool>& stop, responder::trace_marker* tm)
{
    int last = w.sense();
    int out = 0;
    w.drive(false);
    std::uint32_t n = 0;
    while (true) {
        int v = w.sense();
        if (v < 0)
            return -1;
        if (v != last) {
            last = v;
            if (wanted(f, v)) {
                const std::uint64_t seq = c.handled.load(std::memory_order_relaxed) + 1;
                if (tm)
                    tm->edge(seq, v);
                out = follow ? v : out ^ 1;
                w.drive(out);
                if (tm)
                    tm->response(seq, v);
                if (c.handled.fetch_add(1, std::memory_order_relaxed) + 1 == limit)
                    return 0;
            } else {
                c.ignored.fetch_add(1, std::memory_order_relaxed);
            }
        }
        if ((++n & 0xfff) == 0 && stop.load(std::memory_order_relaxed))
            return 0;
    }
}

// Event: block until the kernel reports an edge (IRQ, then this thread's wake-up). The edge's
// type comes from the kernel's event where the backend has it (gpiod), not from re-reading the
// line; its hard-IRQ timestamp splits each answer into IRQ -> wake-up -> response. A waiter
// that ends on a signal (gpiod) blocks without a timeout, one system call per edge; the stop
// then comes as a signal to this thread (wake_signal). The others wake every 200 ms to look.
int event_loop(hw::polled_wire& w, hw::edge_waiter& edges, edge_filter f, bool follow, counters& c,
               split& sp, std::uint64_t limit, const std::atomic<bool>& stop,
               responder::trace_marker* tm)
{
    const std::int64_t wait_ns = edges.wait_ends_on_signal() ? -1 : 200'000'000;
    int out = 0;
    w.drive(false);
    while (!stop.load(std::memory_order_relaxed)) {
        int rc = edges.wait_edge(wait_ns);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        const std::int64_t woke = monotonic_ns();
        c.wakeups.fetch_add(1, std::memory_order_relaxed);
        const hw::edge_event e = edges.last_edge();
        int v = e.rising >= 0 ? e.rising : f == edge_filter::both && !follow ? 1 : w.sense();
        if (v < 0)
            return -1;
        if (!wanted(f, v)) {
            c.ignored.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        const std::uint64_t seq = c.handled.load(std::memory_order_relaxed) + 1;
        if (tm)
            tm->edge(seq, v);
        out = follow ? v : out ^ 1;
        w.drive(out);
        const std::int64_t answered = monotonic_ns();
        if (tm)
            tm->response(seq, v);
        if (e.kernel_ns > 0) {
            sp.irq_to_wake.add(woke - e.kernel_ns);
            sp.wake_to_response.add(answered - woke);
        }
        if (c.handled.fetch_add(1, std::memory_order_relaxed) + 1 == limit)
            return 0;
    }
    return 0;
}

// "p50 a us, p99 b us" of one segment, for the report lines.
std::string brief(const split_hist& h)
{
    char b[96];
    std::snprintf(b, sizeof b, "p50 %.1f us, p99 %.1f us", h.quantile(0.5) / 1e3,
                  h.quantile(0.99) / 1e3);
    return b;
}

// The split as CSV: one row per segment, all in ns (percentiles: bucket upper bounds).
void write_split_file(const std::string& path, const split& sp, const std::string& describe)
{
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f)
        throw_from_errno(errno, "write split file '" + path + "'",
                         "check the folder exists and is writable", exit_failure);
    bool ok = std::fprintf(f,
                           "# irqloop-responder split, %s; ns; percentiles are bucket upper bounds "
                           "(never below the truth)\n",
                           describe.c_str()) > 0 &&
              std::fprintf(f, "segment,count,min_ns,p50_ns,p99_ns,p999_ns,max_ns,mean_ns\n") > 0;
    for (auto [name, h] : {std::pair{"irq_to_wake", &sp.irq_to_wake},
                           std::pair{"wake_to_response", &sp.wake_to_response}})
        ok = ok && std::fprintf(
                       f, "%s,%llu,%lld,%lld,%lld,%lld,%lld,%lld\n", name,
                       static_cast<unsigned long long>(h->count()),
                       static_cast<long long>(h->min()), static_cast<long long>(h->quantile(0.5)),
                       static_cast<long long>(h->quantile(0.99)),
                       static_cast<long long>(h->quantile(0.999)), static_cast<long long>(h->max()),
                       static_cast<long long>(h->mean())) > 0;
    int err = ok ? 0 : errno;
    if (std::fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok)
        throw_from_errno(err ? err : EIO, "write split file '" + path + "'", "check the disk",
                         exit_failure);
}

// What the command line asks for, checked; nothing opened.
struct request {
    std::string hw_spec, mode = "event", edge = "both", answer = "toggle", split_file, marker;
    edge_filter filter = edge_filter::both;
    bool poll = false, follow = false, quiet = false, trace = false;
    std::uint64_t limit = 0;
    std::int64_t duration_ns = 0, report_ns = 0;
    base::rt_request rt;
};

po::options_description describe_options(request& r, base::rt_options& rt_opt, std::string& count,
                                         std::string& duration, std::string& report)
{
    po::options_description d(
        "irqloop-responder: answer each stimulus edge by toggling the response line.\n\n"
        "usage: irqloop-responder --hw SPEC [options]\n\noptions");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("version", "print the version")
        ("hw", po::value(&r.hw_spec)->required(), "backend spec; 'in' is the stimulus line, 'out' the response line")
        ("mode,m", po::value(&r.mode)->default_value(r.mode), "event: block on the kernel's edge event (IRQ + wake-up); poll: busy-read the line")
        ("edge", po::value(&r.edge)->default_value(r.edge), "stimulus edges to answer: both, rising or falling")
        ("answer", po::value(&r.answer)->default_value(r.answer), "toggle: flip the response on each edge (lpptest's way); follow: set it to the stimulus level (tell the logger with answer=follow in its spec)")
        ("count,c", po::value(&count), "exit after answering this many edges (K/M/G)")
        ("duration,D", po::value(&duration), "exit after this long (ns/us/ms/s/m/h/d)");
    base::add_rt_options(d, rt_opt, "the responding thread");
    d.add_options()
        ("report", po::value(&report)->default_value(report), "print what was handled this often; 0 = never")
        ("split-file", po::value(&r.split_file), "event mode: at exit, write the IRQ -> wake-up -> response split (CSV, ns) to this file")
        ("trace", po::bool_switch(&r.trace), "mark each answered edge in the kernel's trace: 'irqloop_edge: seq=N level=L' to /sys/kernel/tracing/trace_marker when it is seen, 'irqloop_response: ...' once answered (for irqloop explain; the events to record are trace-cmd's, see docs/responder.md)")
        ("trace-marker", po::value(&r.marker), "--trace to this file instead (tracefs mounted elsewhere)")
        ("quiet,q", po::bool_switch(&r.quiet), "print only errors");
    // clang-format on
    return d;
}

// The options' values checked and converted into @p r.
void check_request(request& r, const std::string& count, const std::string& duration,
                   const std::string& report, const base::rt_options& rt_opt)
{
    if (r.mode != "event" && r.mode != "poll")
        throw error("bad value for --mode", "'" + r.mode + "'", "use event or poll");
    r.poll = r.mode == "poll";
    r.filter = r.edge == "both"      ? edge_filter::both
               : r.edge == "rising"  ? edge_filter::rising
               : r.edge == "falling" ? edge_filter::falling
                                     : throw error("bad value for --edge", "'" + r.edge + "'",
                                                   "use both, rising or falling");
    if (r.answer != "toggle" && r.answer != "follow")
        throw error("bad value for --answer", "'" + r.answer + "'", "use toggle or follow");
    r.follow = r.answer == "follow";
    r.limit = count.empty() ? 0 : parse_count(count, "--count");
    r.duration_ns = duration.empty() ? 0 : parse_duration_ns(duration, "--duration");
    r.report_ns = parse_duration_ns_in(report, "--report", 0, 24LL * 3600 * 1'000'000'000);
    r.rt = base::to_rt_request(rt_opt);
    if (!r.marker.empty())
        r.trace = true;
    else if (r.trace)
        r.marker = responder::trace_marker::default_path;
    if (!r.split_file.empty() && r.poll)
        throw error("bad option --split-file", "the split needs edge events",
                    "use it with --mode event");
}

// The command line as a request; nullopt when it asked for help or the version (printed).
std::optional<request> parse_request(int argc, char** argv)
{
    request r;
    base::rt_options rt_opt;
    std::string count, duration, report = "1s";
    const po::options_description d = describe_options(r, rt_opt, count, duration, report);
    // No bare words: a stray one is refused, never dropped.
    auto vm = base::parse_options(argc, argv, d);
    if (vm.count("help")) {
        std::cout << d << "\nbackends:\n"
                  << hw::backends_help(hw::role::responder) << "\nDocs: docs/responder.md\n";
        return std::nullopt;
    }
    if (vm.count("version")) {
        base::print_version();
        return std::nullopt;
    }
    po::notify(vm);
    check_request(r, count, duration, report, rt_opt);
    return r;
}

// The wire's spec with the responder's own default for gpiod's edge detection, unless the
// spec names one. Poll mode never waits for an edge: a line requested with edge detection
// would still take an interrupt and wake the IRQ thread on every stimulus, competing with the
// poller and filling an event queue nobody reads, so it asks for none. Event mode answering
// one edge asks the kernel for that edge only, so the other edge costs no interrupt thread
// and no wake-up of ours.
hw::spec wire_spec(const request& r)
{
    hw::spec s(r.hw_spec);
    if (s.name() == "gpiod" && (r.poll || r.edge != "both"))
        s.set_default("events", r.poll ? "none" : r.edge);
    return s;
}

// SIGUSR2, sent to the responding thread to end a wait without a timeout: its handler does
// nothing, and it is installed without SA_RESTART, so the blocked read() returns EINTR and the
// loop looks at its stop flag. Installed for the life of this object.
class wake_signal final
{
public:
    static constexpr int number = SIGUSR2;
    wake_signal()
    {
        struct sigaction sa = {};
        sa.sa_handler = [](int) {};
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;
        if (::sigaction(number, &sa, &old_) != 0)
            throw_from_errno(errno, "install the responder's wake signal");
    }
    ~wake_signal() { ::sigaction(number, &old_, nullptr); }
    wake_signal(const wake_signal&) = delete;
    wake_signal& operator=(const wake_signal&) = delete;

private:
    struct sigaction old_ = {};
};

// The report every --report period, and the --duration limit, until @p finished: run on a
// helper thread, off the responding path. Once stop is set (by --duration or a stop signal
// that this thread caught), @p wake, when given, is signalled on every tick until the
// responding thread has finished: a single signal could land just before it blocks again.
void report_loop(const request& r, const counters& c, const split& sp, const hw::edge_waiter* edges,
                 std::atomic<bool>& stop, const std::atomic<bool>& finished,
                 const std::optional<pthread_t>& wake)
{
    auto start = std::chrono::steady_clock::now();
    auto next = start + std::chrono::nanoseconds(r.report_ns > 0 ? r.report_ns : 1'000'000'000);
    std::uint64_t last = 0, last_missed = 0;
    while (!finished.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        auto now = std::chrono::steady_clock::now();
        if (r.duration_ns && now - start >= std::chrono::nanoseconds(r.duration_ns))
            stop.store(true);
        if (wake && stop.load())
            ::pthread_kill(*wake, wake_signal::number);
        if (r.report_ns <= 0 || r.quiet || now < next)
            continue;
        std::uint64_t h = c.handled.load(), m = edges ? edges->missed_edges() : 0;
        std::string sp_text;
        if (sp.irq_to_wake.count())
            sp_text = "; IRQ->wake-up " + brief(sp.irq_to_wake) + ", wake-up->response " +
                      brief(sp.wake_to_response);
        std::fprintf(stderr,
                     "irqloop-responder: handled %llu (total %llu), missed edges %llu "
                     "(total %llu)%s\n",
                     static_cast<unsigned long long>(h - last), static_cast<unsigned long long>(h),
                     static_cast<unsigned long long>(m - last_missed),
                     static_cast<unsigned long long>(m), sp_text.c_str());
        last = h;
        last_missed = m;
        next += std::chrono::nanoseconds(r.report_ns);
    }
}

// The closing lines: what was handled, and the event-mode split where there is one.
void print_done(const counters& c, const split& sp, const hw::edge_waiter* edges)
{
    std::fprintf(stderr, "irqloop-responder: done: handled %llu, ignored %llu, ",
                 static_cast<unsigned long long>(c.handled.load()),
                 static_cast<unsigned long long>(c.ignored.load()));
    // Wake-ups, where the backend's edges are the kernel's events (gpiod).
    if (sp.irq_to_wake.count())
        std::fprintf(stderr, "wake-ups %llu, ", static_cast<unsigned long long>(c.wakeups.load()));
    std::fprintf(stderr, "missed edges %llu\n",
                 static_cast<unsigned long long>(edges ? edges->missed_edges() : 0));
    for (auto [name, h] : {std::pair{"IRQ -> wake-up    ", &sp.irq_to_wake},
                           std::pair{"wake-up -> response", &sp.wake_to_response}})
        if (h->count())
            std::fprintf(stderr,
                         "irqloop-responder: split %s: min %.1f  p50 %.1f  p99 %.1f  max "
                         "%.1f us (%llu edges)\n",
                         name, h->min() / 1e3, h->quantile(0.5) / 1e3, h->quantile(0.99) / 1e3,
                         h->max() / 1e3, static_cast<unsigned long long>(h->count()));
}

// The markers' count at exit. Lost markers never stopped the answers; they fail the run (status
// 1) unless tracefs refused them because tracing was off (EBADF: tracing_on 0, e.g. after a
// trigger's tracing_off()), which is a warning: the trace then ends where tracing stopped.
void report_markers(const responder::trace_marker& m, bool quiet)
{
    const auto total = static_cast<unsigned long long>(m.written() + m.failed());
    const auto failed = static_cast<unsigned long long>(m.failed());
    if (!quiet)
        std::fprintf(stderr, "irqloop-responder: trace: %llu markers written to %s, %llu failed\n",
                     static_cast<unsigned long long>(m.written()), m.path().c_str(), failed);
    if (!failed)
        return;
    if (m.first_errno() == EBADF) {
        std::fprintf(stderr,
                     "irqloop-responder: warning: trace: %llu of %llu markers not recorded: "
                     "tracing was off (tracing_on 0, or a trigger's tracing_off())\n",
                     failed, total);
        return;
    }
    throw error("write trace markers to '" + m.path() + "'",
                std::to_string(failed) + " of " + std::to_string(total) +
                    " failed, the first with: " + std::strerror(m.first_errno()),
                m.first_errno() == EINVAL
                    ? "tracefs refused them: check that options/markers is 1"
                    : "check tracefs, or the disk of a file given with --trace-marker",
                exit_failure);
}

int responder_main(int argc, char** argv)
{
    const std::optional<request> parsed = parse_request(argc, argv);
    if (!parsed)
        return 0;
    const request& r = *parsed;
    hw::spec spec = wire_spec(r);
    // The trace marker first: a tracefs that is not mounted or not writable is refused before
    // the wire is opened (no shm segment created, no line requested).
    std::optional<responder::trace_marker> marker;
    if (r.trace)
        marker.emplace(r.marker);
    // SIGINT/SIGTERM end the loops within one wait (200 ms; a gpiod wait ends on the signal,
    // or on the reporter's wake signal within its 10 ms tick) or 4096 polls; a second one
    // gets the default action. Caught from before the wire is opened: whenever one arrives,
    // the program unwinds and closes the wire (a shm segment it created is removed).
    base::stop_signals signals;
    std::atomic<bool>& stop = signals.flag();
    auto wire = hw::open_lines(spec, hw::role::responder);
    hw::polled_wire& lines = hw::polled(*wire);
    hw::edge_waiter* edges = hw::find_edge_waiter(*wire);
    if (!r.poll && !edges)
        throw error("start event mode on '" + wire->describe() + "'",
                    "this backend cannot wait for edges", "use --mode poll");

    base::rt_session rt(r.rt);
    rt.apply_to_this_thread();
    rt.check_strict();
    if (!r.quiet) {
        std::fprintf(stderr, "irqloop-responder: %s, mode %s, edges %s, answer %s; obtained %s\n",
                     wire->describe().c_str(), r.mode.c_str(), r.edge.c_str(), r.answer.c_str(),
                     rt.summary().c_str());
        for (const auto& m : rt.misses())
            std::fprintf(stderr, "irqloop-responder: warning: not obtained: %s\n", m.c_str());
    }

    counters c;
    split sp;
    std::atomic<bool> finished{false};
    // Event mode on a waiter without a timeout: the reporter ends the wait with a signal.
    std::optional<wake_signal> wake_handler;
    std::optional<pthread_t> wake;
    if (!r.poll && edges->wait_ends_on_signal()) {
        wake_handler.emplace();
        wake = ::pthread_self();
    }
    std::thread reporter([&] {
        irqloop::base::name_this_thread("irqloop-report");
        report_loop(r, c, sp, edges, stop, finished, wake);
    });
    // The reporter sleeps and prints: an ordinary thread on any CPU, never at the responding
    // thread's priority on its CPU (it would delay responses, and a spinning poll loop there
    // would starve it, so that --duration never ended the run).
    rt.demote_thread(reporter.native_handle());
    wire->start();
    responder::trace_marker* tm = marker ? &*marker : nullptr;
    int rc = r.poll ? poll_loop(lines, r.filter, r.follow, c, r.limit, stop, tm)
                    : event_loop(lines, *edges, r.filter, r.follow, c, sp, r.limit, stop, tm);
    finished.store(true);
    reporter.join();
    auto err = wire->error();
    wire->stop();
    if (!r.quiet)
        print_done(c, sp, edges);
    if (!r.split_file.empty())
        write_split_file(r.split_file, sp, wire->describe());
    if (rc < 0)
        throw_from_errno(err.errnum ? err.errnum : EIO,
                         std::string("respond: ") + (err.op ? err.op : "line access"),
                         "check the wiring and the device", exit_failure);
    if (marker)
        report_markers(*marker, r.quiet);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    irqloop::set_program_name("irqloop-responder");
    return base::run_main(responder_main, argc, argv);
}
