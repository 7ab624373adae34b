// SPDX-License-Identifier: MIT
#include "load-process.hpp"
#include "child-caps.hpp"
#include "cycle-clock.hpp"
#include "load-guard-protocol.hpp"

#include "error.hpp"
#include "thread-name.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

namespace
{

bool executable_file(const std::string& p)
{
    struct stat st {
    };
    return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(p.c_str(), X_OK) == 0;
}

// A descriptor that the child gets as @p target must not already be a low number (a dup2
// onto itself would keep its close-on-exec flag on some C libraries).
int lift(int fd)
{
    if (fd > 9)
        return fd;
    const int up = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (up < 0)
        return fd;
    close(fd);
    return up;
}

} // namespace

std::string find_load_guard()
{
    namespace gp = guard_protocol;
    if (const char* env = secure_getenv(gp::path_variable); env && *env) {
        if (executable_file(env))
            return env;
        throw error(
            "start load", std::string(gp::path_variable) + "=" + env + " is not an executable file",
            "unset it, or point it at the irqloop-load-guard that came with irqloop", exit_failure);
    }
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    std::string dir;
    if (n > 0) {
        self[n] = 0;
        dir = self;
        dir.erase(dir.find_last_of('/') + 1);
    }
    const std::string beside = dir + gp::program_name;
    const std::string installed = dir + IRQLOOP_LOAD_GUARD_REL + "/" + gp::program_name;
    for (const auto& p : {beside, installed})
        if (!dir.empty() && executable_file(p))
            return p;
    throw error("start load",
                "no " + std::string(gp::program_name) + " at " + beside + " or " + installed,
                "reinstall irqloop (the guard ends the load even when irqloop is killed), or set " +
                    std::string(gp::path_variable),
                exit_failure);
}

namespace
{

// The guard's process: its own group, a clean signal state, SCHED_OTHER whatever our thread is.
void set_spawn_attributes(posix_spawnattr_t& at)
{
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
}

struct spawned_guard {
    pid_t pid = -1;
    int out_fd = -1, ctl_fd = -1; // the load's output, our end of the control socket
};

// The guard started as "GUARD GRACE /bin/sh -c COMMAND", its standard output and error on a
// pipe of ours, its control socket on guard_protocol::control_fd.
spawned_guard spawn_guard(const std::string& guard, std::int64_t grace_ns,
                          const std::string& command)
{
    // The load and the shell actions hold no capability, whatever irqloop-rt holds: the guard
    // is started from this thread, which gives it its ambient and inheritable sets.
    if (const int e = base::drop_inheritable_capabilities(); e != 0)
        throw_from_errno(e, "start load: clear the ambient and inheritable capabilities", {},
                         exit_failure);
    int fds[2], sv[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        throw_from_errno(errno, "start load: pipe", {}, exit_failure);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        const int e = errno;
        close(fds[0]);
        close(fds[1]);
        throw_from_errno(e, "start load: socketpair", {}, exit_failure);
    }
    fds[1] = lift(fds[1]);
    sv[1] = lift(sv[1]);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_adddup2(&fa, sv[1], guard_protocol::control_fd);
    set_spawn_attributes(at);
    const std::string grace = std::to_string(std::max<std::int64_t>(grace_ns, 0));
    const char* argv[] = {guard.c_str(), grace.c_str(), "/bin/sh", "-c", command.c_str(), nullptr};
    spawned_guard g;
    const int rc =
        posix_spawn(&g.pid, guard.c_str(), &fa, &at, const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[1]);
    close(sv[1]);
    if (rc != 0) {
        close(fds[0]);
        close(sv[0]);
        throw_from_errno(rc, "start load '" + command + "': " + guard, "reinstall irqloop",
                         exit_failure);
    }
    g.out_fd = fds[0];
    g.ctl_fd = sv[0];
    return g;
}

// The guard's first report (a few ms): its first line into @p first, what came after it into
// @p rest. False, with @p why, when none came within 10 s or the guard ended first.
bool first_report(int ctl_fd, const std::string& guard, std::string& first, std::string& rest,
                  std::string& why)
{
    const std::int64_t until = hw::monotonic_ns() + 10'000'000'000;
    std::string line;
    while (line.find('\n') == std::string::npos) {
        const std::int64_t left = until - hw::monotonic_ns();
        if (left <= 0) {
            why = "the guard " + guard + " did not report within 10 s";
            return false;
        }
        pollfd p{ctl_fd, POLLIN, 0};
        const int pr = poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left / 1'000'000, 100)));
        if (pr < 0 && errno != EINTR) {
            why = std::string("poll: ") + std::strerror(errno);
            return false;
        }
        if (pr <= 0)
            continue;
        char buf[256];
        const ssize_t r = read(ctl_fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            why = "the guard " + guard + " exited before it started the shell";
            return false;
        }
        line.append(buf, static_cast<std::size_t>(r));
    }
    first = line.substr(0, line.find('\n'));
    rest = line.substr(line.find('\n') + 1);
    return true;
}

} // namespace

