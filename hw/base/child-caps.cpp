// SPDX-License-Identifier: MIT
#include "child-caps.hpp"

#include <cerrno>
#include <cstdlib>
#include <linux/capability.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace irqloop::base
{

int drop_inheritable_capabilities() noexcept
{
    int err = 0;
    // A kernel older than 4.3 has no ambient set (EINVAL): nothing there to pass on.
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        err = errno;
    __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capget, &hdr, data) != 0)
        return err ? err : errno;
    if (data[0].inheritable == 0 && data[1].inheritable == 0)
        return err;
    data[0].inheritable = data[1].inheritable = 0;
    if (syscall(SYS_capset, &hdr, data) != 0)
        return err ? err : errno;
    return err;
}

std::string find_program(std::string_view name)
{
    const char* path = secure_getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const auto p = (dir.empty() ? std::string(".") : dir) + "/" + std::string(name);
        if (::access(p.c_str(), X_OK) == 0)
            return p;
    }
    return {};
}

} // namespace irqloop::base
