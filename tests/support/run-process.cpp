// SPDX-License-Identifier: MIT
#include "run-process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
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

/**
 * @brief A program's argv, and the same after the emulator's words, made before fork() so
 * that the child only calls exec: execv, and on ENOEXEC (another architecture) the emulator.
 */
class launch final
{
public:
    explicit launch(const std::vector<std::string>& argv) : argv_(argv)
    {
        with_ = exec_prefix();
        with_.insert(with_.end(), argv.begin(), argv.end());
        plain_ = c_argv(argv_);
        emulated_ = c_argv(with_);
        emulate_ = !exec_prefix().empty();
    }
    [[noreturn]] void exec() const
    {
        execv(plain_[0], plain_.data());
        if (errno == ENOEXEC && emulate_)
            execvp(emulated_[0], emulated_.data());
        _exit(127);
    }

private:
    std::vector<std::string> argv_, with_;
    std::vector<char*> plain_, emulated_;
    bool emulate_ = false;
};

int decode(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

process_result run(const std::vector<std::string>& argv, bool merge_err)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        throw std::runtime_error("pipe failed");
    const launch program(argv);
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(merge_err ? out[1] : err[1], 2);
        program.exec();
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

const std::vector<std::string>& exec_prefix()
{
    // Read once, before any fork: the child only uses the copy.
    static const std::vector<std::string> words = [] {
        const char* env = std::getenv("IRQLOOP_TEST_EXEC_PREFIX");
#ifdef IRQLOOP_TEST_EMULATOR
        const char* text = env ? env : IRQLOOP_TEST_EMULATOR;
#else
        const char* text = env ? env : "";
#endif
        std::vector<std::string> w;
        std::istringstream in(text);
        for (std::string word; in >> word;)
            w.push_back(word);
        return w;
    }();
    return words;
}

std::string shell_program(const std::string& path)
{
    auto quote = [](const std::string& s) {
        std::string q = "'";
        for (char c : s)
            q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return q + "'";
    };
    std::string line;
    for (const auto& w : exec_prefix())
        line += quote(w) + " ";
    return line + quote(path);
}

process_result run_process(const std::vector<std::string>& argv)
{
    return run(argv, false);
}

process_result run_irqloop(std::vector<std::string> args)
{
    args.insert(args.begin(), IRQLOOP_BIN);
    return run_process(args);
}

process_result run_shell(const std::string& command_line)
{
    return run({"/bin/sh", "-c", command_line}, true);
}

background_process::background_process(const std::vector<std::string>& argv,
                                       const std::string& log_path)
{
    const launch program(argv);
    pid_ = fork();
    if (pid_ == 0) {
        int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        program.exec();
    }
    if (pid_ < 0)
        throw std::runtime_error("fork failed");
}

background_process::~background_process()
{
    if (!reaped_ && pid_ > 0) {
        // A test that failed before it waited: ask first, so that an irqloop run stops its
        // --load-cmd group (a SIGKILL here once left a test's load looping, orphaned, for half
        // an hour), and kill only if it has not ended within 5 s.
        kill(pid_, SIGTERM);
        int status = 0;
        for (int i = 0; i < 100; ++i) {
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                reaped_ = true;
                return;
            }
            usleep(50'000);
        }
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

std::string file_text(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool wait_until(const std::function<bool()>& ready, double seconds)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    do {
        if (ready())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < until);
    return false;
}

bool wait_for_text(const std::string& path, const std::string& text, double seconds)
{
    return wait_until([&] { return file_text(path).find(text) != std::string::npos; }, seconds);
}

} // namespace irqloop::test
