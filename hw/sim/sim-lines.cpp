// SPDX-License-Identifier: MIT
#include "sim-lines.hpp"

#include "cycle-clock.hpp"
#include "error.hpp"
#include "units.hpp"

#include <algorithm>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace irqloop::hw
{

sim_lines::sim_lines(sim_options o) : lines(o.answers), opt_(std::move(o)) {}

sim_lines::~sim_lines()
{
    stop();
}

void sim_lines::record_truth(std::size_t n)
{
    truth_.clear();
    truth_.reserve(n);
    truth_cap_ = n;
}

void sim_lines::start()
{
    if (running_.exchange(true))
        return;
    (void)process_clock(); // calibrate before the thread needs it
    thread_ = std::thread([this] { target_loop(); });
    // A setting that cannot be had is refused here, before the first stimulus, and the
    // thread is stopped again: never ignored, never a run on other terms than asked.
    auto refuse = [&](int err, const std::string& what, const std::string& hint) {
        stop();
        throw_from_errno(err, what, hint);
    };
    if (opt_.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(opt_.cpu, &set);
        if (int err = pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set))
            refuse(err, "sim: pin the simulated target thread to CPU " + std::to_string(opt_.cpu),
                   "give a CPU this process may use (see 'taskset -p $$' and "
                   "/sys/devices/system/cpu/online)");
    }
    if (opt_.priority > 0) {
        sched_param sp{};
        sp.sched_priority = opt_.priority;
        if (int err = pthread_setschedparam(thread_.native_handle(), SCHED_FIFO, &sp))
            refuse(err, "sim: give the simulated target thread SCHED_FIFO",
                   "run as root or with CAP_SYS_NICE (or an rtprio limit), or drop priority=");
    }
    // The first stimulus must not come before the target has read the initial level.
    while (!ready_.load(std::memory_order_acquire))
        std::this_thread::yield();
}

void sim_lines::stop() noexcept
{
    if (!running_.exchange(false))
        return;
    ready_.store(false);
    if (thread_.joinable())
        thread_.join();
}

void sim_lines::target_loop() noexcept
{
    const double cycles_per_ns = process_clock().hz / 1e9;
    std::uint64_t edges_handled = stimulus_.load(std::memory_order_acquire);
    int level = 0;
    int out = response_.load(std::memory_order_relaxed);
    ready_.store(true, std::memory_order_release);
    std::uint32_t spins = 0;
    std::uint64_t last_poll = cycles();
    while (true) {
        const std::uint64_t edges = stimulus_.load(std::memory_order_acquire);
        const std::uint64_t t_seen = cycles();
        const std::uint64_t detect_gap = t_seen - last_poll;
        last_poll = t_seen;
        if (edges == edges_handled) {
            // Check the stop flag only now and then: it is a shared cache line.
            if ((++spins & 0x3ff) == 0 && !running_.load(std::memory_order_relaxed))
                return;
            continue;
        }
        // Like an IRQ's pending bit: edges that came while the target was busy or preempted
        // collapse into one event, answered for the line's present level. Answering each
        // queued edge in turn would send answers to stimuli the logger has already given up.
        edges_handled = edges;
        level = static_cast<int>(edges & 1u);
        const bool rising = level != 0;
        if (!opt_.answers.both_edges && !rising)
            continue; // a single-edge target ignores the re-arm edge
        auto d = opt_.model.draw();
        edges_.fetch_add(1, std::memory_order_relaxed);
        truth* t = nullptr;
        if (truth_.size() < truth_cap_) {
            truth_.push_back(
                {d.delay_ns, d.lost, rising, t_seen, 0, detect_gap}); // reserved: no allocation
            t = &truth_.back();
        }
        if (d.lost) {
            lost_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        // The delay may be long (up to 1h; a normal model with a large sd draws far out): the
        // spin watches the stop flag like the idle one, so the run ends when it should.
        const auto until = t_seen + static_cast<std::uint64_t>(
                                        std::min(d.delay_ns, 4e18 / cycles_per_ns) * cycles_per_ns);
        std::uint64_t c = cycles(), gap = 0;
        while (c < until) {
            std::uint64_t c2 = cycles();
            gap = std::max(gap, c2 - c);
            c = c2;
            if ((++spins & 0x3ff) == 0 && !running_.load(std::memory_order_relaxed))
                return;
        }
        out = opt_.answers.follow ? level : out ^ 1;
        response_.store(out, std::memory_order_release);
        last_poll = cycles();
        if (t) {
            t->answer_cycles = last_poll;
            t->max_gap_cycles = std::max({t->max_gap_cycles, gap, last_poll - c});
        }
    }
}

std::string sim_lines::describe() const
{
    std::string d = "sim:" + opt_.model.describe() + ",edges=" + opt_.answers.edges_text() +
                    ",answer=" + opt_.answers.answer_text();
    if (opt_.cpu >= 0)
        d += ",cpu=" + std::to_string(opt_.cpu);
    if (opt_.priority > 0)
        d += ",priority=" + std::to_string(opt_.priority);
    return d;
}

std::vector<metadata_item> sim_lines::metadata() const
{
    // Only settings: metadata is stored when the run begins, before any edge.
    return {{"sim.model", opt_.model.describe()},
            {"sim.edges", opt_.answers.edges_text()},
            {"sim.answer", opt_.answers.answer_text()}};
}

sim_options take_sim_options(spec& s, role r)
{
    if (r != role::logger)
        throw error("open backend 'sim'", "the simulated board is the target itself",
                    "irqloop-responder needs a real wire: use shm, gpiod or parport");
    sim_options o;
    o.model = latency_model::from_spec(s);
    o.answers = take_far_end(s, o.answers);
    if (s.has("cpu")) {
        // A CPU this machine has: a pin to a missing one would be refused only at start().
        const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
        const std::uint64_t last = cpus > 0 ? std::uint64_t(cpus - 1) : CPU_SETSIZE - 1;
        const std::uint64_t cpu =
            s.take_count("cpu", 0, 0, std::min<std::uint64_t>(last, CPU_SETSIZE - 1));
        o.cpu = static_cast<int>(cpu);
    }
    const std::uint64_t priority = s.take_count("priority", 0, 0, 99);
    o.priority = static_cast<int>(priority);
    return o;
}

std::unique_ptr<lines> open_sim_lines(const sim_options& o)
{
    return std::make_unique<sim_lines>(o);
}

} // namespace irqloop::hw
