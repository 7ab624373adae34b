// SPDX-License-Identifier: MIT
#include "proc-scan.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace irqloop::test
{

std::string read_proc_file(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {};
    std::string s;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) { // ESRCH: it exited between open and read
            s.clear();
            break;
        }
        if (n == 0)
            break;
        s.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return s;
}

namespace
{

// The fields of /proc/PID/stat after the command name (which may hold anything, ')' too).
struct stat_fields {
    char state = 0;
    int ppid = -1;
    int pgrp = -1;
};

std::optional<stat_fields> read_stat(const std::string& path)
{
    const std::string s = read_proc_file(path);
    const auto rp = s.rfind(')');
    if (rp == std::string::npos)
        return std::nullopt; // gone
    std::istringstream f(s.substr(rp + 1));
    stat_fields st;
    f >> st.state >> st.ppid >> st.pgrp;
    return st;
}

} // namespace

int parent_of(int pid)
{
    const auto st = read_stat("/proc/" + std::to_string(pid) + "/stat");
    return st ? st->ppid : -1;
}

std::vector<int> live_members(const std::vector<int>& groups, const std::vector<int>& pids)
{
    std::vector<int> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const auto st = read_stat(e.path() / "stat");
        if (!st || st->state == 'Z' || st->state == 'X')
            continue;
        const int pid = std::stoi(name);
        if (std::find(groups.begin(), groups.end(), st->pgrp) != groups.end() ||
            std::find(pids.begin(), pids.end(), pid) != pids.end())
            out.push_back(pid);
    }
    return out;
}

std::string cmdline_of(int pid)
{
    std::string s = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(s.begin(), s.end(), '\0', ' ');
    return s;
}

int read_pid(const std::string& path)
{
    std::ifstream in(path);
    int pid = -1;
    in >> pid;
    return pid;
}

bool group_alive(int pgid)
{
    return kill(-pgid, 0) == 0 || errno != ESRCH;
}

namespace
{
const std::string escapee_mark = "soak-escapee";
}

std::vector<endless_load> endless_loads(const std::string& pid_file1, const std::string& pid_file2)
{
    const std::string loop = "while :; do sleep 0.05; done";
    const auto escapee = [&](const std::string& pid_file) {
        return "setsid sh -c ': " + escapee_mark + "; echo $$ > " + pid_file +
               "; trap \"\" TERM; " + loop + "'";
    };
    return {
        {"a loop", loop, false},
        {"a loop that ignores SIGTERM", "trap '' TERM; " + loop, true},
        {"children in new sessions, one orphaned at once, all ignoring SIGTERM",
         escapee(pid_file1) + " & (" + escapee(pid_file2) + " &); trap '' TERM; " + loop, true},
    };
}

void kill_escapees(const std::vector<int>& pids)
{
    for (int e : pids)
        if (e > 0 && cmdline_of(e).find(escapee_mark) != std::string::npos)
            kill(e, SIGKILL);
}

} // namespace irqloop::test
