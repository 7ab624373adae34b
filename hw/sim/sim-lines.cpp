// SPDX-License-Identifier: MIT
#include "sim-lines.hpp"

#include "cycle-clock.hpp"
#include "error.hpp"
#include "units.hpp"

#include <algorithm>
#include <pthread.h>
#include <sched.h>

namespace irqloop::hw {

sim_lines::sim_lines(latency_model model, bool both_edges, int cpu, int priority, bool follow)
    : model_(std::move(model)), both_edges_(both_edges), cpu_(cpu), priority_(priority), follow_(follow)
{
}

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
    if (cpu_ >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu_, &set);
        if (int err = pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set))
            fail(err, "pin the simulated target thread");
    }
    if (priority_ > 0) {
        sched_param sp{};
        sp.sched_priority = priority_;
        if (int err = pthread_setschedparam(thread_.native_handle(), SCHED_FIFO, &sp))
            fail(err, "give the simulated target thread SCHED_FIFO");
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
        if (!both_edges_ && !rising)
            continue; // a single-edge target ignores the re-arm edge
        auto d = model_.draw();
        edges_.fetch_add(1, std::memory_order_relaxed);
        truth* t = nullptr;
        if (truth_.size() < truth_cap_) {
            truth_.push_back({d.delay_ns, d.lost, rising, t_seen, 0, detect_gap}); // reserved: no allocation
            t = &truth_.back();
        }
        if (d.lost) {
            lost_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        const auto until = t_seen + static_cast<std::uint64_t>(d.delay_ns * cycles_per_ns);
        std::uint64_t c = cycles(), gap = 0;
        while (c < until) {
            std::uint64_t c2 = cycles();
            gap = std::max(gap, c2 - c);
            c = c2;
        }
        out = follow_ ? level : out ^ 1;
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
    std::string d = "sim:" + model_.describe() + ",edges=" + (both_edges_ ? "both" : "rising") +
                    ",answer=" + (follow_ ? "follow" : "toggle");
    if (cpu_ >= 0)
        d += ",cpu=" + std::to_string(cpu_);
    if (priority_ > 0)
        d += ",priority=" + std::to_string(priority_);
    return d;
}

std::vector<metadata_item> sim_lines::metadata() const
{
    // Only settings: metadata is stored when the run begins, before any edge.
    return {{"sim.model", model_.describe()},
            {"sim.edges", both_edges_ ? "both" : "rising"},
            {"sim.answer", follow_ ? "follow" : "toggle"}};
}

std::unique_ptr<lines> open_sim_lines(spec& s, role r)
{
    if (r != role::logger)
        throw error("open backend 'sim'", "the simulated board is the target itself",
                    "irqloop-responder needs a real wire: use shm, gpiod or parport");
    auto model = latency_model::from_spec(s);
    std::string edges = s.take_string("edges", "both");
    if (edges != "both" && edges != "rising")
        throw error("bad backend spec '" + s.text() + "'", "unknown value '" + edges + "' of key 'edges'",
                    "use both or rising");
    int cpu = -1;
    if (s.has("cpu"))
        cpu = static_cast<int>(s.take_count("cpu", 0));
    std::string answer = s.take_string("answer", edges == "both" ? "follow" : "toggle");
    if (answer != "follow" && answer != "toggle")
        throw irqloop::error("bad backend spec '" + s.text() + "'", "unknown value '" + answer + "' of key 'answer'",
                             "use follow or toggle");
    if (answer == "follow" && edges != "both")
        throw irqloop::error("bad backend spec '" + s.text() + "'", "answer=follow needs edges=both",
                             "a single-edge target toggles its response");
    int priority = static_cast<int>(s.take_count("priority", 0));
    if (priority > 99)
        throw irqloop::error("bad backend spec '" + s.text() + "'", "key 'priority' must lie between 0 and 99");
    return std::make_unique<sim_lines>(std::move(model), edges == "both", cpu, priority, answer == "follow");
}

} // namespace irqloop::hw
