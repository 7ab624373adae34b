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

/** @brief A process's command line, its words joined by spaces; empty once it is gone. */
std::string cmdline_of(int pid);

/** @brief The pid a process wrote into @p path, or -1 while the file is missing or empty. */
int read_pid(const std::string& path);

} // namespace irqloop::test
