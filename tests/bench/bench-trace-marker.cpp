// SPDX-License-Identifier: MIT
// Benchmark of irqloop-responder --trace: what its two marker lines add to each answered edge.
// The answer alone is the responder's drive() of an shm wire (an atomic store and a futex wake,
// the event-mode answer of docs/backends/shm.md); with --trace it is framed by the edge and
// response markers (target-responder/user/trace-marker.*), written to a tmpfs file standing in
// for trace_marker and, where it can be opened, to tracefs's own. Usage:
//   irqloop-bench-trace-marker [edges=200000] [tmpfs file=/dev/shm/irqloop-bench-marker]
#include "lines.hpp"
#include "registry.hpp"
#include "trace-marker.hpp"

#include "error.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{

using irqloop::responder::trace_marker;

double now_ns()
{
    return std::chrono::duration<double, std::nano>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// ns per edge of @p edges answers, with @p m's markers around each when given; best of 5 rounds.
double per_edge(irqloop::hw::polled_wire& w, trace_marker* m, long edges)
{
    double best = 1e300;
    for (int round = 0; round < 5; ++round) {
        int out = 0;
        const double t = now_ns();
        for (long i = 1; i <= edges; ++i) {
            const int level = static_cast<int>(i & 1);
            if (m)
                m->edge(static_cast<std::uint64_t>(i), level);
            out ^= 1;
            w.drive(out);
            if (m)
                m->response(static_cast<std::uint64_t>(i), level);
        }
        best = std::min(best, (now_ns() - t) / static_cast<double>(edges));
    }
    return best;
}

} // namespace

int main(int argc, char** argv)
{
    const long edges = argc > 1 ? std::atol(argv[1]) : 200000;
    const std::string file = argc > 2 ? argv[2] : "/dev/shm/irqloop-bench-marker";
    auto wire = irqloop::hw::open_lines("shm:name=bench-marker-" + std::to_string(getpid()),
                                        irqloop::hw::role::responder);
    irqloop::hw::polled_wire& w = irqloop::hw::polled(*wire);
    wire->start();
    const double bare = per_edge(w, nullptr, edges);
    std::printf("answer alone (shm drive without a waiter: an atomic store): %.0f ns per edge "
                "(%ld edges, best of 5)\n",
                bare, edges);
    {
        // The floor of any marker: the same two lines to /dev/null (two system calls).
        trace_marker m("/dev/null");
        const double with = per_edge(w, &m, edges);
        std::printf("with markers to /dev/null (the system calls alone): %.0f ns per edge\n", with);
    }
    {
        std::ofstream{file, std::ios::trunc};
        trace_marker m(file);
        const double with = per_edge(w, &m, edges);
        std::printf("with markers to %s (tmpfs): %.0f ns per edge, +%.0f ns, ratio %.2f; %llu "
                    "written, %llu failed\n",
                    file.c_str(), with, with - bare, with / bare,
                    static_cast<unsigned long long>(m.written()),
                    static_cast<unsigned long long>(m.failed()));
    }
    std::remove(file.c_str());
    try {
        trace_marker m(trace_marker::default_path);
        const long n = std::min(edges, 2000L); // the ring buffer is the host's: keep it short
        const double with = per_edge(w, &m, n);
        std::printf("with markers to %s: %.0f ns per edge, +%.0f ns, ratio %.2f; %llu written, "
                    "%llu failed%s\n",
                    m.path().c_str(), with, with - bare, with / bare,
                    static_cast<unsigned long long>(m.written()),
                    static_cast<unsigned long long>(m.failed()),
                    m.first_errno() == EBADF ? " (EBADF: tracing was off)" : "");
    } catch (const irqloop::error& e) {
        std::printf("tracefs's marker: not measured: %s\n", e.message().c_str());
    }
    wire->stop();
    return 0;
}
