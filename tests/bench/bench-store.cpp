// SPDX-License-Identifier: MIT
// Store benchmark: --raw insert rate and bytes per raw sample, commit_interval cost for a
// 100M-sample run (125 intervals of 10 s at 80k samples/s, top-1000, a ~2500-bucket histogram,
// 100k exceedances), and the time of the worst-20 query on that database.
//
// usage: irqloop-bench-store [raw_rows (default 10M)] [directory (default $TMPDIR or /tmp)]
#include "error.hpp"
#include "store.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace irqloop;
using namespace irqloop::db;
using clk = std::chrono::steady_clock;

namespace
{

double seconds_since(clk::time_point t0)
{
    return std::chrono::duration<double>(clk::now() - t0).count();
}

/** CPU time of this thread: on a shared machine wall time also measures the neighbours. */
double cpu_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::uintmax_t size_of(const std::string& path)
{
    std::uintmax_t n = 0;
    for (const char* sfx : {"", "-wal"}) {
        std::error_code ec;
        auto s = std::filesystem::file_size(path + sfx, ec);
        n += ec ? 0 : s;
    }
    return n;
}

run_row bench_run(const std::string& uuid, const std::string& label)
{
    run_row r;
    r.uuid = uuid;
    r.label = label;
    r.kind = run_kind::measure;
    r.start_unix_ns = 1'796'000'000'000'000'000;
    r.command_line = "irqloop-bench-store";
    r.version = "bench";
    r.uname = "Linux";
    r.hostname = "bench";
    r.backend = "sim";
    r.clock_source = "tsc";
    r.clock_hz = 2.6e9;
    r.interval_ns = 12'500; // 80k samples/s
    r.timeout_ns = 10'000'000;
    r.threshold_ns = 20'000;
    r.stats_interval_ns = 10'000'000'000;
    r.samples_requested = 100'000'000;
    r.rt_settings = "sched=fifo:80";
    return r;
}

} // namespace

