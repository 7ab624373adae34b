// SPDX-License-Identifier: MIT
// irqloop-load-guard: the keeper of one --load-cmd load (and of each --on-threshold shell).
//
//   irqloop-load-guard GRACE_NS PROGRAM [ARG...]      (fd 3: a control socket to irqloop)
//
// irqloop starts it with posix_spawn (no fork of the sampler's locked memory) in a process
// group of its own. It starts PROGRAM (`/bin/sh -c CMD`) as the leader of a second group,
// becomes a child subreaper, and then waits. Whatever makes irqloop's end of the control
// socket close — irqloop stopping the load, or irqloop dying by SIGKILL or a crash — reads as
// end of file here, and the guard ends the load: SIGTERM to the load's group and to every
// process that has been reparented to it (a `setsid` child whose parent died), then after
// GRACE_NS SIGKILL to all of them, again and again until it has no child left. Unlike
// PR_SET_PDEATHSIG, which fires when the spawning *thread* ends, the socket closes only when
// the whole irqloop process is gone, and there is no window: a socket whose peer died before
// the guard looked at it already reads end of file.
//
// It reports on the socket (load-guard-protocol.hpp): the load's group, the shell's exit
// status, and whether SIGKILL was needed. It exits once it has no child left and the shell
// has ended. It links nothing but the C library.
#include "load-guard-protocol.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace proto = irqloop::logger::guard_protocol;

namespace
{

const char* const me = proto::program_name;

// After SIGKILL only a process in uninterruptible sleep can live on; it is looked after this
// long at most.
constexpr std::int64_t give_up_ns = 60'000'000'000;

std::int64_t now_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// One line to irqloop. A peer that is gone is not an error: the guard's job goes on.
void say(const char* fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    const int n = std::vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    std::size_t len = std::min<std::size_t>(std::size_t(n), sizeof line - 2);
    line[len++] = '\n';
    std::size_t done = 0;
    while (done < len) {
        const ssize_t w = send(proto::control_fd, line + done, len - done, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        done += std::size_t(w);
    }
}

// The processes whose parent is this guard, read from /proc/PID/stat ("pid (comm) S ppid
// ..."; comm may hold spaces and parentheses, so the fields are read after the last ')').
// /proc/self/task/N/children would be shorter, but it needs CONFIG_PROC_CHILDREN.
std::vector<pid_t> my_children()
{
    std::vector<pid_t> out;
    const pid_t self = getpid();
    DIR* d = opendir("/proc");
    if (!d)
        return out;
    while (dirent* e = readdir(d)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end)
            continue;
        char path[64], buf[512];
        std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        const ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        const char* rp = std::strrchr(buf, ')');
        char state = 0;
        long ppid = 0;
        if (rp && std::sscanf(rp + 1, " %c %ld", &state, &ppid) == 2 && ppid == self &&
            state != 'Z')
            out.push_back(pid_t(pid));
    }
    closedir(d);
    return out;
}

struct guard {
    std::int64_t grace_ns = 0;
    pid_t shell = -1;          // the load's shell, leader of the load's group
    bool shell_done = false;   // reaped
    bool ending = false;       // the order came: the load is being ended
    bool killing = false;      // the grace ran out
    std::int64_t kill_at = 0;  // when SIGKILL goes out
    std::vector<pid_t> termed; // processes already sent SIGTERM (one each: a trap runs once)
    bool group_termed = false;

    // Signal the load's group and every child of the guard outside it, and each of those
    // children's own group (a `setsid` child leads one).
    void sweep(int sig)
    {
        if (sig == SIGKILL || !group_termed) {
            kill(-shell, sig);
            group_termed = true;
        }
        for (pid_t c : my_children()) {
            if (sig == SIGTERM) {
                bool seen = false;
                for (pid_t t : termed)
                    seen = seen || t == c;
                if (seen)
                    continue;
                termed.push_back(c);
            }
            kill(c, sig);
            if (c != shell)
                kill(-c, sig);
        }
    }
    void begin_end()
    {
        if (ending)
            return;
        ending = true;
        kill_at = now_ns() + grace_ns;
        sweep(SIGTERM);
    }

