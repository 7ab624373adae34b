// SPDX-License-Identifier: MIT
#include "sim-lines.hpp"

#include "cycle-clock.hpp"
#include "error.hpp"
#include "thread-name.hpp"
#include "units.hpp"

#include <algorithm>
#include <cmath>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace irqloop::hw
{

namespace
{

// A drawn delay in whole cycles of the logger's clock; the model's 1 h cap keeps it finite.
std::uint64_t delay_cycles(double delay_ns, double cycles_per_ns) noexcept
{
    const double c = std::min(delay_ns, 4e18 / cycles_per_ns) * cycles_per_ns;
    return c > 0 ? static_cast<std::uint64_t>(std::llround(c)) : 0;
}

} // namespace

// ---- the board: options, truth, metadata ------------------------------------------------

sim_lines::sim_lines(sim_options o) : lines(o.answers), opt_(std::move(o)) {}

void sim_lines::record_truth(std::size_t n)
{
    truth_.clear();
    truth_.reserve(n);
    truth_cap_ = n;
}

sim_lines::truth* sim_lines::note_edge(const latency_model::draw_result& d, bool rising,
                                       std::uint64_t seen_cycles) noexcept
{
    edges_.fetch_add(1, std::memory_order_relaxed);
    if (d.lost)
        lost_.fetch_add(1, std::memory_order_relaxed);
    if (truth_.size() >= truth_cap_)
        return nullptr;
    truth_.push_back({d.delay_ns, d.lost, rising, seen_cycles, 0, 0}); // reserved: no allocation
    return &truth_.back();
}

std::string sim_lines::describe() const
{
    std::string d = "sim:" + opt_.model.describe() + ",edges=" + opt_.answers.edges_text() +
                    ",answer=" + opt_.answers.answer_text();
    if (opt_.far == sim_far::thread)
        d += ",far=thread";
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
            {"sim.answer", opt_.answers.answer_text()},
            {"sim.far", opt_.far == sim_far::computed ? "computed" : "thread"}};
}

// ---- far=computed -------------------------------------------------------------------------

sim_computed_lines::sim_computed_lines(sim_options o)
    : sim_lines(std::move(o)), cycles_per_ns_(process_clock().hz / 1e9)
{
}

void sim_computed_lines::drive(bool high) noexcept
{
    // The edge leaves now, on the logger's clock: between the sampler's t0 and t1.
    const std::uint64_t now = cycles();
    if (busy_)
        settle(now);
    const int h = high ? 1 : 0;
    if (h == level_)
        return;
    level_ = h;
    edge_at_ = now;
    if (busy_) {
        // The target is still answering an earlier edge: this one waits, like a pending bit.
        waiting_ = true;
        last_truth_ = -1;
        return;
    }
    take_edge(now);
}

int sim_computed_lines::sense() noexcept
{
    // Only an answer that is due can change the line: with none, no clock read.
    if (busy_)
        settle(cycles());
    return response_;
}

void sim_computed_lines::settle(std::uint64_t now) noexcept
{
    while (busy_ && now >= answer_at_) {
        response_ = answer_level_;
        busy_ = false;
        if (pending_)
            pending_->answer_cycles = answer_at_;
        pending_ = nullptr;
        if (waiting_) {
            // Edges that came meanwhile collapse into one, taken for the present level.
            waiting_ = false;
            take_edge(answer_at_);
        }
    }
}

void sim_computed_lines::take_edge(std::uint64_t now) noexcept
{
    const bool rising = level_ != 0;
    last_truth_ = -1;
    if (!opt_.answers.both_edges && !rising)
        return; // a single-edge target ignores the re-arm edge
    const auto d = opt_.model.draw();
    truth* t = note_edge(d, rising, now);
    if (d.lost)
        return;
    answer_at_ = now + delay_cycles(d.delay_ns, cycles_per_ns_);
    answer_level_ = opt_.answers.follow ? level_ : response_ ^ 1;
    busy_ = true;
    pending_ = t;
    last_truth_ = static_cast<std::int64_t>(answer_at_ - edge_at_);
}

// ---- far=thread ---------------------------------------------------------------------------

sim_thread_lines::sim_thread_lines(sim_options o) : sim_lines(std::move(o)) {}

sim_thread_lines::~sim_thread_lines()
{
    stop();
}

void sim_thread_lines::start()
{
    if (running_.exchange(true))
        return;
    (void)process_clock(); // calibrate before the thread needs it
    thread_ = std::thread([this] {
        base::name_this_thread("irqloop-simtgt");
        target_loop();
    });
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

void sim_thread_lines::stop() noexcept
{
    if (!running_.exchange(false))
        return;
    ready_.store(false);
    if (thread_.joinable())
        thread_.join();
}

void sim_thread_lines::target_loop() noexcept
{
    const double cycles_per_ns = process_clock().hz / 1e9;
    std::uint64_t edges_handled = stimulus_.load(std::memory_order_acquire);
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
        const int level = static_cast<int>(edges & 1u);
        const bool rising = level != 0;
        if (!opt_.answers.both_edges && !rising)
            continue; // a single-edge target ignores the re-arm edge
        const auto d = opt_.model.draw();
        truth* t = note_edge(d, rising, t_seen);
        if (t)
            t->max_gap_cycles = detect_gap;
        if (d.lost)
            continue;
        // The delay may be long (up to 1h; a normal model with a large sd draws far out): the
        // spin watches the stop flag like the idle one, so the run ends when it should.
        const auto until = t_seen + delay_cycles(d.delay_ns, cycles_per_ns);
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

// ---- the spec -----------------------------------------------------------------------------

sim_options take_sim_options(spec& s, role r)
{
    if (r != role::logger)
        throw error("open backend 'sim'", "the simulated board is the target itself",
                    "irqloop-responder needs a real wire: use shm, gpiod or parport");
    sim_options o;
    o.model = latency_model::from_spec(s);
    o.answers = take_far_end(s, o.answers);
    o.far = s.take_choice("far", {"computed", "thread"}, "computed",
                          "the far end computed on the logger's clock, or played "
                          "by a thread of this process") == 0
                ? sim_far::computed
                : sim_far::thread;
    if (o.far == sim_far::computed && (s.has("cpu") || s.has("priority")))
        throw error("bad backend spec '" + s.text() + "'",
                    std::string("key '") + (s.has("cpu") ? "cpu" : "priority") +
                        "' places the far end's thread, and far=computed has none",
                    "drop it (the computed far end answers on the logger's clock, on no CPU of "
                    "its own), or add far=thread");
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
    if (o.far == sim_far::thread)
        return std::make_unique<sim_thread_lines>(o);
    return std::make_unique<sim_computed_lines>(o);
}

} // namespace irqloop::hw
