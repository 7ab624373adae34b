// SPDX-License-Identifier: MIT
// Each of a run's threads carries its own name, so `top -H`, `ps -L` and
// /proc/PID/task/TID/comm tell the sampler from the recorder and the simulated target: read
// from /proc while a run on the threaded sim board is under way, and from the action runner's
// worker.
#include "actions.hpp"
#include "lines.hpp"
#include "registry.hpp"
#include "run.hpp"
#include "session.hpp"
#include "temp-dir.hpp"
#include "thread-name.hpp"

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <dirent.h>
#include <fstream>
#include <set>
#include <string>
#include <thread>

using namespace irqloop;
using namespace irqloop::test;

namespace thread_names_test
{

/** The names of this process's threads, from /proc/self/task/TID/comm. */
std::multiset<std::string> task_names()
{
    std::multiset<std::string> names;
    DIR* d = opendir("/proc/self/task");
    if (!d)
        return names;
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string name;
        if (std::getline(f, name))
            names.insert(name);
    }
    closedir(d);
    return names;
}

/** Takes the task names once, on the first tick after some samples were recorded. */
class name_reader final : public logger::run_plugin
{
public:
    void on_batch(std::span<const logger::sample> b) override { seen_ += b.size(); }
    void on_tick() override
    {
        if (taken_ || seen_.load() == 0)
            return;
        names = task_names();
        taken_ = true;
    }
    std::multiset<std::string> names;

private:
    std::atomic<std::uint64_t> seen_{0};
    bool taken_ = false;
};

} // namespace thread_names_test

using namespace thread_names_test;

TEST_CASE("threads: a run's sampler, recorder and threaded sim target each carry their name",
          "[run][threads]")
{
    temp_dir dir;
    logger::run_options o;
    o.timing.samples = 2'000'000; // ended by the reader's stop below, not by the count
    o.timing.interval_ns = 100'000;
    o.recording.db_path = dir / "names.db";
    o.rt.priority = 0; // no real-time settings: the test needs no privileges
    o.rt.mlock = false;
    o.rt.dma_latency = false;
    auto wire = hw::open_lines("sim:model=fixed,value=5us,far=thread", hw::role::logger);
    std::atomic<bool> stop{false};
    name_reader reader;
    struct stopper final : logger::run_plugin {
        const name_reader& r;
        std::atomic<bool>& stop;
        stopper(const name_reader& r, std::atomic<bool>& s) : r(r), stop(s) {}
        void on_tick() override
        {
            if (!r.names.empty())
                stop = true;
        }
    } stop_after_names{reader, stop};
    logger::run_plugin* extra[] = {&reader, &stop_after_names};
    const auto out = logger::execute_run(o, *wire, stop, extra);
    CHECK(out.summary.stimuli > 0); // samples came (all may be warm-up ones: stopped early)
    INFO("names seen during the run: " << [&] {
        std::string s;
        for (const auto& n : reader.names)
            s += "'" + n + "' ";
        return s;
    }());
    CHECK(reader.names.count("irqloop-sampler") == 1);
    CHECK(reader.names.count("irqloop-record") == 1);
    CHECK(reader.names.count("irqloop-simtgt") == 1);
    // After the run only the caller's thread is left of them.
    const auto after = task_names();
    CHECK(after.count("irqloop-sampler") == 0);
    CHECK(after.count("irqloop-record") == 0);
    CHECK(after.count("irqloop-simtgt") == 0);
}

TEST_CASE("threads: the --on-threshold action runner's worker is irqloop-action; a name longer "
          "than the kernel keeps is cut at 15 bytes",
          "[threads]")
{
    {
        logger::action_runner r({logger::parse_action("stop")}, 0, {});
        // The worker names itself as it starts: wait for it (bounded), do not race it.
        for (int i = 0; i < 500 && task_names().count("irqloop-action") == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        CHECK(task_names().count("irqloop-action") == 1);
        r.finish();
    }
    CHECK(task_names().count("irqloop-action") == 0);
    std::string seen;
    std::thread([&] {
        base::name_this_thread("irqloop-a-name-far-too-long");
        seen = base::this_thread_name();
    }).join();
    CHECK(seen == "irqloop-a-name-");
}
