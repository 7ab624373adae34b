// SPDX-License-Identifier: MIT
#include "ftdi-sim.hpp"

#include "cycle-clock.hpp"
#include "ftdi-decode.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>

namespace irqloop::hw
{

namespace
{

constexpr std::int64_t cmd_byte_ns = 17; // the MPSSE takes a command byte per 60 MHz cycle
constexpr std::int64_t cmd3_ns = 50;     // a three-byte command

// clock_nanosleep() does not take CLOCK_MONOTONIC_RAW: sleep for the difference.
void sleep_until(std::int64_t t_ns) noexcept
{
    const std::int64_t d = t_ns - monotonic_raw_ns();
    if (d <= 0)
        return;
    timespec ts{static_cast<time_t>(d / 1000000000), static_cast<long>(d % 1000000000)};
    nanosleep(&ts, nullptr);
}

} // namespace

ftdi_sim::ftdi_sim(ftdi_sim_config c) : cfg_(std::move(c))
{
    fifo_cap_ = cfg_.fifo ? cfg_.fifo : ftdi_chip_fifo(cfg_.chip);
    payload_ = ftdi_chip_packet(cfg_.chip) - 2;
    fifo_.assign(fifo_cap_, 0);
    usb_.resize(packet_slots);
    wdata_.assign(data_slots, 0);
    rng_.seed(cfg_.seed);
    truth_.reserve(cfg_.truth_capacity);
    // What a previous program left behind: the MPSSE keeps running after a close, and some
    // of its answers still wait in the chip. configure() must flush them.
    mpsse_ = ftdi_chip_has_mpsse(cfg_.chip);
    divisor_ = 0x1234;
    packet& p = usb_[0];
    p.arrive = 0;
    p.len = 5;
    p.pos = 0;
    const std::uint8_t stale[5] = {0x32, 0x60, 0xFA, 0x13, 0x37};
    std::memcpy(p.bytes, stale, sizeof stale);
    usb_count_ = 1;
}

std::string ftdi_sim::where() const
{
    return std::string("sim=") + ftdi_chip_name(cfg_.chip);
}

double ftdi_sim::tick_ns() const noexcept
{
    return 2.0 * (1.0 + divisor_) * 1e9 / (div5_ ? 12e6 : 60e6);
}

double ftdi_sim::first_sample_offset_ns(bool neg_edge) const noexcept
{
    // The set-pins command moves the pin as it ends; the read command's three bytes follow,
    // then its first sample half a period in (rising edge) or a whole one (falling edge).
    return static_cast<double>(cmd3_ns) + (neg_edge ? 1.0 : 0.5) * tick_ns();
}

double ftdi_sim::syncbb_tick_ns() const noexcept
{
    const double baud = port_.baudrate > 0 ? port_.baudrate : 9600;
    return 1e9 / (baud * cfg_.syncbb_multiplier);
}

std::int64_t ftdi_sim::next_frame(std::int64_t t) const noexcept
{
    const std::int64_t frame = ftdi_chip_packet(cfg_.chip) == 512 ? 125'000 : 1'000'000;
    return (t / frame + 1) * frame;
}

int ftdi_sim::configure(const ftdi_port_config& c)
{
    if (c.latency_ms < 1 || c.latency_ms > 255) {
        err_ = "latency out of range. Only valid for 1-255";
        return -1;
    }
    if (c.mode == ftdi_bitmode::mpsse && !ftdi_chip_has_mpsse(cfg_.chip)) {
        err_ = "simulated chip has no MPSSE";
        return -1;
    }
    port_ = c;
    purge();
    mpsse_ = c.mode == ftdi_bitmode::mpsse;
    syncbb_ = c.mode == ftdi_bitmode::syncbb;
    // Entering a mode resets the engine: the 12 MHz base (divide by 5) is on again, all
    // pins are inputs.
    div5_ = true;
    divisor_ = 0xffff;
    low_dir_ = syncbb_ ? c.direction : 0;
    low_value_ = 0;
    high_dir_ = high_value_ = 0;
    set_pins(0, low_dir_, monotonic_raw_ns());
    return 0;
}

int ftdi_sim::purge() noexcept
{
    job_head_ = job_count_ = 0;
    fifo_head_ = fifo_count_ = flush_pending_ = 0;
    usb_head_ = usb_count_ = 0;
    paused_ = false;
    t_last_adv_ = monotonic_raw_ns();
    epoch_ = t_last_adv_;
    t_eng_ = 0;
    return 0;
}

void ftdi_sim::add_transition(std::int64_t t, int level) noexcept
{
    if (trans_count_ == transition_slots)
        return; // the far end is flooded: it drops the answer (a loss, as on a real target)
    std::size_t i = trans_count_++;
    while (i > 0 && trans_[i - 1].t > t) {
        trans_[i] = trans_[i - 1];
        --i;
    }
    trans_[i] = transition{t, static_cast<std::int8_t>(level)};
}

bool ftdi_sim::level_at(std::int64_t t) noexcept
{
    std::size_t k = 0;
    while (k < trans_count_ && trans_[k].t <= t) {
        resp_level_ = trans_[k].level < 0 ? !resp_level_ : trans_[k].level != 0;
        ++k;
    }
    if (k) {
        std::memmove(trans_, trans_ + k, (trans_count_ - k) * sizeof(transition));
        trans_count_ -= k;
    }
    return resp_level_;
}

std::uint8_t ftdi_sim::pins_at(std::int64_t t) noexcept
{
    // Outputs read back what they drive; inputs float high (pull-ups) except the wired one.
    std::uint8_t v = static_cast<std::uint8_t>((low_value_ & low_dir_) | ~low_dir_);
    const std::uint8_t in = static_cast<std::uint8_t>(1u << cfg_.in_bit);
    if (!(low_dir_ & in))
        v = static_cast<std::uint8_t>(level_at(t) ? (v | in) : (v & ~in));
    return v;
}

void ftdi_sim::set_pins(std::uint8_t value, std::uint8_t dir, std::int64_t t) noexcept
{
    low_value_ = value;
    low_dir_ = dir;
    const std::uint8_t out = static_cast<std::uint8_t>(1u << cfg_.out_bit);
    const bool level = (dir & out) ? (value & out) != 0 : true;
    if (level == out_level_)
        return;
    out_level_ = level;
    auto d = cfg_.model.draw();
    std::int64_t answer = 0, glitch = 0, glitch_end = 0;
    if (!d.lost) {
        const auto delay = static_cast<std::int64_t>(d.delay_ns) + cfg_.path_ns;
        answer = t + delay;
        if (cfg_.glitch_p > 0 && unit() < cfg_.glitch_p && delay > 200) {
            // A short pulse on the response line before the answer (crosstalk, a bounce).
            const std::int64_t at =
                t + static_cast<std::int64_t>(unit() * static_cast<double>(delay - 200));
            const std::int64_t width = 40 + static_cast<std::int64_t>(unit() * 100);
            add_transition(at, -1);
            add_transition(at + width, -1);
            glitch = at;
            glitch_end = at + width;
            ++glitches_;
        }
        add_transition(answer, cfg_.follow ? (level ? 1 : 0) : -1);
    }
    if (truth_.size() < cfg_.truth_capacity)
        truth_.push_back(truth{t, answer, level, glitch, glitch_end});
}

void ftdi_sim::move_to_usb(std::size_t n, std::int64_t t) noexcept
{
    n = std::min(n, fifo_count_);
    while (n > 0 && usb_count_ < packet_slots) {
        const std::size_t m = std::min(n, payload_);
        packet& p = usb_[(usb_head_ + usb_count_) % packet_slots];
        p.arrive = next_frame(t) + 2000;
        p.len = static_cast<std::uint16_t>(m + 2);
        p.pos = 0;
        p.bytes[0] = ftdi_chip_packet(cfg_.chip) == 512 ? 0x32 : 0x01; // modem status
        p.bytes[1] = 0x60;                                             // line status
        for (std::size_t i = 0; i < m; ++i)
            p.bytes[2 + i] = fifo_[(fifo_head_ + i) % fifo_cap_];
        fifo_head_ = (fifo_head_ + m) % fifo_cap_;
        fifo_count_ -= m;
        flush_pending_ = flush_pending_ > m ? flush_pending_ - m : 0;
        ++usb_count_;
        ++packets_;
        n -= m;
    }
    fifo_oldest_ = t;
}

bool ftdi_sim::produce(std::uint8_t b, std::int64_t t, bool reading) noexcept
{
    if (fifo_count_ == fifo_cap_)
        return false;
    if (fifo_count_ == 0)
        fifo_oldest_ = t;
    fifo_[(fifo_head_ + fifo_count_) % fifo_cap_] = b;
    ++fifo_count_;
    if (reading && fifo_count_ >= payload_)
        move_to_usb(payload_, t);
    return true;
}

void ftdi_sim::advance(std::int64_t t, bool reading) noexcept
{
    const std::int64_t latency = static_cast<std::int64_t>(port_.latency_ms) * 1'000'000;
    if (reading) {
        // The host has been reading since the last step: what was waiting leaves now.
        const std::int64_t t0 = t_last_adv_;
        std::size_t due = (fifo_count_ / payload_) * payload_;
        due = std::max(due, flush_pending_);
        if (fifo_count_ && fifo_oldest_ + latency <= t0)
            due = fifo_count_;
        if (due)
            move_to_usb(due, t0);
        if (paused_ && fifo_count_ < fifo_cap_) {
            paused_ = false;
            t_eng_ = std::max(t_eng_, rel(t0));
        }
    }
    const double tick = tick_ns(); // as the step began (a divisor job takes effect at the next)
    while (job_count_ && !paused_ && t_eng_ <= rel(t)) {
        if (!run_job(jobs_[job_head_], t, tick, reading)) {
            if (fifo_count_ == fifo_cap_ && !paused_) {
                paused_ = true; // pause, never drop: resumes when the host reads
                ++pauses_;
            }
            break;
        }
        job_head_ = (job_head_ + 1) % job_slots;
        --job_count_;
    }
    if (reading && fifo_count_ && fifo_oldest_ + latency <= t)
        move_to_usb(fifo_count_, fifo_oldest_ + latency); // the latency timer sends a short packet
    t_last_adv_ = std::max(t_last_adv_, t);
}

// One job on the engine's time up to @p t: true when it finished, false when it waits (for
// its clocking, or for room in the FIFO).
bool ftdi_sim::run_job(job& j, std::int64_t t, double tick, bool reading) noexcept
{
    bool finished = true;
    switch (j.kind) {
    case op::set_low:
        t_eng_ += cmd3_ns;
        set_pins(j.a, j.b, eng_ns());
        break;
    case op::set_high:
        high_value_ = j.a;
        high_dir_ = j.b;
        t_eng_ += cmd3_ns;
        break;
    case op::get_low:
    case op::get_high:
        if (!produce(j.kind == op::get_low ? pins_at(eng_ns()) : high_value_, eng_ns(), reading)) {
            finished = false;
            break;
        }
        t_eng_ += cmd_byte_ns;
        break;
    case op::divisor:
        divisor_ = j.a | (static_cast<unsigned>(j.b) << 8);
        t_eng_ += cmd3_ns;
        break;
    case op::div5:
        div5_ = j.a != 0;
        t_eng_ += cmd_byte_ns;
        break;
    case op::nop:
        t_eng_ += cmd_byte_ns;
        break;
    case op::flush:
        flush_pending_ = fifo_count_;
        if (reading)
            move_to_usb(fifo_count_, eng_ns());
        t_eng_ += cmd_byte_ns;
        break;
    case op::echo:
        if (fifo_cap_ - fifo_count_ < 2) {
            finished = false;
            break;
        }
        produce(mpsse::bad_reply, eng_ns(), reading);
        produce(j.a, eng_ns(), reading);
        ++bad_ops_;
        t_eng_ += cmd_byte_ns;
        break;
    case op::read_bytes:
        clock_read_bytes(j, t, tick, reading);
        finished = j.count == 0;
        break;
    case op::syncbb:
        clock_syncbb(j, t, reading);
        finished = j.count == 0;
        break;
    }
    return finished;
}

// MPSSE read-bytes: clock in the data-in pin, 8 ticks a byte, while the FIFO has room.
void ftdi_sim::clock_read_bytes(job& j, std::int64_t t, double tick, bool reading) noexcept
{
    if (!j.b) {
        t_eng_ += cmd3_ns; // the command's three bytes, then the clocking
        j.b = 1;
    }
    const bool lsb = j.a & 0x08, neg = j.a & 0x04;
    const double first = neg ? tick : 0.5 * tick;
    while (j.count) {
        const double end = t_eng_ + 8 * tick;
        if (end > rel(t) || fifo_count_ == fifo_cap_)
            break; // not clocked yet, or the FIFO is full: the engine waits
        std::uint8_t byte = 0;
        for (int k = 0; k < 8; ++k) {
            const bool bit =
                level_at(epoch_ + static_cast<std::int64_t>(std::floor(t_eng_ + first + k * tick)));
            if (bit)
                byte |= static_cast<std::uint8_t>(lsb ? 1u << k : 0x80u >> k);
        }
        produce(byte, epoch_ + static_cast<std::int64_t>(end), reading);
        t_eng_ = end;
        --j.count;
        ++j.done;
    }
}

// Sync bit-bang: each byte written is preceded by a read of the pins, one tick a byte.
void ftdi_sim::clock_syncbb(job& j, std::int64_t t, bool reading) noexcept
{
    while (j.count) {
        if (t_eng_ > rel(t) || fifo_count_ == fifo_cap_)
            break;
        // The pins are read first, then the byte is written.
        const auto te = eng_ns();
        produce(pins_at(te - 1), te, reading);
        set_pins(wdata_[j.data], low_dir_, te);
        j.data = static_cast<std::uint32_t>((j.data + 1) % data_slots);
        --j.count;
        double tk = syncbb_tick_ns();
        if (cfg_.syncbb_jitter > 0)
            tk *= 1.0 + cfg_.syncbb_jitter * (2 * unit() - 1);
        t_eng_ += tk;
    }
}

ftdi_sim::job ftdi_sim::decode(std::uint8_t c, std::size_t& len) noexcept
{
    struct command {
        std::uint8_t code;
        op kind;
        std::uint8_t a, len;
    };
    // The opcodes the engine acts on; the mode switches it has no use for are taken as no-ops,
    // any other byte is a bad opcode, echoed.
    static constexpr command commands[] = {
        {mpsse::set_low, op::set_low, 0, 3},         {mpsse::set_high, op::set_high, 0, 3},
        {mpsse::get_low, op::get_low, 0, 1},         {mpsse::get_high, op::get_high, 0, 1},
        {mpsse::tck_divisor, op::divisor, 0, 3},     {mpsse::send_immediate, op::flush, 0, 1},
        {mpsse::div5_off, op::div5, 0, 1},           {mpsse::div5_on, op::div5, 1, 1},
        {mpsse::loopback_on, op::nop, 0, 1},         {mpsse::loopback_off, op::nop, 0, 1},
        {mpsse::three_phase_on, op::nop, 0, 1},      {mpsse::three_phase_off, op::nop, 0, 1},
        {mpsse::adaptive_on, op::nop, 0, 1},         {mpsse::adaptive_off, op::nop, 0, 1},
        {mpsse::read_msb_pos, op::read_bytes, 0, 3}, {mpsse::read_msb_neg, op::read_bytes, 0, 3},
        {mpsse::read_lsb_pos, op::read_bytes, 0, 3}, {mpsse::read_lsb_neg, op::read_bytes, 0, 3},
    };
    for (const command& k : commands)
        if (k.code == c) {
            len = k.len;
            const bool keeps_code = k.kind == op::nop || k.kind == op::read_bytes;
            return job{k.kind, keeps_code ? c : k.a};
        }
    len = 1;
    return job{op::echo, c};
}

bool ftdi_sim::push(const job& j) noexcept
{
    if (job_count_ == job_slots)
        return false;
    jobs_[(job_head_ + job_count_) % job_slots] = j;
    ++job_count_;
    return true;
}

int ftdi_sim::write_mpsse(const std::uint8_t* data, std::size_t n) noexcept
{
    for (std::size_t i = 0; i < n;) {
        std::size_t len = 1;
        job j = decode(data[i], len);
        if (i + len > n) {
            err_ = "incomplete MPSSE command";
            return -1;
        }
        if (len == 3) {
            if (j.kind != op::read_bytes) {
                j.a = data[i + 1];
                j.b = data[i + 2];
            } else {
                j.count = (data[i + 1] | (static_cast<std::uint32_t>(data[i + 2]) << 8)) + 1u;
            }
        }
        if (!push(j)) {
            err_ = "usb bulk write failed";
            return -1;
        }
        i += len;
    }
    return 0;
}

int ftdi_sim::write(const std::uint8_t* data, std::size_t n) noexcept
{
    const std::int64_t now = monotonic_raw_ns();
    advance(now, bursting_);
    if (!mpsse_ && !syncbb_)
        return static_cast<int>(n); // serial mode: the bytes go out of TXD, nothing comes back
    const bool idle = job_count_ == 0;
    if (syncbb_) {
        job j{op::syncbb};
        j.count = static_cast<std::uint32_t>(n);
        j.data = static_cast<std::uint32_t>(wdata_head_);
        for (std::size_t i = 0; i < n; ++i) {
            wdata_[wdata_head_] = data[i];
            wdata_head_ = (wdata_head_ + 1) % data_slots;
        }
        if (n > data_slots || !push(j)) {
            err_ = "usb bulk write failed";
            return -1;
        }
    } else if (write_mpsse(data, n) < 0) {
        return -1;
    }
    if (idle) {
        // The chip sees the data at the next (micro)frame.
        t_eng_ = std::max(t_eng_, rel(next_frame(now) + 1000));
    }
    return static_cast<int>(n);
}

int ftdi_sim::burst(const std::uint8_t* out, std::uint8_t* in, std::size_t n)
{
    // As libftdi's asynchronous write and read: the bytes go out in pieces, at most a few
    // pieces ahead of what has come back, and the host reads all the while, so the chip's
    // read FIFO never fills and the engine never waits.
    constexpr std::size_t piece = 4096, ahead = 4 * piece;
    static_assert(ahead < data_slots, "the written-data ring holds what is in flight");
    // libftdi's asynchronous read stays queued in the host's USB stack while the write goes
    // out: the host reads all along, whatever this thread does between the calls.
    bursting_ = true;
    struct reset {
        bool& b;
        ~reset() { b = false; }
    } r_{bursting_};
    std::size_t sent = 0, got = 0;
    const std::int64_t give_up = monotonic_raw_ns() + 10'000'000'000;
    while (got < n) {
        while (sent < n && sent - got < ahead) {
            const std::size_t m = std::min(piece, n - sent);
            const int w = write(out + sent, m);
            if (w < 0)
                return w;
            sent += m;
        }
        const int r = read(in + got, std::min(piece, n - got));
        if (r < 0)
            return r;
        got += static_cast<std::size_t>(r);
        if (monotonic_raw_ns() > give_up)
            break;
    }
    return static_cast<int>(got);
}

int ftdi_sim::read(std::uint8_t* data, std::size_t n) noexcept
{
    advance(monotonic_raw_ns(), bursting_);
    if (cfg_.stall_p > 0 && unit() < cfg_.stall_p) {
        ++stalls_;
        sleep_until(monotonic_raw_ns() +
                    static_cast<std::int64_t>(unit() * static_cast<double>(cfg_.stall_max_ns)));
        advance(monotonic_raw_ns(), bursting_);
    }
    const std::int64_t start = monotonic_raw_ns();
    if (cfg_.zero_p > 0 && unit() < cfg_.zero_p) {
        ++zeros_;
        advance(start, true);
        return 0;
    }
    std::size_t limit = n;
    if (cfg_.partial_p > 0 && n > 1 && unit() < cfg_.partial_p)
        limit = 1 + static_cast<std::size_t>(unit() * static_cast<double>(n - 1));
    const std::int64_t deadline = start + static_cast<std::int64_t>(port_.latency_ms) * 1'000'000;
    while (true) {
        const std::int64_t now = monotonic_raw_ns();
        advance(now, true);
        std::size_t got = 0;
        while (usb_count_ && got < limit) {
            packet& p = usb_[usb_head_];
            if (p.arrive > now)
                break;
            // Every packet starts with two status bytes: strip them, as libftdi does.
            if (p.pos < 2)
                p.pos = 2;
            const std::size_t m = std::min<std::size_t>(limit - got, p.len - p.pos);
            std::memcpy(data + got, p.bytes + p.pos, m);
            got += m;
            p.pos = static_cast<std::uint16_t>(p.pos + m);
            if (p.pos == p.len) {
                usb_head_ = (usb_head_ + 1) % packet_slots;
                --usb_count_;
            }
        }
        if (got) {
            if (got < n && limit < n)
                ++partials_;
            return static_cast<int>(got);
        }
        if (now >= deadline)
            return 0; // only status bytes came: the latency timer's empty packet
        std::int64_t next = std::min(deadline, now + 20'000);
        if (usb_count_)
            next = std::min(next, usb_[usb_head_].arrive);
        if (job_count_ && !paused_)
            next = std::min(next, std::max(now + 1000, eng_ns()));
        sleep_until(next);
    }
}

} // namespace irqloop::hw
