// SPDX-License-Identifier: MIT
// Helpers shared by the [db] tests: a tmpfs, file snapshots, the sqlite3 shell,
// and small runs with hand-picked figures.
#pragma once

#include "error.hpp"
#include "read.hpp"
#include "run-process.hpp"
#include "store.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <sys/mount.h>
#include <vector>

namespace irqloop::db::test
{

using irqloop::test::process_result;
using irqloop::test::run_shell;
using irqloop::test::temp_dir;

/** @brief A tmpfs mounted on a fresh directory, unmounted on destruction. */
class tmpfs_mount final
{
public:
    /** @return nullopt-like: ok() false with reason() when mounting is impossible here. */
    explicit tmpfs_mount(const std::string& options)
    {
        if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, options.c_str()) == 0)
            mounted_ = true;
        else
            reason_ = std::string("cannot mount a tmpfs (") + std::strerror(errno) +
                      "); needs root or CAP_SYS_ADMIN";
    }
    ~tmpfs_mount()
    {
        if (mounted_)
            ::umount2(dir_.path().c_str(), MNT_DETACH);
    }
    bool ok() const { return mounted_; }
    const std::string& reason() const { return reason_; }
    std::string file(const std::string& name) const { return dir_.file(name); }
    const std::string& path() const { return dir_.path(); }
    /** @brief Remount read-only (for the unwritable-directory refusal). */
    bool make_read_only()
    {
        return ::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
    }

private:
    temp_dir dir_;
    bool mounted_ = false;
    std::string reason_;
};

