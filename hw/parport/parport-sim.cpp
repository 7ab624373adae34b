// SPDX-License-Identifier: MIT
#include "parport-sim.hpp"

#include "cycle-clock.hpp"
#include "error.hpp"
#include "thread-name.hpp"

#include <cerrno>
#include <chrono>
#include <climits>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace irqloop::hw
{

namespace
{

// Unwired status inputs float high through the port's pull-ups; BUSY reads inverted.
std::uint8_t idle_status(std::uint8_t unused_bits)
{
    std::uint8_t s = unused_bits & 0x07;
    for (const char* name : {"nACK", "BUSY", "PE", "SELECT", "nERROR"}) {
        parport_pin p = parport_pin_by_name(name, "simulator");
        if (p.bit_for_level(true))
            s |= p.mask;
    }
    return s;
}

std::uint8_t with_level(std::uint8_t reg, const parport_pin& p, bool high)
{
    return p.bit_for_level(high) ? (reg | p.mask) : (reg & ~p.mask);
}

} // namespace

parport_sim::parport_sim(parport_pin near_out, parport_pin near_in, parport_sim_target target,
                         parport_sim_port port)
    : out_(near_out), in_(near_in), target_(std::move(target)), port_(port)
{
    if (!out_.is_output())
        throw error("set up the parallel-port simulator",
                    std::string(out_.name) + " is an input, not an output");
    if (in_.reg != parport_register::status)
        throw error("set up the parallel-port simulator",
                    std::string(in_.name) + " is not a status (input) pin");
    // After reset: data low, nINIT high, bits 6-7 read as ones, and the IRQ enabled, as
    // parport_pc leaves a port that has an interrupt line.
    control_.store(0xc0 | parport_ctl::irq_enable | 0x04);
    status_.store(with_level(idle_status(port_.status_unused_bits), in_, false));
    truth_.reserve(target_.truth_capacity);
    out_level_ = near_level(out_);
    if (target_.thread)
        thread_ = std::thread([this] {
            base::name_this_thread("irqloop-pp-sim");
            target_loop();
        });
}

parport_sim::~parport_sim()
{
    running_.store(false);
    touched(0);
    if (thread_.joinable())
        thread_.join();
}

void parport_sim::touched(std::int64_t now_ns) noexcept
{
    last_write_ns_.store(now_ns, std::memory_order_release);
    {
        std::lock_guard lock(edge_mutex_);
        const bool level = near_level(out_);
        // Without a target thread the test plays the far end and reads levels itself.
        const bool edge = level != out_level_ && target_.thread;
        out_level_ = level;
        if (edge && edge_count_ == edge_slots)
            overflow_.fetch_add(1, std::memory_order_relaxed);
        else if (edge)
            edges_q_[(edge_head_ + edge_count_++) % edge_slots] = {now_ns, level};
    }
    gen_.fetch_add(1, std::memory_order_seq_cst);
    // A futex wake costs a system call: only when the target thread sleeps. Both sides use
    // sequentially consistent order, so either it sees the new gen or we see it asleep.
    if (sleeping_.load(std::memory_order_seq_cst))
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&gen_), FUTEX_WAKE_PRIVATE, INT_MAX,
                nullptr, nullptr, 0);
}

bool parport_sim::pop_edge(std::int64_t& t_ns, bool& level) noexcept
{
    std::lock_guard lock(edge_mutex_);
    if (edge_count_ == 0) {
        busy_ = false;
        return false;
    }
    t_ns = edges_q_[edge_head_].t_ns;
    level = edges_q_[edge_head_].level;
    edge_head_ = (edge_head_ + 1) % edge_slots;
    --edge_count_;
    busy_ = true;
    return true;
}

bool parport_sim::settled() const noexcept
{
    std::lock_guard lock(edge_mutex_);
    return edge_count_ == 0 && !busy_;
}

int parport_sim::read_data() noexcept
{
    if (port_.absent)
        return 0xff;
    return data_.load(std::memory_order_acquire);
}

