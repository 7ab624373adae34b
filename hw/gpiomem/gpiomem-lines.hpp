// SPDX-License-Identifier: MIT
#pragma once

#include "gpiomem-regs.hpp"
#include "gpiomem-soc.hpp"
#include "interface.hpp"
#include "lines.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace irqloop::hw
{

/**
 * @brief What holds the two lines in the kernel while the registers drive them: the libgpiod
 * requests (gpiomem-claim.cpp), or nothing for the register simulator.
 *
 * The kernel has set direction, bias and active-low when the claim exists; the lines show as
 * ours in `gpioinfo`, and nobody else can request them until the claim is destroyed.
 */
class gpiomem_claim : public interface
{
public:
    /**
     * @brief Read the sensed line through the kernel (one ioctl), for the poll-cost
     * comparison at open and for checks: 0 or 1 (logical, after active-low), -1 on failure.
     */
    virtual int kernel_read() noexcept = 0;

    /** @brief "gpiochip0:17 (\"GPIO17\")" style names of the lines, for describe(). */
    virtual std::string out_name() const = 0;
    virtual std::string in_name() const = 0;

    /** @brief Run metadata about the requests (chip, label, consumer). */
    virtual std::vector<metadata_item> metadata() const { return {}; }

    /** @brief Drive the out line low through the kernel (at stop). */
    virtual void release_low() noexcept {}

protected:
    gpiomem_claim() = default;
};

/** @brief Which lines of which block, as gpiomem_lines uses them. */
struct gpiomem_wiring final {
    gpiomem_soc soc = gpiomem_soc::bcm2711;
    unsigned out = 17;       ///< block line number (BCM GPIO number) this program drives
    unsigned in = 27;        ///< the line it senses; may equal @ref out (a self-loop)
    bool active_low = false; ///< both lines inverted (the kernel knows it too)
    role who = role::logger;
    far_end answers; ///< how the far end answers (spec keys edges, answer)
};

/**
 * @brief A line pair whose hot path goes straight to the GPIO block's registers
 * (`gpiomem:` backend), on any gpiomem_regs (a mapping or the simulator).
 *
 * drive(high) writes the line's bit to the set or clear register (GPSETn/GPCLRn; RP1: RIO
 * OUT's set/clear aliases: one store, no read-modify-write, so other lines of the bank are
 * never touched), then reads the level register of the same block back and waits for that
 * read to complete (gpiomem_complete()): when drive() returns, the store has reached the
 * block. On BCM283x the store is posted (the CPU maps the block as Device-nGnRE: early write
 * acknowledgement), and a later load from the same peripheral cannot overtake it; on RP1 the
 * store is a posted PCIe write, and a PCIe read of the same device flushes it. The sampler
 * takes t0 just before drive(), so the time the pin needs to change is inside the measured
 * interval and inside the drive cost the run reports, never outside it.
 *
 * sense() is one volatile 32-bit load of the level register (GPLEVn; RP1: RIO SYNC_IN):
 * never merged with the previous one by the compiler (volatile) nor by the CPU (Device
 * memory is non-gathering), and inverted in software when active_low is set (the registers
 * hold pad levels; the kernel's active-low applies to its own ioctls only).
 *
 * Open checks, each refused with exit status 2: both lines inside the block; the mapping
 * covers the registers used; the block's function/output-enable registers show the out line
 * as an output and (unless out == in) the in line as an input, i.e. the mapped block is the
 * one whose lines the kernel has just configured for us. Then the out line goes low and the
 * cost of one sense() is measured (median of 20 batches of 100 reads), and, with a claim, the
 * cost of one kernel read of the same line, for comparison.
 *
 * out == in is allowed: a self-loop through the pad's own level (the level register reads an
 * output's pad), for `irqloop calibrate` without a jumper wire.
 *
 * No edge events: the responder uses it with `--mode poll`.
 */
class gpiomem_lines final : public polled_wire, public lines
{
public:
    /** @throws irqloop::error (exit status 2) on a failed open check, see above. */
    gpiomem_lines(std::unique_ptr<gpiomem_regs> regs, gpiomem_wiring w,
                  std::unique_ptr<gpiomem_claim> claim);
    ~gpiomem_lines() override;

    void drive(bool high) noexcept override;
    int sense() noexcept override;
    /** @brief Drives the out line low. */
    void stop() noexcept override;
    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

    /** @brief Median cost of one sense(), measured at open, ns. */
    double poll_cost_ns() const noexcept { return poll_cost_ns_; }
    /** @brief Median cost of one kernel read of the sensed line at open, ns; 0 without claim. */
    double kernel_poll_cost_ns() const noexcept { return kernel_poll_cost_ns_; }

    const gpiomem_wiring& wiring() const noexcept { return w_; }
    gpiomem_regs& regs() noexcept { return *regs_; }
    gpiomem_claim* claim() noexcept { return claim_.get(); }

private:
    void check_block() const;
    void measure();

    std::unique_ptr<gpiomem_regs> regs_;
    gpiomem_wiring w_;
    std::unique_ptr<gpiomem_claim> claim_;
    gpiomem_reg_bit set_, clear_, out_level_, in_level_;
    double poll_cost_ns_ = 0;
    double kernel_poll_cost_ns_ = 0;
};

} // namespace irqloop::hw
