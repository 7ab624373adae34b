// SPDX-License-Identifier: MIT
#pragma once

#include "gpiomem-barrier.hpp"
#include "interface.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace irqloop::hw
{

/**
 * @brief The narrow register interface of a GPIO block: everything the gpiomem backend does
 * to the hardware after the kernel has set the lines up goes through these calls.
 *
 * Two implementations exist: a mapping of the block (`/dev/gpiomem`, `/dev/gpiomem0`, or on
 * the testbed `/dev/mem`; open_gpiomem_map()) and the register simulator (gpiomem-sim.hpp).
 * gpiomem_lines runs unchanged on both, so the simulator tests exercise the same offsets,
 * masks and inversions as the hardware.
 *
 * Register access is the hot path: no allocation, no exception, no failure (a mapped
 * register cannot fail; a bad access would be a SIGBUS, which the open-time checks prevent).
 * Offsets are byte offsets from the start of the mapping, 32-bit aligned.
 */
class gpiomem_regs : public interface
{
public:
    /** @brief One 32-bit load from the register: never merged with another, never cached. */
    virtual std::uint32_t read(std::uint32_t offset) noexcept = 0;

    /** @brief One 32-bit store to the register. */
    virtual void write(std::uint32_t offset, std::uint32_t value) noexcept = 0;

    /** @brief Bytes reachable from offset 0. */
    virtual std::size_t size() const noexcept = 0;

    /** @brief "gpiomem" (a gpiomem device), "devmem" (/dev/mem, testbed only) or "sim". */
    virtual const char* method() const noexcept = 0;

    /** @brief The spec fragment naming the block: "dev=/dev/gpiomem", "sim=bcm2711". */
    virtual std::string where() const = 0;

protected:
    gpiomem_regs() = default;
};

/**
 * @brief Map @p size bytes of @p device at @p phys (0 for a gpiomem device, which maps its
 * block at offset 0; the block's physical address for /dev/mem).
 *
 * The mapping is MAP_SHARED with O_SYNC, so that the kernel maps it as Device memory
 * (uncached, unbuffered by the CPU, accesses neither merged nor reordered among themselves).
 *
 * @throws irqloop::error (exit status 2): no such device, with the hint to use a Raspberry Pi
 *         OS kernel (which has the gpiomem driver) or group `gpio`; no permission (group
 *         `gpio` or root); a /dev/mem mapping the kernel refuses (the `iomem=relaxed` hint).
 */
std::unique_ptr<gpiomem_regs> open_gpiomem_map(const std::string& device, std::uint64_t phys,
                                               std::size_t size);

} // namespace irqloop::hw
