// SPDX-License-Identifier: MIT
#include "proc-scan.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace irqloop::test
{

std::vector<int> live_members(const std::vector<int>& groups, const std::vector<int>& pids)
{
    std::vector<int> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream in(e.path() / "stat");
        std::string s{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        const auto rp = s.rfind(')'); // after the command name, which may hold anything
        if (rp == std::string::npos)
            continue;
        std::istringstream f(s.substr(rp + 1));
        char state = 0;
        int ppid = 0, pgrp = 0;
        f >> state >> ppid >> pgrp;
        const int pid = std::stoi(name);
        if (state == 'Z' || state == 'X')
            continue;
        if (std::find(groups.begin(), groups.end(), pgrp) != groups.end() ||
            std::find(pids.begin(), pids.end(), pid) != pids.end())
            out.push_back(pid);
    }
    return out;
}

std::string cmdline_of(int pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string s{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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

} // namespace irqloop::test
