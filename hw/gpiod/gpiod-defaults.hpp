// SPDX-License-Identifier: MIT
#pragma once

// Default wiring of the gpiod backend: a Raspberry Pi 40-pin header as the logger.
// schematics/gpiod/pins.csv must agree with these (a test checks it).
//
// The lines are named, not numbered on a chip: every Pi's header chip names its lines GPIO0...
// (pinctrl-bcm2835 on Pi 1-4, RP1 on Pi 5), but which gpiochipN that is differs. On Pi 5
// kernels before the RP1 renumbering gpiochip0 is the BCM2712's own controller, where offset 17
// would have driven a SoC pin. A name is looked up over every chip; the chip found is named in
// the run's metadata (gpiod.out, gpiod.in).
namespace irqloop::hw::gpiod_defaults
{
inline constexpr const char* out_line = "GPIO17";     ///< header pin 11: stimulus to the target
inline constexpr const char* in_line = "GPIO27";      ///< header pin 13: response from the target
inline constexpr const char* trigger_line = "GPIO22"; ///< header pin 15: optional trace trigger
inline constexpr unsigned out_header_pin = 11;
inline constexpr unsigned in_header_pin = 13;
inline constexpr unsigned trigger_header_pin = 15;
inline constexpr unsigned ground_header_pin = 9;
} // namespace irqloop::hw::gpiod_defaults
