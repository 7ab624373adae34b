// SPDX-License-Identifier: MIT
// irqloop-responder --trace: the marker lines (irqloop_edge / irqloop_response: seq=N level=L,
// the text the kernel responder's tracepoints print) written to a file standing in for tracefs's
// trace_marker, a failed write counted without stopping anything, and the refusals (exit status
// 2, before the wire is opened). The end-to-end case runs the responder against a logger on the
// shm wire, at SCHED_OTHER, for a few hundred edges.
#include "error.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"
#include "trace-marker.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace responder_trace_test
{

using Catch::Matchers::ContainsSubstring;
using irqloop::responder::trace_marker;
using irqloop::test::background_process;
using irqloop::test::file_text;
using irqloop::test::run_irqloop;
using irqloop::test::run_process;
using irqloop::test::temp_dir;
using irqloop::test::wait_for_text;

const std::string responder_bin = IRQLOOP_RESPONDER_BIN;

std::string line_of(std::string_view prefix, std::uint64_t seq, int level)
{
    char buf[trace_marker::max_line];
    return std::string(buf, trace_marker::format(buf, prefix, seq, level));
}

std::vector<std::string> lines_of(const std::string& path)
{
    std::ifstream f(path);
    std::vector<std::string> v;
    for (std::string l; std::getline(f, l);)
        v.push_back(l);
    return v;
}

TEST_CASE("responder trace: the marker text is the kernel responder's event text",
          "[responder][trace]")
{
    CHECK(line_of(trace_marker::edge_prefix, 5, 1) == "irqloop_edge: seq=5 level=1\n");
    CHECK(line_of(trace_marker::response_prefix, 5, 1) == "irqloop_response: seq=5 level=1\n");
    CHECK(line_of(trace_marker::edge_prefix, 10, 0) == "irqloop_edge: seq=10 level=0\n");
    // The longest line fits max_line.
    const std::string longest =
        line_of(trace_marker::response_prefix, std::numeric_limits<std::uint64_t>::max(),
                std::numeric_limits<int>::min());
    CHECK(longest == "irqloop_response: seq=18446744073709551615 level=-2147483648\n");
    CHECK(longest.size() <= trace_marker::max_line);
}

TEST_CASE("responder trace: markers on a file, each one write, in order; a failed write is "
          "counted and the next ones still go",
          "[responder][trace]")
{
    temp_dir dir;
    const std::string path = dir / "trace_marker";
    std::ofstream(path) << "earlier line\n"; // a plain file stands in: appended to, not created
    {
        trace_marker m(path);
        m.edge(1, 1);
        m.response(1, 1);
        m.edge(2, 0);
        m.response(2, 0);
        CHECK(m.written() == 4);
        CHECK(m.failed() == 0);
        CHECK(m.first_errno() == 0);
    }
    CHECK(lines_of(path) == std::vector<std::string>{"earlier line", "irqloop_edge: seq=1 level=1",
                                                     "irqloop_response: seq=1 level=1",
                                                     "irqloop_edge: seq=2 level=0",
                                                     "irqloop_response: seq=2 level=0"});

    // /dev/full: every write fails with ENOSPC; counted, the first errno kept, nothing thrown.
    trace_marker full("/dev/full");
    for (std::uint64_t s = 1; s <= 3; ++s) {
        full.edge(s, 1);
        full.response(s, 1);
    }
    CHECK(full.written() == 0);
    CHECK(full.failed() == 6);
    CHECK(full.first_errno() == ENOSPC);
}

TEST_CASE("responder trace: a marker that cannot be opened is refused with status 2 and a hint",
          "[responder][trace]")
{
    temp_dir dir;
    auto refusal = [](const std::string& path) -> irqloop::error {
        try {
            trace_marker m(path);
        } catch (const irqloop::error& e) {
            return e;
        }
        FAIL("'" << path << "' was opened");
        return irqloop::error("", "");
    };
    const irqloop::error missing = refusal(dir / "no-tracefs/trace_marker");
    CHECK(missing.status() == irqloop::exit_usage);
    CHECK(missing.what_failed() ==
          "open the trace marker '" + dir / "no-tracefs/trace_marker" + "'");
    CHECK(missing.why() == "No such file or directory");
    CHECK_THAT(missing.hint(), ContainsSubstring("an existing file"));
    const irqloop::error directory = refusal(dir.path());
    CHECK(directory.status() == irqloop::exit_usage);
    CHECK(directory.why() == "Is a directory");
    // A read-only sysfs attribute refuses a writer, root included (EACCES; EROFS where /sys is
    // mounted read-only).
    const irqloop::error denied = refusal("/sys/devices/system/cpu/online");
    CHECK(denied.status() == irqloop::exit_usage);
    if (denied.why() == "Permission denied")
        CHECK_THAT(denied.hint(), ContainsSubstring("write access to tracefs"));
}

TEST_CASE("responder trace: --trace-marker refusals end the responder with status 2 before its "
          "wire is opened",
          "[responder][trace]")
{
    temp_dir dir;
    const std::string name = "trref" + std::to_string(getpid());
    const std::string missing = dir / "tracing/trace_marker";
    auto r = run_process({responder_bin, "--hw", "shm:name=" + name, "--trace-marker", missing,
                          "--priority", "0", "--no-mlock", "--no-dma-latency", "--count", "1"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "irqloop-responder: open the trace marker '" + missing +
                       "': No such file or directory (check the path: tracefs's trace_marker, or "
                       "an existing file)\n");
    struct stat st {
    };
    CHECK(::stat(("/dev/shm/irqloop-" + name).c_str(), &st) != 0); // no segment was created

    r = run_process({responder_bin, "--hw", "shm:name=" + name, "--trace-marker", dir.path(),
                     "--priority", "0", "--no-mlock", "--no-dma-latency", "--count", "1"});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, ContainsSubstring("Is a directory (give the trace_marker file"));
    CHECK(::stat(("/dev/shm/irqloop-" + name).c_str(), &st) != 0);
}

TEST_CASE("responder trace: against a logger on the shm wire, every answered edge is marked "
          "before and after its answer, seq 1..handled, in event and poll mode",
          "[responder][trace]")
{
    // Both loops: event mode (the shm futex) and poll mode (the spinning reader).
    for (const char* mode : {"event", "poll"}) {
        DYNAMIC_SECTION("mode " << mode)
        {
            temp_dir dir;
            const std::string name = std::string("trace") + mode + std::to_string(getpid());
            const std::string marker = dir / "trace_marker", log = dir / "responder.log";
            std::ofstream{marker};
            background_process resp({responder_bin, "--hw", "shm:name=" + name, "--mode", mode,
                                     "--priority", "0", "--no-mlock", "--no-dma-latency",
                                     "--report", "0", "--trace-marker", marker},
                                    log);
            REQUIRE(wait_for_text(log, "; obtained ", 30.0));
            // SCHED_OTHER on a shared machine: a generous gap limit keeps its preempted polls'
            // samples (the markers, not the latencies, are under test).
            auto r = run_irqloop({"run", "--hw", "shm:name=" + name, "--samples", "300",
                                  "--interval", "200us", "--timeout", "20ms", "--gap-limit", "5ms",
                                  "--no-db", "--priority", "0", "--no-mlock", "--no-dma-latency",
                                  "--progress", "none"});
            INFO(r.out << r.err);
            CHECK(r.status == 0);
            resp.signal(SIGTERM);
            CHECK(resp.wait() == 0);
            const std::string out = file_text(log);
            INFO("responder:\n" << out);
            std::smatch m;
            REQUIRE(std::regex_search(out, m, std::regex("done: handled ([0-9]+),")));
            const std::uint64_t handled = std::stoull(m[1]);
            CHECK(handled >= 100); // the logger's 300 stimuli, less what a loaded machine lost
            const std::vector<std::string> lines = lines_of(marker);
            REQUIRE(lines.size() == 2 * handled);
            const std::regex edge("irqloop_edge: seq=([0-9]+) level=([01])");
            const std::regex resp_line("irqloop_response: seq=([0-9]+) level=([01])");
            std::uint64_t bad = 0;
            for (std::uint64_t k = 1; k <= handled; ++k) {
                std::smatch e, a;
                const bool ok = std::regex_match(lines[2 * k - 2], e, edge) &&
                                std::regex_match(lines[2 * k - 1], a, resp_line) &&
                                std::stoull(e[1]) == k && std::stoull(a[1]) == k && e[2] == a[2];
                if (!ok && bad++ < 3)
                    UNSCOPED_INFO("edge " << k << ": '" << lines[2 * k - 2] << "', '"
                                          << lines[2 * k - 1] << "'");
            }
            CHECK(bad == 0);
            CHECK_THAT(out, ContainsSubstring("trace: " + std::to_string(2 * handled) +
                                              " markers written to " + marker + ", 0 failed"));
        }
    }
}

} // namespace responder_trace_test

