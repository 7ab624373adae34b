// SPDX-License-Identifier: MIT
#include "rt-setup.hpp"

#include "error.hpp"
#include "thread-name.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace irqloop::base
{

rt_session::rt_session(const rt_request& req) : req_(req)
{
    have_start_cpus_ = sched_getaffinity(0, sizeof start_cpus_, &start_cpus_) == 0;
    if (req_.mlock) {
        if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
            mlocked_ = true;
        else
            misses_.push_back(std::string("mlockall: ") + std::strerror(errno) +
                              " (run as root or raise RLIMIT_MEMLOCK)");
    }
    if (req_.dma_latency) {
        // The kernel keeps the PM QoS request only while the file stays open.
        dma_fd_ = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
        std::int32_t zero = 0;
        if (dma_fd_ < 0 || write(dma_fd_, &zero, sizeof zero) != sizeof zero) {
            misses_.push_back(std::string("/dev/cpu_dma_latency: ") + std::strerror(errno) +
                              " (run as root to keep CPUs out of deep idle states)");
            if (dma_fd_ >= 0)
                close(dma_fd_);
            dma_fd_ = -1;
        }
    }
}

rt_session::~rt_session()
{
    if (dma_fd_ >= 0)
        close(dma_fd_);
    if (mlocked_)
        munlockall();
}

namespace
{

// Priority and affinity of the calling thread; what was not obtained goes to @p misses.
void set_thread(const rt_request& req, bool& sched_ok, bool& cpu_ok,
                std::vector<std::string>& misses) noexcept
{
    if (req.priority > 0) {
        sched_param sp{};
        sp.sched_priority = req.priority;
        int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
        sched_ok = err == 0;
        if (err)
            misses.push_back(std::string("SCHED_FIFO priority ") + std::to_string(req.priority) +
                             ": " + std::strerror(err) + " (run as root or set RLIMIT_RTPRIO)");
    }
    if (req.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(req.cpu, &set);
        int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        cpu_ok = err == 0;
        if (err)
            misses.push_back("pin to CPU " + std::to_string(req.cpu) + ": " + std::strerror(err) +
                             " (check the CPU exists and is in this cpuset)");
    }
}

} // namespace

void rt_session::apply_to_this_thread() noexcept
{
    set_thread(req_, sched_ok_, cpu_ok_, misses_);
}

void rt_session::demote_thread(pthread_t thread) const noexcept
{
    sched_param sp{};
    sp.sched_priority = 0;
    (void)pthread_setschedparam(thread, SCHED_OTHER, &sp);
    if (have_start_cpus_)
        (void)pthread_setaffinity_np(thread, sizeof start_cpus_, &start_cpus_);
}

void rt_session::check_strict_early() const
{
    if (!req_.strict)
        return;
    check_strict();
    // The thread settings, tried on a thread that ends at once: the sampler's own thread
    // gets them only after the wire has started.
    bool sched_ok = false, cpu_ok = false;
    std::vector<std::string> misses;
    std::thread probe([&] {
        name_this_thread("irqloop-rtprobe");
        set_thread(req_, sched_ok, cpu_ok, misses);
    });
    probe.join();
    if (!misses.empty())
        throw error("set up real-time scheduling (--strict-rt)", misses.front(),
                    "drop --strict-rt to run with what can be obtained");
}

void rt_session::check_strict() const
{
    if (req_.strict && !misses_.empty())
        throw error("set up real-time scheduling (--strict-rt)", misses_.front(),
                    "drop --strict-rt to run with what can be obtained");
}

std::string rt_session::summary() const
{
    std::string s;
    s += req_.priority > 0 ? (sched_ok_ ? "sched=fifo:" + std::to_string(req_.priority)
                                        : "sched=other(fifo refused)")
                           : "sched=other";
    s += req_.cpu >= 0 ? (cpu_ok_ ? " cpu=" + std::to_string(req_.cpu) : " cpu=any(pin refused)")
                       : " cpu=any";
    s += req_.mlock ? (mlocked_ ? " mlockall=yes" : " mlockall=refused") : " mlockall=no";
    s += req_.dma_latency ? (dma_fd_ >= 0 ? " cpu_dma_latency=0" : " cpu_dma_latency=refused")
                          : " cpu_dma_latency=off";
    return s;
}

} // namespace irqloop::base
