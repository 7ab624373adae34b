// SPDX-License-Identifier: MIT
#include "run-process.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace irqloop::test {

namespace {

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

} // namespace

process_result run_process(const std::vector<std::string>& argv)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        throw std::runtime_error("pipe failed");
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
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
        poll(fds, 2, -1);
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
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
    r.exit_code = decode(status);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

background_process::background_process(const std::vector<std::string>& argv, const std::string& log_path)
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

temp_dir::temp_dir()
{
    char tmpl[] = "/tmp/irqloop-test-XXXXXX";
    if (!mkdtemp(tmpl))
        throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

temp_dir::~temp_dir()
{
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

} // namespace irqloop::test
