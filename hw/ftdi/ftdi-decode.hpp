// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>

namespace irqloop::hw
{

/**
 * @brief MPSSE opcodes the backend and the chip simulator use (FTDI AN_108).
 *
 * A "read bytes" opcode is followed by length-1 (low, high byte) and clocks length*8 bits
 * of the data input (ADBUS2) into as many bytes, one bit per TCK period.
 */
namespace mpsse
{
inline constexpr std::uint8_t read_msb_pos = 0x20; ///< read bytes, MSB first, +ve edge
inline constexpr std::uint8_t read_msb_neg = 0x24; ///< read bytes, MSB first, -ve edge
inline constexpr std::uint8_t read_lsb_pos = 0x28; ///< read bytes, LSB first, +ve edge
inline constexpr std::uint8_t read_lsb_neg = 0x2C; ///< read bytes, LSB first, -ve edge
inline constexpr std::uint8_t set_low = 0x80;      ///< + value, direction
inline constexpr std::uint8_t get_low = 0x81;      ///< one byte back: the ADBUS pins
inline constexpr std::uint8_t set_high = 0x82;     ///< + value, direction
inline constexpr std::uint8_t get_high = 0x83;
inline constexpr std::uint8_t loopback_on = 0x84;
inline constexpr std::uint8_t loopback_off = 0x85;
inline constexpr std::uint8_t tck_divisor = 0x86; ///< + low, high
inline constexpr std::uint8_t send_immediate = 0x87;
inline constexpr std::uint8_t div5_off = 0x8A; ///< 60 MHz base clock (H chips)
inline constexpr std::uint8_t div5_on = 0x8B;  ///< 12 MHz base clock (FT2232D compatible)
inline constexpr std::uint8_t three_phase_on = 0x8C;
inline constexpr std::uint8_t three_phase_off = 0x8D;
inline constexpr std::uint8_t adaptive_on = 0x96;
inline constexpr std::uint8_t adaptive_off = 0x97;
inline constexpr std::uint8_t bad_opcode = 0xAA; ///< any invalid opcode; echoed as 0xFA, op
inline constexpr std::uint8_t bad_reply = 0xFA;
inline constexpr std::size_t max_read = 65536; ///< bytes per read command

/** @brief TCK period in ns for a divisor with the 60 MHz base: 1e9 / (60e6 / (2 (1 + d))). */
constexpr double tick_ns(unsigned divisor) noexcept
{
    return 2.0 * (1.0 + divisor) * 1e9 / 60e6;
}
} // namespace mpsse

/** @brief Order of the sampled bits within each byte. */
enum class ftdi_bit_order { msb_first, lsb_first };

/** @brief What one window of samples says about the answer. */
struct ftdi_decoded final {
    /** Index of the first sample of the final run at the answer level; -1: none in the window. */
    std::int64_t first = -1;
    /** The line left the idle level and came back within the window (a glitch or a double
     * answer): @ref first is then the start of the last run, if the window ends at the answer. */
    bool glitch = false;
    /** The level before the edge already was the answer level (a follow far end out of step,
     * or a late answer to an earlier edge): nothing in this window can be measured. */
    bool stale = false;
    /** The level of the last sample of the window. */
    bool last_level = false;
};

/**
 * @brief Find the answer in a window of sampled bits.
 *
 * @param bytes the window as the chip returned it (read-bytes data), @p n bytes, n*8 samples
 *        in time order: byte 0 first, within a byte as @p order says.
 * @param idle the level of the sensed line before the edge (the baseline read with 0x81)
 * @param answer the level that answers the edge: !idle for a toggling far end, the driven
 *        level for a following one
 *
 * The answer is the first sample of the run at @p answer level that lasts to the end of the
 * window. Runs at the answer level that end before the window does make a glitch. No
 * allocation, no exception; reads each byte once (whole-byte compares until the first
 * change).
 */
ftdi_decoded ftdi_decode(const std::uint8_t* bytes, std::size_t n, ftdi_bit_order order, bool idle,
                         bool answer) noexcept;

/** @brief The level of sample @p i in a window (helper for tests and the simulator). */
bool ftdi_sample_bit(const std::uint8_t* bytes, std::size_t i, ftdi_bit_order order) noexcept;

} // namespace irqloop::hw
