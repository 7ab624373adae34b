// SPDX-License-Identifier: MIT
#pragma once

#include "parport-io.hpp"
#include "parport-pins.hpp"
#include "sim/latency-model.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace irqloop::hw
{

/** @brief Which real access method the simulated port imitates (see parport_io). */
enum class parport_sim_flavour {
    raw,   ///< control writes land whole (bits 4 and 5 too); no interrupt wait
    ppdev, ///< control reads and writes see bits 0-3 only; the IRQ is enabled (PPCLAIM) and
           ///< waitable
};

/** @brief How the simulated target at the far end of the cable behaves. */
struct parport_sim_target final {
    /** False: no target thread; the test plays the far end itself with far_drive(). */
    bool thread = true;
    /**
     * Single-edge target, like lpptest's: its stimulus input is its nACK, whose interrupt
     * fires on the rising edge only, so it answers rising edges and ignores falling ones.
     */
    bool rising_only = false;
    /** Answer with the stimulus level (follow) rather than by toggling the response. */
    bool follow = false;
    /** Delay from the stimulus write to the answer, and random losses (loss_p). */
    latency_model model;
    /** Every Nth stimulus edge the target would answer gets no answer (0: never). */
    std::uint64_t lose_every = 0;
    /** Answer twice: toggle the response again @ref twice_gap_ns after the first answer. */
    bool answer_twice = false;
    std::int64_t twice_gap_ns = 2000;
    /** Keep the truth of the first N edges the target sees (see parport_sim::truths()). */
    std::size_t truth_capacity = 0;
};

/** @brief The emulated port's own properties. */
struct parport_sim_port final {
    parport_sim_flavour flavour = parport_sim_flavour::raw;
    /** Busy time added to every register read, to imitate a bus cycle (~1 us on ISA). */
    std::int64_t read_cost_ns = 0;
    /** Status bits 0-2 are unused; real chips read them as anything. Tests set them. */
    std::uint8_t status_unused_bits = 0x07;
    /** No port at this address: every read returns 0xff, writes vanish (a wrong base). */
    bool absent = false;
};

/**
 * @brief A far-end simulator for the parport backend: an emulated SPP register file with a
 * simulated device wired to two of its pins.
 *
 * The register file behaves like a port: the data and control registers latch what is
 * written, the status register reads the levels of the five input pins through the port's
 * inversions (BUSY). Unwired inputs float high, as on a port with its pull-ups.
 *
 * The far end sees the electrical level of one near output pin (@p near_out: the logger's
 * stimulus) and drives the level of one near status pin (@p near_in: the response). It is
 * either a target thread (parport_sim_target::thread) that toggles near_in after a modelled
 * delay counted from the write that changed near_out, or the test itself through
 * far_drive(). Every change of near_out is queued with the time of the write that made it,
 * so the target answers each edge, even a pulse shorter than its own wake-up, each at its
 * modelled delay. Raising nACK while the IRQ-enable bit (control 0x10) is set counts an
 * interrupt and performs an armed PPWCTLONIRQ, as the ppdev IRQ handler would.
 *
 * The same parport_lines code runs on it as on raw I/O and ppdev (make_parport_sim_io()).
 */
class parport_sim final
{
public:
    /** @brief What happened to one stimulus edge the target saw (for ground-truth tests). */
    struct truth final {
        std::int64_t edge_ns;   ///< CLOCK_MONOTONIC_RAW of the write that made the edge
        std::int64_t answer_ns; ///< when the response changed, 0 when not answered
        bool rising;
        bool answered;
    };

    /**
     * @throws irqloop::error when @p near_out is not an output or @p near_in not a status pin.
     */
    parport_sim(parport_pin near_out, parport_pin near_in, parport_sim_target target = {},
                parport_sim_port port = {});
    ~parport_sim();
    parport_sim(const parport_sim&) = delete;
    parport_sim& operator=(const parport_sim&) = delete;

    /**
     * @brief The truth of the first parport_sim_target::truth_capacity edges the target saw
     * (falling edges ignored by a rising-only target are not recorded). Read it once the
     * activity has stopped.
     */
    const std::vector<truth>& truths() const noexcept { return truth_; }

    // Register file, used by the io adapter (hot path: no allocation).
    int read_data() noexcept;
    int write_data(std::uint8_t v) noexcept;
    int read_status() noexcept;
    int read_control() noexcept;
    int write_control(std::uint8_t v) noexcept;
    int wait_irq(std::int64_t timeout_ns) noexcept;
    int arm_control_on_irq(std::uint8_t control) noexcept;
    void clear_irq() noexcept;

    /** @brief The far end sets the level of near_in (and may raise the interrupt). */
    void far_drive(bool high) noexcept;
    /** @brief The whole control register, bits 4-7 included (ppdev reads hide them). */
    std::uint8_t control_latch() const noexcept { return control_.load(); }
    /** @brief The electrical level of any near pin as the far end would see it. */
    bool near_level(const parport_pin& p) const noexcept;

    const parport_sim_port& port() const noexcept { return port_; }
    const parport_sim_target& target() const noexcept { return target_; }
    const parport_pin& near_out() const noexcept { return out_; }
    const parport_pin& near_in() const noexcept { return in_; }

    std::uint64_t edges_seen() const noexcept { return edges_.load(); } ///< near_out changes
    std::uint64_t edges_ignored() const noexcept
    {
        return ignored_.load();
    }                                                                  ///< falling, rising_only
    std::uint64_t answers() const noexcept { return answers_.load(); } ///< incl. second ones
    std::uint64_t lost() const noexcept { return lost_.load(); }
    std::uint64_t irqs() const noexcept { return irqs_total_.load(); } ///< interrupts raised
    std::uint64_t writes() const noexcept { return gen_.load(); }      ///< register writes
    /** @brief True while a PPWCTLONIRQ is armed and no interrupt has consumed it. */
    bool irq_armed() const noexcept;
    /** @brief True when the target has no edge queued or being answered. */
    bool settled() const noexcept;

private:
    void target_loop() noexcept;
    void wait_until(std::int64_t t_ns) noexcept;
    void touched(std::int64_t now_ns) noexcept;
    bool pop_edge(std::int64_t& t_ns, bool& level) noexcept;

    struct edge final {
        std::int64_t t_ns;
        bool level;
    };
    static constexpr std::size_t edge_slots = 256;

    parport_pin out_, in_;
    parport_sim_target target_;
    parport_sim_port port_;

    alignas(64) std::atomic<std::uint8_t> data_{0};
    std::atomic<std::uint8_t> control_{0};
    std::atomic<std::int64_t> last_write_ns_{0};
    mutable std::mutex edge_mutex_;
    edge edges_q_[edge_slots] = {}; // guarded by edge_mutex_
    std::size_t edge_head_ = 0, edge_count_ = 0;
    bool out_level_ = false; // guarded by edge_mutex_: near_out after the last write
    bool busy_ = false;      // guarded by edge_mutex_: an edge is being answered
    std::atomic<std::uint64_t> overflow_{0};
    alignas(64) std::atomic<std::uint32_t> gen_{0};
    std::atomic<bool> sleeping_{false};
    static_assert(sizeof(std::atomic<std::uint32_t>) == 4, "futex word");
    alignas(64) std::atomic<std::uint8_t> status_{0};
    alignas(64) std::atomic<bool> running_{true};

    mutable std::mutex irq_mutex_;
    std::condition_variable irq_cv_;
    int irq_pending_ = 0;          // guarded by irq_mutex_
    bool irq_armed_ = false;       // guarded by irq_mutex_
    std::uint8_t irq_control_ = 0; // guarded by irq_mutex_

    std::atomic<std::uint64_t> edges_{0}, ignored_{0}, answers_{0}, lost_{0}, irqs_total_{0};
    std::vector<truth> truth_;
    std::thread thread_;
};

/** @brief A parport_io onto a simulator; several ios may share one simulator over time. */
std::unique_ptr<parport_io> make_parport_sim_io(std::shared_ptr<parport_sim> sim);

} // namespace irqloop::hw
