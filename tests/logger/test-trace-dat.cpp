// SPDX-License-Identifier: MIT
// irqloop explain on trace-cmd's .dat file (issue 26): a real .dat recorded in the QEMU testbed
// (stock kernel, kernel responder, scenario trace-dat), its text as 'trace-cmd report -N -t'
// printed it there and the run's results file (tests/data/trace-dat/, xz-compressed): the .dat
// reads into the same events as its text and explain gives the same output on both; a file
// that is not trace-cmd's, a .dat cut at several points and a .dat with no responder IRQ are
// refused (exit 2) with the results file left byte for byte as it was.
#include "error.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"
#include "trace-dat.hpp"
#include "trace-text.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>
#include <map>

using irqloop::analysis::read_trace_dat;
using irqloop::analysis::read_trace_file;
using irqloop::analysis::read_trace_text;
using irqloop::analysis::trace_dat_supported;
using irqloop::analysis::trace_kind;
using irqloop::test::read_bytes;
using irqloop::test::run_irqloop;
using irqloop::test::run_shell;
using irqloop::test::shell_program;
using irqloop::test::temp_dir;

namespace trace_dat_test
{

const std::string fixture_dir = std::string(IRQLOOP_SOURCE_DIR) + "/tests/data/trace-dat/";

/** The fixture @p name (stored as NAME.xz) unpacked into @p dir; its path. */
std::string unpack(const temp_dir& dir, const std::string& name)
{
    const auto to = dir.file(name);
    const auto r =
        run_shell("xz -dc " + shell_program(fixture_dir + name + ".xz") + " > '" + to + "'");
    INFO(r.out);
    REQUIRE(r.status == 0);
    return to;
}

void write_bytes(const std::string& path, const std::string& bytes)
{
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes;
    REQUIRE(f.good());
}

/** explain's text output with the trace's name (its first line's end) left out. */
std::string without_trace_name(const std::string& out, const std::string& trace)
{
    auto s = out;
    const auto at = s.find(", trace " + trace + "\n");
    REQUIRE(at != std::string::npos);
    s.erase(at, 8 + trace.size());
    return s;
}

/**
 * How many of @p dat's events differ from @p txt's at the same index, in any field but the
 * text's line (the first 3 noted for a failure's message); both hold as many events.
 */
std::size_t differing_events(const irqloop::analysis::trace_text& dat,
                             const irqloop::analysis::trace_text& txt)
{
    std::size_t differ = 0;
    for (std::size_t i = 0; i < dat.events.size(); ++i) {
        const auto &a = dat.events[i], &b = txt.events[i];
        if (a.t_ns != b.t_ns || a.cpu != b.cpu || a.kind != b.kind || a.task != b.task ||
            a.number != b.number || a.value != b.value || a.name != b.name) {
            if (++differ <= 3)
                UNSCOPED_INFO("event " << i << ": .dat " << a.t_ns << " cpu " << a.cpu << " "
                                       << a.task << " " << int(a.kind) << " " << a.number << " "
                                       << a.value << " '" << a.name << "'; text " << b.t_ns
                                       << " cpu " << b.cpu << " " << b.task << " " << int(b.kind)
                                       << " " << b.number << " " << b.value << " '" << b.name
                                       << "' (line " << b.line << ")");
        }
    }
    return differ;
}

/** How many events of each kind @p t holds. */
std::map<irqloop::analysis::trace_kind, std::size_t>
kinds_of(const irqloop::analysis::trace_text& t)
{
    std::map<irqloop::analysis::trace_kind, std::size_t> kinds;
    for (const auto& e : t.events)
        ++kinds[e.kind];
    return kinds;
}

} // namespace trace_dat_test

