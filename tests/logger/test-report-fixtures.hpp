// SPDX-License-Identifier: MIT
// Helpers of the [report] tests: databases with known contents built through the real
// recorder and store from deterministic synthetic samples, in-process command capture, golden
// files.
#pragma once

#include "breakdown-store.hpp"
#include "compare-command.hpp"
#include "error.hpp"
#include "export-command.hpp"
#include "golden.hpp"
#include "plot-command.hpp"
#include "plot.hpp"
#include "recorder.hpp"
#include "report-command.hpp"
#include "run-process.hpp"
#include "store.hpp"
#include "temp-dir.hpp"
#include "worst-command.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace irqloop::logger::report_test
{

using irqloop::test::process_result;
using irqloop::test::run_shell;
using irqloop::test::temp_dir;

/** @brief 2026-01-01 00:00:00 UTC: every fixture run starts at a fixed instant. */
constexpr std::int64_t epoch_ns = 1'767'225'600'000'000'000;

/**
 * @brief splitmix64: the same numbers on every platform and library (std::*_distribution
 * are implementation-defined, which would make golden files compiler-dependent).
 */
class rng final
{
public:
    explicit rng(std::uint64_t seed) : s_(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /** @brief Uniform in [0, 1). */
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

private:
    std::uint64_t s_;
};

/** @brief A synthetic target: latency = min_ns + spread_ns * bell(0..1) with rare spikes. */
struct model final {
    double min_ns = 7000;
    double spread_ns = 1000; ///< sum of 4 uniforms / 4: a bell over [min, min + spread]
    double spike_p = 0;
    double spike_lo_ns = 0, spike_hi_ns = 0;
    double lost_p = 0;
    double disturbed_p = 0;
    double warmup_extra_ns = 0; ///< added to the first sample: a cold-cache first response
};

/** @brief A sample the logger was stopped around (RT throttling's 50 ms pause, an SMI): recorded
 *  disturbed, its upper bound @p latency_ns, its bracket @p bracket_ns holding the pause. */
struct stalled_sample final {
    std::uint64_t seq = 0;
    std::int64_t latency_ns = 0, bracket_ns = 0;
};

/** @brief One run to record. */
struct run_spec final {
    std::string uuid;
    std::string label;
    db::run_kind kind = db::run_kind::measure;
    db::run_status status = db::run_status::complete; ///< running: left open, like a killed logger
    std::int64_t start_unix_ns = epoch_ns;
    std::uint64_t samples = 1000;
    std::int64_t interval_ns = 1'000'000;
    std::int64_t stats_interval_ns = 10'000'000'000;
    std::int64_t threshold_ns = 30'000;
    std::uint64_t warmup = 100;
    std::string backend = "sim:model=synthetic";
    std::string target, load;
    bool raw = false;
    std::uint64_t seed = 1;
    model m;
    std::vector<stalled_sample> stalled; ///< replace the model's draw at these seqs
    std::vector<std::pair<std::string, std::string>> extra_metadata; ///< after sim.model
    std::string rt_settings = "sched=fifo:80 mlockall=yes cpu=1";    ///< "... cpu=any": unpinned
};

/** @brief A run numbered @p n: uuid 00000000-0000-4000-8000-000000000NNN, seed @p n. */
inline run_spec numbered_spec(unsigned n, std::string label, std::uint64_t samples)
{
    run_spec s;
    char uuid[40];
    std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012u", n);
    s.uuid = uuid;
    s.label = std::move(label);
    s.samples = samples;
    s.seed = n;
    return s;
}

/** @brief Record @p spec into @p st through the real recorder; returns the run id. */
inline std::int64_t record_run(db::store& st, const run_spec& spec)
{
    db::run_row row;
    row.uuid = spec.uuid;
    row.label = spec.label;
    row.kind = spec.kind;
    row.start_unix_ns = spec.start_unix_ns;
    row.command_line = "irqloop run --label '" + spec.label + "' (test fixture)";
    row.version = "0.0.0-fixture";
    row.uname = "Linux 6.1.0-rt fixture #1 SMP PREEMPT_RT x86_64";
    row.hostname = "logger1";
    row.backend = spec.backend;
    row.clock_source = "tsc";
    row.clock_hz = 1e9;
    row.clock_read_ns = 12.5;
    row.interval_ns = spec.interval_ns;
    row.timeout_ns = 10'000'000;
    row.threshold_ns = spec.threshold_ns;
    row.gap_limit_ns = 1000;
    row.stats_interval_ns = spec.stats_interval_ns;
    row.warmup_samples = spec.warmup;
    row.samples_requested = spec.samples;
    row.rt_settings = spec.rt_settings;
    row.target = spec.target;
    row.load = spec.load;
    row.metadata = {{"sim.model", "synthetic seed=" + std::to_string(spec.seed)}};
    row.metadata.insert(row.metadata.end(), spec.extra_metadata.begin(), spec.extra_metadata.end());
    const std::int64_t id = st.begin_run(row);

    recorder_config cfg;
    cfg.clock.source = "tsc";
    cfg.clock.hz = 1e9; // cycles are nanoseconds
    cfg.threshold_ns = spec.threshold_ns;
    cfg.warmup_samples = spec.warmup;
    cfg.stats_interval_ns = spec.stats_interval_ns;
    cfg.gap_limit_ns = 1000;
    cfg.top_k = 50;
    cfg.max_exceedances = 1000;
    cfg.raw = spec.raw;
    cfg.anchor_unix_ns = spec.start_unix_ns;
    cfg.anchor_cycles = 5'000'000;
    recorder rec(cfg, &st, id);

    rng r(spec.seed);
    const auto& m = spec.m;
    std::vector<sample> batch;
    std::uint64_t t0 = cfg.anchor_cycles + 1000;
    for (std::uint64_t seq = 0; seq < spec.samples; ++seq) {
        sample s{};
        s.seq = seq;
        s.t0_cycles = t0;
        t0 += std::uint64_t(spec.interval_ns);
        s.flags = (seq % 2 == 0) ? db::flag_rising : 0u;
        s.max_gap_cycles = 20 + std::uint32_t(r.uniform() * 20);
        const double bell = (r.uniform() + r.uniform() + r.uniform() + r.uniform()) / 4;
        double lat = m.min_ns + m.spread_ns * bell;
        if (r.uniform() < m.spike_p)
            lat = m.spike_lo_ns + (m.spike_hi_ns - m.spike_lo_ns) * r.uniform();
        if (seq == 0)
            lat += m.warmup_extra_ns;
        const double u = r.uniform();
        if (u < m.lost_p) {
            s.flags |= db::flag_lost;
            lat = 0;
        } else if (u < m.lost_p + m.disturbed_p) {
            s.flags |= db::flag_disturbed;
            s.max_gap_cycles = 5000;
        }
        s.latency_cycles = std::uint64_t(lat);
        // The bracket: the two polls around the answer, or the stall that disturbed it.
        s.bracket_cycles = (s.flags & db::flag_lost)
                               ? 0
                               : std::min<std::uint32_t>(std::uint32_t(lat), 2 * s.max_gap_cycles);
        for (const auto& st : spec.stalled)
            if (st.seq == seq) {
                s.flags = (s.flags & db::flag_rising) | db::flag_disturbed;
                s.latency_cycles = std::uint64_t(st.latency_ns);
                s.bracket_cycles = std::uint32_t(st.bracket_ns);
                s.max_gap_cycles = std::uint32_t(st.bracket_ns);
            }
        batch.push_back(s);
        if (batch.size() == 256) {
            rec.add(batch);
            batch.clear();
        }
    }
    rec.add(batch);
    if (spec.status == db::run_status::running)
        return id; // committed intervals only: the run stays 'running', like a killed logger
    // End half an interval after the last stimulus: never exactly on a stats boundary.
    rec.finish(t0 + std::uint64_t(spec.interval_ns) / 2);
    st.finish_run(id, spec.status,
                  spec.start_unix_ns +
                      std::int64_t(t0 + std::uint64_t(spec.interval_ns) / 2 - cfg.anchor_cycles));
    return id;
}

/**
 * @brief A breakdown stored with the sample of rank @p rank of run @p run_id, as irqloop
 * explain --store writes it: the trace @p trace, its largest blocker @p kind @p name of
 * @p blocker_ns (none when @p kind is empty).
 */
inline void store_golden_breakdown(db::store& st, std::int64_t run_id, int rank,
                                   const std::string& kind, const std::string& name,
                                   std::int64_t blocker_ns)
{
    SQLite::Statement q(st.database(),
                        "SELECT seq, latency_ns FROM worst WHERE run_id = ? AND rank = ?");
    q.bind(1, run_id);
    q.bind(2, rank);
    REQUIRE(q.executeStep());
    analysis::stored_breakdown b;
    b.seq = static_cast<std::uint64_t>(q.getColumn(0).getInt64());
    b.latency_ns = q.getColumn(1).getInt64();
    b.unix_ns = epoch_ns + 400'000'000'000;
    b.trace = {"trace-run" + std::to_string(run_id) + ".txt", 123'456, "0123456789abcdef"};
    b.trace_events = 5000;
    b.paired = 900;
    b.residual_ns = 812.5;
    b.drift_ppm = 21.25;
    b.cpu = 1;
    if (!kind.empty())
        b.largest = analysis::blocker{kind, name, 1000, blocker_ns, blocker_ns - 500, true};
    b.task = "hackbench-812 (prio 120)";
    b.dropped_events = 0; // the trace noted no drop in its window
    b.parts = {{"before the handler", b.latency_ns - 6000, "logger", false},
               {"handler to response", 6000, "logger", false},
               {"handler ran", 4200, "target", true}};
    analysis::store_breakdowns(st, run_id, {b});
}

/**
 * @brief The golden database: a floor run, two labelled measurement runs (one of them with
 * two runs under one label), an interrupted run, a short --raw run and a running one.
 * Ids: 1 floor, 2 rt-idle, 3 rt-hackbench, 4 rt-idle (second), 5 interrupted, 6 raw-short,
 * 7 running. Breakdowns (irqloop explain --store) are stored with run 2's two worst samples
 * (the first an IRQ, the second with nothing traced) and run 6's worst (an IRQs-off section).
 */
inline void build_golden_db(const std::string& path)
{
    std::filesystem::remove(path);
    db::store st(path);
    run_spec f;
    f.uuid = "00000000-0000-4000-8000-000000000001";
    f.label = "loopback";
    f.kind = db::run_kind::floor;
    f.samples = 2000;
    f.interval_ns = 100'000;
    f.warmup = 10;
    f.seed = 11;
    f.m = {820, 160};
    record_run(st, f);

    run_spec a;
    a.uuid = "00000000-0000-4000-8000-000000000002";
    a.label = "rt-idle";
    a.start_unix_ns = epoch_ns + 60'000'000'000;
    a.samples = 30'000;
    a.target = "imx8mp PREEMPT_RT 6.6";
    a.load = "None";
    a.seed = 22;
    a.m = {5200, 1400, 0.002, 20'000, 70'000, 0.0005, 0.0005, 40'000};
    record_run(st, a);

    run_spec b = a;
    b.uuid = "00000000-0000-4000-8000-000000000003";
    b.label = "rt-hackbench";
    b.start_unix_ns = epoch_ns + 120'000'000'000;
    b.samples = 20'000;
    b.load = "hackbench";
    b.seed = 33;
    b.m = {5600, 3000, 0.004, 15'000, 120'000, 0.001, 0.001, 0};
    record_run(st, b);

    run_spec a2 = a;
    a2.uuid = "00000000-0000-4000-8000-000000000004";
    a2.start_unix_ns = epoch_ns + 180'000'000'000;
    a2.samples = 10'000;
    a2.seed = 44;
    record_run(st, a2);

    run_spec c = b;
    c.uuid = "00000000-0000-4000-8000-000000000005";
    c.label = "rt-ping";
    c.status = db::run_status::interrupted;
    c.load = "Ping";
    c.start_unix_ns = epoch_ns + 240'000'000'000;
    c.samples = 15'000;
    c.seed = 55;
    c.m = {5400, 2000, 0.001, 30'000, 50'000, 0, 0, 0};
    record_run(st, c);

    run_spec d;
    d.uuid = "00000000-0000-4000-8000-000000000006";
    d.label = "raw-short";
    d.start_unix_ns = epoch_ns + 300'000'000'000;
    d.samples = 40;
    d.interval_ns = 100'000;
    d.warmup = 4;
    d.raw = true;
    d.seed = 66;
    d.m = {3000, 500, 0.05, 31'000, 40'000, 0.05, 0, 0};
    record_run(st, d);

    run_spec e = b;
    e.uuid = "00000000-0000-4000-8000-000000000007";
    e.label = "still-running";
    e.status = db::run_status::running;
    e.start_unix_ns = epoch_ns + 360'000'000'000;
    e.samples = 25'000; // two 10 s intervals committed, the third still open
    e.seed = 77;
    record_run(st, e);

    store_golden_breakdown(st, 2, 1, "irq", "irq 45 eth0", 31'200);
    store_golden_breakdown(st, 2, 2, "", "", 0);
    store_golden_breakdown(st, 6, 1, "irqs off", "raw_spin_lock_irqsave+0x30/0x60", 12'400);
}

/**
 * @brief Run a command function in-process with @p args (args[0] is the command name): its
 * status, what it printed to std::cout, and in `err` the irqloop::error message if it threw.
 */
inline process_result run_cmd(int (*fn)(int, char**), std::vector<std::string> args)
{
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    process_result c;
    try {
        c.status = fn(int(args.size()), argv.data());
    } catch (const irqloop::error& e) {
        c.status = e.status();
        c.err = e.message();
    } catch (...) {
        std::cout.rdbuf(old);
        throw;
    }
    std::cout.rdbuf(old);
    c.out = out.str();
    return c;
}

/** @brief Whether @p tool is on PATH. */
inline bool have(const std::string& tool)
{
    return irqloop::test::run_shell("command -v " + tool + " >/dev/null 2>&1").status == 0;
}

/** @brief SKIP the test unless gnuplot and xmllint (which checks its SVG) are installed. */
inline void skip_without_gnuplot_and_xmllint()
{
    if (find_gnuplot().empty())
        SKIP("gnuplot is not installed (apt-get install gnuplot-nox)");
    if (!have("xmllint"))
        SKIP("xmllint is not installed (apt-get install libxml2-utils)");
}

/** @brief Replace every occurrence of @p from in @p s. */
inline std::string replace_all(std::string s, const std::string& from, const std::string& to)
{
    for (std::size_t p = 0; !from.empty() && (p = s.find(from, p)) != std::string::npos;
         p += to.size())
        s.replace(p, from.size(), to);
    return s;
}

/** @brief The words of @p s, split at white space (a command line of a table-driven test). */
inline std::vector<std::string> split_ws(const std::string& s)
{
    std::vector<std::string> v;
    std::stringstream in(s);
    for (std::string w; in >> w;)
        v.push_back(w);
    return v;
}

/**
 * @brief Compare @p actual with tests/golden/report/@p name. With IRQLOOP_UPDATE_GOLDEN=1 in
 * the environment the file is (re)written instead, and the test warns: review `git diff`.
 */
inline void check_golden(const std::string& name, const std::string& actual)
{
    const std::string path = irqloop::test::golden_path("report", name);
    if (irqloop::test::rewrite_golden(path, actual))
        return;
    std::ifstream in(path, std::ios::binary);
    INFO("golden file " << path
                        << " (regenerate: IRQLOOP_UPDATE_GOLDEN=1 irqloop-tests '[report]')");
    REQUIRE(in.good());
    std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (expected != actual) {
        const std::string got = std::string(IRQLOOP_BINARY_DIR) + "/golden-actual-" + name;
        std::ofstream(got, std::ios::binary) << actual;
        std::istringstream e(expected), a(actual);
        std::string le, la;
        int line = 0;
        while (true) {
            ++line;
            const bool me = bool(std::getline(e, le)), ma = bool(std::getline(a, la));
            if (!me && !ma)
                break;
            if (le != la || me != ma) {
                INFO("first difference at line " << line << "\nexpected: " << le << "\nactual:   "
                                                 << la << "\nwhole output in " << got);
                CHECK(le == la);
                break;
            }
        }
        FAIL("output differs from " << path);
    }
}

} // namespace irqloop::logger::report_test
