// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irqloop::hw
{

/**
 * @brief The GPIO blocks the `gpiomem` backend can drive through their registers.
 *
 * - bcm2835 (Pi 1, Zero), bcm2836 (Pi 2), bcm2837 (Pi 3, Zero 2), bcm2711 (Pi 4, 400, CM4):
 *   the BCM283x GPIO block, GPSET/GPCLR/GPLEV, reached through `/dev/gpiomem`;
 * - rp1 (Pi 5, CM5: bcm2712 + RP1 over PCIe): RP1's registered I/O block "RIO" of bank 0
 *   (GPIO0..27, the header), reached through `/dev/gpiomem0`.
 */
enum class gpiomem_soc { bcm2835, bcm2836, bcm2837, bcm2711, rp1 };

/** @brief One register and the bit of one line in it. */
struct gpiomem_reg_bit final {
    std::uint32_t offset; ///< byte offset from the start of the mapping
    std::uint32_t mask;   ///< the line's bit
    bool operator==(const gpiomem_reg_bit&) const = default;
};

/** @brief What the backend knows of one SoC's GPIO block. */
struct gpiomem_soc_info final {
    gpiomem_soc soc;
    const char* name;          ///< the spec value of `soc=`: "bcm2711"
    const char* boards;        ///< for messages and docs: "Raspberry Pi 4, 400, CM4"
    const char* dt_compatible; ///< the SoC's entry in /proc/device-tree/compatible
    const char* chip_label;    ///< the label of the GPIO chip whose block this is
    const char* device;        ///< the default `dev=`: "/dev/gpiomem" or "/dev/gpiomem0"
    std::size_t map_size;      ///< bytes mapped from the device
    unsigned lines;            ///< lines reachable through the mapped registers: 0..lines-1
};

/** @brief Every supported SoC, in the order of gpiomem_soc. */
const std::vector<gpiomem_soc_info>& gpiomem_socs();

/** @brief The entry of @p soc. */
const gpiomem_soc_info& gpiomem_soc_of(gpiomem_soc soc);

/** @brief The SoC named @p name ("bcm2837", "rp1"; "bcm2712" means rp1), or nullopt. */
std::optional<gpiomem_soc> gpiomem_soc_by_name(std::string_view name);

/** @brief "bcm2835, bcm2836, bcm2837, bcm2711, rp1", for hints. */
std::string gpiomem_soc_names();

/**
 * @brief The SoC a device tree's root `compatible` names (the NUL-separated list read from
 * /proc/device-tree/compatible), or nullopt for anything else (a PC, another ARM board).
 * "brcm,bcm2712" (Pi 5) is rp1: its header GPIOs sit on RP1.
 */
std::optional<gpiomem_soc> gpiomem_soc_from_compatible(std::string_view compatible);

/**
 * @brief The register that drives @p line high: GPSETn (BCM283x, offset 0x1c + 4n) or RIO
 * bank 0's OUT through its atomic set alias (RP1, 0x10000 + 0x2000). @p line must be below
 * gpiomem_soc_info::lines.
 */
gpiomem_reg_bit gpiomem_set_reg(gpiomem_soc soc, unsigned line) noexcept;

/** @brief The register that drives @p line low: GPCLRn (0x28 + 4n) or RIO OUT's clear alias. */
gpiomem_reg_bit gpiomem_clear_reg(gpiomem_soc soc, unsigned line) noexcept;

/**
 * @brief The register that reads the pad level of @p line, output or input: GPLEVn
 * (0x34 + 4n) or RIO bank 0's SYNC_IN (0x10008, the level after RP1's input synchroniser).
 */
gpiomem_reg_bit gpiomem_level_reg(gpiomem_soc soc, unsigned line) noexcept;

/** @brief BCM283x: GPFSELn holding @p line's function (3 bits at (line % 10) * 3). */
inline constexpr std::uint32_t gpiomem_bcm_fsel_offset(unsigned line) noexcept
{
    return 4 * (line / 10);
}

/** @brief BCM283x GPIO block registers (BCM2835 ARM Peripherals, section 6.1; unchanged on
 * the BCM2711), offsets from the start of /dev/gpiomem's mapping. */
namespace bcm_gpio
{
inline constexpr std::uint32_t gpfsel0 = 0x00; ///< function select, 10 lines a register
inline constexpr std::uint32_t gpset0 = 0x1c;  ///< output set, 32 lines a register
inline constexpr std::uint32_t gpclr0 = 0x28;  ///< output clear
inline constexpr std::uint32_t gplev0 = 0x34;  ///< input level
} // namespace bcm_gpio

/** @brief RP1 RIO bank 0 registers, offsets from the start of /dev/gpiomem0's mapping. */
namespace rp1_rio
{
inline constexpr std::uint32_t base = 0x10000;     ///< sys_rio0 (RP1 0x400e0000)
inline constexpr std::uint32_t out = 0x00;         ///< output levels
inline constexpr std::uint32_t oe = 0x04;          ///< output enables
inline constexpr std::uint32_t sync_in = 0x08;     ///< synchronised input levels
inline constexpr std::uint32_t alias_xor = 0x1000; ///< atomic aliases of every register
inline constexpr std::uint32_t alias_set = 0x2000;
inline constexpr std::uint32_t alias_clear = 0x3000;
} // namespace rp1_rio

} // namespace irqloop::hw
