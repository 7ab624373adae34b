// SPDX-License-Identifier: MIT
// irqloop-responder: the userspace far end. Waits for each stimulus edge and toggles the
// response line, so the logger measures IRQ (or poll) plus wake-up on this target.
#include "cli-main.hpp"
#include "error.hpp"
#include "registry.hpp"
#include "rt-options.hpp"
#include "spec.hpp"
#include "stop-signal.hpp"
#include "units.hpp"

#include <array>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>
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
int poll_loop(hw::lines& w, edge_filter f, bool follow, counters& c, std::uint64_t limit,
              const std::atomic<bool>& stop)
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
                out = follow ? v : out ^ 1;
                w.drive(out);
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
// line; its hard-IRQ timestamp splits each answer into IRQ -> wake-up -> response.
int event_loop(hw::lines& w, edge_filter f, bool follow, counters& c, split& sp,
               std::uint64_t limit, const std::atomic<bool>& stop)
{
    int out = 0;
    w.drive(false);
    while (!stop.load(std::memory_order_relaxed)) {
        int rc = w.wait_edge(200'000'000);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        const std::int64_t woke = monotonic_ns();
        c.wakeups.fetch_add(1, std::memory_order_relaxed);
        const hw::edge_event e = w.last_edge();
        int v = e.rising >= 0 ? e.rising : f == edge_filter::both && !follow ? 1 : w.sense();
        if (v < 0)
            return -1;
        if (!wanted(f, v)) {
            c.ignored.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        out = follow ? v : out ^ 1;
        w.drive(out);
        const std::int64_t answered = monotonic_ns();
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

int responder_main(int argc, char** argv)
{
    std::string hw_spec, mode = "event", edge = "both", answer = "toggle", count, duration,
                         report = "1s", split_file;
    base::rt_options rt_opt;
    bool quiet = false;
    po::options_description d(
        "irqloop-responder: answer each stimulus edge by toggling the response line.\n\n"
        "usage: irqloop-responder --hw SPEC [options]\n\noptions");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("version", "print the version")
        ("hw", po::value(&hw_spec)->required(), "backend spec; 'in' is the stimulus line, 'out' the response line")
        ("mode,m", po::value(&mode)->default_value(mode), "event: block on the kernel's edge event (IRQ + wake-up); poll: busy-read the line")
        ("edge", po::value(&edge)->default_value(edge), "stimulus edges to answer: both, rising or falling")
        ("answer", po::value(&answer)->default_value(answer), "toggle: flip the response on each edge (lpptest's way); follow: set it to the stimulus level (tell the logger with answer=follow in its spec)")
        ("count,c", po::value(&count), "exit after answering this many edges (K/M/G)")
        ("duration,D", po::value(&duration), "exit after this long (ns/us/ms/s/m/h/d)");
    base::add_rt_options(d, rt_opt, "the responding thread");
    d.add_options()
        ("report", po::value(&report)->default_value(report), "print what was handled this often; 0 = never")
        ("split-file", po::value(&split_file), "event mode: at exit, write the IRQ -> wake-up -> response split (CSV, ns) to this file")
        ("quiet,q", po::bool_switch(&quiet), "print only errors");
    // clang-format on
    // No bare words: a stray one is refused, never dropped.
    auto vm = base::parse_options(argc, argv, d);
    if (vm.count("help")) {
        std::cout << d << "\nbackends:\n"
                  << hw::backends_help(hw::role::responder) << "\nDocs: docs/responder.md\n";
        return 0;
    }
    if (vm.count("version")) {
        base::print_version();
        return 0;
    }
    po::notify(vm);
    if (mode != "event" && mode != "poll")
        throw error("bad value for --mode", "'" + mode + "'", "use event or poll");
    edge_filter f = edge == "both"      ? edge_filter::both
                    : edge == "rising"  ? edge_filter::rising
                    : edge == "falling" ? edge_filter::falling
                                        : throw error("bad value for --edge", "'" + edge + "'",
                                                      "use both, rising or falling");
    if (answer != "toggle" && answer != "follow")
        throw error("bad value for --answer", "'" + answer + "'", "use toggle or follow");
    const bool follow = answer == "follow";
    std::uint64_t limit = count.empty() ? 0 : parse_count(count, "--count");
    std::int64_t duration_ns = duration.empty() ? 0 : parse_duration_ns(duration, "--duration");
    std::int64_t report_ns =
        parse_duration_ns_in(report, "--report", 0, 24LL * 3600 * 1'000'000'000);
    const base::rt_request req = base::to_rt_request(rt_opt);

    // Poll mode never waits for an edge. A gpiod line requested with edge detection would still
    // take an interrupt and wake the IRQ thread on every stimulus, competing with the poller and
    // filling an event queue nobody reads; so unless the spec says otherwise, ask for none.
    if (mode == "poll") {
        hw::spec parsed(hw_spec);
        if (parsed.name() == "gpiod" && !parsed.has("events"))
            hw_spec +=
                std::string(hw_spec.find(':') == std::string::npos ? ":" : ",") + "events=none";
    }
    // Event mode answering one edge: a gpiod line asks the kernel for that edge only, so the
    // other edge costs no interrupt thread and no wake-up of ours (unless the spec says).
    if (mode == "event" && edge != "both") {
        hw::spec parsed(hw_spec);
        if (parsed.name() == "gpiod" && !parsed.has("events"))
            hw_spec +=
                std::string(hw_spec.find(':') == std::string::npos ? ":" : ",") + "events=" + edge;
    }
    if (!split_file.empty() && mode != "event")
        throw error("bad option --split-file", "the split needs edge events",
                    "use it with --mode event");
    auto wire = hw::open_lines(hw_spec, hw::role::responder);
    if (mode == "event" && !wire->has_edge_events())
        throw error("start event mode on '" + wire->describe() + "'",
                    "this backend cannot wait for edges", "use --mode poll");

    base::rt_session rt(req);
    rt.apply_to_this_thread();
    rt.check_strict();
    if (!quiet) {
        std::fprintf(stderr, "irqloop-responder: %s, mode %s, edges %s, answer %s; obtained %s\n",
                     wire->describe().c_str(), mode.c_str(), edge.c_str(), answer.c_str(),
                     rt.summary().c_str());
        for (const auto& m : rt.misses())
            std::fprintf(stderr, "irqloop-responder: warning: not obtained: %s\n", m.c_str());
    }

    // SIGINT/SIGTERM end the loops within one wait (200 ms) or 4096 polls; a second one
    // gets the default action.
    base::stop_signals signals;
    std::atomic<bool>& stop = signals.flag();

    counters c;
    split sp;
    // Reports and the duration limit live on a helper thread, off the responding path.
    std::atomic<bool> finished{false};
    std::thread reporter([&] {
        auto start = std::chrono::steady_clock::now();
        auto next = start + std::chrono::nanoseconds(report_ns > 0 ? report_ns : 1'000'000'000);
        std::uint64_t last = 0, last_missed = 0;
        while (!finished.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            auto now = std::chrono::steady_clock::now();
            if (duration_ns && now - start >= std::chrono::nanoseconds(duration_ns))
                stop.store(true);
            if (report_ns > 0 && !quiet && now >= next) {
                std::uint64_t h = c.handled.load(), m = wire->missed_edges();
                std::string sp_text;
                if (sp.irq_to_wake.count())
                    sp_text = "; IRQ->wake-up " + brief(sp.irq_to_wake) + ", wake-up->response " +
                              brief(sp.wake_to_response);
                std::fprintf(stderr,
                             "irqloop-responder: handled %llu (total %llu), missed edges %llu "
                             "(total %llu)%s\n",
                             static_cast<unsigned long long>(h - last),
                             static_cast<unsigned long long>(h),
                             static_cast<unsigned long long>(m - last_missed),
                             static_cast<unsigned long long>(m), sp_text.c_str());
                last = h;
                last_missed = m;
                next += std::chrono::nanoseconds(report_ns);
            }
        }
    });
    wire->start();
    int rc = mode == "poll" ? poll_loop(*wire, f, follow, c, limit, stop)
                            : event_loop(*wire, f, follow, c, sp, limit, stop);
    finished.store(true);
    reporter.join();
    auto err = wire->error();
    wire->stop();
    if (!quiet) {
        std::fprintf(stderr, "irqloop-responder: done: handled %llu, ignored %llu, ",
                     static_cast<unsigned long long>(c.handled.load()),
                     static_cast<unsigned long long>(c.ignored.load()));
        // Wake-ups, where the backend's edges are the kernel's events (gpiod).
        if (sp.irq_to_wake.count())
            std::fprintf(stderr, "wake-ups %llu, ",
                         static_cast<unsigned long long>(c.wakeups.load()));
        std::fprintf(stderr, "missed edges %llu\n",
                     static_cast<unsigned long long>(wire->missed_edges()));
        for (auto [name, h] : {std::pair{"IRQ -> wake-up    ", &sp.irq_to_wake},
                               std::pair{"wake-up -> response", &sp.wake_to_response}})
            if (h->count())
                std::fprintf(stderr,
                             "irqloop-responder: split %s: min %.1f  p50 %.1f  p99 %.1f  max "
                             "%.1f us (%llu edges)\n",
                             name, h->min() / 1e3, h->quantile(0.5) / 1e3, h->quantile(0.99) / 1e3,
                             h->max() / 1e3, static_cast<unsigned long long>(h->count()));
    }
    if (!split_file.empty())
        write_split_file(split_file, sp, wire->describe());
    if (rc < 0)
        throw_from_errno(err.errnum ? err.errnum : EIO,
                         std::string("respond: ") + (err.op ? err.op : "line access"),
                         "check the wiring and the device", exit_failure);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    irqloop::set_program_name("irqloop-responder");
    return base::run_main(responder_main, argc, argv);
}
