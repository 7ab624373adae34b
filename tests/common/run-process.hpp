// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace irqloop::test {

/** @brief What a finished child process left behind. */
struct process_result
{
    int exit_code = -1;     ///< exit status, or 128 + signal number when killed
    std::string out;        ///< standard output
    std::string err;        ///< standard error
    double seconds = 0;     ///< wall time
};

/** @brief Run argv to completion (no shell), capturing both streams. */
process_result run_process(const std::vector<std::string>& argv);

/** @brief A child left running in the background; killed (SIGKILL) and reaped on destruction. */
class background_process final
{
public:
    explicit background_process(const std::vector<std::string>& argv, const std::string& log_path = "/dev/null");
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

/** @brief A fresh, empty directory under /tmp, removed with its contents on destruction. */
class temp_dir final
{
public:
    temp_dir();
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const std::string& path() const noexcept { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

} // namespace irqloop::test
