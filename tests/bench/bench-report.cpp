// SPDX-License-Identifier: MIT
// How long the reading commands take on a big run: builds a database of N samples (default
// 100M) through the real recorder and store, then times report, worst, compare, export and
// plot --script on it. Usage: irqloop-bench-report [samples] [db-path]
#include "compare-command.hpp"
#include "error.hpp"
#include "export-command.hpp"
#include "plot-command.hpp"
#include "recorder.hpp"
#include "report-command.hpp"
#include "store.hpp"
#include "worst-command.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace irqloop;

namespace
{

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::uint64_t splitmix(std::uint64_t& s)
{
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void build(const std::string& path, std::uint64_t n)
{
    std::filesystem::remove(path);
    db::store st(path);
    db::run_row row;
    row.uuid = "00000000-0000-4000-8000-00000000b001";
    row.label = "bench";
    row.kind = db::run_kind::measure;
    row.start_unix_ns = 1'767'225'600'000'000'000;
    row.command_line = "irqloop-bench-report";
    row.version = "bench";
    row.backend = "sim:model=synthetic";
    row.clock_source = "tsc";
    row.clock_hz = 1e9;
    row.interval_ns = 10'000;
    row.threshold_ns = 30'000;
    row.stats_interval_ns = 10'000'000'000;
    row.warmup_samples = 1000;
    const auto id = st.begin_run(row);
    logger::recorder_config cfg;
    cfg.clock.hz = 1e9;
    cfg.anchor_unix_ns = row.start_unix_ns;
    logger::recorder rec(cfg, &st, id);
    std::vector<logger::sample> batch(4096);
    std::uint64_t s = 1, t0 = 1000;
    for (std::uint64_t seq = 0; seq < n;) {
        std::size_t k = 0;
        for (; k < batch.size() && seq < n; ++k, ++seq, t0 += 10'000) {
            const std::uint64_t r = splitmix(s);
            // ~7 us with a 1-in-10^4 tail up to ~65 us.
            std::uint64_t lat = 6000 + (r & 2047);
            if ((r >> 20) % 10'000 == 0)
                lat += (r >> 40) & 65535;
            batch[k] = {seq, t0, lat, 30, seq % 2 ? 0u : std::uint32_t(db::flag_rising)};
        }
        rec.add({batch.data(), k});
    }
    rec.finish(t0);
    st.finish_run(id, db::run_status::complete, row.start_unix_ns + std::int64_t(t0));
}

double time_command(int (*fn)(int, char**), std::vector<std::string> args)
{
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    std::ofstream null("/dev/null");
    auto* old = std::cout.rdbuf(null.rdbuf());
    const auto t = std::chrono::steady_clock::now();
    fn(int(argv.size()), argv.data());
    const double sec = seconds_since(t);
    std::cout.rdbuf(old);
    return sec;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const std::uint64_t n = argc > 1 ? std::stoull(argv[1]) : 100'000'000;
        const std::string path = argc > 2 ? argv[2] : "/tmp/irqloop-bench-report.db";
        auto t = std::chrono::steady_clock::now();
        build(path, n);
        std::printf("built %llu samples in %.1f s (%.2f M samples/s), file %.1f MB\n",
                    static_cast<unsigned long long>(n), seconds_since(t),
                    double(n) / seconds_since(t) / 1e6,
                    double(std::filesystem::file_size(path)) / 1e6);
        struct cmd {
            const char* name;
            int (*fn)(int, char**);
            std::vector<std::string> args;
        };
        const std::vector<cmd> cmds = {
            {"report", logger::report_command, {"report", "--db", path}},
            {"worst --top 20", logger::worst_command, {"worst", "--db", path, "--top", "20"}},
            {"compare", logger::compare_command, {"compare", "--db", path}},
            {"compare --preset rt_eval",
             logger::compare_command,
             {"compare", "--db", path, "--preset", "rt_eval"}},
            {"export --format json", logger::export_command, {"export", "--db", path}},
            {"plot --kind timeline --script",
             logger::plot_command,
             {"plot", "--db", path, "--kind", "timeline", "--script"}},
        };
        for (const auto& c : cmds) {
            double best = 1e9;
            for (int i = 0; i < 3; ++i)
                best = std::min(best, time_command(c.fn, c.args));
            std::printf("%-32s %8.1f ms (best of 3)\n", c.name, best * 1e3);
        }
        std::filesystem::remove(path);
        std::filesystem::remove(path + "-wal");
        std::filesystem::remove(path + "-shm");
        std::filesystem::remove(db::store::lock_path(path));
    } catch (const error& e) {
        print_error(e);
        return e.status();
    }
    return 0;
}