TEST_CASE("explain: trace .dat: the testbed's .dat reads into the same events as 'trace-cmd "
          "report -N -t' of it",
          "[explain]")
{
    using namespace trace_dat_test;
    if (!trace_dat_supported())
        SKIP("this irqloop is built without libtracecmd (IRQLOOP_HAVE_TRACECMD 0)");
    temp_dir dir;
    const auto dat_path = unpack(dir, "trace.dat"), txt_path = unpack(dir, "trace.txt");
    REQUIRE(irqloop::analysis::is_trace_dat(dat_path));
    CHECK_FALSE(irqloop::analysis::is_trace_dat(txt_path));
    const auto dat = read_trace_dat(dat_path);
    const auto txt = read_trace_text(txt_path);
    CHECK(dat.event_lines == txt.event_lines);
    CHECK(dat.lost_events == txt.lost_events);
    CHECK(dat.first_ns == txt.first_ns);
    CHECK(dat.last_ns == txt.last_ns);
    REQUIRE(dat.events.size() == txt.events.size());
    CHECK(differing_events(dat, txt) == 0);
    auto kinds = kinds_of(dat);
    // What the guest traced: the responder's 300 edges and their exits, the scheduler's
    // switches and wake-ups, the timer softirq; the stock kernel has no preemptirq events.
    std::size_t responder = 0;
    for (const auto& e : dat.events)
        responder += e.kind == trace_kind::irq_entry && e.name == "irqloop_responder";
    CHECK(responder == 300);
    CHECK(kinds[trace_kind::irq_exit] == kinds[trace_kind::irq_entry]);
    CHECK(kinds[trace_kind::sched_switch] > 0);
    CHECK(kinds[trace_kind::sched_wakeup] > 0);
    CHECK(kinds[trace_kind::softirq_entry] > 0);
    CHECK(kinds[trace_kind::irq_disable] == 0);
    // The dispatch by magic: the same .dat under a text's name still reads as a .dat.
    const auto renamed = dir.file("trace.txt.also");
    write_bytes(renamed, read_bytes(dat_path));
    CHECK(read_trace_file(renamed).events.size() == dat.events.size());
    // The same trace in trace-cmd's version-6 file (trace-cmd convert --file-version 6).
    const auto v6 = read_trace_dat(unpack(dir, "trace-v6.dat"));
    REQUIRE(v6.events.size() == dat.events.size());
    CHECK(v6.event_lines == dat.event_lines);
    CHECK(v6.events.back().t_ns == dat.events.back().t_ns);
    CHECK(v6.events.back().task == dat.events.back().task);
}

