// SPDX-License-Identifier: MIT
#pragma once

#include "interface.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace irqloop::hw
{

/**
 * @brief The narrow register interface of a parallel port: everything the parport backend
 * does to a port goes through these calls.
 *
 * Three implementations exist: raw port I/O (ioperm + inb/outb), ppdev (one ioctl per
 * access) and the far-end simulator (parport-sim.hpp). parport_lines runs unchanged on each,
 * so the simulator tests exercise the same pin, inversion and edge logic as the hardware.
 *
 * Register access is the hot path: no allocation, no exception. Reads return the register
 * value 0..255, or a negative errno; writes return 0 or a negative errno. Registers hold the
 * raw bits (BUSY and the inverted control lines are NOT corrected here: see parport_pin).
 *
 * Control writes: only the low four bits (the four control lines) are guaranteed to reach the
 * port. ppdev masks everything else; raw I/O writes the byte as given, so callers keep bit 5
 * (data direction) clear and choose bit 4 (IRQ enable) on purpose.
 */
/** @brief Control register bits (IBM PC parallel port, SPP/PS2). */
namespace parport_ctl
{
inline constexpr std::uint8_t lines = 0x0f;      ///< the four control lines
inline constexpr std::uint8_t irq_enable = 0x10; ///< nACK raises the port's IRQ
inline constexpr std::uint8_t reverse = 0x20;    ///< data lines as inputs (PS/2 mode)
} // namespace parport_ctl

class parport_io : public interface
{
public:
    virtual int read_data() noexcept = 0;
    virtual int write_data(std::uint8_t v) noexcept = 0;
    virtual int read_status() noexcept = 0;
    virtual int read_control() noexcept = 0;
    virtual int write_control(std::uint8_t v) noexcept = 0;

    /** @brief True when wait_irq() can block on the port's interrupt (ppdev, simulator). */
    virtual bool has_irq() const noexcept { return false; }

    /**
     * @brief Wait for the port's interrupt (nACK rising edge) and consume the count.
     * @param timeout_ns Longest wait; negative waits forever.
     * @return the number of interrupts since the last call (>= 1), 0 on timeout, or a
     *         negative errno (-ENOTSUP where has_irq() is false).
     */
    virtual int wait_irq(std::int64_t timeout_ns) noexcept
    {
        (void)timeout_ns;
        return -95; // -ENOTSUP, spelled out to keep <cerrno> out of this header
    }

    /**
     * @brief Have the kernel write @p control to the control register at the next interrupt,
     * from its IRQ handler (ppdev PPWCTLONIRQ). One shot: arm again after each interrupt.
     * @return 0, or a negative errno (-ENOTSUP where has_irq() is false).
     */
    virtual int arm_control_on_irq(std::uint8_t control) noexcept
    {
        (void)control;
        return -95;
    }

    /** @brief Throw away interrupts counted so far (before a run starts). */
    virtual void clear_irq() noexcept {}

    /** @brief "raw", "ppdev" or "sim". */
    virtual const char* method() const noexcept = 0;

    /** @brief The spec fragment naming the port: "base=0x378", "dev=/dev/parport0", "sim=yes". */
    virtual std::string where() const = 0;

    /** @brief One more line of run metadata about the port (e.g. its /proc/ioports entry). */
    virtual std::string note() const { return {}; }

protected:
    parport_io() = default;
};

/**
 * @brief Raw port I/O at @p base (SPP registers base..base+2): ioperm(), then inb/outb.
 *
 * gate_raw_port() (parport-gate.hpp) runs first: with raised privileges (irqloop-rt with
 * cap_sys_rawio) only a base /proc/ioports lists as a parallel port passes, and @p check
 * false (the spec's check=no) is refused. ioperm permissions belong to the calling thread and
 * to the threads it creates afterwards: open the port, or call reacquire(), in the polling
 * thread or before creating it.
 * @throws irqloop::error with exit status 2: base out of range; refused by the gate; no
 *         permission (not root, no CAP_SYS_RAWIO, or kernel lockdown) with the hint to use
 *         ppdev or root.
 */
std::unique_ptr<parport_io> open_parport_raw_io(unsigned base, bool check = true);

/** @brief Re-run ioperm() for a raw port in the calling thread; no-op for other methods. */
void parport_io_reacquire(parport_io& io);

/**
 * @brief ppdev at @p device: open, PPEXCL (when @p exclusive), PPCLAIM, PPDATADIR forward.
 * The destructor does PPRELEASE and closes. PPCLAIM enables the port's interrupt.
 * @throws irqloop::error with exit status 2: no device (hint `modprobe ppdev parport_pc`),
 *         no permission, the port held by another driver such as lp (EBUSY).
 */
std::unique_ptr<parport_io> open_parport_ppdev_io(const std::string& device, bool exclusive);

} // namespace irqloop::hw
