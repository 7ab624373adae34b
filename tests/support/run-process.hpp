// SPDX-License-Identifier: MIT
// The one process runner of every test area: a child to completion (argv or a shell command
// line) or left running in the background.
#pragma once

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

/** @brief Run argv to completion (argv[0] a path, no shell, no PATH search), capturing both
 * streams. */
process_result run_process(const std::vector<std::string>& argv);

/**
 * @brief Run @p command_line with /bin/sh -c to completion; standard error goes into `out`
 * with standard output, in the order written. For redirections, pipes and tools on PATH.
 */
process_result run_shell(const std::string& command_line);

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

} // namespace irqloop::test
