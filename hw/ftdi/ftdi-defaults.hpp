// SPDX-License-Identifier: MIT
#pragma once

// Default wiring of the ftdi backend (an FT232H breakout, MPSSE): the stimulus leaves on
// ADBUS4 (GPIOL0), the target's answer comes back on ADBUS2 (TDO/DI: the one pin the MPSSE
// read-bytes command samples on every TCK edge), the trace trigger is ADBUS5 (GPIOL1).
// FT232R (mode=syncbb): D0 (TXD) out, D1 (RXD) in, D2 (RTS#) trigger.
// schematics/ftdi/pins.csv must agree with these (a test checks it).
namespace irqloop::hw::ftdi_defaults
{
inline constexpr const char* out_pin = "ADBUS4";
inline constexpr unsigned out_header_pin = 5; ///< J1 pin of schematics/ftdi (breakout header)
inline constexpr unsigned in_header_pin = 3;
inline constexpr unsigned trigger_header_pin = 6;
inline constexpr unsigned ground_header_pin = 9;
inline constexpr const char* in_pin = "ADBUS2";
inline constexpr const char* trigger_pin = "ADBUS5";
inline constexpr const char* syncbb_out_pin = "D0";
inline constexpr const char* syncbb_in_pin = "D1";
inline constexpr const char* syncbb_trigger_pin = "D2";
inline constexpr double tck_hz = 30e6;    ///< divisor 0: 33.3 ns ticks
inline constexpr unsigned latency_ms = 1; ///< latency timer
inline constexpr int syncbb_baud = 62500; ///< bit-bang clock base (tick calibrated at open)
} // namespace irqloop::hw::ftdi_defaults
