// SPDX-License-Identifier: MIT
#pragma once

#include "interface.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace irqloop::hw
{

/** @brief The FTDI chips the backend knows. */
enum class ftdi_chip { ft232h, ft2232h, ft4232h, ft232r, unknown };

/** @brief "ft232h", "ft2232h", ... */
const char* ftdi_chip_name(ftdi_chip c) noexcept;

/** @brief Whether @p c has an MPSSE engine (FT232H, FT2232H, FT4232H). */
bool ftdi_chip_has_mpsse(ftdi_chip c) noexcept;

/**
 * @brief Size of the chip's chip-to-host FIFO in bytes, per interface (FT232H 1 KiB,
 * FT2232H 4 KiB, FT4232H 2 KiB, FT232R 256 B). Datasheets disagree on some of these; the
 * backend keeps a margin below them.
 */
std::size_t ftdi_chip_fifo(ftdi_chip c) noexcept;

/** @brief Bulk packet size: 512 bytes on high-speed chips, 64 on full-speed ones. */
std::size_t ftdi_chip_packet(ftdi_chip c) noexcept;

/** @brief The bit modes the backend uses (libftdi's BITMODE_* values). */
enum class ftdi_bitmode : std::uint8_t { reset = 0x00, mpsse = 0x02, syncbb = 0x04 };

/** @brief What configure() sets up. */
struct ftdi_port_config final {
    ftdi_bitmode mode = ftdi_bitmode::mpsse;
    std::uint8_t direction = 0;  ///< pins driven by the chip (bit set = output); syncbb only
    unsigned latency_ms = 1;     ///< latency timer, 1..255 (0 is refused by libftdi)
    unsigned read_chunk = 4096;  ///< libftdi read chunk size
    unsigned write_chunk = 4096; ///< libftdi write chunk size
    int baudrate = 0;            ///< syncbb: bit-bang clock base (0: leave it)
};

/**
 * @brief The narrow interface between the ftdi backend and a chip: everything the backend
 * does to a chip goes through these calls.
 *
 * Two implementations: libftdi1 (open_libftdi_port()) and the chip simulator (ftdi-sim.hpp).
 * The backend's command building, framing checks and decoding run unchanged on both.
 *
 * write(), read() and purge() are the hot path: no allocation, no exception. They return a
 * byte count or 0, or a negative libftdi error code; the text of the last error is
 * error_text(). read() returns what has arrived (libftdi strips the two modem-status bytes
 * of every packet): possibly 0 or fewer bytes than asked, never more.
 */
class ftdi_port : public interface
{
public:
    /**
     * @brief Reset the bit mode (the MPSSE keeps running across a close), set the latency
     * timer and chunk sizes, flush both FIFOs, then enter @p c.mode.
     * @return 0 or a negative libftdi error code.
     */
    virtual int configure(const ftdi_port_config& c) = 0;

    virtual int write(const std::uint8_t* data, std::size_t n) noexcept = 0;
    virtual int read(std::uint8_t* data, std::size_t n) noexcept = 0;
    /** @brief Throw away what is in both FIFOs (ftdi_tcioflush). */
    virtual int purge() noexcept = 0;

    /**
     * @brief Sync bit-bang: write @p n bytes and read back the @p n bytes they clock, with the
     * write and the read in flight together so that the chip never waits for the host (in
     * sync bit-bang it stops clocking while its read FIFO is full). Used at open to time the
     * bit-bang clock; may allocate (not the hot path).
     * @return @p n, fewer bytes read back, or a negative libftdi error code.
     */
    virtual int burst(const std::uint8_t* out, std::uint8_t* in, std::size_t n) = 0;

    /** @brief The chip found at open. */
    virtual ftdi_chip chip() const noexcept = 0;
    /** @brief The spec fragment naming the device: "desc=i:0x0403:0x6014", "sim=ft232h". */
    virtual std::string where() const = 0;
    /** @brief The last error's text (libftdi's error string), never null. */
    virtual const char* error_text() const noexcept = 0;

protected:
    ftdi_port() = default;
};

/** @brief Which device to open with libftdi1, and how. */
struct ftdi_open_params final {
    std::string
        desc; ///< libftdi description string (i:VID:PID[:INDEX], s:VID:PID:SERIAL, d:BUS/DEV)
    std::string serial; ///< serial number: tried with each known FTDI product id
    std::string bus;    ///< "BUS:ADDR" (decimal): opened by bus position
    char interface = 'A';
    bool detach = true; ///< detach the kernel's ftdi_sio from the interface (libftdi's default)
};

/** @brief True when this build has libftdi1. */
bool have_libftdi() noexcept;

/**
 * @brief Open a device with libftdi1: ftdi_new, ftdi_set_interface, ftdi_usb_open_string
 * (or ftdi_usb_open_bus_addr), ftdi_usb_reset. With no desc, serial or bus: the first
 * FT232H, FT2232H, FT4232H or FT232R found (VID 0x0403).
 * @throws irqloop::error, exit status 2: device not found; bad description string; the
 *         kernel's ftdi_sio holds the interface; no permission (hint: the udev rule); a
 *         build without libftdi1.
 */
std::unique_ptr<ftdi_port> open_libftdi_port(const ftdi_open_params& p);

/**
 * @brief The irqloop::error for a failing libftdi open call: @p code and @p text are what
 * libftdi returned, @p where names the device. Kept apart from open_libftdi_port() so that
 * every code can be tested without a device.
 */
[[noreturn]] void throw_ftdi_open_error(int code, const std::string& text,
                                        const std::string& where);

} // namespace irqloop::hw
