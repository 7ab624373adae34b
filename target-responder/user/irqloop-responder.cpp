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

#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

namespace po = boost::program_options;
using namespace irqloop;

namespace
{

struct counters {
    std::atomic<std::uint64_t> handled{0};
    std::atomic<std::uint64_t> ignored{0};
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

// Event: block until the kernel reports an edge (IRQ, then this thread's wake-up).
int event_loop(hw::lines& w, edge_filter f, bool follow, counters& c, std::uint64_t limit,
               const std::atomic<bool>& stop)
{
    int out = 0;
    w.drive(false);
    while (!stop.load(std::memory_order_relaxed)) {
        int rc = w.wait_edge(200'000'000);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        int v = f == edge_filter::both && !follow ? 1 : w.sense();
        if (v < 0)
            return -1;
        if (!wanted(f, v)) {
            c.ignored.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        out = follow ? v : out ^ 1;
        w.drive(out);
        if (c.handled.fetch_add(1, std::memory_order_relaxed) + 1 == limit)
            return 0;
    }
    return 0;
}

int responder_main(int argc, char** argv)
{
    std::string hw_spec, mode = "event", edge = "both", answer = "toggle", count, duration,
                         report = "1s";
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
        ("quiet,q", po::bool_switch(&quiet), "print only errors");
    // clang-format on
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, d), vm);
    if (vm.count("help")) {
        std::cout << d << "\nbackends:\n" << hw::backends_help() << "\nDocs: docs/responder.md\n";
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
    std::int64_t report_ns = parse_duration_ns(report, "--report");
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
                std::fprintf(stderr,
                             "irqloop-responder: handled %llu (total %llu), missed edges %llu "
                             "(total %llu)\n",
                             static_cast<unsigned long long>(h - last),
                             static_cast<unsigned long long>(h),
                             static_cast<unsigned long long>(m - last_missed),
                             static_cast<unsigned long long>(m));
                last = h;
                last_missed = m;
                next += std::chrono::nanoseconds(report_ns);
            }
        }
    });
    wire->start();
    int rc = mode == "poll" ? poll_loop(*wire, f, follow, c, limit, stop)
                            : event_loop(*wire, f, follow, c, limit, stop);
    finished.store(true);
    reporter.join();
    auto err = wire->error();
    wire->stop();
    if (!quiet)
        std::fprintf(stderr,
                     "irqloop-responder: done: handled %llu, ignored %llu, missed edges %llu\n",
                     static_cast<unsigned long long>(c.handled.load()),
                     static_cast<unsigned long long>(c.ignored.load()),
                     static_cast<unsigned long long>(wire->missed_edges()));
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
