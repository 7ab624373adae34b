// SPDX-License-Identifier: MIT
#pragma once

// Default wiring of the parport backend: lpptest's crossed cable. The logger drives data bit
// D3 (DB-25 pin 5) into the target's nACK (pin 10, the interrupt); the target drives its D3
// (pin 5) back into the logger's nACK (pin 10); grounds on pins 18-25. The same cable works
// in both directions. schematics/parport/pins.csv must agree with these (a test checks it).
namespace irqloop::hw::parport_defaults
{
inline constexpr unsigned base = 0x378;
inline constexpr const char* device = "/dev/parport0";
inline constexpr const char* out_pin = "D3"; ///< data bit 3
inline constexpr unsigned out_db25 = 5;
inline constexpr const char* in_pin = "nACK"; ///< status bit 6 (0x40)
inline constexpr unsigned in_db25 = 10;
inline constexpr unsigned ground_first_db25 = 18;
inline constexpr unsigned ground_last_db25 = 25;
} // namespace irqloop::hw::parport_defaults
