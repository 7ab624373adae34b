// SPDX-License-Identifier: MIT
// What the per-window histograms (schema version 3, table interval_histograms) add to a file:
// a synthetic soak through the real recorder and store, then the table's bytes by SQLite's
// own page accounting (the dbstat virtual table), and the file with and without the table.
// Usage: irqloop-bench-window-histograms FILE [windows=2880] [samples_per_window=100000]
// The default is an 8-hour run at the default 10 s windows and 100 us interval (100k samples a
// window). Latencies: a lognormal body around 5 us, 1% of samples spread log-uniformly over
// 10 us..2 ms and 0.01% over 2..10 ms, so every window fills about 40 buckets: a broader
// window than a tuned system shows (docs/commands/plot.md quotes the figures).
#include "recorder.hpp"
#include "store.hpp"
#include "synthetic-run.hpp"

#include <SQLiteCpp/Database.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <vector>

using namespace irqloop;

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE [windows=2880] [samples_per_window=100000]\n",
                     argv[0]);
        return 2;
    }
    const std::string path = argv[1];
    const std::uint64_t windows = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2880;
    const std::uint64_t per = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 100'000;
    std::filesystem::remove(path);
    const std::int64_t window_ns = 10'000'000'000;
    const std::int64_t start = 1'790'000'000'000'000'000;
    std::uint64_t total_rows = 0;
    auto t0 = std::chrono::steady_clock::now();
    {
        db::store st(path);
        auto row = test::synthetic_run_row("00000000-0000-4000-8000-00000000be4c",
                                           "bench-window-histograms", start,
                                           "irqloop-bench-window-histograms", "bench");
        row.stats_interval_ns = window_ns;
        row.metadata = {{"logger.window_histogram", db::window_buckets::scheme}};
        const auto id = st.begin_run(row);
        auto cfg = test::synthetic_recorder_config(window_ns, start);
        cfg.threshold_ns = 1'000'000'000; // no exceedances: only the windows' own rows grow
        cfg.top_k = 20;
        logger::recorder rec(cfg, &st, id);
        std::mt19937_64 rng(13);
        std::lognormal_distribution<double> body(std::log(5000.0), 0.15);
        std::uniform_real_distribution<double> u(0, 1);
        const std::uint64_t step = static_cast<std::uint64_t>(window_ns) / per;
        std::vector<logger::sample> batch(8192);
        std::uint64_t seq = 0;
        const std::uint64_t n = windows * per;
        while (seq < n) {
            std::size_t k = 0;
            for (; k < batch.size() && seq < n; ++k, ++seq) {
                auto& s = batch[k];
                s = logger::sample{};
                s.seq = seq;
                s.t0_cycles = seq * step + 1;
                const double r = u(rng);
                double lat = body(rng);
                if (r < 1e-4)
                    lat = 2e6 * std::pow(5.0, u(rng));
                else if (r < 1e-2)
                    lat = 1e4 * std::pow(200.0, u(rng));
                s.latency_cycles = static_cast<std::uint64_t>(lat);
                s.bracket_cycles = 40;
                s.flags = seq & 1;
            }
            rec.add(std::span<const logger::sample>(batch.data(), k));
        }
        rec.finish(n * step);
        st.finish_run(id, db::run_status::complete, start + static_cast<std::int64_t>(n * step));
        total_rows = static_cast<std::uint64_t>(
            st.database().execAndGet("SELECT count(*) FROM interval_histograms").getInt64());
        st.database().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    SQLite::Database d(path, SQLite::OPEN_READWRITE);
    long long table_bytes = -1;
    try {
        table_bytes = d.execAndGet("SELECT sum(pgsize) FROM dbstat WHERE name = "
                                   "'interval_histograms'")
                          .getInt64();
    } catch (const std::exception&) {
        // dbstat not compiled in: the with/without difference below still says it.
    }
    d.exec("VACUUM");
    const auto with = std::filesystem::file_size(path);
    d.exec("DROP VIEW window_histograms; DROP TABLE interval_histograms; VACUUM");
    const auto without = std::filesystem::file_size(path);
    std::printf("%llu windows x %llu samples in %.1f s: %llu bucket rows (%.1f a window); "
                "interval_histograms %lld bytes by dbstat (%.1f bytes a row); file %llu bytes "
                "with, %llu without: the table adds %.3f MB\n",
                static_cast<unsigned long long>(windows), static_cast<unsigned long long>(per),
                secs, static_cast<unsigned long long>(total_rows),
                double(total_rows) / double(windows), table_bytes,
                total_rows ? double(table_bytes) / double(total_rows) : 0.0,
                static_cast<unsigned long long>(with), static_cast<unsigned long long>(without),
                double(with - without) / 1e6);
    return 0;
}
