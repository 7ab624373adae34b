// SPDX-License-Identifier: MIT
// The one process runner of every test area: a child to completion (argv or a shell command
// line) or left running in the background.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace irqloop::test
{

/** @brief What a finished child process left behind. */
struct process_result {
    int status = -1;    ///< exit status, or 128 + signal number when killed
    std::string out;    ///< standard output (with standard error too, from run_shell)
    std::string err;    ///< standard error (empty from run_shell)
    double seconds = 0; ///< wall time
};

/**
 * @brief The emulator that starts programs built for another architecture (a cross build's
 * tests under qemu-user without binfmt_misc): the words of IRQLOOP_TEST_EXEC_PREFIX if that is
 * set (e.g. "qemu-aarch64"), else the build's CMAKE_CROSSCOMPILING_EMULATOR; empty natively.
 */
const std::vector<std::string>& exec_prefix();

/**
 * @brief @p path as the start of a run_shell command line: single-quoted, after the
 * exec_prefix() words when there are any (the shell cannot fall back to an emulator itself).
 */
std::string shell_program(const std::string& path);

/** @brief Run argv to completion (argv[0] a path, no shell, no PATH search), capturing both
 * streams. A program the kernel cannot execute (ENOEXEC: another architecture) is started
 * through exec_prefix() when there is one. */
process_result run_process(const std::vector<std::string>& argv);

/** @brief run_process() of the irqloop binary this build made, with the words @p args. */
process_result run_irqloop(std::vector<std::string> args);

/**
 * @brief Run @p command_line with /bin/sh -c to completion; standard error goes into `out`
 * with standard output, in the order written. For redirections, pipes and tools on PATH.
 */
process_result run_shell(const std::string& command_line);

/** @brief The whole text of @p path (a background_process's log), or "" when it cannot be read. */
std::string file_text(const std::string& path);

/** @brief A child left running in the background; killed (SIGKILL) and reaped on destruction. */
class background_process final
{
public:
    explicit background_process(const std::vector<std::string>& argv,
                                const std::string& log_path = "/dev/null");
    ~background_process();
    background_process(const background_process&) = delete;
    background_process& operator=(const background_process&) = delete;

    int pid() const noexcept { return pid_; }
    /** @brief Send a signal. */
    void signal(int sig) const;
    /** @brief Wait for exit; returns the exit code, or 128 + signal. */
    int wait();

private:
    int pid_ = -1;
    bool reaped_ = false;
};

/**
 * @brief Waits until @p ready returns true, polling every 20 ms for at most @p seconds; true
 * when it did. A readiness wait, not a timing assertion: the limit is only there so that a
 * broken child cannot hang the test.
 */
bool wait_until(const std::function<bool()>& ready, double seconds);

/** @brief wait_until() the file at @p path holds @p text (a background process's start line). */
bool wait_for_text(const std::string& path, const std::string& text, double seconds);

} // namespace irqloop::test
