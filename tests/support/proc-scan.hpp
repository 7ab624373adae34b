// SPDX-License-Identifier: MIT
// What /proc says about other processes, for the tests that check that nothing of a load
// (its group, its orphans, children in new sessions) outlives the run.
#pragma once

#include <string>
#include <vector>

namespace irqloop::test
{

/**
 * @brief The processes that still run (zombies do not: an orphan's parent may be slow to reap
 * it) and belong to one of @p groups or are one of @p pids.
 */
std::vector<int> live_members(const std::vector<int>& groups, const std::vector<int>& pids);

/**
 * @brief The text of a file under /proc/PID; empty when the process is gone or goes while it
 * is read. (A std::ifstream read through istreambuf_iterator throws there: the kernel answers
 * ESRCH to a read of an exiting process's stat, and libstdc++'s underflow turns that into
 * std::ios_base::failure. That failed a fresh-clone run's [soak] area once.)
 */
std::string read_proc_file(const std::string& path);

/** @brief The parent pid in /proc/PID/stat; -1 when the process is gone. */
int parent_of(int pid);

/** @brief A process's command line, its words joined by spaces; empty once it is gone. */
std::string cmdline_of(int pid);

/** @brief The pid a process wrote into @p path, or -1 while the file is missing or empty. */
int read_pid(const std::string& path);

/** @brief Whether any process of group @p pgid is still there (zombies included). */
bool group_alive(int pgid);

/** @brief A load command that runs until it is stopped, and how it takes SIGTERM. */
struct endless_load {
    const char* name; ///< a section name
    std::string command;
    bool ignores_term; ///< only the SIGKILL at the end of the grace ends it
};

/**
 * @brief The three endless loads of the tests that check nothing of a load is left: a loop, a
 * loop that ignores SIGTERM, and one whose two children start sessions of their own (one of
 * them orphaned at once, all ignoring SIGTERM); those children write their pids into
 * @p pid_file1 and @p pid_file2 and carry the mark kill_escapees() looks for.
 */
std::vector<endless_load> endless_loads(const std::string& pid_file1, const std::string& pid_file2);

/**
 * @brief SIGKILL to each of @p pids that is still one of endless_loads()' escaped children
 * (checked by its command line, so that a recycled pid is never hit).
 */
void kill_escapees(const std::vector<int>& pids);

} // namespace irqloop::test