TEST_CASE("explain: trace .dat: explain on the .dat and on its text gives the same pairing and "
          "breakdowns; bad .dat files exit 2 with the results file untouched",
          "[explain]")
{
    using namespace trace_dat_test;
    if (!trace_dat_supported())
        SKIP("this irqloop is built without libtracecmd (IRQLOOP_HAVE_TRACECMD 0)");
    temp_dir dir;
    const auto dat = unpack(dir, "trace.dat"), txt = unpack(dir, "trace.txt");
    const auto db = unpack(dir, "dat.db");
    const auto before = read_bytes(db);

    const auto on_dat = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", dat});
    const auto on_txt = run_irqloop({"explain", "--db", db, "--run", "1", "--trace", txt});
    INFO(on_dat.out << on_dat.err << on_txt.err);
    REQUIRE(on_dat.status == 0);
    REQUIRE(on_txt.status == 0);
    CHECK(without_trace_name(on_dat.out, dat) == without_trace_name(on_txt.out, txt));
    CHECK(on_dat.out.find("paired: 300 of 300 stimuli; 0 edges trace-only, 0 stimuli with no "
                          "edge, 0 outside the trace (it covers seq 0 to 299)") !=
          std::string::npos);
    // One breakdown, field by field (the worst sample's), in JSON from both.
    const auto j_dat = nlohmann::json::parse(
        run_irqloop({"explain", "--db", db, "--run", "1", "--trace", dat, "--worst", "1", "--json"})
            .out);
    auto j_txt = nlohmann::json::parse(
        run_irqloop({"explain", "--db", db, "--run", "1", "--trace", txt, "--worst", "1", "--json"})
            .out);
    REQUIRE(j_dat["samples"].size() == 1);
    CHECK(j_dat["samples"][0]["in_trace"] == true);
    CHECK(j_dat["samples"][0]["handler_ns"].is_number());
    CHECK(j_dat["alignment"]["paired"] == 300);
    j_txt["trace"] = j_dat["trace"];
    CHECK(j_dat == j_txt);
    CHECK((read_bytes(db) == before)); // not decomposed: a failure prints no file

    // Refused, with --store too: exit 2, the cause, nothing on stdout, the file as it was.
    auto refused = [&](const std::string& trace, const std::string& why) {
        const auto b =
            run_irqloop({"explain", "--db", db, "--run", "1", "--trace", trace, "--store"});
        INFO(trace << ": " << b.out << b.err);
        CHECK(b.status == 2);
        CHECK(b.err.find("irqloop: explain: read trace '" + trace + "'") != std::string::npos);
        CHECK(b.err.find(why) != std::string::npos);
        CHECK(b.out.empty());
        CHECK((read_bytes(db) == before)); // not decomposed: a failure prints no file
    };
    // Cut: inside the magic (then it is no .dat: read as text, a line with no end), in the
    // first header, in the event formats, in the CPU data, in the last sections, one byte
    // short; the file as recorded (version 7, zstd) and as 'trace-cmd convert --file-version
    // 6' wrote it (libtracecmd itself crashed on a version-6 file cut in its CPU data).
    for (const auto& name : {dat, unpack(dir, "trace-v6.dat")}) {
        const auto whole = read_bytes(name);
        REQUIRE(whole.size() > 20000);
        for (const std::size_t keep :
             {std::size_t(6), std::size_t(14), std::size_t(3000), whole.size() / 2,
              whole.size() - 5000, whole.size() - 120, whole.size() - 1}) {
            const auto cut = dir.file("cut-" + std::to_string(keep) + ".dat");
            write_bytes(cut, whole.substr(0, keep));
            refused(cut, "truncated");
        }
    }
    refused(unpack(dir, "no-responder.dat"), "it has no irq_handler_entry of 'irqloop_responder'");
    // Not a trace-cmd file, read as one: refused by the reader itself.
    try {
        (void)read_trace_dat(txt);
        FAIL("a text read as a .dat was accepted");
    } catch (const irqloop::error& e) {
        CHECK(e.status() == irqloop::exit_usage);
        CHECK(e.message().find("it is not a trace-cmd file") != std::string::npos);
    }
}

TEST_CASE("explain: trace .dat: the userspace responder's trace_marker writes read as its text "
          "reads them",
          "[explain]")
{
    using namespace trace_dat_test;
    if (!trace_dat_supported())
        SKIP("this irqloop is built without libtracecmd (IRQLOOP_HAVE_TRACECMD 0)");
    temp_dir dir;
    // 50 edges of irqloop-responder --trace in the testbed: 100 markers (ftrace:print records).
    const auto dat = read_trace_dat(unpack(dir, "markers.dat"));
    const auto txt = read_trace_text(unpack(dir, "markers.txt"));
    CHECK(dat.event_lines == txt.event_lines);
    REQUIRE(dat.events.size() == txt.events.size());
    CHECK(differing_events(dat, txt) == 0);
    auto kinds = kinds_of(dat);
    CHECK(kinds[trace_kind::responder_edge] == 50);
    CHECK(kinds[trace_kind::responder_response] == 50);
    CHECK(dat.other_markers == txt.other_markers);
    // seq 1 to 50 in order, each response not before its edge, with the edge's level.
    std::int64_t want = 1;
    const irqloop::analysis::trace_event* edge = nullptr;
    for (const auto& e : dat.events) {
        if (e.kind == trace_kind::responder_edge) {
            CHECK(e.number == want);
            edge = &e;
        } else if (e.kind == trace_kind::responder_response) {
            REQUIRE(edge);
            CHECK(e.number == want);
            CHECK(e.value == edge->value);
            CHECK(e.t_ns >= edge->t_ns); // under TCG both may read the same ns
            ++want;
        }
    }
    CHECK(want == 51);
}

