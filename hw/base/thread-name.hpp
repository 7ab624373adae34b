// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace irqloop::base
{

/**
 * @brief Names the calling thread, as `top -H`, `ps -L` and /proc/PID/task/TID/comm show it.
 *
 * The kernel keeps 15 bytes of a thread's name: a longer @p name is cut there. A failure
 * changes nothing else (the name is for people reading a process list, never for the run).
 * Never throws, never allocates.
 *
 * The names irqloop's threads take: `irqloop-sampler` (the sampler, which drives and senses),
 * `irqloop-record` (the recorder, which stores), `irqloop-simtgt` (the simulated board's far
 * end, `far=thread`), `irqloop-pp-sim` (the simulated parallel port's target), `irqloop-load`
 * (the --load-cmd monitor), `irqloop-action` (the --on-threshold actions), `irqloop-rtprobe`
 * (--strict-rt's probe), and the responder's `irqloop-report` (its once-a-second reporter).
 */
void name_this_thread(std::string_view name) noexcept;

/** @brief The calling thread's name as the kernel holds it; empty when it cannot be read. */
std::string this_thread_name();

} // namespace irqloop::base
