// SPDX-License-Identifier: MIT
// `irqloop watch`: a read-only live view of the newest running run of a file, refreshed
// from another terminal while `irqloop run` writes it.
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "read.hpp"
#include "stop-signal.hpp"
#include "table.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace po = boost::program_options;

namespace irqloop::logger
{

namespace
{

const db::run_record* newest_running(const db::catalog& c)
{
    const db::run_record* best = nullptr;
    for (const auto& r : c.runs())
        if (r.status == db::run_status::running &&
            (!best || r.meta.start_unix_ns >= best->meta.start_unix_ns))
            best = &r;
    return best;
}

std::string us(std::int64_t ns)
{
    return format_duration(static_cast<double>(ns));
}

} // namespace

int watch_command(int argc, char** argv)
{
    std::string db_path, refresh = "1s", count = "0", top_text = "5";
    po::options_description d(
        "irqloop watch: a live, read-only view of the newest running run in a file, "
        "refreshed every second; works while irqloop run writes it. Ends when no "
        "run is running (exit 0).\n\nusage: irqloop watch --db FILE\n\noptions");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("db", po::value(&db_path)->required(), "the irqloop file a run is writing")
        ("refresh", po::value(&refresh)->default_value(refresh), "time between two views")
        ("count", po::value(&count)->default_value(count), "stop after this many views; 0 = until the run ends or SIGINT")
        ("top", po::value(&top_text)->default_value(top_text), "worst samples shown (0 to 1000)");
    // clang-format on
    // No bare words: a stray one is refused, never dropped.
    auto vm = base::parse_options(argc, argv, d);
    if (vm.count("help")) {
        std::cout << d << "\nDocs: docs/commands/watch.md\n";
        return 0;
    }
    po::notify(vm);
    const std::int64_t refresh_ns =
        parse_duration_ns_in(refresh, "--refresh", 100'000'000, 3600LL * 1'000'000'000);
    const std::uint64_t views = parse_count(count, "--count");
    const std::size_t top = parse_count_in(top_text, "--top", 0, 1000);
    base::options_parsed();

    base::stop_signals signals;
    const bool tty = isatty(STDOUT_FILENO);
    std::string watching; // uuid of the run on screen
    std::uint64_t last_stimuli = 0, shown = 0;
    bool checked = false;
    auto last_t = std::chrono::steady_clock::now();
    while (!signals.flag().load()) {
        // Every page is checked at the first view; the views after it trust the file (a
        // check each refresh would cost 0.5 s of CPU per 100 MB of it).
        db::catalog c({db_path}, checked ? db::store::pages::trust : db::store::pages::check);
        checked = true;
        const db::run_record* run = newest_running(c);
        if (!run) {
            if (watching.empty()) {
                std::printf("irqloop watch: no running run in %s\n", db_path.c_str());
            } else {
                for (const auto& r : c.runs())
                    if (r.meta.uuid == watching)
                        std::printf("irqloop watch: %s ended: %s, %llu samples\n", r.name().c_str(),
                                    std::string(db::to_text(r.status)).c_str(),
                                    static_cast<unsigned long long>(r.summary.samples));
            }
            return 0;
        }
        const auto now = std::chrono::steady_clock::now();
        const auto& s = run->summary;
        double rate = 0;
        if (watching == run->meta.uuid) {
            const double dt = std::chrono::duration<double>(now - last_t).count();
            rate = dt > 0 ? static_cast<double>(s.stimuli - last_stimuli) / dt : 0;
        } else if (run->end_unix_ns && *run->end_unix_ns > run->meta.start_unix_ns) {
            rate = static_cast<double>(s.stimuli) * 1e9 /
                   static_cast<double>(*run->end_unix_ns - run->meta.start_unix_ns);
        }
        watching = run->meta.uuid;
        last_stimuli = s.stimuli;
        last_t = now;
        if (tty)
            std::printf("\033[H\033[J");
        std::printf("run %lld (%s) running, %s\n", static_cast<long long>(run->id),
                    run->name().c_str(), run->meta.backend.c_str());
        std::printf("  samples %llu  stimuli %llu  rate %.0f/s  lost %llu  disturbed %llu  "
                    "overflows %llu\n",
                    static_cast<unsigned long long>(s.samples),
                    static_cast<unsigned long long>(s.stimuli), rate,
                    static_cast<unsigned long long>(s.lost),
                    static_cast<unsigned long long>(s.disturbed),
                    static_cast<unsigned long long>(s.overflows));
        std::printf("  max so far %s  warm max %s  above %s: %llu\n",
                    run->has_stats ? us(s.max_ns).c_str() : absent_value,
                    s.has_warm_max ? us(s.warm_max_ns).c_str() : absent_value,
                    us(run->meta.threshold_ns).c_str(),
                    static_cast<unsigned long long>(s.above_threshold));
        const auto iv = c.intervals(*run);
        if (!iv.empty()) {
            const auto& w = iv.back();
            std::printf("  window %llu: samples %llu  max %s  p99 %s  lost %llu\n",
                        static_cast<unsigned long long>(w.index),
                        static_cast<unsigned long long>(w.samples),
                        w.samples ? us(w.max_ns).c_str() : absent_value,
                        w.samples ? us(w.p99_ns).c_str() : absent_value,
                        static_cast<unsigned long long>(w.lost));
        }
        if (top) {
            const auto worst = c.worst(*run, top);
            std::printf("  worst:");
            for (const auto& w : worst)
                std::printf(" %s@%llu", us(w.latency_ns).c_str(),
                            static_cast<unsigned long long>(w.seq));
            std::printf("\n");
        }
        std::printf("  events:");
        for (const auto& e : c.event_totals(*run))
            std::printf(" %s %llu", e.kind.c_str(), static_cast<unsigned long long>(e.events));
        std::printf("\n");
        if (!tty)
            std::printf("\n");
        if (std::fflush(stdout) != 0)
            throw_from_errno(errno, "watch: write to standard output", {}, exit_failure);
        if (views && ++shown >= views)
            return 0;
        const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(refresh_ns);
        while (!signals.flag().load() && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
}

} // namespace irqloop::logger