int parport_sim::write_data(std::uint8_t v) noexcept
{
    data_.store(v, std::memory_order_release);
    touched(monotonic_raw_ns());
    return 0;
}

int parport_sim::read_status() noexcept
{
    if (port_.read_cost_ns > 0) {
        const std::int64_t until = monotonic_raw_ns() + port_.read_cost_ns;
        while (monotonic_raw_ns() < until) {
        }
    }
    if (port_.absent)
        return 0xff;
    return status_.load(std::memory_order_acquire);
}

int parport_sim::read_control() noexcept
{
    if (port_.absent)
        return 0xff;
    // parport_pc reports the four control lines only (PPRCONTROL): IRQ enable stays hidden.
    const std::uint8_t c = control_.load(std::memory_order_acquire);
    return port_.flavour == parport_sim_flavour::ppdev ? (c & parport_ctl::lines) : c;
}

int parport_sim::write_control(std::uint8_t v) noexcept
{
    std::uint8_t now = control_.load(std::memory_order_relaxed);
    // ppdev passes only the four control lines on; raw I/O writes the register whole.
    std::uint8_t next =
        port_.flavour == parport_sim_flavour::ppdev
            ? static_cast<std::uint8_t>((now & ~parport_ctl::lines) | (v & parport_ctl::lines))
            : static_cast<std::uint8_t>(v | 0xc0);
    control_.store(next, std::memory_order_release);
    touched(monotonic_raw_ns());
    return 0;
}

int parport_sim::wait_irq(std::int64_t timeout_ns) noexcept
{
    if (port_.flavour != parport_sim_flavour::ppdev)
        return -ENOTSUP;
    std::unique_lock lock(irq_mutex_);
    auto ready = [this] { return irq_pending_ > 0; };
    if (timeout_ns < 0)
        irq_cv_.wait(lock, ready);
    else if (!irq_cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns), ready))
        return 0;
    int n = irq_pending_;
    irq_pending_ = 0;
    return n;
}

int parport_sim::arm_control_on_irq(std::uint8_t control) noexcept
{
    if (port_.flavour != parport_sim_flavour::ppdev)
        return -ENOTSUP;
    std::lock_guard lock(irq_mutex_);
    irq_control_ = control;
    irq_armed_ = true;
    return 0;
}

bool parport_sim::irq_armed() const noexcept
{
    std::lock_guard lock(irq_mutex_);
    return irq_armed_;
}

void parport_sim::clear_irq() noexcept
{
    std::lock_guard lock(irq_mutex_);
    irq_pending_ = 0;
}

void parport_sim::far_drive(bool high) noexcept
{
    std::uint8_t before = status_.load(std::memory_order_relaxed);
    const bool was_high = in_.level_in(before);
    status_.store(with_level(before, in_, high), std::memory_order_release);
    const bool irq_line = in_.reg == parport_register::status && in_.mask == 0x40;
    if (!irq_line || was_high || !high)
        return;
    if (!(control_.load(std::memory_order_acquire) & parport_ctl::irq_enable))
        return;
    irqs_total_.fetch_add(1, std::memory_order_relaxed);
    {
        std::lock_guard lock(irq_mutex_);
        if (irq_armed_) {
            // What ppdev's IRQ handler does: write the control lines, then count the IRQ.
            std::uint8_t now = control_.load(std::memory_order_relaxed);
            control_.store(static_cast<std::uint8_t>((now & ~parport_ctl::lines) |
                                                     (irq_control_ & parport_ctl::lines)),
                           std::memory_order_release);
            irq_armed_ = false;
            touched(monotonic_raw_ns());
        }
        ++irq_pending_;
    }
    irq_cv_.notify_all();
}

bool parport_sim::near_level(const parport_pin& p) const noexcept
{
    switch (p.reg) {
    case parport_register::data:
        return p.level_in(data_.load(std::memory_order_acquire));
    case parport_register::control:
        return p.level_in(control_.load(std::memory_order_acquire));
    case parport_register::status:
        return p.level_in(status_.load(std::memory_order_acquire));
    }
    return false;
}

