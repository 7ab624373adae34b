// SPDX-License-Identifier: MIT
// irqloop-responder's reporter thread is an ordinary one (SCHED_OTHER, on every CPU the
// responder started with), never the responding thread's SCHED_FIFO priority and pin that a
// new thread inherits: read from /proc while a poll-mode responder runs at SCHED_FIFO 50 on
// CPU 0. At that priority and pin the spinning poll loop used to starve the reporter, so
// --duration never ended the responder: the test also holds it to ending.
#include "run-process.hpp"

#include <catch2/catch_test_macros.hpp>

#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace irqloop::test;

namespace responder_threads_test
{

const std::string responder_bin = IRQLOOP_RESPONDER_BIN;

std::string first_line(const std::string& path)
{
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

/** A field of a /proc status file ("Cpus_allowed_list"), without its key and tab. */
std::string status_field(const std::string& path, const std::string& key)
{
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);)
        if (line.rfind(key + ":", 0) == 0)
            return line.substr(line.find_first_not_of(" \t", key.size() + 1));
    return {};
}

/** The scheduling policy of a task (field 41 of its stat: 0 OTHER, 1 FIFO, 2 RR), -1 unread. */
int task_policy(const std::string& task_dir)
{
    const std::string stat = first_line(task_dir + "/stat");
    const auto close = stat.rfind(')'); // the name may hold spaces: count after it
    if (close == std::string::npos)
        return -1;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 41; ++i) // fields 3 .. 41
        if (!(rest >> field))
            return -1;
    return std::stoi(field);
}

/** The /proc task directory of @p pid's thread named @p name, or "". */
std::string task_named(int pid, const std::string& name)
{
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d)
        return {};
    std::string found;
    while (const dirent* e = readdir(d))
        if (e->d_name[0] != '.' && first_line(dir + "/" + e->d_name + "/comm") == name)
            found = dir + "/" + e->d_name;
    closedir(d);
    return found;
}

TEST_CASE("responder: the reporter thread runs SCHED_OTHER on every CPU while the responding "
          "thread holds SCHED_FIFO on its CPU, and --duration ends a spinning poll loop",
          "[responder][threads]")
{
    const std::string name = "irqloop-thr-" + std::to_string(getpid());
    const std::string log = "/tmp/" + name + ".log";
    background_process p({responder_bin, "--hw", "shm:name=" + name, "--mode", "poll", "--priority",
                          "50", "--cpu", "0", "--duration", "1s"},
                         log);
    std::string reporter;
    wait_until([&] { return !(reporter = task_named(p.pid(), "irqloop-report")).empty(); }, 10);
    const std::string main_task =
        "/proc/" + std::to_string(p.pid()) + "/task/" + std::to_string(p.pid());
    const int main_policy = task_policy(main_task);
    const std::string main_cpus = status_field(main_task + "/status", "Cpus_allowed_list");
    const int reporter_policy = reporter.empty() ? -1 : task_policy(reporter);
    const std::string reporter_cpus =
        reporter.empty() ? "" : status_field(reporter + "/status", "Cpus_allowed_list");
    // Ended by --duration within a bound that holds on a busy machine (the run is 1 s).
    const bool ended = wait_until(
        [&] {
            const std::string st = first_line("/proc/" + std::to_string(p.pid()) + "/stat");
            const auto close = st.rfind(')');
            return close == std::string::npos || st.substr(close + 2, 1) == "Z";
        },
        20);
    const std::string out = file_text(log);
    std::remove(log.c_str());
    INFO("responder's output:\n" << out);
    if (main_policy != 1)
        SKIP("SKIPPED: the responder did not obtain SCHED_FIFO here (policy " +
             std::to_string(main_policy) + "): run as root or with RLIMIT_RTPRIO");
    CHECK(main_cpus == "0");
    REQUIRE_FALSE(reporter.empty());
    CHECK(reporter_policy == 0);
    CHECK(reporter_cpus == status_field("/proc/self/status", "Cpus_allowed_list"));
    CHECK(ended);
    if (ended)
        CHECK(p.wait() == 0);
}

} // namespace responder_threads_test
