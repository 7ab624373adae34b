// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>

namespace irqloop::base
{

/**
 * @brief SIGINT, SIGTERM and SIGHUP turned into a stop flag, for the life of this object.
 *
 * The constructor clears the flag and installs the handlers; the destructor puts back the
 * handlers that were there before. The first signal sets flag() and records its number; the
 * handler is then reset to the default action, so a second signal ends the program the usual
 * way (for a program that does not stop). Every wait in either program checks flag().
 * Only one may exist at a time (the handlers are process-wide).
 */
class stop_signals final
{
public:
    /** @throws irqloop::error (exit 1) when another one exists or sigaction fails. */
    stop_signals();
    ~stop_signals();
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;

    /** @brief Set by the first signal; the program may set it too (a time limit, say). */
    std::atomic<bool>& flag() noexcept;

    /** @brief The signal that set the flag, or 0 when none arrived. */
    int signal() const noexcept;
};

} // namespace irqloop::base
