// SPDX-License-Identifier: MIT
// Marks: SIGUSR1 during a run stores a `mark` event (session-plugins.hpp, issue 31).
#include "session-core.hpp"
#include "session-plugins.hpp"

#include "error.hpp"

#include <cerrno>
#include <csignal>
#include <fstream>

namespace irqloop::logger
{

namespace
{

// Written by the handler, read by the caller's thread in on_tick(). Standard signals do not
// queue: two SIGUSR1 that arrive before the handler ran are one mark.
std::atomic<std::uint64_t> marks_received{0};
std::atomic<pid_t> last_sender{0};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the handler stores to it");
static_assert(std::atomic<pid_t>::is_always_lock_free, "the handler stores to it");

extern "C" void on_mark_signal(int, siginfo_t* info, void*)
{
    last_sender.store(info ? info->si_pid : 0, std::memory_order_relaxed);
    marks_received.fetch_add(1, std::memory_order_release);
}

// "pid 4242 (bash)": the sender, as far as /proc still knows it.
std::string sender_text(pid_t pid)
{
    if (pid <= 0)
        return "the kernel or an unknown sender";
    std::string comm;
    std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
    std::getline(f, comm);
    return "pid " + std::to_string(pid) + (comm.empty() ? "" : " (" + comm + ")");
}

} // namespace

run_marks::run_marks(session& s) : s_(s)
{
    struct sigaction sa {
    };
    sa.sa_sigaction = on_mark_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    seen_ = marks_received.load(std::memory_order_acquire);
    if (sigaction(SIGUSR1, &sa, &old_) != 0)
        throw_from_errno(errno, "install the SIGUSR1 handler (marks)", "this is a bug",
                         exit_failure);
}

run_marks::~run_marks()
{
    sigaction(SIGUSR1, &old_, nullptr);
}

void run_marks::on_tick()
{
    take("");
}

void run_marks::on_end(run_outcome&)
{
    // A mark sent in the last 20 ms of the run, before the recording closes.
    take(" (as the run ended)");
}

void run_marks::take(const char* when)
{
    const std::uint64_t now = marks_received.load(std::memory_order_acquire);
    if (now == seen_)
        return;
    const std::uint64_t n = now - seen_;
    seen_ = now;
    numbered_ += 1;
    const std::uint64_t at = s_.stimuli();
    std::string detail = "mark " + std::to_string(numbered_) + ": SIGUSR1 from " +
                         sender_text(last_sender.load(std::memory_order_relaxed)) +
                         " at stimulus " + std::to_string(at) + when;
    if (n > 1)
        detail += "; " + std::to_string(n) + " signals within one 20 ms tick, kept as one mark";
    // On the caller's thread: posted, the recorder's thread stores it.
    s_.post({unix_now_ns(), at, "mark", static_cast<std::int64_t>(numbered_), std::move(detail)});
}

} // namespace irqloop::logger
