// SPDX-License-Identifier: MIT
#include "stop-signal.hpp"

#include "error.hpp"

#include <cerrno>
#include <csignal>

namespace irqloop::base
{

namespace
{

std::atomic<bool> stop_flag{false};
volatile std::sig_atomic_t stop_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "the handler stores to it");

std::atomic<bool> installed{false};
struct sigaction old_int {
}, old_term{}, old_hup{}; // put back by the destructor

extern "C" void on_stop_signal(int sig)
{
    stop_signal = sig;
    stop_flag.store(true);
}

} // namespace

stop_signals::stop_signals()
{
    if (installed.exchange(true))
        throw error("install the stop signals", "they are already installed", "this is a bug",
                    exit_failure);
    stop_flag.store(false);
    stop_signal = 0;
    struct sigaction sa {
    };
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, &old_int) != 0) {
        installed.store(false);
        throw_from_errno(errno, "install the SIGINT handler", "this is a bug", exit_failure);
    }
    if (sigaction(SIGTERM, &sa, &old_term) != 0) {
        int err = errno;
        sigaction(SIGINT, &old_int, nullptr);
        installed.store(false);
        throw_from_errno(err, "install the SIGTERM handler", "this is a bug", exit_failure);
    }
    // SIGHUP (the SSH session or terminal went away) ends a run like SIGTERM: cleanly, with
    // the summary and the status 128 + 1.
    if (sigaction(SIGHUP, &sa, &old_hup) != 0) {
        int err = errno;
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
        installed.store(false);
        throw_from_errno(err, "install the SIGHUP handler", "this is a bug", exit_failure);
    }
}

stop_signals::~stop_signals()
{
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
    installed.store(false);
}

std::atomic<bool>& stop_signals::flag() noexcept
{
    return stop_flag;
}

int stop_signals::signal() const noexcept
{
    return static_cast<int>(stop_signal);
}

} // namespace irqloop::base