void load_process::start()
{
    if (pid_ > 0)
        return;
    const std::string guard = opt_.guard.empty() ? find_load_guard() : opt_.guard;
    // Should the guard itself be killed, the shell's orphans come back to us to be reaped.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const spawned_guard g = spawn_guard(guard, opt_.grace_ns, opt_.command);
    guard_pid_ = g.pid;
    out_fd_ = g.out_fd;
    ctl_fd_ = g.ctl_fd;
    auto fail = [&](const std::string& why) {
        kill(g.pid, SIGKILL);
        int st = 0;
        while (waitpid(g.pid, &st, 0) < 0 && errno == EINTR) {
        }
        close(out_fd_);
        close(ctl_fd_);
        out_fd_ = ctl_fd_ = -1;
        guard_pid_ = -1;
        throw error("start load '" + opt_.command + "'", why, "check that /bin/sh exists",
                    exit_failure);
    };
    std::string first, why;
    if (!first_report(ctl_fd_, guard, first, ctl_buf_, why))
        fail(why);
    int v = 0;
    if (std::sscanf(first.c_str(), "group %d", &v) == 1 && v > 0)
        pid_ = v;
    else if (std::sscanf(first.c_str(), "error %d", &v) == 1)
        fail(std::string("the guard could not start /bin/sh: ") + std::strerror(v));
    else
        fail("the guard " + guard + " said '" + first + "'");
    start_ns_ = hw::monotonic_ns();
    result_.started = true;
    // Reports that came with the first one (a shell that ended at once).
    if (!ctl_buf_.empty()) {
        std::string rest;
        rest.swap(ctl_buf_);
        take_reports(rest.data(), rest.size());
    }
    thread_ = std::thread([this] {
        base::name_this_thread("irqloop-load");
        monitor();
    });
}

bool load_process::group_gone() const noexcept
{
    return kill(-pid_, 0) != 0 && errno == ESRCH;
}

// The guard's lines (load-guard-protocol.hpp): the shell's end, and a SIGKILL it had to send.
void load_process::take_reports(const char* data, std::size_t n)
{
    ctl_buf_.append(data, n);
    std::size_t nl;
    while ((nl = ctl_buf_.find('\n')) != std::string::npos) {
        const std::string line = ctl_buf_.substr(0, nl);
        ctl_buf_.erase(0, nl + 1);
        int st = 0;
        if (std::sscanf(line.c_str(), "exit %d", &st) == 1 && !leader_done_.load()) {
            raw_status_ = st;
            end_ns_ = hw::monotonic_ns();
            if (!stopping_.load())
                by_itself_.store(true);
            leader_done_.store(true);
        } else if (line == guard_protocol::killed_word) {
            guard_killed_.store(true);
        }
    }
}

void load_process::monitor()
{
    char buf[4096];
    bool ctl_open = true;
    while (true) {
        pollfd p[2] = {{out_fd_, POLLIN, 0}, {ctl_open ? ctl_fd_ : -1, POLLIN, 0}};
        if (poll(p, 2, 20) > 0) {
            if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
                const ssize_t n = read(ctl_fd_, buf, sizeof buf);
                if (n > 0)
                    take_reports(buf, static_cast<std::size_t>(n));
                else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                    ctl_open = false; // the guard is gone (or going): reaped below
            }
            if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                const ssize_t n = read(out_fd_, buf, sizeof buf);
                if (n > 0) {
                    std::lock_guard lk(mu_);
                    tail_.append(buf, static_cast<std::size_t>(n));
                    if (tail_.size() > 2 * opt_.tail_bytes + sizeof buf)
                        tail_.erase(0, tail_.size() - opt_.tail_bytes);
                } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    close(out_fd_);
                    out_fd_ = -1;
                }
            }
        }
        int st = 0;
        if (!guard_done_.load() && waitpid(guard_pid_, &st, WNOHANG) == guard_pid_)
            guard_done_.store(true);
        // A guard that was killed leaves the group to us (we are a subreaper too).
        pid_t r;
        while ((r = waitpid(-pid_, &st, WNOHANG)) > 0) {
            if (r == pid_ && !leader_done_.load()) {
                raw_status_ = st;
                end_ns_ = hw::monotonic_ns();
                if (!stopping_.load())
                    by_itself_.store(true);
                leader_done_.store(true);
            }
        }
        if (guard_done_.load() && group_gone()) {
            // Whatever is still in the pipe belongs to the tail; a writer outside the load
            // (a process that escaped both) must not keep this thread waiting.
            if (out_fd_ >= 0)
                fcntl(out_fd_, F_SETFL, fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
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
            // The guard reaped the shell; an 'exit' report still in the socket is read here.
            while (ctl_open) {
                const ssize_t n = read(ctl_fd_, buf, sizeof buf);
                if (n <= 0)
                    break;
                take_reports(buf, static_cast<std::size_t>(n));
            }
            if (!leader_done_.load()) {
                if (!stopping_.load())
                    by_itself_.store(true);
                leader_done_.store(true);
            }
            end_ns_ = end_ns_ ? end_ns_ : hw::monotonic_ns();
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
        // The order to the guard: end of file on its socket. It sends SIGTERM, and SIGKILL
        // after the grace.
        shutdown(ctl_fd_, SHUT_WR);
        if (!wait_gone(std::max<std::int64_t>(opt_.grace_ns, 0) + 1'000'000'000)) {
            // The guard is stuck or was stopped (SIGSTOP): do its job.
            kill(guard_pid_, SIGKILL);
            kill(-pid_, SIGKILL);
            result_.killed = true;
            wait_gone(std::max<std::int64_t>(opt_.grace_ns, 1'000'000'000));
        }
    }
    // After SIGKILL only a process in uninterruptible sleep is left; it goes when its I/O ends.
    thread_.join();
    if (ctl_fd_ >= 0) {
        close(ctl_fd_);
        ctl_fd_ = -1;
    }
    stopped_.store(true);
    result_.killed = result_.killed || guard_killed_.load();
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
