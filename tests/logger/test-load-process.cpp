// SPDX-License-Identifier: MIT
// The load lifecycle with real processes (/bin/sh loops and sleeps): its own process group,
// SIGTERM then SIGKILL after the grace, exit status and output tail, early death, and no
// process of the group left behind; the guard (irqloop-load-guard) that does it, alone: its
// owner's end of the control socket closing is what an owner's SIGKILL looks like to it.
#include "error.hpp"
#include "load-process.hpp"
#include "proc-scan.hpp"
#include "run-process.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

using namespace irqloop::logger;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::EndsWith;
using irqloop::test::cmdline_of;
using irqloop::test::group_alive;
using irqloop::test::kill_escapees;
using irqloop::test::live_members;
using irqloop::test::parent_of;
using irqloop::test::read_pid;

namespace
{

bool wait_for(const std::function<bool()>& cond, double seconds)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (cond())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return cond();
}

/**
 * @brief Starts the load @p command (keeping @p tail_bytes of its output), waits up to
 * @p seconds for it to exit by itself (required), and returns how stop() saw it end.
 */
load_result run_to_exit(const std::string& command, std::size_t tail_bytes = 1024,
                        double seconds = 5)
{
    load_process lp({command, 2'000'000'000, tail_bytes});
    lp.start();
    REQUIRE(wait_for([&] { return lp.exited(); }, seconds));
    return lp.stop();
}

} // namespace

TEST_CASE(
    "load: a running load gets SIGTERM on stop, in its own process group, with its output tail",
    "[soak]")
{
    load_process lp({"echo started; while :; do sleep 0.05; done", 2'000'000'000, 1024});
    lp.start();
    const int pg = lp.pgid();
    REQUIRE(pg > 0);
    CHECK(getpgid(pg) == pg);        // the shell leads a group of its own
    CHECK(getpgid(pg) != getpgrp()); // not ours: a terminal's SIGINT does not reach it
    const int guard = lp.guard_pid();
    REQUIRE(guard > 0);
    CHECK(guard != pg);
    CHECK(getpgid(guard) == guard); // the guard leads another, also not ours
    CHECK(parent_of(pg) == guard);  // the shell is the guard's child, not ours
    REQUIRE(wait_for([&] { return lp.tail() == "started\n"; }, 5));
    CHECK_FALSE(lp.exited());
    const auto r = lp.stop();
    CHECK(r.started);
    CHECK_FALSE(r.by_itself);
    CHECK_FALSE(r.killed);
    CHECK(r.signal == SIGTERM);
    CHECK(r.status == 128 + SIGTERM);
    CHECK(r.describe() == "killed by SIGTERM");
    CHECK(r.tail == "started\n");
    CHECK_FALSE(group_alive(pg));
    CHECK_FALSE(group_alive(lp.guard_pid())); // the guard leads a group of its own, also gone
    CHECK(lp.stop().signal == SIGTERM);       // idempotent
}

TEST_CASE("load: a load that ignores SIGTERM is killed after the grace period", "[soak]")
{
    load_process lp(
        {"trap '' TERM; echo stubborn; while :; do sleep 0.05; done", 300'000'000, 1024});
    lp.start();
    const int pg = lp.pgid();
    REQUIRE(wait_for([&] { return !lp.tail().empty(); }, 5));
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = lp.stop();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(r.killed);
    CHECK(r.signal == SIGKILL);
    CHECK(waited >= 0.3);
    CHECK_FALSE(group_alive(pg));
}

TEST_CASE("load: an early death is seen with its exit status and last output", "[soak]")
{
    const auto r = run_to_exit("echo 'hackbench: cannot connect'; exit 3");
    CHECK(r.by_itself);
    CHECK(r.status == 3);
    CHECK(r.signal == 0);
    CHECK(r.describe() == "exit 3");
    CHECK(r.tail == "hackbench: cannot connect\n");
    const auto m = run_to_exit("/no/such/load-binary");
    CHECK(m.status == 127);
    CHECK_THAT(m.tail, ContainsSubstring("not found"));
}

TEST_CASE("load: no process of the group outlives stop(), orphans included", "[soak]")
{
    SECTION("children in the background of a waiting shell")
    {
        load_process lp({"sleep 60 & sleep 60 & (sleep 60 &) ; wait", 2'000'000'000, 1024});
        lp.start();
        const int pg = lp.pgid();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        CHECK(group_alive(pg));
        lp.stop();
        CHECK_FALSE(group_alive(pg));
    }
    SECTION("a shell that exits and leaves its children running")
    {
        load_process lp({"sleep 60 & sleep 60 & exit 0", 2'000'000'000, 1024});
        lp.start();
        const int pg = lp.pgid();
        REQUIRE(wait_for([&] { return lp.exited(); }, 5));
        CHECK(group_alive(pg)); // the sleeps are still there
        const auto r = lp.stop();
        CHECK(r.by_itself);
        CHECK(r.status == 0);
        CHECK_FALSE(group_alive(pg));
    }
    SECTION("the destructor stops a running load")
    {
        int pg = -1;
        {
            load_process lp({"while :; do sleep 0.05; done", 2'000'000'000, 1024});
            lp.start();
            pg = lp.pgid();
            CHECK(group_alive(pg));
        }
        CHECK_FALSE(group_alive(pg));
    }
}

TEST_CASE("load: only the last tail_bytes of a long output are kept", "[soak]")
{
    const auto r = run_to_exit("seq 1 200000", 64, 10);
    CHECK(r.status == 0);
    CHECK(r.tail.size() == 64);
    CHECK_THAT(r.tail, EndsWith("199999\n200000\n"));
}

namespace
{

// The guard started by hand, as load_process starts it: its own group, fd 3 the control
// socket. The owner's end is ours; closing it is what the owner's death does.
struct guard_run {
    int pid = -1, pgid = -1, ctl = -1;
    std::vector<int> escapees; // set by the test: pids of processes in sessions of their own
    std::string reports;

    guard_run(const std::string& command, std::int64_t grace_ns)
    {
        int sv[2];
        REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t at;
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&at);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
        posix_spawnattr_setpgroup(&at, 0);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
        const std::string grace = std::to_string(grace_ns);
        const char* argv[] = {IRQLOOP_LOAD_GUARD_BIN, grace.c_str(), "/bin/sh", "-c",
                              command.c_str(),        nullptr};
        const int rc = posix_spawn(&pid, IRQLOOP_LOAD_GUARD_BIN, &fa, &at,
                                   const_cast<char* const*>(argv), environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        close(sv[1]);
        ctl = sv[0];
        REQUIRE(rc == 0);
        REQUIRE(
            wait_for([&] { return read_some(100) && reports.find('\n') != std::string::npos; }, 5));
        REQUIRE(std::sscanf(reports.c_str(), "group %d", &pgid) == 1);
    }

    // What the guard said within @p ms; false once it has closed its end.
    bool read_some(int ms)
    {
        pollfd p{ctl, POLLIN, 0};
        if (ctl < 0 || poll(&p, 1, ms) <= 0)
            return true;
        char buf[256];
        const ssize_t n = read(ctl, buf, sizeof buf);
        if (n > 0)
            reports.append(buf, static_cast<std::size_t>(n));
        return n > 0;
    }

    std::vector<int> left() const { return live_members({pid, pgid}, escapees); }

    // A failed test leaves nothing running: the two groups, and the escapees (checked by
    // their command line, so that a recycled pid is never hit).
    ~guard_run()
    {
        kill(-pgid, SIGKILL);
        kill(-pid, SIGKILL);
        kill_escapees(escapees);
        int st = 0;
        waitpid(pid, &st, 0);
        if (ctl >= 0)
            close(ctl);
    }
};

} // namespace

TEST_CASE("load guard: when its owner dies, the guard ends the load within the grace + 1 s: "
          "loops, a loop that ignores SIGTERM, children in new sessions",
          "[soak]")
{
    const std::int64_t grace_ns = 500'000'000;
    irqloop::test::temp_dir dir;
    const std::string f1 = dir / "escapee1", f2 = dir / "escapee2";
    const auto loads = irqloop::test::endless_loads(f1, f2);
    for (const auto& l : loads) {
        DYNAMIC_SECTION(l.name)
        {
            guard_run g(l.command, grace_ns);
            if (l.command.find("setsid") != std::string::npos) {
                REQUIRE(wait_for([&] { return read_pid(f1) > 0 && read_pid(f2) > 0; }, 5));
                g.escapees = {read_pid(f1), read_pid(f2)};
                for (int e : g.escapees) {
                    CHECK(getsid(e) == e); // a session (and a group) of its own
                    CHECK(getpgid(e) != g.pgid);
                }
                // The orphaned one was reparented to the guard (a child subreaper), not init.
                CHECK(wait_for([&] { return parent_of(g.escapees[1]) == g.pid; }, 5));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            REQUIRE(g.left().size() >= 2); // the guard, the shell (and more)
            const auto t0 = std::chrono::steady_clock::now();
            close(g.ctl); // the owner's end closes: all a SIGKILL of the owner does here
            g.ctl = -1;
            const bool gone = wait_for([&] { return g.left().empty(); }, 1.0 + grace_ns / 1e9);
            const double took =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            INFO("left: " << g.left().size() << " processes after " << took << " s");
            CHECK(gone);
            if (l.ignores_term)
                CHECK(took >= grace_ns / 1e9); // SIGKILL only after the grace
            else
                CHECK(took < grace_ns / 1e9); // SIGTERM did it
        }
    }
}

TEST_CASE("load guard: the shell's exit is reported at once; the guard waits for its orphans",
          "[soak]")
{
    guard_run g("sleep 60 & exit 3", 500'000'000);
    REQUIRE(wait_for(
        [&] { return g.read_some(20) && g.reports.find("exit ") != std::string::npos; }, 5));
    int st = -1;
    REQUIRE(std::sscanf(g.reports.c_str() + g.reports.find("exit "), "exit %d", &st) == 1);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 3);
    // The sleep, orphaned, is the guard's now; the guard stays while it runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(kill(g.pid, 0) == 0);
    CHECK(live_members({g.pgid}, {}).size() == 1);
    close(g.ctl);
    g.ctl = -1;
    CHECK(wait_for([&] { return g.left().empty(); }, 1.5));
}

TEST_CASE("load guard: refuses to run without its control socket", "[soak]")
{
    const auto r = irqloop::test::run_process({IRQLOOP_LOAD_GUARD_BIN, "1000", "/bin/true"});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, ContainsSubstring("irqloop-load-guard: fd 3 is not a stream socket"));
}

TEST_CASE("load: stop() also ends a child in a new session that holds the output pipe, and "
          "returns within the grace",
          "[soak]")
{
    // Before the guard, such a child was out of reach, and the monitor's last read of the
    // pipe waited for it to end (300 s here).
    irqloop::test::temp_dir dir;
    const std::string f = dir / "escapee";
    load_process lp({"setsid sh -c ': soak-escapee; echo $$ > " + f +
                         "; exec sleep 300' & while :; do sleep 0.05; done",
                     500'000'000, 1024});
    lp.start();
    REQUIRE(wait_for([&] { return read_pid(f) > 0; }, 5));
    const int escapee = read_pid(f);
    struct cleanup {
        int pid;
        ~cleanup()
        {
            if (cmdline_of(pid).find("sleep 300") != std::string::npos)
                kill(pid, SIGKILL);
        }
    } clean{escapee};
    CHECK(getsid(escapee) == escapee);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = lp.stop();
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(took < 1.5);
    CHECK(r.signal == SIGTERM);
    CHECK(live_members({}, {escapee}).empty());
}

TEST_CASE("proc scan: a process that exits while its /proc files are read reads as gone, never "
          "as an exception",
          "[soak]")
{
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    struct reaper { // a failed REQUIRE leaves no child behind
        pid_t pid;
        ~reaper()
        {
            if (pid > 0) {
                kill(pid, SIGKILL);
                waitpid(pid, nullptr, 0);
            }
        }
    } r{child};
    const std::string stat = "/proc/" + std::to_string(child) + "/stat";
    REQUIRE(parent_of(child) == getpid());
    // The hazard: a file opened while the process lived fails its read once it is reaped.
    const int fd = open(stat.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    kill(child, SIGKILL);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    r.pid = -1;
    char buf[64];
    errno = 0;
    CHECK(read(fd, buf, sizeof buf) < 0);
    CHECK(errno == ESRCH);
    close(fd);
    // The helpers say "gone" instead.
    CHECK(irqloop::test::read_proc_file(stat).empty());
    CHECK(parent_of(child) == -1);
    CHECK(cmdline_of(child).empty());
    CHECK(live_members({}, {child}).empty());
}