    // Reap what has ended; true when no child is left.
    bool reap()
    {
        while (true) {
            int st = 0;
            const pid_t r = waitpid(-1, &st, WNOHANG);
            if (r > 0) {
                if (r == shell) {
                    shell_done = true;
                    say("%s %d", proto::exit_word, st);
                }
                continue;
            }
            if (r == 0)
                return false;
            if (errno == EINTR)
                continue;
            return errno == ECHILD;
        }
    }
};

int usage(const char* why)
{
    std::fprintf(stderr,
                 "%s: %s (this program is started by irqloop for --load-cmd; usage: %s "
                 "GRACE_NS PROGRAM [ARG...] with fd %d a control socket)\n",
                 me, why, me, proto::control_fd);
    return 2;
}

// The shell in a process group of its own, with a clean signal state; its group reported.
bool spawn_shell(guard& g, char** argv)
{
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, deflt;
    sigemptyset(&none);
    sigemptyset(&deflt);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD})
        sigaddset(&deflt, s);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &deflt);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    const int rc = posix_spawn(&g.shell, argv[0], nullptr, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        say("%s %d %s", proto::error_word, rc, argv[0]);
        return false;
    }
    say("%s %d", proto::group_word, int(g.shell));
    return true;
}

// Until the load is gone: reap, sweep the group (SIGTERM, then SIGKILL after the grace), and
// begin the end on a stop signal or when irqloop's end of the control socket closes.
int watch(guard& g, int sfd)
{
    bool control_open = true;
    while (true) {
        if (g.reap() && g.shell_done)
            return g.killing ? 1 : 0;
        if (g.ending && !g.killing && now_ns() >= g.kill_at) {
            g.killing = true;
            say("%s", proto::killed_word);
        }
        if (g.killing && now_ns() >= g.kill_at + give_up_ns)
            return 1; // only a process stuck in the kernel (D state) can be left; not forever
        if (g.killing)
            g.sweep(SIGKILL);
        else if (g.ending)
            g.sweep(SIGTERM); // processes reparented since the last look get theirs too

        pollfd p[2] = {{sfd, POLLIN, 0}, {control_open ? proto::control_fd : -1, POLLIN, 0}};
        int timeout = -1;
        if (g.ending)
            timeout = 20; // look again for new orphans; SIGCHLD wakes the guard earlier
        const int n = poll(p, 2, timeout);
        if (n < 0 && errno != EINTR)
            g.begin_end();
        if (p[0].revents & POLLIN) {
            signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == sizeof si)
                if (si.ssi_signo != SIGCHLD)
                    g.begin_end();
        }
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[64];
            const ssize_t r = read(proto::control_fd, buf, sizeof buf);
            if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
                control_open = false;
                g.begin_end();
            }
        }
    }
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3)
        return usage("too few arguments");
    char* end = nullptr;
    errno = 0;
    const long long grace = std::strtoll(argv[1], &end, 10);
    if (errno || *end || grace < 0 || grace > 86'400'000'000'000LL)
        return usage("GRACE_NS is not a number of nanoseconds from 0 to 1 day");
    int type = 0;
    socklen_t tl = sizeof type;
    if (getsockopt(proto::control_fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM)
        return usage("fd 3 is not a stream socket");
    fcntl(proto::control_fd, F_SETFD, FD_CLOEXEC);

    // Orphans of the load come to the guard, not to init: they stay within reach.
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        say("%s %d %s", proto::error_word, errno, "prctl(PR_SET_CHILD_SUBREAPER)");
        return 1;
    }
    // The stop signals are orders to end the load too (someone may signal the guard by
    // hand); SIGCHLD is read from the same descriptor.
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT})
        sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    signal(SIGPIPE, SIG_IGN);
    const int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        say("%s %d %s", proto::error_word, errno, "signalfd");
        return 1;
    }

    guard g;
    g.grace_ns = grace;
    if (!spawn_shell(g, argv + 2))
        return 1;

    // The load's output pipe must reach end of file when the load is done, not when the
    // guard is: the guard keeps no copy of it.
    const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 1);
        dup2(devnull, 2);
        close(devnull);
    }

    return watch(g, sfd);
}