int main(int argc, char** argv)
try {
    const long long raw_rows = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = argc > 2 ? argv[2] : (tmp && *tmp ? tmp : "/tmp");
    const std::string path = dir + "/irqloop-bench-store.db";
    for (const char* sfx : {"", "-wal", "-shm", "-lock"})
        std::filesystem::remove(path + sfx);

    std::mt19937_64 rng(42);
    std::normal_distribution<double> body(8000.0, 1000.0);
    {
        store s(path);
        // 1. --raw: batches of 100k rows, as the recorder flushes them.
        const auto raw_id = s.begin_run(bench_run("bench-raw", "raw"));
        const std::size_t batch = 100'000;
        std::vector<sample_row> rows(batch);
        const auto before = size_of(path);
        double gen_cpu = 0;
        const auto t0 = clk::now();
        const double c0 = cpu_seconds();
        for (long long done = 0; done < raw_rows;) {
            const std::size_t n = std::min<long long>(batch, raw_rows - done);
            const double g0 = cpu_seconds();
            for (std::size_t k = 0; k < n; ++k)
                rows[k] = sample_row{
                    static_cast<std::uint64_t>(done + k), 0, static_cast<std::int64_t>(body(rng)),
                    static_cast<std::int64_t>(20 + (k & 31)), static_cast<std::uint32_t>(k & 1)};
            gen_cpu += cpu_seconds() - g0;
            s.append_raw(raw_id, std::span(rows).first(n));
            done += n;
        }
        const double raw_s = seconds_since(t0);
        const double raw_cpu = cpu_seconds() - c0 - gen_cpu;
        s.finish_run(raw_id, run_status::complete, 1);
        s.database().exec("PRAGMA wal_checkpoint(TRUNCATE)");
        const double bytes = double(size_of(path) - before) / double(raw_rows);
        std::printf("raw insert: %lld rows in batches of %zu: %.2f s wall = %.2f M rows/s; "
                    "%.2f s CPU = %.2f M rows/CPU-s; %.1f bytes per raw sample (file growth / "
                    "rows, after checkpoint)\n",
                    raw_rows, batch, raw_s, raw_rows / raw_s / 1e6, raw_cpu,
                    raw_rows / raw_cpu / 1e6, bytes);

        // 2. commit_interval for a 100M-sample run: 125 intervals of 800k samples.
        const auto id = s.begin_run(bench_run("bench-100m", "soak"));
        const int intervals = 125;
        std::vector<bucket_row> hist;
        for (std::int64_t lo = 3000; lo < 13'000; lo += std::max<std::int64_t>(1, lo >> 10) * 1)
            hist.push_back(bucket_row{lo, lo + std::max<std::int64_t>(1, lo >> 10), 0});
        std::uniform_int_distribution<std::int64_t> tail(13'000, 3'000'000);
        for (int k = 0; k < 1000; ++k) {
            std::int64_t lo = tail(rng);
            std::int64_t w = std::max<std::int64_t>(1, lo >> 10);
            lo -= lo % w;
            hist.push_back(bucket_row{lo, lo + w, 0});
        }
        std::sort(hist.begin(), hist.end(), [](auto& a, auto& b) { return a.lo_ns < b.lo_ns; });
        hist.erase(std::unique(hist.begin(), hist.end(),
                               [](auto& a, auto& b) { return a.lo_ns == b.lo_ns; }),
                   hist.end());
        std::vector<sample_row> worst(1000);
        std::vector<sample_row> exc(800); // 100k over the run
        std::vector<event_row> ev(10);
        std::vector<double> commit_ms;
        double commit_cpu = 0;
        std::uint64_t seq = 0;
        const std::int64_t t_run = 1'796'000'000'000'000'000;
        for (int i = 0; i < intervals; ++i) {
            for (auto& b : hist)
                b.count += 1 + (rng() & 1023);
            for (auto& e : exc) {
                seq += 1000;
                e = sample_row{seq, t_run + static_cast<std::int64_t>(seq) * 12'500, tail(rng) / 10,
                               40, 1};
            }
            for (std::size_t k = 0; k < worst.size(); ++k)
                worst[k] = sample_row{seq - k, t_run + static_cast<std::int64_t>(seq - k) * 12'500,
                                      3'000'000 - static_cast<std::int64_t>(k) * 1000 - i, 40, 1};
            for (auto& e : ev)
                e = event_row{t_run + static_cast<std::int64_t>(seq) * 12'500, seq, "lost", 1,
                              "no response"};
            interval_commit c;
            c.interval = interval_row{static_cast<std::uint64_t>(i),
                                      t_run + i * 10'000'000'000LL,
                                      t_run + (i + 1) * 10'000'000'000LL,
                                      800'000,
                                      3000,
                                      3'000'000,
                                      8000,
                                      1000,
                                      8000,
                                      11'000,
                                      14'000,
                                      800,
                                      1,
                                      0,
                                      0};
            c.summary.samples = 800'000ull * (i + 1);
            c.summary.max_ns = 3'000'000;
            c.summary.end_unix_ns = c.interval.end_unix_ns;
            c.exceedances = exc;
            c.worst = worst;
            c.histogram = hist;
            c.events = ev;
            const auto t1 = clk::now();
            const double c1 = cpu_seconds();
            s.commit_interval(id, c);
            commit_cpu += cpu_seconds() - c1;
            commit_ms.push_back(seconds_since(t1) * 1e3);
        }
        s.finish_run(id, run_status::complete, t_run + intervals * 10'000'000'000LL);
        std::sort(commit_ms.begin(), commit_ms.end());
        double sum = 0;
        for (double m : commit_ms)
            sum += m;
        std::printf("commit_interval: %d commits of 800 exceedances + %zu-bucket histogram + "
                    "top-%zu + %zu events: wall mean %.2f ms, median %.2f ms, max %.2f ms; "
                    "CPU mean %.2f ms\n",
                    intervals, hist.size(), worst.size(), ev.size(), sum / intervals,
                    commit_ms[commit_ms.size() / 2], commit_ms.back(),
                    commit_cpu / intervals * 1e3);
    }
    std::printf("database: %.1f MB (the raw run and the 100M-sample run)\n",
                double(size_of(path)) / 1e6);

    // 3. The worst-20 query on a fresh read-only store, first and repeated.
    store r(path, store::mode::read_only);
    const char* q = "SELECT label, rank, seq, time_utc, latency_us FROM worst_cases "
                    "ORDER BY latency_ns DESC LIMIT 20";
    std::vector<double> ms;
    for (int k = 0; k < 51; ++k) {
        const auto t0 = clk::now();
        SQLite::Statement st(r.database(), q);
        int n = 0;
        while (st.executeStep())
            ++n;
        ms.push_back(seconds_since(t0) * 1e3);
        if (n != 20)
            throw error("bench worst-20", "got " + std::to_string(n) + " rows");
    }
    const double first = ms.front();
    std::sort(ms.begin() + 1, ms.end());
    std::printf("worst-20 query: first %.3f ms, median of 50 more %.3f ms\n", first, ms[26]);
    for (const char* sfx : {"", "-wal", "-shm", "-lock"})
        std::filesystem::remove(path + sfx);
    return 0;
} catch (const irqloop::error& e) {
    print_error(e);
    return e.status();
}