TEST_CASE("explain: trace .dat: the kernel responder's irqloop tracepoints read as its text "
          "reads them",
          "[explain]")
{
    using namespace trace_dat_test;
    if (!trace_dat_supported())
        SKIP("this irqloop is built without libtracecmd (IRQLOOP_HAVE_TRACECMD 0)");
    temp_dir dir;
    // The scenario's run with the kernel responder's own events (trace-cmd record -e irqloop).
    const auto dat = read_trace_dat(unpack(dir, "kmod-events.dat"));
    const auto txt = read_trace_text(unpack(dir, "kmod-events.txt"));
    CHECK(dat.event_lines == txt.event_lines);
    REQUIRE(dat.events.size() == txt.events.size());
    CHECK(differing_events(dat, txt) == 0);
    auto kinds = kinds_of(dat);
    CHECK(kinds[trace_kind::responder_edge] == 300);
    CHECK(kinds[trace_kind::responder_response] == 300);
    CHECK(kinds[trace_kind::irq_entry] >= 300);
    std::int64_t last = 0;
    for (const auto& e : dat.events)
        if (e.kind == trace_kind::responder_edge) {
            CHECK(e.number == last + 1);
            last = e.number;
        }
}

TEST_CASE("explain: trace .dat: events the ring buffer dropped, as a CPU page notes them, are "
          "counted",
          "[explain]")
{
    using namespace trace_dat_test;
    if (!trace_dat_supported())
        SKIP("this irqloop is built without libtracecmd (IRQLOOP_HAVE_TRACECMD 0)");
    temp_dir dir;
    auto bytes = read_bytes(unpack(dir, "trace-v6.dat"));
    // CPU 0's data start at 24576 in this file ('trace-cmd dump --flyrecord'); its first page's
    // header: a u64 timestamp and a u64 commit word (the data's size in its low 27 bits). The
    // kernel marks a page after dropped events with bit 31 of the commit word, and with bit 30
    // when it stored their count (a u64) right after the page's data: 7 events here, as
    // 'trace-cmd report' then prints "CPU:0 [7 EVENTS DROPPED]".
    constexpr std::size_t page = 24576;
    REQUIRE(bytes.size() > page + 4096);
    auto word = [&](std::size_t at) {
        std::uint64_t v = 0;
        for (std::size_t k = 0; k < 8; ++k)
            v |= std::uint64_t(static_cast<unsigned char>(bytes[at + k])) << (8 * k);
        return v;
    };
    auto put = [&](std::size_t at, std::uint64_t v) {
        for (std::size_t k = 0; k < 8; ++k)
            bytes[at + k] = char((v >> (8 * k)) & 0xff);
    };
    const auto commit = word(page + 8);
    const auto size = commit & ((1u << 27) - 1);
    REQUIRE(16 + size + 8 <= 4096);
    REQUIRE(read_trace_dat(unpack(dir, "trace-v6.dat")).lost_events == 0);
    put(page + 8, commit | (1ull << 31) | (1ull << 30));
    put(page + 16 + size, 7);
    const auto lost = dir.file("lost.dat");
    write_bytes(lost, bytes);
    const auto t = read_trace_dat(lost);
    CHECK(t.lost_events == 7);
    REQUIRE(t.gaps.size() == 1); // before the page's first record, on its CPU
    CHECK(t.gaps[0].events == 7);
    CHECK(t.gaps[0].before_ns != std::numeric_limits<std::int64_t>::max());
    CHECK(t.events.size() == read_trace_dat(unpack(dir, "trace-v6.dat")).events.size());
}
