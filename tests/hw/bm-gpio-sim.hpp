// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace irqloop::test::bm
{

/** @brief One register access of the driver, in order (block_sim::take_log). */
struct access {
    bool write;
    std::uint32_t offset;
    std::uint32_t value;
};

/**
 * @brief A register simulator of one GPIO block of the bare-metal responder
 * (target-responder/baremetal/gpio-*.c, built with BM_HOST), in the manner of gpiomem_sim.
 *
 * It keeps what the block keeps, per line: the output latch, the direction, the interrupt
 * configuration, the latched events, and the level an outside device drives. A line's pad is
 * its driven level while it is an output and the outside level otherwise; every change of a
 * pad is an edge, latched as the block's configuration says (edges of an output's own pad
 * too, where the block detects them). Write-1-to-clear, set/clear and masked-write registers
 * behave as on the chip.
 *
 * Anything else is counted: a read of a write-only register or of an offset the block does
 * not have is a stray read (returns 0), a write to a read-only register or to an offset the
 * block does not have is a stray write (ignored). A test that sees no strays knows that every
 * access went to a register the block has, in the direction it has.
 *
 * The test's own view (peek, poke, arm_foreign, latch_stale) goes around the counters: it
 * presets the state a previous user left, as a register-level test needs.
 */
class block_sim
{
public:
    virtual ~block_sim() = default;

    /** @brief The block's base address, as the driver is given it. */
    std::uintptr_t base() const noexcept { return base_; }
    unsigned lines() const noexcept { return static_cast<unsigned>(outside_.size()); }

    // The register file: bm_host_read32()/bm_host_write32() land here.
    std::uint32_t read(std::uintptr_t addr);
    void write(std::uintptr_t addr, std::uint32_t value);

    /** @brief An outside device drives @p line (seen while the line is not an output). */
    void far_drive(unsigned line, bool high);
    /** @brief The level on the pad of @p line. */
    bool pad(unsigned line) const;
    virtual bool is_output(unsigned line) const = 0;
    /** @brief The output latch of @p line (what it drives when it is an output). */
    virtual bool latch(unsigned line) const = 0;

    /** @brief The offsets of the registers that hold configuration or latches. */
    virtual std::vector<std::uint32_t> config_regs() const = 0;
    virtual std::uint32_t peek(std::uint32_t offset) const = 0;
    /** @brief Set a register of config_regs() as a previous user left it. */
    void poke(std::uint32_t offset, std::uint32_t value);
    /** @brief The bits of @p line in register @p offset of config_regs() (0 if none). */
    virtual std::uint32_t line_bits(std::uint32_t offset, unsigned line) const = 0;
    /** @brief Another user's interrupt: @p line an input, both edges, unmasked. */
    virtual void arm_foreign(unsigned line) = 0;
    /** @brief An event of @p line latched before the test starts. */
    virtual void latch_stale(unsigned line) = 0;
    /** @brief Another user's output: @p line driven at @p high. */
    void preset_output(unsigned line, bool high);

    std::uint64_t reads() const noexcept { return reads_; }
    std::uint64_t writes() const noexcept { return writes_; }
    std::uint64_t stray_reads() const noexcept { return stray_reads_; }
    std::uint64_t stray_writes() const noexcept { return stray_writes_; }
    /** @brief The offset of the last stray access, for test messages. */
    std::uint32_t last_stray() const noexcept { return last_stray_; }
    /** @brief The driver's accesses since the last call, in order (strays included). */
    std::vector<access> take_log();

protected:
    block_sim(std::uintptr_t base, std::uint32_t size, unsigned lines);

    /** @brief A register read; false when the block has no such readable register. */
    virtual bool on_read(std::uint32_t offset, std::uint32_t& value) = 0;
    /** @brief A register write; false when the block has no such writable register. */
    virtual bool on_write(std::uint32_t offset, std::uint32_t value) = 0;
    virtual void on_poke(std::uint32_t offset, std::uint32_t value) = 0;
    virtual void on_preset_output(unsigned line, bool high) = 0;
    /** @brief The level @p line drives while it is an output. */
    virtual bool driven(unsigned line) const { return latch(line); }
    /** @brief The pad of @p line changed (an edge, rising or falling). */
    virtual void on_edge(unsigned line, bool rising) = 0;
    /** @brief Level-sensitive latches follow the pads (after every change). */
    virtual void on_levels() {}
    /** @brief Recompute the pads after a change and latch the edges it made. */
    void settle();

    std::vector<bool> outside_;

private:
    std::uintptr_t base_;
    std::uint32_t size_;
    std::vector<bool> last_pad_;
    std::vector<access> log_;
    std::uint64_t reads_ = 0, writes_ = 0, stray_reads_ = 0, stray_writes_ = 0;
    std::uint32_t last_stray_ = 0;
};

/** BCM2711 (Pi 4): GPFSEL0..5, GPSET/GPCLR, GPLEV, GPEDS, GPREN/GPFEN, GPHEN/GPLEN, GPAREN/GPAFEN.
 */
std::unique_ptr<block_sim> make_bcm2711_sim();
/** R-Car Gen3 (no INEN) or Gen4 (INEN: an input's buffer off until its bit is set). */
std::unique_ptr<block_sim> make_rcar_sim(bool gen4);
/** ZynqMP PS GPIO: six banks (26, 26, 26, 32, 32, 32 lines) behind one base. */
std::unique_ptr<block_sim> make_zynqmp_sim();
/** PL061 (QEMU virt, Juno): eight lines, GPIODATA masked by address bits 9:2, ID registers. */
std::unique_ptr<block_sim> make_pl061_sim();

/** @brief Routes bm_host_read32()/bm_host_write32() to @p sim while it lives (one at a time). */
class install_sim final
{
public:
    explicit install_sim(block_sim& sim);
    ~install_sim();
    install_sim(const install_sim&) = delete;
    install_sim& operator=(const install_sim&) = delete;
};

} // namespace irqloop::test::bm
