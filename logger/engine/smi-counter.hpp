// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace irqloop::logger
{

/**
 * @brief The CPU's SMI counter, MSR 0x34 (MSR_SMI_COUNT, Intel since Nehalem), read through
 * the msr driver's device file /dev/cpu/N/msr (modprobe msr; root or CAP_SYS_RAWIO).
 *
 * The recorder reads it at each stats-window commit, on its own thread, never the sampler's:
 * the count per window is the difference of two reads. Where the file is missing or the read
 * fails (VMs, AMD CPUs, no msr module, no privilege), read() returns nothing and the window's
 * count is stored as NULL ("n/a"), never 0.
 *
 * The path is taken below a root directory (`run --preflight-root`, the same tree `doctor
 * --root` reads), so tests point it at a plain file whose 8 bytes at offset 0x34 they write.
 */
class smi_counter final
{
public:
    /** @brief Open ROOT/dev/cpu/CPU/msr; a failure is kept (why()), not thrown. */
    smi_counter(const std::string& root, int cpu);
    ~smi_counter();
    smi_counter(const smi_counter&) = delete;
    smi_counter& operator=(const smi_counter&) = delete;

    /** @brief The counter's low 32 bits now, or nothing. No allocation, no exception. */
    std::optional<std::uint32_t> read() const noexcept;

    /** @brief Was the file opened and the first read good? */
    bool available() const noexcept { return available_; }
    /** @brief The device path as named to the user (without the root). */
    const std::string& device() const noexcept { return device_; }
    /** @brief Why the counter is unavailable ("" when available). */
    const std::string& why() const noexcept { return why_; }

    /** @brief SMIs between two reads: the counter is 32 bits wide and wraps. */
    static std::uint64_t between(std::uint32_t before, std::uint32_t after) noexcept
    {
        return static_cast<std::uint32_t>(after - before);
    }

private:
    int fd_ = -1;
    bool available_ = false;
    std::string device_, why_;
};

} // namespace irqloop::logger
