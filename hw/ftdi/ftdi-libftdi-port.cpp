// SPDX-License-Identifier: MIT
// The libftdi1 implementation of ftdi_port; compiled only when libftdi1 is found.
#include "ftdi-port.hpp"

#include "error.hpp"

#include <ftdi.h>

#include <cstdio>
#include <sys/time.h>
#include <vector>

namespace irqloop::hw
{

namespace
{

// Product ids tried, in this order, when no description names the device.
struct known_product {
    int pid;
    ftdi_chip chip;
};
constexpr known_product products[] = {{0x6014, ftdi_chip::ft232h},
                                      {0x6010, ftdi_chip::ft2232h},
                                      {0x6011, ftdi_chip::ft4232h},
                                      {0x6001, ftdi_chip::ft232r}};

ftdi_chip chip_of(const ftdi_context* f) noexcept
{
    switch (f->type) {
    case TYPE_232H:
        return ftdi_chip::ft232h;
    case TYPE_2232H:
        return ftdi_chip::ft2232h;
    case TYPE_4232H:
        return ftdi_chip::ft4232h;
    case TYPE_R:
        return ftdi_chip::ft232r;
    default:
        return ftdi_chip::unknown;
    }
}

class libftdi_port final : public ftdi_port
{
public:
    libftdi_port(ftdi_context* f, std::string where) : f_(f), where_(std::move(where)) {}
    ~libftdi_port() override
    {
        // Leave the pins as inputs and the MPSSE off: the engine survives a close.
        ftdi_set_bitmode(f_, 0, BITMODE_RESET);
        ftdi_usb_close(f_);
        ftdi_free(f_);
    }

    int configure(const ftdi_port_config& c) override
    {
        int r;
        if ((r = ftdi_set_bitmode(f_, 0, BITMODE_RESET)) < 0)
            return r;
        if ((r = ftdi_set_latency_timer(f_, static_cast<unsigned char>(c.latency_ms))) < 0)
            return r;
        if ((r = ftdi_read_data_set_chunksize(f_, c.read_chunk)) < 0)
            return r;
        if ((r = ftdi_write_data_set_chunksize(f_, c.write_chunk)) < 0)
            return r;
        if (c.baudrate > 0 && (r = ftdi_set_baudrate(f_, c.baudrate)) < 0)
            return r;
        if ((r = ftdi_tcioflush(f_)) < 0)
            return r;
        return ftdi_set_bitmode(f_, c.direction, static_cast<unsigned char>(c.mode));
    }

    int write(const std::uint8_t* data, std::size_t n) noexcept override
    {
        return ftdi_write_data(f_, data, static_cast<int>(n));
    }
    int read(std::uint8_t* data, std::size_t n) noexcept override
    {
        return ftdi_read_data(f_, data, static_cast<int>(n));
    }
    int purge() noexcept override { return ftdi_tcioflush(f_); }
    int burst(const std::uint8_t* out, std::uint8_t* in, std::size_t n) override
    {
        // libftdi's asynchronous calls: the read is submitted first, so that the chip's read
        // FIFO is drained while the write is still going out.
        std::vector<unsigned char> w(out, out + n);
        ftdi_transfer_control* rd = ftdi_read_data_submit(f_, in, static_cast<int>(n));
        if (!rd)
            return -1;
        ftdi_transfer_control* wr = ftdi_write_data_submit(f_, w.data(), static_cast<int>(n));
        if (!wr) {
            timeval tv{1, 0};
            ftdi_transfer_data_cancel(rd, &tv);
            return -1;
        }
        const int a = ftdi_transfer_data_done(wr);
        const int b = ftdi_transfer_data_done(rd);
        return a < 0 ? a : b;
    }
    ftdi_chip chip() const noexcept override { return chip_of(f_); }
    std::string where() const override { return where_; }
    const char* error_text() const noexcept override
    {
        const char* s = ftdi_get_error_string(f_);
        return s ? s : "no error text";
    }

private:
    ftdi_context* f_;
    std::string where_;
};

struct context_guard {
    ftdi_context* f;
    ~context_guard()
    {
        if (f)
            ftdi_free(f);
    }
};

std::string text_of(ftdi_context* f)
{
    const char* s = ftdi_get_error_string(f);
    return s ? s : "no error text";
}

} // namespace

bool have_libftdi() noexcept
{
    return true;
}

std::unique_ptr<ftdi_port> open_libftdi_port(const ftdi_open_params& p)
{
    if (p.interface < 'A' || p.interface > 'D')
        throw error("open FTDI device", "interface must be A, B, C or D");
    context_guard g{ftdi_new()};
    if (!g.f)
        throw error("open FTDI device", "ftdi_new failed (out of memory)", {}, exit_failure);
    auto iface = static_cast<ftdi_interface>(INTERFACE_A + (p.interface - 'A'));
    if (int r = ftdi_set_interface(g.f, iface); r < 0)
        throw_ftdi_open_error(r, text_of(g.f), "interface " + std::string(1, p.interface));
    g.f->module_detach_mode = p.detach ? AUTO_DETACH_SIO_MODULE : DONT_DETACH_SIO_MODULE;

    std::string where;
    int r = -3;
    if (!p.bus.empty()) {
        unsigned bus = 0, addr = 0;
        char tail = 0;
        if (std::sscanf(p.bus.c_str(), "%u:%u%c", &bus, &addr, &tail) != 2 || bus > 255 ||
            addr > 255)
            throw error("open FTDI device bus=" + p.bus, "bus= must be BUS:ADDR in decimal",
                        "as lsusb prints them, e.g. bus=1:7");
        where = "bus=" + p.bus;
        r = ftdi_usb_open_bus_addr(g.f, static_cast<std::uint8_t>(bus),
                                   static_cast<std::uint8_t>(addr));
    } else if (!p.desc.empty()) {
        where = "desc=" + p.desc;
        r = ftdi_usb_open_string(g.f, p.desc.c_str());
    } else {
        for (const auto& k : products) {
            char d[128];
            if (p.serial.empty())
                std::snprintf(d, sizeof d, "i:0x0403:0x%04x", k.pid);
            else
                std::snprintf(d, sizeof d, "s:0x0403:0x%04x:%s", k.pid, p.serial.c_str());
            where = p.serial.empty() ? std::string("(first FTDI chip)") : "serial=" + p.serial;
            r = ftdi_usb_open_string(g.f, d);
            if (r != -3 || text_of(g.f).find("driver") != std::string::npos)
                break;
        }
    }
    if (r < 0)
        throw_ftdi_open_error(r, text_of(g.f), where);
    if ((r = ftdi_usb_reset(g.f)) < 0) {
        std::string t = text_of(g.f);
        ftdi_usb_close(g.f);
        throw error("reset FTDI device " + where, "libftdi " + std::to_string(r) + ": " + t,
                    "unplug and replug it", exit_failure);
    }
    auto port = std::make_unique<libftdi_port>(g.f, where);
    g.f = nullptr;
    return port;
}

} // namespace irqloop::hw
