// SPDX-License-Identifier: MIT
#pragma once

#include "gpiomem-regs.hpp"
#include "gpiomem-soc.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace irqloop::hw
{

/**
 * @brief A register simulator of one SoC's GPIO block (`gpiomem:sim=bcm2711|rp1|...`),
 * behind the same gpiomem_regs interface as the mapped block.
 *
 * It keeps what the block keeps, per line: the output latch, whether the line is an output,
 * and the level an outside device drives onto it. A line's pad level, as the level register
 * reads it, is its latch while it is an output and the outside level otherwise; so an output
 * reads back its own level, as on the chip (and as QEMU's raspi3b model does).
 *
 * BCM283x: GPFSEL0..5 (function 001 is output), GPSET0/1 and GPCLR0/1 (write 1s to set or
 * clear latches, read as 0), GPLEV0/1 (read only). RP1: RIO bank 0 OUT, OE and SYNC_IN,
 * each with its XOR, SET and CLEAR aliases. Anything else written is counted as a stray
 * write and otherwise ignored; anything else read returns 0 and counts as a stray read. A
 * test that sees no strays knows that every access went to a register the SoC has.
 *
 * Register accesses are lock-free (atomics) and may come from any thread; there is no
 * target thread: a test, or set_jumper(), plays the outside world.
 */
class gpiomem_sim final
{
public:
    explicit gpiomem_sim(gpiomem_soc soc);

    gpiomem_soc soc() const noexcept { return soc_; }

    // Register file (the adapter's hot path).
    std::uint32_t read(std::uint32_t offset) noexcept;
    void write(std::uint32_t offset, std::uint32_t value) noexcept;

    /** @brief What the kernel does when a line is requested: make @p line an output or input. */
    void set_output(unsigned line, bool output) noexcept;
    bool is_output(unsigned line) const noexcept;
    /** @brief The output latch of @p line (what the block drives when it is an output). */
    bool latch(unsigned line) const noexcept;
    /** @brief The level the pad of @p line has: latch when an output, outside level otherwise. */
    bool level(unsigned line) const noexcept;

    /** @brief An outside device drives @p line (seen while the line is an input). */
    void far_drive(unsigned line, bool high) noexcept;

    /**
     * @brief Wire @p from's pad to @p to's input, as a jumper: from now on reads of @p to
     * see @p from's level. @p from == @p to undoes it.
     */
    void set_jumper(unsigned from, unsigned to) noexcept;

    std::uint64_t reads() const noexcept { return reads_.load(); }
    std::uint64_t writes() const noexcept { return writes_.load(); }
    std::uint64_t stray_reads() const noexcept { return stray_reads_.load(); }
    std::uint64_t stray_writes() const noexcept { return stray_writes_.load(); }
    /** @brief The offset of the last stray access, for test messages. */
    std::uint32_t last_stray() const noexcept { return last_stray_.load(); }

private:
    std::uint32_t bank_level(unsigned bank) const noexcept;
    std::uint32_t bcm_read(std::uint32_t offset, bool& known) noexcept;
    bool bcm_write(std::uint32_t offset, std::uint32_t value) noexcept;
    std::uint32_t rp1_read(std::uint32_t offset, bool& known) noexcept;
    bool rp1_write(std::uint32_t offset, std::uint32_t value) noexcept;

    gpiomem_soc soc_;
    unsigned lines_;
    std::array<std::atomic<std::uint32_t>, 6> fsel_{}; // BCM: 10 lines per register
    std::array<std::atomic<std::uint32_t>, 2> latch_{};
    std::array<std::atomic<std::uint32_t>, 2> output_{};
    std::array<std::atomic<std::uint32_t>, 2> outside_{};
    std::atomic<int> jumper_from_{-1}, jumper_to_{-1};
    std::atomic<std::uint64_t> reads_{0}, writes_{0}, stray_reads_{0}, stray_writes_{0};
    std::atomic<std::uint32_t> last_stray_{0};
};

/** @brief A gpiomem_regs onto a simulator (shared with the test that plays the outside). */
std::unique_ptr<gpiomem_regs> make_gpiomem_sim_regs(std::shared_ptr<gpiomem_sim> sim);

} // namespace irqloop::hw
