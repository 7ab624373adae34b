// SPDX-License-Identifier: MIT
#include "run-process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace irqloop::test
{

namespace
{

std::vector<char*> c_argv(const std::vector<std::string>& argv)
{
    std::vector<char*> v;
    for (const auto& a : argv)
        v.push_back(const_cast<char*>(a.c_str()));
    v.push_back(nullptr);
    return v;
}

int decode(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

process_result run(const std::vector<std::string>& argv, bool merge_err)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        throw std::runtime_error("pipe failed");
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(merge_err ? out[1] : err[1], 2);
        auto v = c_argv(argv);
        execv(v[0], v.data());
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    process_result r;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    char buf[4096];
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            throw std::runtime_error("poll failed");
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            } else {
                (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
            }
        }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = decode(status);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

} // namespace

process_result run_process(const std::vector<std::string>& argv)
{
    return run(argv, false);
}

process_result run_shell(const std::string& command_line)
{
    return run({"/bin/sh", "-c", command_line}, true);
}

background_process::background_process(const std::vector<std::string>& argv,
                                       const std::string& log_path)
{
    pid_ = fork();
    if (pid_ == 0) {
        int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        auto v = c_argv(argv);
        execv(v[0], v.data());
        _exit(127);
    }
    if (pid_ < 0)
        throw std::runtime_error("fork failed");
}

background_process::~background_process()
{
    if (!reaped_ && pid_ > 0) {
        kill(pid_, SIGKILL);
        wait();
    }
}

void background_process::signal(int sig) const
{
    kill(pid_, sig);
}

int background_process::wait()
{
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return decode(status);
}

} // namespace irqloop::test