/** @brief The whole content of a file; nullopt if it does not exist. */
inline std::optional<std::string> file_bytes(const std::string& path)
{
    if (!std::filesystem::is_regular_file(path))
        return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_file(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
    REQUIRE(out.good());
}

/** @brief Run @p sql through the real sqlite3 shell on @p db (stops at the first error). */
inline process_result sqlite3_shell(const std::string& db, const std::string& sql,
                                    const std::string& scratch_dir)
{
    const std::string script = scratch_dir + "/script.sql";
    write_file(script, sql);
    return run_shell("sqlite3 -bail -batch '" + db + "' < '" + script + "'");
}

/** @brief PRAGMA integrity_check through a fresh read-only connection: "ok" when healthy. */
inline std::string integrity(const std::string& path)
{
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    return d.execAndGet("PRAGMA integrity_check").getString();
}

/** @brief Every row of @p q on @p path as text, a line a row, columns joined by '|'. */
inline std::string rows_text(const std::string& path, const std::string& q)
{
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    SQLite::Statement s(d, q);
    std::string out;
    while (s.executeStep()) {
        for (int c = 0; c < s.getColumnCount(); ++c)
            out += (c ? "|" : "") + s.getColumn(c).getString();
        out += '\n';
    }
    return out;
}

/** @brief Require the refusal message form and return the error for further checks. */
inline void check_refusal(const irqloop::error& e, const std::string& path)
{
    CHECK(e.message().starts_with("irqloop: open database '" + path + "': "));
    CHECK(!e.why().empty());
    CHECK(!e.hint().empty());
    CHECK(e.status() == irqloop::exit_usage); // every refused file: docs/commands/exit-status.md
}

/** @brief The start of the hand-made runs: 2026-09-21, in ns since the epoch. */
constexpr std::int64_t t_start = 1'790'000'000'000'000'000;

/** @brief A run with every field set to something distinct. */
inline run_row sample_run(const std::string& uuid, const std::string& label,
                          std::int64_t start_unix_ns, run_kind kind = run_kind::measure)
{
    run_row r;
    r.uuid = uuid;
    r.label = label;
    r.kind = kind;
    r.start_unix_ns = start_unix_ns;
    r.command_line = "irqloop run --backend sim --label " + label;
    r.version = "0.1.0";
    r.uname = "Linux 6.1.0-rt PREEMPT_RT x86_64";
    r.hostname = "logger-1";
    r.backend = "sim:model=normal";
    r.clock_source = "tsc";
    r.clock_hz = 2'995'123'456.5;
    r.clock_read_ns = 13.25;
    r.interval_ns = 10'000;
    r.jitter_ns = 2'000;
    r.timeout_ns = 1'000'000;
    r.threshold_ns = 20'000;
    r.gap_limit_ns = 5'000;
    r.stats_interval_ns = 10'000'000'000;
    r.warmup_samples = 1000;
    r.samples_requested = 100'000'000;
    r.duration_ns = 0;
    r.rt_settings = "sched=fifo:80 mlockall=yes cpu=1";
    r.target = "imx8mp, 6.1-rt";
    r.load = "hackbench -l 100000";
    r.metadata = {{"poll_ns", "35"}, {"chip", "gpiochip0"}};
    return r;
}

/** @brief Owns the rows an interval_commit points to. */
struct commit_data {
    interval_row interval;
    summary_row summary;
    std::vector<sample_row> exceedances;
    std::vector<sample_row> worst;
    std::vector<bucket_row> histogram;
    std::vector<event_row> events;

    interval_commit view() const
    {
        return interval_commit{interval, summary, exceedances, worst, histogram, events};
    }
};

/**
 * @brief A plausible commit for interval @p idx of a run started at @p start: 1000 samples
 * per interval, one exceedance per interval of 25 us + idx, figures derived from idx so that
 * every column differs between intervals.
 */
inline commit_data simple_commit(std::uint64_t idx, std::int64_t start,
                                 std::int64_t step_ns = 10'000'000'000)
{
    commit_data c;
    const std::int64_t i = static_cast<std::int64_t>(idx);
    const std::int64_t t0 = start + i * step_ns;
    c.interval = interval_row{idx,        t0,         t0 + step_ns, 1000,     4000 + i,
                              25'000 + i, 5000.5 + i, 300.25 + i,   4900 + i, 9000 + i,
                              15'000 + i, 1,          2 + idx,      3 + idx,  idx};
    auto n = idx + 1;
    c.summary.samples = 1000 * n;
    c.summary.stimuli = 1005 * n;
    c.summary.lost = 2 * n;
    c.summary.late = n;
    c.summary.disturbed = 3 * n;
    c.summary.overflows = idx;
    c.summary.above_threshold = n;
    c.summary.rising = 500 * n;
    c.summary.falling = 500 * n;
    c.summary.min_ns = 4000;
    c.summary.max_ns = 25'000 + i;
    c.summary.warm_max_ns = 24'000 + i;
    c.summary.has_warm_max = true;
    c.summary.mean_ns = 5000.5 + i;
    c.summary.stddev_ns = 300.25;
    c.summary.p50_ns = 4900;
    c.summary.p99_ns = 9000;
    c.summary.p999_ns = 15'000;
    c.summary.p9999_ns = 20'000 + i;
    c.summary.p999999_ns = 25'000 + i;
    c.summary.end_unix_ns = t0 + step_ns;
    c.summary.exceedances_dropped = idx;
    const std::uint64_t seq = idx * 1005 + 500;
    c.exceedances = {sample_row{seq, t0 + 5'000'000'000, 25'000 + i, 40, flag_rising}};
    for (std::int64_t k = i; k >= 0; --k) // the exceedances so far, worst first
        c.worst.push_back(sample_row{static_cast<std::uint64_t>(k) * 1005 + 500,
                                     start + k * step_ns + 5'000'000'000, 25'000 + k, 40,
                                     flag_rising});
    c.histogram = {bucket_row{4000, 4004, 10 * n}, bucket_row{5000, 5005, 900 * n},
                   bucket_row{25'000, 25'025, n}};
    c.events = {event_row{t0 + 1'000'000, seq - 10, "lost", 1, "no response in 1 ms"}};
    return c;
}

/** @brief Ids of the runs populate() writes. */
struct populated {
    std::int64_t idle = 0, load = 0, floor = 0;
};

constexpr std::int64_t populate_start = 1'796'008'790'000'000'000; // 2026-11-30 03:19:50 UTC

/**
 * @brief Three runs with known figures: "idle" (3 intervals of simple_commit, 1000 raw samples,
 * complete), "load" an hour later (2 intervals, its latencies 100 us higher, interrupted), and a
 * "floor" run (kind floor, 1 interval, complete).
 */
inline populated populate(store& s)
{
    const std::int64_t t = populate_start;
    const std::int64_t hour = 3'600'000'000'000;
    populated p;
    p.idle = s.begin_run(sample_run("6c1b8a52-3e0f-4d3a-9b6e-0a1b2c3d4e5f", "idle", t));
    for (int i = 0; i < 3; ++i)
        s.commit_interval(p.idle, simple_commit(i, t).view());
    std::vector<sample_row> raw;
    for (std::uint64_t k = 0; k < 1000; ++k)
        raw.push_back(sample_row{k, 0, std::int64_t(4000 + (k * 37) % 2000), 30,
                                 k % 2 ? std::uint32_t(flag_rising) : 0u});
    s.append_raw(p.idle, raw);
    s.finish_run(p.idle, run_status::complete, t + 30'000'000'000);

    p.load = s.begin_run(sample_run("d4e5f6a7-1b2c-4d3e-8f90-123456789abc", "load", t + hour));
    for (int i = 0; i < 2; ++i) {
        auto c = simple_commit(i, t + hour);
        c.interval.max_ns += 100'000;
        c.summary.max_ns += 100'000;
        c.summary.warm_max_ns += 100'000;
        for (auto& w : c.worst)
            w.latency_ns += 100'000;
        for (auto& e : c.exceedances)
            e.latency_ns += 100'000;
        s.commit_interval(p.load, c.view());
    }
    s.finish_run(p.load, run_status::interrupted, t + hour + 20'000'000'000);

    p.floor = s.begin_run(
        sample_run("0a0b0c0d-0e0f-4000-8000-000000000f10", "floor", t - hour, run_kind::floor));
    s.commit_interval(p.floor, simple_commit(0, t - hour).view());
    s.finish_run(p.floor, run_status::complete, t - hour + 10'000'000'000);
    return p;
}

/**
 * @brief Read the file of @p s back the way the reading commands do: a fresh read-only
 * db::catalog, the run named by its id through catalog::select. Shorthands for assertions;
 * each call opens the file anew, so it sees every commit made so far.
 */
struct read_back final {
    catalog cat;
    const run_record* run = nullptr;

    read_back(const store& s, std::int64_t id) : cat({s.path()})
    {
        run = cat.select({{std::to_string(id)}, {}, false}).front();
    }
};

inline run_record get_run(const store& s, std::int64_t id)
{
    return *read_back(s, id).run;
}

/** @brief The one run @p which (an id, uuid or uuid prefix) names, as --run would pick it. */
inline run_record find_run(const store& s, const std::string& which)
{
    catalog cat({s.path()});
    return *cat.select({{which}, {}, false}).front();
}

inline std::vector<run_record> list_runs(const store& s)
{
    return catalog({s.path()}).runs();
}

inline std::vector<interval_row> intervals(const store& s, std::int64_t id)
{
    read_back r(s, id);
    return r.cat.intervals(*r.run);
}

inline std::vector<sample_row> worst(const store& s, std::int64_t id, std::size_t limit = 0)
{
    read_back r(s, id);
    return r.cat.worst(*r.run, limit);
}

inline std::vector<bucket_row> histogram(const store& s, std::int64_t id)
{
    read_back r(s, id);
    return r.cat.histogram(*r.run);
}

inline std::vector<sample_row> exceedances(const store& s, std::int64_t id,
                                           std::int64_t from = INT64_MIN,
                                           std::int64_t to = INT64_MAX)
{
    read_back r(s, id);
    return r.cat.exceedances(*r.run, from, to);
}

inline std::vector<event_row> events(const store& s, std::int64_t id)
{
    read_back r(s, id);
    return r.cat.events(*r.run);
}

inline std::uint64_t raw_count(const store& s, std::int64_t id)
{
    read_back r(s, id);
    return r.cat.raw_count(*r.run);
}

inline void for_each_raw(const store& s, std::int64_t id,
                         const std::function<void(const sample_row&)>& fn)
{
    read_back r(s, id);
    r.cat.for_each_raw(*r.run, fn);
}

} // namespace irqloop::db::test