namespace responder_trace_test
{

TEST_CASE("responder trace: markers that cannot be written never stop the answers; at exit the "
          "count and status 1",
          "[responder][trace]")
{
    temp_dir dir;
    const std::string name = "tracefull" + std::to_string(getpid());
    const std::string log = dir / "responder.log";
    // /dev/full: every marker fails with ENOSPC (tracefs's EBADF, tracing off, is a warning
    // instead: the testbed's user-trace-marker shows it on a real kernel).
    background_process resp({responder_bin, "--hw", "shm:name=" + name, "--mode", "event",
                             "--priority", "0", "--no-mlock", "--no-dma-latency", "--report", "0",
                             "--trace-marker", "/dev/full"},
                            log);
    REQUIRE(wait_for_text(log, "; obtained ", 30.0));
    auto r =
        run_irqloop({"run", "--hw", "shm:name=" + name, "--samples", "100", "--interval", "200us",
                     "--timeout", "20ms", "--gap-limit", "5ms", "--no-db", "--priority", "0",
                     "--no-mlock", "--no-dma-latency", "--progress", "none"});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    resp.signal(SIGTERM);
    CHECK(resp.wait() == 1);
    const std::string out = file_text(log);
    INFO("responder:\n" << out);
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex("done: handled ([0-9]+),")));
    const std::uint64_t handled = std::stoull(m[1]);
    CHECK(handled >= 50); // answered all along
    const std::string n = std::to_string(2 * handled);
    CHECK_THAT(out, ContainsSubstring("trace: 0 markers written to /dev/full, " + n + " failed\n"));
    CHECK_THAT(out, ContainsSubstring(
                        "irqloop-responder: write trace markers to '/dev/full': " + n + " of " + n +
                        " failed, the first with: No space left on device (check "
                        "tracefs, or the disk of a file given with --trace-marker)"));
}

} // namespace responder_trace_test
