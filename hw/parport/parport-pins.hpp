// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace irqloop::hw
{

/** @brief The three registers of a standard (SPP) parallel port, at base+0, +1, +2. */
enum class parport_register : std::uint8_t { data = 0, status = 1, control = 2 };

/**
 * @brief One signal of the DB-25 connector as the port's registers see it.
 *
 * Users name pins, never register bits: the backend turns "drive the pin high" and "the pin
 * reads high" into the register value, through @ref inverted.
 *
 * | name      | DB-25 | register | bit  | inverted | direction          |
 * |-----------|-------|----------|------|----------|--------------------|
 * | D0..D7    | 2..9  | data     | 0..7 | no       | out                |
 * | nACK      | 10    | status   | 0x40 | no       | in (the IRQ source)|
 * | BUSY      | 11    | status   | 0x80 | yes      | in                 |
 * | PE        | 12    | status   | 0x20 | no       | in                 |
 * | SELECT    | 13    | status   | 0x10 | no       | in                 |
 * | nERROR    | 15    | status   | 0x08 | no       | in                 |
 * | nSTROBE   | 1     | control  | 0x01 | yes      | out                |
 * | nAUTOFD   | 14    | control  | 0x02 | yes      | out                |
 * | nINIT     | 16    | control  | 0x04 | no       | out                |
 * | nSELECTIN | 17    | control  | 0x08 | yes      | out                |
 *
 * Grounds are pins 18-25. "inverted" means the register bit is the complement of the
 * electrical level at the pin (the port has an inverter between them).
 */
struct parport_pin final {
    const char* name = nullptr; ///< canonical name, e.g. "nACK"
    unsigned db25 = 0;          ///< pin number on the DB-25 connector
    parport_register reg = parport_register::data;
    std::uint8_t mask = 0; ///< the bit in @ref reg
    bool inverted = false; ///< register bit == !pin level

    /** @brief True for pins this port can drive (data and control). */
    bool is_output() const noexcept { return reg != parport_register::status; }

    /** @brief The register bit that puts the pin at electrical level @p high. */
    bool bit_for_level(bool high) const noexcept { return high != inverted; }

    /** @brief The electrical level of the pin given its register's value. */
    bool level_in(std::uint8_t reg_value) const noexcept
    {
        return ((reg_value & mask) != 0) != inverted;
    }

    /** @brief E.g. "nACK (DB-25 pin 10, status 0x40)". */
    std::string explain() const;

    bool operator==(const parport_pin& o) const noexcept { return db25 == o.db25; }
};

/**
 * @brief Look a pin up by name, case-insensitively.
 *
 * Accepted: the canonical names of the table above; the same names without the leading "n"
 * (ACK, ERROR, STROBE, AUTOFD, INIT, SELECTIN); the aliases PAPEROUT, SLCT, SELIN, FAULT and
 * nFAULT; and `pinN` with N the DB-25 pin number (pin5 is D3, pin10 is nACK). The "n" in a
 * name only says that the signal is active low in the printer protocol: whatever the name,
 * drive(true) makes the pin high and sense() returns 1 when the pin is high.
 * @param what Where the name came from, for the message, e.g. "key 'out'".
 * @throws irqloop::error (exit status 2) on an unknown name, listing the valid ones.
 */
parport_pin parport_pin_by_name(std::string_view name, std::string_view what);

/** @brief "D0..D7, nSTROBE, nAUTOFD, nINIT, nSELECTIN" or the five status pins. */
std::string parport_pin_names(bool outputs);

} // namespace irqloop::hw