void parport_sim::wait_until(std::int64_t t_ns) noexcept
{
    // Sleep most of a long wait, spin the end: sleeps overshoot by tens of microseconds.
    // On a small machine the spin also takes the CPU from the logger it answers: keep it short.
    std::int64_t left = t_ns - monotonic_raw_ns();
    if (left > 150'000)
        std::this_thread::sleep_for(std::chrono::nanoseconds(left - 100'000));
    while (monotonic_raw_ns() < t_ns && running_.load(std::memory_order_relaxed)) {
    }
}

void parport_sim::target_loop() noexcept
{
    bool answer = in_.level_in(status_.load());
    std::uint64_t wanted = 0;
    std::uint32_t gen = gen_.load(std::memory_order_acquire);
    while (running_.load(std::memory_order_acquire)) {
        std::int64_t t_edge = 0;
        bool now = false;
        if (!pop_edge(t_edge, now)) {
            sleeping_.store(true, std::memory_order_seq_cst);
            if (gen_.load(std::memory_order_seq_cst) == gen) {
                // The timeout only bounds the damage of a bug; wake-ups come from touched().
                timespec ts = {0, 20'000'000};
                syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&gen_), FUTEX_WAIT_PRIVATE, gen,
                        &ts, nullptr, 0);
            }
            sleeping_.store(false, std::memory_order_relaxed);
            gen = gen_.load(std::memory_order_acquire);
            continue;
        }
        edges_.fetch_add(1, std::memory_order_relaxed);
        if (target_.rising_only && !now) {
            ignored_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        auto d = target_.model.draw();
        ++wanted;
        const bool lose = d.lost || (target_.lose_every && wanted % target_.lose_every == 0);
        truth t{t_edge, 0, now, !lose};
        if (lose) {
            lost_.fetch_add(1, std::memory_order_relaxed);
        } else {
            wait_until(t_edge + static_cast<std::int64_t>(d.delay_ns));
            answer = target_.follow ? now : !answer;
            far_drive(answer);
            t.answer_ns = monotonic_raw_ns();
            answers_.fetch_add(1, std::memory_order_relaxed);
            if (target_.answer_twice) {
                wait_until(t.answer_ns + target_.twice_gap_ns);
                answer = !answer;
                far_drive(answer);
                answers_.fetch_add(1, std::memory_order_relaxed);
            }
        }
        if (truth_.size() < target_.truth_capacity)
            truth_.push_back(t); // capacity reserved at construction: no allocation
    }
}

namespace
{

class sim_io final : public parport_io
{
public:
    explicit sim_io(std::shared_ptr<parport_sim> sim) : sim_(std::move(sim)) {}

    int read_data() noexcept override { return sim_->read_data(); }
    int write_data(std::uint8_t v) noexcept override { return sim_->write_data(v); }
    int read_status() noexcept override { return sim_->read_status(); }
    int read_control() noexcept override { return sim_->read_control(); }
    int write_control(std::uint8_t v) noexcept override { return sim_->write_control(v); }
    bool has_irq() const noexcept override
    {
        return sim_->port().flavour == parport_sim_flavour::ppdev;
    }
    int wait_irq(std::int64_t timeout_ns) noexcept override { return sim_->wait_irq(timeout_ns); }
    int arm_control_on_irq(std::uint8_t control) noexcept override
    {
        return sim_->arm_control_on_irq(control);
    }
    void clear_irq() noexcept override { sim_->clear_irq(); }
    const char* method() const noexcept override { return "sim"; }
    std::string where() const override
    {
        return std::string("sim=") +
               (sim_->port().flavour == parport_sim_flavour::ppdev ? "ppdev" : "raw");
    }

private:
    std::shared_ptr<parport_sim> sim_;
};

} // namespace

std::unique_ptr<parport_io> make_parport_sim_io(std::shared_ptr<parport_sim> sim)
{
    return std::make_unique<sim_io>(std::move(sim));
}

} // namespace irqloop::hw
