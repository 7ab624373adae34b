// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace irqloop::base
{

/**
 * @brief The first executable @p name in PATH, "" when there is none. PATH is read with
 * secure_getenv: an irqloop-rt with file capabilities (secure mode) starts no program the
 * environment names and looks in /usr/bin and /bin only, so a process with raised privileges
 * runs only what the administrator installed (its child would hold no capability anyway:
 * drop_inheritable_capabilities). /usr/bin/irqloop honours PATH.
 */
std::string find_program(std::string_view name);

/**
 * @brief Clears the calling thread's ambient and inheritable capability sets, so that a
 * program it starts (posix_spawn, fork + exec) holds no capability: an irqloop-rt with file
 * capabilities passes none to a --load-cmd load, an --on-threshold shell action or gnuplot.
 *
 * Capabilities belong to a thread: call it in the thread that spawns, before the spawn (or in
 * the child between fork and exec: only prctl and capset, async-signal-safe). The permitted
 * and effective sets stay, so the calling program keeps what it runs with. A process whose
 * real and effective uid are 0 still starts its children as root (the kernel gives root's
 * programs every capability at exec): that is root's own, not raised privilege.
 * @return 0, or the errno of the failing call (nothing to clear is no failure).
 */
int drop_inheritable_capabilities() noexcept;

} // namespace irqloop::base
