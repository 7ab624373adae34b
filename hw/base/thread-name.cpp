// SPDX-License-Identifier: MIT
#include "thread-name.hpp"

#include <algorithm>
#include <pthread.h>

namespace irqloop::base
{

void name_this_thread(std::string_view name) noexcept
{
    char buf[16] = {}; // the kernel's TASK_COMM_LEN, with its terminating NUL
    const std::size_t n = std::min(name.size(), sizeof buf - 1);
    std::copy_n(name.data(), n, buf);
    (void)pthread_setname_np(pthread_self(), buf);
}

std::string this_thread_name()
{
    char buf[16] = {};
    if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0)
        return {};
    return buf;
}

} // namespace irqloop::base
