// SPDX-License-Identifier: MIT
#pragma once

#include "lines.hpp"
#include "parport-io.hpp"
#include "parport-pins.hpp"
#include "parport-sim.hpp"
#include "spec.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace irqloop::hw
{

/** @brief How a parport_lines pair is wired and used. */
struct parport_options final {
    parport_pin out; ///< the pin this program drives: a data or control pin
    parport_pin in;  ///< the pin this program senses: a status pin
    role who = role::logger;
    /**
     * How the far end answers. Default: the rising edge only (the default wiring ends on the
     * target's nACK, whose interrupt fires on that edge), by toggling (lpptest's way);
     * `edges=both` for a polling responder.
     */
    far_end answers{false, false};
    /**
     * Responder only: have the kernel toggle this control pin from its IRQ handler
     * (PPWCTLONIRQ), before the waiting thread even wakes. Must equal @ref out.
     */
    std::optional<parport_pin> ctl_on_irq;
    /** Verify at open that the data register reads back what was written (a port exists). */
    bool check = true;
};

/**
 * @brief A line pair on a parallel port, on any parport_io (raw I/O, ppdev or simulator).
 *
 * Open: the data direction is set to forward (control bit 5 cleared), the driven pin goes
 * low, the other data bits go low, the other control lines keep their state. The IRQ-enable
 * bit (control 0x10) is cleared for the logger, so that the response edges on nACK do not
 * interrupt the loop that measures them, and set for a responder that waits for
 * interrupts; ppdev does not let us clear it (PPCLAIM enables it), so a ppdev logger takes
 * one interrupt per rising nACK edge when the port has an IRQ line: sense another status pin
 * if that matters. Then the data register is read back (a missing port reads 0xff), and the
 * cost of a status read and of a register write is measured (medians of batches).
 *
 * drive(true) puts the out pin at a high level and sense() returns the level at the in pin,
 * whatever the register inversions (BUSY, nSTROBE, nAUTOFD, nSELECTIN). drive() is one
 * register write of a shadow copy, sense() one status read: no allocation, no exception;
 * failures are sticky (error()).
 *
 * wait_edge() (responder): only through an io with an interrupt (ppdev), and only when the
 * in pin is nACK, the port's interrupt source; it returns after each rising edge of nACK.
 * Interrupts that arrived together count as missed edges. With ctl_on_irq the kernel's IRQ
 * handler has already toggled the out pin when wait_edge() returns; the drive() that follows
 * finds the pin at the wanted level and writes nothing.
 */
class parport_lines final : public polled_wire, public lines, public edge_waiter
{
public:
    /** @throws irqloop::error on bad pins, a failing register access or a missing port. */
    parport_lines(std::unique_ptr<parport_io> io, parport_options o);
    ~parport_lines() override;

    void drive(bool high) noexcept override;
    int sense() noexcept override;
    int wait_edge(std::int64_t timeout_ns) noexcept override;
    bool has_edge_events() const noexcept override;
    std::uint64_t missed_edges() const noexcept override { return missed_; }
    /** @brief Re-acquires raw port permission in the calling thread (ioperm is per thread). */
    void start() override;
    /** @brief Drives the out pin low. */
    void stop() noexcept override;
    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

    /** @brief Median cost of one status read (the poll) measured at open, in ns. */
    double status_read_ns() const noexcept { return read_ns_; }
    /** @brief Median cost of one register write measured at open, in ns. */
    double write_ns() const noexcept { return write_ns_; }
    /** @brief Interrupts counted by wait_edge(). */
    std::uint64_t irqs() const noexcept { return irqs_; }

private:
    std::uint8_t& shadow() noexcept;
    int write_out(std::uint8_t v) noexcept;
    void measure_costs();

    std::unique_ptr<parport_io> io_;
    parport_options opt_;
    std::uint8_t data_ = 0;
    std::uint8_t control_ = 0;
    double read_ns_ = 0, write_ns_ = 0;
    std::uint64_t irqs_ = 0, missed_ = 0;
};

/** @brief How a `parport:` spec reaches the port. */
enum class parport_method { raw, ppdev, sim };

/** @brief What a `parport:` spec says (take_parport_spec()); no port is touched to get it. */
struct parport_spec final {
    parport_method method = parport_method::raw;
    unsigned base = 0;         ///< raw: the I/O base (range-checked at open)
    std::string device;        ///< ppdev: the device node
    bool exclusive = true;     ///< ppdev: PPEXCL
    parport_sim_target target; ///< sim: the simulated far end
    parport_sim_port port;     ///< sim: the emulated port
    parport_options lines;     ///< pins, role, far end, ctl_on_irq, check
};

/**
 * @brief Read a `parport:` spec's keys.
 *
 * Keys:
 * - exactly one of `base=0x378` (raw port I/O at that I/O address: 0x378, 0x278, 0x3bc or a
 *   PCIe card's base), `dev=/dev/parport0` (ppdev), or `sim=raw|ppdev` (the far-end
 *   simulator imitating that method, with a target thread; logger only);
 * - `out=D3`, `in=nACK`: pin names (see parport_pin_by_name); defaults from
 *   parport-defaults.hpp, the same for both ends of the crossed cable;
 * - `edges=rising|both`, `answer=toggle|follow` (see far_end; default rising, toggle: with
 *   the default cable the stimulus reaches the target's nACK, whose interrupt fires on the
 *   rising edge only; use edges=both with a polling responder);
 * - `excl=yes|no` (ppdev only: register exclusively, default yes, so that lp cannot
 *   interleave);
 * - `ctl_on_irq=PIN` (ppdev responder: PPWCTLONIRQ on this control pin, which becomes out);
 * - `check=yes|no` (read the data register back at open, default yes);
 * - with sim only: the latency-model keys of the sim backend (model, value, mean, sd, ...,
 *   loss_p, seed), `lose_every=N`, `twice=yes`, `twice_gap=2us`, `read_cost=1us`.
 * @throws irqloop::error (exit status 2) on a bad key value or combination.
 */
parport_spec take_parport_spec(spec& s, role r);

/**
 * @brief Open the port @p p names: ioperm, ppdev PPCLAIM, or a new simulator.
 * @throws irqloop::error as open_parport_raw_io() and open_parport_ppdev_io().
 */
std::unique_ptr<parport_io> open_parport_io(const parport_spec& p);

/** @brief The registry's open step: parport_lines on open_parport_io(p). */
std::unique_ptr<lines> open_parport_lines(const parport_spec& p);

} // namespace irqloop::hw
