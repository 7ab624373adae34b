// SPDX-License-Identifier: MIT
#include "ftdi-lines.hpp"

#include "cycle-clock.hpp"
#include "error.hpp"
#include "ftdi-defaults.hpp"
#include "ftdi-sim.hpp"
#include "sim/latency-model.hpp"
#include "units.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace irqloop::hw
{

namespace
{

constexpr std::int64_t answer_margin_ns = 50'000'000; // a window's data late by this: a fault

std::int64_t now_ns() noexcept
{
    return monotonic_raw_ns();
}

std::string hz_text(double hz)
{
    return format_scaled(hz, {{1e6, 1e6, "MHz"}, {1e3, 1e3, "kHz"}, {0, 1, "Hz"}});
}

double parse_hz(const std::string& v, const std::string& what)
{
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    std::string unit = end ? end : "";
    double mul = unit == "" || unit == "Hz" || unit == "hz"      ? 1
                 : unit == "kHz" || unit == "khz" || unit == "k" ? 1e3
                 : unit == "MHz" || unit == "mhz" || unit == "M" ? 1e6
                                                                 : -1;
    if (end == v.c_str() || mul < 0 || !(x > 0))
        throw error("bad value for " + what, "'" + v + "'",
                    "write a frequency such as 30MHz or 500kHz");
    return x * mul;
}

} // namespace

ftdi_lines::ftdi_lines(std::unique_ptr<ftdi_port> port, ftdi_options o,
                       const calibration_lookup& floor)
    : lines(far_end{true, o.follow}), port_(std::move(port)), opt_(std::move(o))
{
    const ftdi_chip chip = port_->chip();
    const std::string what = "open FTDI device " + port_->where();
    check_pins(chip, what);
    const ftdi_port_config pc = size_window(chip, what);
    if (int r = port_->configure(pc); r < 0)
        throw irqloop::error("configure FTDI device " + port_->where(),
                             "libftdi " + std::to_string(r) + ": " + port_->error_text(),
                             "unplug and replug it; check dmesg");
    cmd_.resize(window_ + 64);
    buf_.resize(2 * window_ + 64);
    if (opt_.syncbb) {
        calibrate_syncbb();
    } else {
        sync_mpsse();
        setup_mpsse();
    }
    offset_ns_ = opt_.offset_ns >= 0 ? opt_.offset_ns : nominal_offset_ns();
    offset_source_ = opt_.offset_ns >= 0 ? "given (offset=)" : "nominal";
    // offset=auto: the newest floor run on this wiring, taken in before the first sample.
    if (opt_.offset_auto && floor)
        if (const std::optional<calibration> c = floor(backend_kind::ftdi, wiring()))
            take_floor(*c);
    if (error())
        throw irqloop::error(what,
                             std::string("the chip stopped answering during set-up (") +
                                 port_->error_text() + ")",
                             "unplug and replug it");
}

// The options that the chip refuses, before anything is sent to it.
void ftdi_lines::check_pins(ftdi_chip chip, const std::string& what) const
{
    if (!opt_.syncbb && !ftdi_chip_has_mpsse(chip))
        throw irqloop::error(
            what, std::string("the ") + ftdi_chip_name(chip) + " has no MPSSE",
            "use mode=syncbb (experimental) with an FT232R or FT-X, or an FT232H/FT2232H");
    if (!opt_.syncbb && opt_.in_bit != 2)
        throw irqloop::error(what, "in= must be the MPSSE data input (xDBUS2)",
                             "the read-bytes command samples only that pin; wire the answer to it");
    if (opt_.out_bit == opt_.in_bit || static_cast<int>(opt_.out_bit) == opt_.trigger_bit ||
        static_cast<int>(opt_.in_bit) == opt_.trigger_bit)
        throw irqloop::error(what, "out=, in= and trigger= must be three different pins");
    if (!opt_.syncbb && (opt_.out_bit < 3 || (opt_.trigger_bit >= 0 && opt_.trigger_bit < 3)))
        throw irqloop::error(what, "out= and trigger= must be xDBUS3..7",
                             "xDBUS0-2 are TCK, data out and data in of the MPSSE");
    if (opt_.latency_ms < 1 || opt_.latency_ms > 255)
        throw irqloop::error(what, "latency must lie between 1 and 255 ms",
                             "use latency=1 (libftdi refuses 0)");
}

// The read window, the pin directions and the clock for the mode: the port's configuration.
ftdi_port_config ftdi_lines::size_window(ftdi_chip chip, const std::string& what)
{
    const std::size_t fifo = ftdi_chip_fifo(chip);
    const std::size_t packet_payload = ftdi_chip_packet(chip) - 2;
    ftdi_port_config pc;
    pc.latency_ms = opt_.latency_ms;
    if (opt_.syncbb) {
        window_ = opt_.window ? opt_.window : packet_payload;
        if (window_ < 4 || window_ > packet_payload)
            throw irqloop::error(
                what, "window=" + std::to_string(window_) + " does not fit one packet",
                "syncbb windows are 4.." + std::to_string(packet_payload) + " bytes");
        dir_ = static_cast<std::uint8_t>(1u << opt_.out_bit);
        if (opt_.trigger_bit >= 0)
            dir_ |= static_cast<std::uint8_t>(1u << opt_.trigger_bit);
        pc.mode = ftdi_bitmode::syncbb;
        pc.direction = dir_;
        pc.baudrate = opt_.baud;
        pc.read_chunk = pc.write_chunk = 64;
    } else {
        window_ = opt_.window ? opt_.window : fifo * 3 / 4;
        if (window_ < 1 || window_ + 1 > fifo)
            throw irqloop::error(what,
                                 "window=" + std::to_string(window_) + " bytes exceeds the " +
                                     ftdi_chip_name(chip) + "'s FIFO (" + std::to_string(fifo) +
                                     " bytes)",
                                 "keep window at most " + std::to_string(fifo - 1) +
                                     ": a full FIFO pauses the engine, which would hide time");
        // TCK = 60 MHz / (2 (1 + d)): the fastest TCK not above the one asked for.
        double d = std::ceil(30e6 / opt_.tck_hz - 1.0 - 1e-9);
        if (d < 0 || d > 65535)
            throw irqloop::error(what, "tck=" + hz_text(opt_.tck_hz) + " is out of range",
                                 "TCK runs from 458Hz to 30MHz");
        divisor_ = static_cast<unsigned>(d);
        tick_ns_ = tick_lo_ = tick_hi_ = mpsse::tick_ns(divisor_);
        tick_source_ = "TCK divisor " + std::to_string(divisor_) + " of the 60 MHz clock";
        dir_ = static_cast<std::uint8_t>(0x03 | (1u << opt_.out_bit)); // TCK, data out, stimulus
        if (opt_.trigger_bit >= 0)
            dir_ |= static_cast<std::uint8_t>(1u << opt_.trigger_bit);
        pc.mode = ftdi_bitmode::mpsse;
        pc.read_chunk = static_cast<unsigned>(std::max<std::size_t>(4096, window_ + 64));
        pc.write_chunk = 4096;
    }
    return pc;
}

ftdi_lines::~ftdi_lines()
{
    stop();
}

double ftdi_lines::window_ns() const noexcept
{
    return static_cast<double>(window_) * 8 * tick_ns_;
}

double ftdi_lines::nominal_offset_ns() const noexcept
{
    return opt_.syncbb ? 0.0 : 50.0 + (opt_.neg_edge ? 1.0 : 0.5) * tick_ns_;
}

std::uint8_t ftdi_lines::pins(bool high) const noexcept
{
    std::uint8_t v = 0;
    if (high)
        v |= static_cast<std::uint8_t>(1u << opt_.out_bit);
    if (trig_high_ && opt_.trigger_bit >= 0)
        v |= static_cast<std::uint8_t>(1u << opt_.trigger_bit);
    return v; // TCK idles low
}

int ftdi_lines::send(const std::uint8_t* b, std::size_t n) noexcept
{
    int r = port_->write(b, n);
    if (r < 0 || static_cast<std::size_t>(r) != n) {
        fail(EIO, "ftdi write");
        return -1;
    }
    return 0;
}

int ftdi_lines::receive(std::uint8_t* b, std::size_t n, std::int64_t deadline_ns) noexcept
{
    std::size_t got = 0;
    while (got < n) {
        int r = port_->read(b + got, n - got);
        if (r < 0) {
            fail(EIO, "ftdi read");
            return -1;
        }
        got += static_cast<std::size_t>(r);
        if (got < n && now_ns() > deadline_ns)
            break;
    }
    return static_cast<int>(got);
}

void ftdi_lines::sync_mpsse()
{
    // A bad opcode comes back as 0xFA, opcode: whatever a previous program left in the chip
    // is read and thrown away until that echo shows up.
    for (std::uint8_t op : {std::uint8_t{0xAA}, std::uint8_t{0xAB}}) {
        const std::uint8_t c[2] = {op, mpsse::send_immediate};
        if (send(c, 2) < 0)
            break;
        const std::int64_t deadline = now_ns() + 500'000'000;
        std::uint8_t prev = 0;
        bool seen = false;
        while (!seen && now_ns() < deadline) {
            std::uint8_t b[64];
            int r = port_->read(b, sizeof b);
            if (r < 0)
                break;
            for (int i = 0; i < r; ++i) {
                if (prev == mpsse::bad_reply && b[i] == op)
                    seen = true;
                prev = b[i];
            }
        }
        if (!seen)
            throw irqloop::error(
                "sync FTDI MPSSE on " + port_->where(),
                "no 0xFA echo of the bad opcode 0x" + std::string(op == 0xAA ? "AA" : "AB"),
                "the interface is not in MPSSE mode or is used by another program; replug it");
    }
}

void ftdi_lines::calibrate_syncbb()
{
    // The bit-bang clock is not what the baud rate says (sources give 4, 16 or 20 times it;
    // TN_120's erratum on the FT232R's bit-bang clock), so it is timed: two bursts of N1 and
    // N2 bytes go through the chip with the write and the read in flight together (the chip
    // never waits for the host), timed on CLOCK_MONOTONIC_RAW from before the write to the
    // last byte back. The chip clocks N - 1 ticks between its first and its last byte, and
    // cannot start before the write nor end after the data is back: T2 / (N2 - 1) is an
    // upper bound of the mean tick. The USB start and end costs are about the same for both
    // bursts, so (T2 - T1) / (N2 - N1) is the estimate, and the estimate less the upper
    // bound's margin is the lower bound. Latencies use the upper bound: never below the truth.
    const double nominal = 1e9 / (static_cast<double>(opt_.baud) * 16.0);
    const std::string what = "calibrate the bit-bang clock of FTDI device " + port_->where();
    // Each burst three times, short and long in turn, keeping the shortest time of each: a
    // host that was late to read paused the chip (it never drops), which only adds time.
    const auto n2 =
        static_cast<std::size_t>(std::clamp(std::ceil(200e6 / nominal), 8192.0, 4194304.0));
    const std::size_t n1 = n2 / 4;
    std::vector<std::uint8_t> out(n2, pins(false)), in(n2);
    double t[2] = {1e300, 1e300};
    const std::size_t sizes[2] = {n1, n2};
    const std::uint8_t out_mask = static_cast<std::uint8_t>(1u << opt_.out_bit);
    for (int j = 0; j < 6; ++j) {
        const int i = j % 2;
        const std::int64_t t0 = now_ns();
        const int r = port_->burst(out.data(), in.data(), sizes[i]);
        const std::int64_t t1 = now_ns();
        if (r < 0)
            throw irqloop::error(what, "libftdi " + std::to_string(r) + ": " + port_->error_text(),
                                 "unplug and replug it");
        if (static_cast<std::size_t>(r) != sizes[i])
            throw irqloop::error(
                what, std::to_string(r) + " of " + std::to_string(sizes[i]) + " bytes came back",
                "the chip is not in synchronous bit-bang mode; replug it");
        for (std::size_t k = 1; k < sizes[i]; ++k)
            if (in[k] & out_mask)
                throw irqloop::error(what, "the stimulus pin read high while driven low",
                                     "something else drives " + opt_.pin_names[0] +
                                         ": check the wiring");
        t[i] = std::min(t[i], static_cast<double>(t1 - t0));
    }
    const double hi = t[1] / static_cast<double>(n2 - 1);
    const double est = std::min(hi, (t[1] - t[0]) / static_cast<double>(n2 - n1));
    // The lower bound is not proven like the upper one: the estimate less an 8 % margin, more
    // than the USB timing of the bursts has been seen to move it (2.7 % at most in the
    // simulator on a loaded machine). It only widens brackets; latencies use the upper bound.
    const double lo = 0.92 * est;
    if (!(est > nominal / 8 && est < nominal * 8))
        throw irqloop::error(what,
                             "the measured tick (" + std::to_string(est) +
                                 " ns) is far from baud x 16 (" + std::to_string(nominal) + " ns)",
                             "the chip did not keep clocking: another program on it, or a hub "
                             "that drops packets? mode=syncbb is experimental");
    tick_lo_ = lo;
    tick_hi_ = hi;
    tick_ns_ = est;
    char b[256];
    std::snprintf(b, sizeof b,
                  "measured at open: bursts of %zu and %zu bytes took %.3f and %.3f ms (the "
                  "shortest of 3 each) on CLOCK_MONOTONIC_RAW; estimate %.3f ns, bounds "
                  "%.3f..%.3f ns; nominal (baud %d x 16) %.3f ns",
                  n1, n2, t[0] / 1e6, t[1] / 1e6, est, lo, hi, opt_.baud, nominal);
    tick_source_ = b;
    // Whatever the bursts left in the chip is not a sample.
    if (port_->purge() < 0)
        throw irqloop::error(what, port_->error_text(), "unplug and replug it");
}

void ftdi_lines::setup_mpsse()
{
    const std::uint8_t c[] = {mpsse::div5_off,
                              mpsse::adaptive_off,
                              mpsse::three_phase_off,
                              mpsse::loopback_off,
                              mpsse::tck_divisor,
                              static_cast<std::uint8_t>(divisor_ & 0xff),
                              static_cast<std::uint8_t>(divisor_ >> 8),
                              mpsse::set_low,
                              pins(false),
                              dir_,
                              mpsse::get_low,
                              mpsse::send_immediate};
    if (send(c, sizeof c) < 0)
        return;
    std::uint8_t b = 0;
    if (receive(&b, 1, now_ns() + 500'000'000) != 1)
        throw irqloop::error("set up FTDI MPSSE on " + port_->where(),
                             "no answer to a pin read (0x81)", "replug the device");
    out_high_ = false;
    if (b & (1u << opt_.out_bit))
        throw irqloop::error("set up FTDI MPSSE on " + port_->where(),
                             "the stimulus pin reads high while driven low",
                             "something else drives " + opt_.pin_names[0] + ": check the wiring");
}

int ftdi_lines::resync() noexcept
{
    // A short or extra frame: flush both FIFOs and look for the bad-opcode echo again.
    ++framing_errors_;
    if (port_->purge() < 0) {
        fail(EIO, "ftdi purge");
        return -1;
    }
    if (opt_.syncbb)
        return 0;
    const std::uint8_t c[2] = {0xAA, mpsse::send_immediate};
    if (send(c, 2) < 0)
        return -1;
    const std::int64_t deadline = now_ns() + 200'000'000;
    std::uint8_t prev = 0, b[64];
    while (now_ns() < deadline) {
        int r = port_->read(b, sizeof b);
        if (r < 0)
            break;
        for (int i = 0; i < r; ++i) {
            if (prev == mpsse::bad_reply && b[i] == 0xAA)
                return 0;
            prev = b[i];
        }
    }
    fail(EIO, "ftdi sync");
    return -1;
}

void ftdi_lines::drive(bool high) noexcept
{
    if (opt_.syncbb) {
        const std::uint8_t v = pins(high);
        std::uint8_t back;
        if (send(&v, 1) == 0 && receive(&back, 1, now_ns() + answer_margin_ns) != 1)
            fail(ETIMEDOUT, "ftdi drive");
    } else {
        const std::uint8_t c[3] = {mpsse::set_low, pins(high), dir_};
        send(c, 3);
    }
    out_high_ = high;
}

int ftdi_lines::sense() noexcept
{
    if (error())
        return -1;
    std::uint8_t b = 0;
    if (opt_.syncbb) {
        const std::uint8_t v = pins(out_high_);
        if (send(&v, 1) < 0)
            return -1;
    } else {
        const std::uint8_t c[2] = {mpsse::get_low, mpsse::send_immediate};
        if (send(c, 2) < 0)
            return -1;
    }
    int r = receive(&b, 1, now_ns() + answer_margin_ns);
    if (r != 1) {
        if (r == 0)
            fail(ETIMEDOUT, "ftdi sense");
        return -1;
    }
    return (b >> opt_.in_bit) & 1;
}

void ftdi_lines::open_trigger(const std::string& line)
{
    // --trigger-line names the pin (ADBUS5, or D2 in syncbb) unless the spec's trigger= did.
    if (opt_.trigger_bit < 0 && opt_.syncbb)
        throw irqloop::error("open trigger line '" + line + "'",
                             "in syncbb mode the pin directions are set at open",
                             "name the pin in the spec as well: trigger=" + line);
    if (opt_.trigger_bit < 0) {
        const std::string prefix = opt_.syncbb ? "D" : std::string(1, opt_.interface) + "DBUS";
        const unsigned lowest = opt_.syncbb ? 0 : 3;
        if (line.size() != prefix.size() + 1 || line.compare(0, prefix.size(), prefix) != 0 ||
            line.back() < static_cast<char>('0' + lowest) || line.back() > '7')
            throw irqloop::error("open trigger line '" + line + "'", "not a free pin of this chip",
                                 "name one of " + prefix + std::to_string(lowest) + ".." + prefix +
                                     "7 other than out= and in=, e.g. " +
                                     (opt_.syncbb ? "D2" : prefix + "5"));
        const auto bit = static_cast<unsigned>(line.back() - '0');
        if (bit == opt_.out_bit || bit == opt_.in_bit)
            throw irqloop::error("open trigger line '" + line + "'", "that pin is out= or in=");
        opt_.trigger_bit = static_cast<int>(bit);
        opt_.pin_names[2] = line;
        dir_ |= static_cast<std::uint8_t>(1u << bit);
        drive(out_high_);
        if (error())
            throw irqloop::error("open trigger line '" + line + "'", port_->error_text(),
                                 "replug the device");
    }
    trigger_open_ = true;
}

void ftdi_lines::trigger(bool high) noexcept
{
    if (!trigger_open_)
        return;
    trig_high_ = high;
    drive(out_high_);
}

void ftdi_lines::stop() noexcept
{
    if (error())
        return;
    trig_high_ = false;
    drive(false);
}

int ftdi_lines::measure(bool high, std::int64_t timeout_ns, device_sample& out) noexcept
{
    out = device_sample{};
    if (error())
        return -1;
    return opt_.syncbb ? measure_syncbb(high, timeout_ns, out)
                       : measure_mpsse(high, timeout_ns, out);
}

int ftdi_lines::measure_mpsse(bool high, std::int64_t timeout_ns, device_sample& out) noexcept
{
    const std::uint8_t read_op =
        static_cast<std::uint8_t>((opt_.order == ftdi_bit_order::lsb_first ? 0x08 : 0x00) |
                                  (opt_.neg_edge ? 0x04 : 0x00) | 0x20);
    const std::uint8_t len_lo = static_cast<std::uint8_t>((window_ - 1) & 0xff);
    const std::uint8_t len_hi = static_cast<std::uint8_t>((window_ - 1) >> 8);
    std::uint8_t* c = cmd_.data();
    std::size_t n = 0;
    c[n++] = mpsse::get_low;
    c[n++] = mpsse::set_low;
    c[n++] = pins(high);
    c[n++] = dir_;
    c[n++] = read_op;
    c[n++] = len_lo;
    c[n++] = len_hi;
    c[n++] = mpsse::bad_opcode; // its echo closes the frame
    c[n++] = mpsse::send_immediate;

    const std::int64_t t_w0 = now_ns();
    if (send(c, n) < 0)
        return -1;
    out_high_ = high;
    const std::int64_t window = static_cast<std::int64_t>(window_ns());
    const std::size_t need = 1 + window_ + 2;
    const int got = receive(buf_.data(), need, t_w0 + window + answer_margin_ns);
    if (got < 0)
        return -1;
    if (static_cast<std::size_t>(got) != need || buf_[need - 2] != mpsse::bad_reply ||
        buf_[need - 1] != mpsse::bad_opcode) {
        out.lost = out.suspect = true;
        return resync();
    }
    const bool idle = (buf_[0] >> opt_.in_bit) & 1;
    const bool answer = opt_.follow ? high : !idle;
    const ftdi_decoded d = ftdi_decode(buf_.data() + 1, window_, opt_.order, idle, answer);
    const std::int64_t t_r = now_ns();
    if (d.stale) {
        out.lost = out.late = true;
        return 0;
    }
    const bool glitch = d.glitch;
    if (d.first >= 0) {
        const double lat = offset_ns_ + static_cast<double>(d.first) * tick_ns_;
        out.latency_ns = static_cast<std::int64_t>(std::ceil(std::max(lat, 0.0)));
        // Before the first sample there is no earlier one: the answer may have come at once.
        // (A floor run's share can make the offset negative: a bound never goes below 0.)
        const double lower = d.first == 0 ? 0.0 : std::max(0.0, lat - tick_ns_);
        out.bracket_ns = std::max<std::int64_t>(
            0, out.latency_ns - static_cast<std::int64_t>(std::floor(lower)));
        // The chip cannot have seen the answer after the host got the data back.
        out.suspect = glitch || out.latency_ns > t_r - t_w0;
        return 0;
    }
    // Not in the first window: read more windows, each bracketed by the host clock.
    return measure_chained(read_op, idle, answer, glitch, t_w0, timeout_ns, out);
}

// MPSSE: the windows after the first, until the answer shows or the timeout passes; a sample
// found here is bracketed by the host clock (its latency the round trip, an upper bound).
int ftdi_lines::measure_chained(std::uint8_t read_op, bool idle, bool answer, bool glitch,
                                std::int64_t t_w0, std::int64_t timeout_ns,
                                device_sample& out) noexcept
{
    const std::uint8_t len_lo = static_cast<std::uint8_t>((window_ - 1) & 0xff);
    const std::uint8_t len_hi = static_cast<std::uint8_t>((window_ - 1) >> 8);
    const std::int64_t window = static_cast<std::int64_t>(window_ns());
    std::uint64_t before = window_ * 8; // samples taken before the current window
    const std::uint8_t more[5] = {read_op, len_lo, len_hi, mpsse::bad_opcode,
                                  mpsse::send_immediate};
    while (true) {
        if (now_ns() - t_w0 > timeout_ns) {
            out.lost = true;
            out.suspect = glitch;
            return 0;
        }
        if (send(more, sizeof more) < 0)
            return -1;
        const int got = receive(buf_.data(), window_ + 2, now_ns() + window + answer_margin_ns);
        if (got < 0)
            return -1;
        if (static_cast<std::size_t>(got) != window_ + 2 || buf_[window_] != mpsse::bad_reply ||
            buf_[window_ + 1] != mpsse::bad_opcode) {
            out.lost = out.suspect = true;
            return resync();
        }
        const ftdi_decoded d = ftdi_decode(buf_.data(), window_, opt_.order, idle, answer);
        const std::int64_t t_r = now_ns();
        glitch = glitch || d.glitch;
        if (d.first >= 0) {
            ++chained_;
            const double lower =
                offset_ns_ +
                (static_cast<double>(before) + static_cast<double>(d.first) - 1.0) * tick_ns_;
            out.latency_ns = t_r - t_w0;
            out.bracket_ns =
                std::max<std::int64_t>(0, out.latency_ns - static_cast<std::int64_t>(lower));
            out.suspect = glitch;
            return 0;
        }
        before += window_ * 8;
    }
}

int ftdi_lines::measure_syncbb(bool high, std::int64_t timeout_ns, device_sample& out) noexcept
{
    // Byte 0 keeps the old level, bytes 1.. carry the edge; read byte k is the pins just
    // before write k, so read byte k >= 2 is (k - 1) ticks after the edge.
    const std::uint8_t before_edge = pins(out_high_), after = pins(high);
    std::uint8_t* c = cmd_.data();
    c[0] = before_edge;
    for (std::size_t k = 1; k < window_; ++k)
        c[k] = after;
    const std::uint8_t out_mask = static_cast<std::uint8_t>(1u << opt_.out_bit);
    const std::int64_t t_w0 = now_ns();
    const std::int64_t window = static_cast<std::int64_t>(static_cast<double>(window_) * tick_hi_);
    bool idle = false, answer = false, glitch = false;
    std::uint64_t before = 0;
    for (bool first = true;; first = false) {
        if (!first && now_ns() - t_w0 > timeout_ns) {
            out.lost = true;
            out.suspect = glitch;
            return 0;
        }
        if (!first)
            c[0] = after;
        if (send(c, window_) < 0)
            return -1;
        out_high_ = high;
        int got = receive(buf_.data(), window_, now_ns() + window + answer_margin_ns);
        if (got < 0)
            return -1;
        // Framing: each read byte shows the stimulus pin as the previous write left it.
        bool framed = static_cast<std::size_t>(got) == window_;
        for (std::size_t k = 2; framed && k < window_; ++k)
            framed = ((buf_[k] & out_mask) != 0) == high;
        if (!framed) {
            out.lost = out.suspect = true;
            return resync();
        }
        const std::size_t from = first ? 1 : 0;
        if (first) {
            idle = (buf_[0] >> opt_.in_bit) & 1;
            answer = opt_.follow ? high : !idle;
            if (idle == answer) {
                out.lost = out.late = true;
                return 0;
            }
        }
        const std::int64_t start = answer_run(from, idle, answer, glitch);
        if (start >= 0) {
            syncbb_bracket(first, start, before, glitch, t_w0, out);
            return 0;
        }
        before += window_ - (first ? 1 : 0);
    }
}

// Syncbb: where the final run at the answer level starts in the read window (from @p from),
// counted in samples from the edge; -1 when the window ends off it. Any other change of the
// level is a glitch.
std::int64_t ftdi_lines::answer_run(std::size_t from, bool idle, bool answer,
                                    bool& glitch) const noexcept
{
    std::int64_t start = -1;
    for (std::size_t k = from; k < window_; ++k) {
        const bool v = (buf_[k] >> opt_.in_bit) & 1;
        if (v == answer && start < 0)
            start = static_cast<std::int64_t>(k);
        else if (v != answer) {
            if (start >= 0 || v != idle)
                glitch = true;
            start = -1;
        }
    }
    return start;
}

// Syncbb: the latency and bracket of an answer seen at read byte @p start of the first window
// (the tick's bounds), or of a later one (the host clock's round trip).
void ftdi_lines::syncbb_bracket(bool first, std::int64_t start, std::uint64_t before, bool glitch,
                                std::int64_t t_w0, device_sample& out) noexcept
{
    const std::int64_t t_r = now_ns();
    if (first) {
        // Read byte `start` was taken start - 1 ticks after the edge, the one before it
        // start - 2 ticks after: the upper bound with the tick's upper bound, the lower
        // one with its lower bound.
        const double lat = offset_ns_ + static_cast<double>(start - 1) * tick_hi_;
        const double lower =
            offset_ns_ + static_cast<double>(std::max<std::int64_t>(start - 2, 0)) * tick_lo_;
        out.latency_ns = static_cast<std::int64_t>(std::ceil(std::max(lat, 0.0)));
        out.bracket_ns = std::max<std::int64_t>(
            0, out.latency_ns - static_cast<std::int64_t>(std::floor(std::max(lower, 0.0))));
        out.suspect = glitch || out.latency_ns > t_r - t_w0;
        return;
    }
    ++chained_;
    out.latency_ns = t_r - t_w0;
    const double lower = offset_ns_ + static_cast<double>(before + start - 2) * tick_lo_;
    out.bracket_ns = std::max<std::int64_t>(0, out.latency_ns - static_cast<std::int64_t>(lower));
    out.suspect = glitch;
}

std::string ftdi_lines::describe() const
{
    std::string d = "ftdi:" + port_->where() + ",interface=" + std::string(1, opt_.interface) +
                    ",mode=" + (opt_.syncbb ? "syncbb" : "mpsse") + ",out=" + opt_.pin_names[0] +
                    ",in=" + opt_.pin_names[1];
    if (opt_.trigger_bit >= 0)
        d += ",trigger=" + opt_.pin_names[2];
    if (opt_.syncbb)
        d += ",baud=" + std::to_string(opt_.baud);
    else
        d += ",tck=" + hz_text(1e9 / tick_ns_) +
             ",order=" + (opt_.order == ftdi_bit_order::msb_first ? "msb" : "lsb") +
             ",edge=" + (opt_.neg_edge ? "falling" : "rising");
    char off[32];
    std::snprintf(off, sizeof off, "%.0f", offset_ns_);
    d += ",window=" + std::to_string(window_) + ",offset=" + off +
         "ns,answer=" + (opt_.follow ? "follow" : "toggle") +
         ",latency=" + std::to_string(opt_.latency_ms);
    return d;
}

std::string ftdi_lines::wiring() const
{
    // What a floor run's share depends on: the device and the pins (not the TCK, the window
    // or the bit order: the share is a delay of the wires in ns).
    return port_->where() + ",interface=" + std::string(1, opt_.interface) +
           ",mode=" + (opt_.syncbb ? "syncbb" : "mpsse") + ",out=" + opt_.pin_names[0] +
           ",in=" + opt_.pin_names[1];
}

std::int64_t ftdi_lines::device_bracket_ns() const noexcept
{
    // MPSSE: one tick. Syncbb: the last sample of a window, with the tick's two bounds.
    if (!opt_.syncbb)
        return static_cast<std::int64_t>(std::ceil(tick_ns_)) + 1;
    const double w = static_cast<double>(window_);
    return static_cast<std::int64_t>(std::ceil((w - 1) * tick_hi_ - (w - 2) * tick_lo_)) + 1;
}

void ftdi_lines::take_floor(const calibration& c)
{
    // The answer path is proven slower than the first samples by the share: the samples look
    // that much earlier at the target's pins than the nominal offset says.
    floor_share_ns_ = std::max<std::int64_t>(0, c.floor_share_ns);
    offset_ns_ = nominal_offset_ns() - static_cast<double>(floor_share_ns_);
    offset_source_ = c.floor_run;
}

backend_identity ftdi_lines::identity() const
{
    backend_identity id = identity_of_spec(describe());
    id.wiring = wiring();
    id.clock = device_clock{tick_ns_, tick_lo_, tick_hi_, offset_ns_};
    if (floor_share_ns_ >= 0)
        id.floor = calibration{floor_share_ns_, offset_source_};
    return id;
}

std::vector<metadata_item> ftdi_lines::metadata() const
{
    char b[64];
    auto num = [&](double v) {
        std::snprintf(b, sizeof b, "%.3f", v);
        return std::string(b);
    };
    std::vector<metadata_item> m{
        {"ftdi.chip", ftdi_chip_name(port_->chip())},
        {"ftdi.device", port_->where()},
        {"ftdi.mode", opt_.syncbb ? "syncbb (experimental)" : "mpsse"},
        {"ftdi.tick_ns", num(tick_ns_)},
        {"ftdi.tick_source", tick_source_},
        {"ftdi.window_bytes", std::to_string(window_)},
        {"ftdi.window_ns",
         num(opt_.syncbb ? static_cast<double>(window_) * tick_ns_ : window_ns())},
        {"ftdi.offset_ns", num(offset_ns_)},
        {"ftdi.offset_source", offset_source_},
        {"ftdi.wiring", wiring()},
        {"ftdi.fifo_bytes", std::to_string(ftdi_chip_fifo(port_->chip()))},
        {"ftdi.latency_timer_ms", std::to_string(opt_.latency_ms)},
    };
    if (floor_share_ns_ >= 0) {
        m.push_back({"ftdi.floor_share_ns", std::to_string(floor_share_ns_)});
        m.push_back({"ftdi.floor_run", offset_source_});
    }
    if (opt_.syncbb) {
        m.push_back({"ftdi.tick_lower_ns", num(tick_lo_)});
        m.push_back({"ftdi.tick_upper_ns", num(tick_hi_)});
    }
    return m;
}

namespace
{

/** Pin name to bit: xDBUS0-7 of the interface's letter (MPSSE), D0-D7 (syncbb). */
unsigned pin_bit(const std::string& name, bool syncbb, char interface, const std::string& ctx)
{
    if (syncbb) {
        if (name.size() == 2 && name[0] == 'D' && name[1] >= '0' && name[1] <= '7')
            return static_cast<unsigned>(name[1] - '0');
        throw error("bad value for " + ctx, "'" + name + "' is not a bit-bang pin", "use D0..D7");
    }
    const std::string prefix = std::string(1, interface) + "DBUS";
    if (name.size() == prefix.size() + 1 && name.compare(0, prefix.size(), prefix) == 0 &&
        name.back() >= '0' && name.back() <= '7')
        return static_cast<unsigned>(name.back() - '0');
    throw error("bad value for " + ctx,
                "'" + name + "' is not a pin of interface " + std::string(1, interface),
                "use " + prefix + "3.." + prefix + "7 (" + prefix + "2 is the data input)");
}

} // namespace

namespace
{

/** The keys of the chip simulator (sim=): its latency model and the USB faults it injects. */
void take_sim_keys(spec& s, const std::string& ctx, ftdi_sim_config& c)
{
    c.model = latency_model::from_spec(s);
    auto prob = [&](const char* key) {
        double p = s.take_number(key, 0);
        if (!(p >= 0 && p <= 1))
            throw error("bad value for " + ctx + " key '" + key + "'", std::to_string(p),
                        "use 0..1");
        return p;
    };
    c.glitch_p = prob("glitch_p");
    c.stall_p = prob("stall_p");
    c.stall_max_ns = s.take_duration_ns("stall_max", 2'000'000, 0, 10'000'000'000);
    c.zero_p = prob("zero_p");
    c.partial_p = prob("partial_p");
    // The simulated FIFO is allocated: at most 16 MiB.
    c.fifo = s.take_count("fifo", 0, 0, 16u << 20);
    c.path_ns = s.take_duration_ns("path", 0);
    c.syncbb_multiplier = s.take_number("multiplier", 16);
    if (!(c.syncbb_multiplier >= 1 && c.syncbb_multiplier <= 64))
        throw error("bad value for " + ctx + " key 'multiplier'",
                    std::to_string(c.syncbb_multiplier), "use 1..64 (the chip's: 16)");
    c.syncbb_jitter = s.take_number("jitter", 0);
    if (!(c.syncbb_jitter >= 0 && c.syncbb_jitter < 0.5))
        throw error("bad value for " + ctx + " key 'jitter'", std::to_string(c.syncbb_jitter),
                    "use 0..0.5");
    c.seed = s.take_count("usb_seed", 1);
}

/** The pins (out=, in=, trigger=), named for the mode and the interface. */
void take_pins(spec& s, const std::string& ctx, ftdi_options& o)
{
    namespace dflt = ftdi_defaults;
    auto default_pin = [&](const char* mpsse_name, const char* bb_name) {
        std::string n = o.syncbb ? bb_name : mpsse_name;
        if (!o.syncbb)
            n[0] = o.interface;
        return n;
    };
    o.pin_names[0] = s.take_string("out", default_pin(dflt::out_pin, dflt::syncbb_out_pin));
    o.pin_names[1] = s.take_string("in", default_pin(dflt::in_pin, dflt::syncbb_in_pin));
    o.out_bit = pin_bit(o.pin_names[0], o.syncbb, o.interface, ctx + " key 'out'");
    o.in_bit = pin_bit(o.pin_names[1], o.syncbb, o.interface, ctx + " key 'in'");
    if (s.has("trigger")) {
        o.pin_names[2] = s.take_string("trigger", "");
        o.trigger_bit = static_cast<int>(
            pin_bit(o.pin_names[2], o.syncbb, o.interface, ctx + " key 'trigger'"));
    }
}

/** The timing keys: TCK, window, bit order, sampling edge, offset, latency timer, baud. */
void take_timing(spec& s, const std::string& ctx, ftdi_options& o)
{
    namespace dflt = ftdi_defaults;
    if (auto t = s.take("tck"))
        o.tck_hz = parse_hz(*t, ctx + " key 'tck'");
    else
        o.tck_hz = dflt::tck_hz;
    o.window = s.take_count("window", 0, 0, 1u << 20); // checked against the chip's FIFO later
    o.order = s.take_choice("order", {"msb", "lsb"}, "msb", "the bit order of a read byte") == 0
                  ? ftdi_bit_order::msb_first
                  : ftdi_bit_order::lsb_first;
    o.neg_edge = s.take_choice("edge", {"rising", "falling"}, "rising",
                               "the TCK edge the data input is sampled on") == 1;
    if (auto off = s.take("offset")) {
        if (*off == "auto" || *off == "nominal")
            o.offset_auto = *off == "auto";
        else {
            o.offset_auto = false;
            o.offset_ns = static_cast<double>(parse_duration_ns(*off, ctx + " key 'offset'"));
        }
    }
    const std::uint64_t lat = s.take_count("latency", dflt::latency_ms);
    if (lat < 1 || lat > 255)
        throw error("bad value for " + ctx + " key 'latency'", std::to_string(lat) + " ms",
                    "the latency timer runs from 1 to 255 ms (libftdi refuses 0); use 1 or 2");
    o.latency_ms = static_cast<unsigned>(lat);
    const std::uint64_t baud = s.take_count("baud", dflt::syncbb_baud);
    if (baud < 300 || baud > 3'000'000)
        throw error("bad value for " + ctx + " key 'baud'", std::to_string(baud), "use 300..3M");
    o.baud = static_cast<int>(baud);
}

/** The simulated chip sim= names, checked against interface=; unknown without sim=. */
ftdi_chip take_sim_chip(spec& s, const ftdi_options& o)
{
    const std::optional<std::string> sim = s.peek("sim");
    if (!sim)
        return ftdi_chip::unknown;
    constexpr ftdi_chip chips[] = {ftdi_chip::ft232h, ftdi_chip::ft2232h, ftdi_chip::ft232r};
    const ftdi_chip chip =
        chips[s.take_choice("sim", {"ft232h", "ft2232h", "ft232r"}, "", "the simulated chip")];
    if (o.interface != 'A' && !(chip == ftdi_chip::ft2232h && o.interface == 'B'))
        throw error("bad value for backend 'ftdi' key 'interface'",
                    "the simulated " + *sim + " has no interface " + std::string(1, o.interface));
    return chip;
}

} // namespace

ftdi_spec take_ftdi_spec(spec& s, role r)
{
    ftdi_spec x;
    ftdi_options& o = x.options;
    const std::string ctx = "backend 'ftdi'";
    if (r != role::logger)
        throw error("open backend 'ftdi'", "the ftdi backend is a logger only",
                    "run irqloop-responder on the target with another backend");
    const bool sim = s.has("sim");
    const std::string desc = s.take_string("desc", ""), serial = s.take_string("serial", ""),
                      bus = s.take_string("bus", "");
    if (sim + (!desc.empty()) + (!serial.empty()) + (!bus.empty()) > 1)
        throw error("bad backend spec '" + s.text() + "'",
                    "give at most one of sim=, desc=, serial=, bus=");
    o.interface =
        "ABCD"[s.take_choice("interface", {"A", "B", "C", "D"}, "A", "the chip's interface")];
    const ftdi_chip sim_chip = take_sim_chip(s, o);
    o.syncbb =
        s.take_choice("mode", {"mpsse", "syncbb"},
                      sim_chip == ftdi_chip::ft232r ? "syncbb" : "mpsse", "the chip's engine") == 1;
    take_pins(s, ctx, o);
    take_timing(s, ctx, o);
    // The simulated far end follows, like the sim backend's board; real targets
    // (irqloop-responder, the kernel responder) toggle unless told otherwise.
    const far_end answers = take_far_end(s, far_end{true, sim});
    if (!answers.both_edges)
        throw error("bad backend spec '" + s.text() + "'",
                    "the ftdi backend measures both edges: edges=rising is not supported",
                    "use a far end that answers both edges, or another backend");
    o.follow = answers.follow;
    const bool detach = s.take_bool("detach", true);
    x.sim = sim;
    if (x.sim) {
        take_sim_keys(s, ctx, x.sim_config);
        x.sim_config.chip = sim_chip;
        x.sim_config.out_bit = o.out_bit;
        x.sim_config.in_bit = o.in_bit;
        x.sim_config.follow = o.follow;
    } else {
        x.device.desc = desc;
        x.device.serial = serial;
        x.device.bus = bus;
        x.device.interface = o.interface;
        x.device.detach = detach;
    }
    return x;
}

std::unique_ptr<lines> open_ftdi(const ftdi_spec& x, const calibration_lookup& floor)
{
    std::unique_ptr<ftdi_port> port;
    if (x.sim)
        port = std::make_unique<ftdi_sim>(x.sim_config);
    else
        port = open_libftdi_port(x.device);
    return std::make_unique<ftdi_lines>(std::move(port), x.options, floor);
}

} // namespace irqloop::hw
