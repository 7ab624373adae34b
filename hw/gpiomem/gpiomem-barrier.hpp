// SPDX-License-Identifier: MIT
#pragma once

// No includes: gpiomem-barrier.cpp is also compiled alone for 32-bit ARM targets without a
// sysroot (tests/hw/arm/compile-barrier.sh).
namespace irqloop::hw
{
/**
 * @brief Wait until every earlier memory access of this CPU has completed, and keep later
 * instructions (the cycle-counter read of a timestamp included) from starting before.
 * aarch64: `dsb sy; isb`; ARMv7 and later 32-bit: `dsb; isb`; ARMv6 (Pi 1, Zero, and
 * Raspberry Pi OS 32-bit's userland), which lacks those instructions: the same two barriers
 * through CP15 c7; elsewhere (the simulator on a PC): a sequentially consistent fence.
 */
void gpiomem_complete() noexcept;
} // namespace irqloop::hw
