// SPDX-License-Identifier: MIT
// The ftdi backend's open errors: the first two come from the real libftdi1 of this machine
// with no FTDI device attached, through the irqloop program; the two that need a device
// (ftdi_sio holding it, no permission) are libftdi's codes fed to the same mapping.
#include "error.hpp"
#include "ftdi/ftdi-port.hpp"
#include "run-process.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace
{

// run's preflight prints its WARN/FAIL lines of this machine first; the error is the rest.
irqloop::test::process_result run_hw(const std::string& hw)
{
    auto r = irqloop::test::run_process({IRQLOOP_BIN, "run", "--hw", hw, "--samples", "10"});
    std::string rest;
    std::size_t at = 0;
    while (at < r.err.size()) {
        std::size_t nl = r.err.find('\n', at);
        nl = nl == std::string::npos ? r.err.size() : nl + 1;
        if (r.err.compare(at, 20, "irqloop: preflight: ") != 0)
            rest += r.err.substr(at, nl - at);
        at = nl;
    }
    r.err = rest;
    return r;
}

} // namespace

TEST_CASE("ftdi errors from the real libftdi1 with no device: not found, bad description", "[ftdi]")
{
    if (!irqloop::hw::have_libftdi())
        SKIP("built without libftdi1");
    SECTION("device not found, by description, serial, bus and the default search")
    {
        for (const char* hw :
             {"ftdi:desc=i:0x0403:0x6014", "ftdi:serial=FT0XYZ", "ftdi:bus=1:7", "ftdi"}) {
            auto r = run_hw(hw);
            INFO(hw << ": " << r.err);
            CHECK(r.status == 2);
            CHECK_THAT(r.err, StartsWith("irqloop: open FTDI device "));
            CHECK_THAT(r.err, ContainsSubstring(": device not found (plug in an FT232H"));
            CHECK_THAT(r.err, ContainsSubstring("ftdi:sim=ft232h runs without one)"));
        }
    }
    SECTION("a description string libftdi cannot parse")
    {
        auto r = run_hw("ftdi:desc=x:0403");
        CHECK(r.status == 2);
        CHECK(r.err ==
              "irqloop: open FTDI device desc=x:0403: bad description string (libftdi: illegal "
              "description format) (desc= takes i:VID:PID[:INDEX], s:VID:PID:SERIAL or "
              "d:BUS/DEV, e.g. desc=i:0x0403:0x6014; or use serial= or bus=BUS:ADDR)\n");
    }
}

TEST_CASE("ftdi errors: spec mistakes are refused before any USB access", "[ftdi]")
{
    struct expect {
        const char* hw;
        const char* text;
    };
    for (auto e :
         {expect{"ftdi:latency=0", "key 'latency': 0 ms (the latency timer runs from 1 to 255 ms"},
          expect{"ftdi:sim=ft232h,window=2000", "exceeds the ft232h's FIFO (1024 bytes)"},
          expect{"ftdi:sim=ft232h,in=ADBUS3", "in= must be the MPSSE data input (xDBUS2)"},
          expect{"ftdi:sim=ft232r,mode=mpsse", "the ft232r has no MPSSE (use mode=syncbb"},
          expect{"ftdi:sim=ft232h,out=BDBUS4", "'BDBUS4' is not a pin of interface A"},
          expect{"ftdi:desc=i:0x0403:0x6014,bogus=1", "unknown key 'bogus' for backend 'ftdi'"},
          expect{"ftdi:sim=ft232h,desc=i:0x0403:0x6014", "give at most one of sim=, desc="}}) {
        auto r = run_hw(e.hw);
        INFO(e.hw << ": " << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, StartsWith("irqloop: "));
        CHECK_THAT(r.err, ContainsSubstring(e.text));
    }
}

TEST_CASE("ftdi errors: ftdi_sio holding the device and no permission (libftdi 1.5's codes)",
          "[ftdi]")
{
    using irqloop::hw::throw_ftdi_open_error;
    auto message = [](int code, const char* text) {
        try {
            throw_ftdi_open_error(code, text, "desc=i:0x0403:0x6014");
        } catch (const irqloop::error& e) {
            CHECK(e.status() == 2);
            return e.message();
        }
        FAIL("no error thrown");
        return std::string();
    };
    // libftdi 1.5 ftdi_usb_open_dev: claim refused while ftdi_sio is bound (detach off or failed).
    auto sio =
        message(-5, "unable to claim usb device. Make sure the default FTDI driver is not in use");
    CHECK_THAT(sio,
               StartsWith("irqloop: open FTDI device desc=i:0x0403:0x6014: the kernel's ftdi_sio "
                          "driver holds the interface (libftdi -5: "));
    CHECK_THAT(sio, ContainsSubstring("/sys/bus/usb/drivers/ftdi_sio/unbind"));
    auto sio3 = message(
        -3, "unable to set usb configuration. Make sure the default FTDI driver is not in use");
    CHECK_THAT(sio3, ContainsSubstring("ftdi_sio driver holds the interface"));
    // Permissions: -8 from claim/configuration with EPERM, -4 when libusb_open itself fails.
    for (auto [code, text] : {std::pair{-8, "inappropriate permissions on device!"},
                              std::pair{-4, "usb_open() failed"}}) {
        auto perm = message(code, text);
        CHECK_THAT(perm, ContainsSubstring(": no permission to open the USB device (libftdi "));
        CHECK_THAT(perm, ContainsSubstring("(the udev rule 60-irqloop.rules gives group plugdev"));
        CHECK_THAT(perm, ContainsSubstring("cp hw/udev/60-irqloop.rules /etc/udev/rules.d/"));
    }
}
