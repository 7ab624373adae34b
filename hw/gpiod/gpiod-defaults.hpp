// SPDX-License-Identifier: MIT
#pragma once

// Default wiring of the gpiod backend: a Raspberry Pi 40-pin header as the logger.
// schematics/gpiod/pins.csv must agree with these (a test checks it).
namespace irqloop::hw::gpiod_defaults
{
inline constexpr const char* chip = "gpiochip0";
inline constexpr unsigned out_offset = 17; ///< BCM GPIO17, header pin 11: stimulus to the target
inline constexpr unsigned in_offset = 27;  ///< BCM GPIO27, header pin 13: response from the target
inline constexpr unsigned trigger_offset =
    22; ///< BCM GPIO22, header pin 15: optional trace trigger
inline constexpr unsigned out_header_pin = 11;
inline constexpr unsigned in_header_pin = 13;
inline constexpr unsigned trigger_header_pin = 15;
inline constexpr unsigned ground_header_pin = 9;
} // namespace irqloop::hw::gpiod_defaults
