// SPDX-License-Identifier: MIT
#include "ftdi-port.hpp"

#include "enum-names.hpp"
#include "error.hpp"

namespace irqloop::hw
{

const char* ftdi_chip_name(ftdi_chip c) noexcept
{
    static constexpr enum_name<ftdi_chip> names[] = {{ftdi_chip::ft232h, "ft232h"},
                                                     {ftdi_chip::ft2232h, "ft2232h"},
                                                     {ftdi_chip::ft4232h, "ft4232h"},
                                                     {ftdi_chip::ft232r, "ft232r"}};
    return name_of(c, names, "unknown");
}

bool ftdi_chip_has_mpsse(ftdi_chip c) noexcept
{
    return c == ftdi_chip::ft232h || c == ftdi_chip::ft2232h || c == ftdi_chip::ft4232h;
}

std::size_t ftdi_chip_fifo(ftdi_chip c) noexcept
{
    switch (c) {
    case ftdi_chip::ft232h:
        return 1024;
    case ftdi_chip::ft2232h:
        return 4096;
    case ftdi_chip::ft4232h:
        return 2048;
    case ftdi_chip::ft232r:
        return 256;
    case ftdi_chip::unknown:
        break;
    }
    return 128;
}

std::size_t ftdi_chip_packet(ftdi_chip c) noexcept
{
    return c == ftdi_chip::ft232r || c == ftdi_chip::unknown ? 64 : 512;
}

void throw_ftdi_open_error(int code, const std::string& text, const std::string& where)
{
    const std::string what = "open FTDI device " + where;
    const std::string udev =
        "the udev rule 60-irqloop.rules gives group plugdev and the console "
        "user access: installed by the irqloop package, or cp "
        "hw/udev/60-irqloop.rules /etc/udev/rules.d/ && udevadm control --reload "
        "&& udevadm trigger; then replug; see docs/backends/ftdi.md";
    const bool driver = text.find("driver") != std::string::npos;
    if (code == -11)
        throw error(what, "bad description string (libftdi: " + text + ")",
                    "desc= takes i:VID:PID[:INDEX], s:VID:PID:SERIAL or d:BUS/DEV, e.g. "
                    "desc=i:0x0403:0x6014; or use serial= or bus=BUS:ADDR");
    if (code == -5 || (code == -3 && driver))
        throw error(what,
                    "the kernel's ftdi_sio driver holds the interface (libftdi " +
                        std::to_string(code) + ": " + text + ")",
                    "drop detach=no, or unbind it: echo <busid>:1.0 > "
                    "/sys/bus/usb/drivers/ftdi_sio/unbind (see docs/backends/ftdi.md)");
    if (code == -8 || code == -4)
        throw error(what,
                    "no permission to open the USB device (libftdi " + std::to_string(code) + ": " +
                        text + ")",
                    udev);
    if (code == -3)
        throw error(what, "device not found",
                    "plug in an FT232H/FT2232H/FT4232H/FT232R (lsusb shows 0403:60xx), or pick it "
                    "with serial= or bus=BUS:ADDR; ftdi:sim=ft232h runs without one");
    if (code == -12)
        throw error(what, "cannot list USB devices (libftdi: " + text + ")",
                    "is /dev/bus/usb there? (usbfs, or a container without USB access)");
    throw error(what, "libftdi " + std::to_string(code) + ": " + text);
}

#if !IRQLOOP_HAVE_LIBFTDI
bool have_libftdi() noexcept
{
    return false;
}

std::unique_ptr<ftdi_port> open_libftdi_port(const ftdi_open_params&)
{
    throw error("open backend 'ftdi'", "built without libftdi1",
                "apt-get install libftdi1-dev and rebuild; ftdi:sim=ft232h works without it");
}
#endif

} // namespace irqloop::hw
