// SPDX-License-Identifier: MIT
#include "load-process.hpp"
#include "cycle-clock.hpp"

#include "error.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

namespace irqloop::logger
{

std::string load_result::describe() const
{
    if (!started)
        return "not started";
    if (signal) {
        const char* abbrev = sigabbrev_np(signal);
        return std::string("killed by ") +
               (abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal));
    }
    return "exit " + std::to_string(status);
}

load_process::load_process(load_options o) : opt_(std::move(o)) {}

load_process::~load_process()
{
    try {
        stop();
    } catch (...) {
    }
}

void load_process::start()
{
    if (pid_ > 0)
        return;
    // Orphans of the shell come back to us to be reaped (see the class comment).
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        throw_from_errno(errno, "start load: pipe", {}, exit_failure);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    sigset_t none, deflt;
    sigemptyset(&none);
    sigemptyset(&deflt);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD})
        sigaddset(&deflt, s);
    sched_param sp{};
    sp.sched_priority = 0;
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &deflt);
    posix_spawnattr_setschedpolicy(&at, SCHED_OTHER);
    posix_spawnattr_setschedparam(&at, &sp);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSCHEDULER);
    const char* argv[] = {"/bin/sh", "-c", opt_.command.c_str(), nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, "/bin/sh", &fa, &at, const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        throw_from_errno(rc, "start load '" + opt_.command + "'", "check that /bin/sh exists",
                         exit_failure);
    }
    pid_ = pid;
    out_fd_ = fds[0];
    start_ns_ = hw::monotonic_ns();
    result_.started = true;
    thread_ = std::thread([this] { monitor(); });
}

bool load_process::group_gone() const noexcept
{
    return kill(-pid_, 0) != 0 && errno == ESRCH;
}

void load_process::monitor()
{
    char buf[4096];
    while (true) {
        if (out_fd_ >= 0) {
            pollfd p{out_fd_, POLLIN, 0};
            if (poll(&p, 1, 20) > 0) {
                const ssize_t n = read(out_fd_, buf, sizeof buf);
                if (n > 0) {
                    std::lock_guard lk(mu_);
                    tail_.append(buf, static_cast<std::size_t>(n));
                    if (tail_.size() > 2 * opt_.tail_bytes + sizeof buf)
                        tail_.erase(0, tail_.size() - opt_.tail_bytes);
                    continue;
                }
                if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    close(out_fd_);
                    out_fd_ = -1;
                }
            }
        } else {
            struct timespec ts {
                0, 20'000'000
            };
            nanosleep(&ts, nullptr);
        }
        int st = 0;
        pid_t r;
        while ((r = waitpid(-pid_, &st, WNOHANG)) > 0) {
            if (r == pid_) {
                raw_status_ = st;
                end_ns_ = hw::monotonic_ns();
                if (!stopping_.load())
                    by_itself_.store(true);
                leader_done_.store(true);
            }
        }
        if (leader_done_.load() && group_gone()) {
            // Whatever is still in the pipe belongs to the tail.
            while (out_fd_ >= 0) {
                const ssize_t n = read(out_fd_, buf, sizeof buf);
                if (n <= 0) {
                    close(out_fd_);
                    out_fd_ = -1;
                    break;
                }
                std::lock_guard lk(mu_);
                tail_.append(buf, static_cast<std::size_t>(n));
            }
            end_ns_ = hw::monotonic_ns();
            gone_.store(true);
            return;
        }
    }
}

load_result load_process::stop()
{
    if (pid_ <= 0 || stopped_.load())
        return result_;
    stopping_.store(true);
    auto wait_gone = [&](std::int64_t ns) {
        const std::int64_t until = hw::monotonic_ns() + ns;
        while (!gone_.load() && hw::monotonic_ns() < until) {
            struct timespec ts {
                0, 5'000'000
            };
            nanosleep(&ts, nullptr);
        }
        return gone_.load();
    };
    if (!gone_.load()) {
        kill(-pid_, SIGTERM);
        if (!wait_gone(opt_.grace_ns)) {
            kill(-pid_, SIGKILL);
            result_.killed = true;
            wait_gone(std::max<std::int64_t>(opt_.grace_ns, 1'000'000'000));
        }
    }
    // After SIGKILL only a process in uninterruptible sleep is left; it goes when its I/O ends.
    thread_.join();
    stopped_.store(true);
    result_.by_itself = by_itself_.load();
    if (leader_done_.load()) {
        if (WIFEXITED(raw_status_)) {
            result_.status = WEXITSTATUS(raw_status_);
        } else if (WIFSIGNALED(raw_status_)) {
            result_.signal = WTERMSIG(raw_status_);
            result_.status = 128 + result_.signal;
        }
    }
    result_.seconds =
        static_cast<double>((end_ns_ ? end_ns_ : hw::monotonic_ns()) - start_ns_) / 1e9;
    result_.tail = tail();
    return result_;
}

std::string load_process::tail() const
{
    std::lock_guard lk(mu_);
    if (tail_.size() <= opt_.tail_bytes)
        return tail_;
    return tail_.substr(tail_.size() - opt_.tail_bytes);
}

} // namespace irqloop::logger
