// SPDX-License-Identifier: MIT
#include "gpiomem-soc.hpp"

namespace irqloop::hw
{

namespace
{

using namespace bcm_gpio;

bool is_bcm(gpiomem_soc soc) noexcept
{
    return soc != gpiomem_soc::rp1;
}

} // namespace

const std::vector<gpiomem_soc_info>& gpiomem_socs()
{
    static const std::vector<gpiomem_soc_info> list = {
        {gpiomem_soc::bcm2835, "bcm2835", "Raspberry Pi 1, Zero, Zero W", "brcm,bcm2835",
         "pinctrl-bcm2835", "/dev/gpiomem", 4096, 54},
        {gpiomem_soc::bcm2836, "bcm2836", "Raspberry Pi 2", "brcm,bcm2836", "pinctrl-bcm2835",
         "/dev/gpiomem", 4096, 54},
        {gpiomem_soc::bcm2837, "bcm2837", "Raspberry Pi 3, 3+, Zero 2 W, CM3", "brcm,bcm2837",
         "pinctrl-bcm2835", "/dev/gpiomem", 4096, 54},
        {gpiomem_soc::bcm2711, "bcm2711", "Raspberry Pi 4, 400, CM4", "brcm,bcm2711",
         "pinctrl-bcm2711", "/dev/gpiomem", 4096, 58},
        // /dev/gpiomem0 maps io_bank0, sys_rio0 and pads_bank0: 3 x 64 KiB.
        {gpiomem_soc::rp1, "rp1", "Raspberry Pi 5, 500, CM5 (RP1)", "brcm,bcm2712", "pinctrl-rp1",
         "/dev/gpiomem0", 0x30000, 28},
    };
    return list;
}

const gpiomem_soc_info& gpiomem_soc_of(gpiomem_soc soc)
{
    return gpiomem_socs()[static_cast<std::size_t>(soc)];
}

std::optional<gpiomem_soc> gpiomem_soc_by_name(std::string_view name)
{
    if (name == "bcm2712")
        return gpiomem_soc::rp1;
    for (const auto& s : gpiomem_socs())
        if (name == s.name)
            return s.soc;
    return std::nullopt;
}

std::string gpiomem_soc_names()
{
    std::string n;
    for (const auto& s : gpiomem_socs())
        n += (n.empty() ? "" : ", ") + std::string(s.name);
    return n;
}

std::optional<gpiomem_soc> gpiomem_soc_from_compatible(std::string_view compatible)
{
    // Board first, then SoC: "raspberrypi,3-model-b\0brcm,bcm2837\0". Take the first entry
    // that names a known SoC.
    while (!compatible.empty()) {
        auto end = compatible.find('\0');
        auto entry = compatible.substr(0, end);
        for (const auto& s : gpiomem_socs())
            if (entry == s.dt_compatible)
                return s.soc;
        if (end == std::string_view::npos)
            break;
        compatible.remove_prefix(end + 1);
    }
    return std::nullopt;
}

gpiomem_reg_bit gpiomem_set_reg(gpiomem_soc soc, unsigned line) noexcept
{
    if (is_bcm(soc))
        return {gpset0 + 4 * (line / 32), 1u << (line % 32)};
    return {rp1_rio::base + rp1_rio::alias_set + rp1_rio::out, 1u << line};
}

gpiomem_reg_bit gpiomem_clear_reg(gpiomem_soc soc, unsigned line) noexcept
{
    if (is_bcm(soc))
        return {gpclr0 + 4 * (line / 32), 1u << (line % 32)};
    return {rp1_rio::base + rp1_rio::alias_clear + rp1_rio::out, 1u << line};
}

gpiomem_reg_bit gpiomem_level_reg(gpiomem_soc soc, unsigned line) noexcept
{
    if (is_bcm(soc))
        return {gplev0 + 4 * (line / 32), 1u << (line % 32)};
    return {rp1_rio::base + rp1_rio::sync_in, 1u << line};
}

} // namespace irqloop::hw
