// SPDX-License-Identifier: MIT
#pragma once

#include "ftdi-port.hpp"
#include "sim/latency-model.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace irqloop::hw
{

/** @brief The simulated chip and what is wired to it. */
struct ftdi_sim_config final {
    ftdi_chip chip = ftdi_chip::ft232h;
    std::size_t fifo = 0;     ///< chip-to-host FIFO in bytes; 0: the chip's (ftdi_chip_fifo)
    unsigned out_bit = 4;     ///< the pin the far end watches (the logger's stimulus)
    unsigned in_bit = 2;      ///< the pin the far end drives (ADBUS2 = MPSSE data in)
    latency_model model;      ///< the far end's answer delay and losses
    bool follow = true;       ///< far end sets its line to the stimulus level (else toggles)
    std::int64_t path_ns = 0; ///< the wires' own delay, out and back (level translators, cable):
                              ///< added to every answer at the chip's pins, jumper included
    double glitch_p = 0;      ///< chance of a short pulse on the line before an answer
    // USB and host hiccups.
    double stall_p = 0;            ///< chance that a read() starts late (the host was busy)
    std::int64_t stall_max_ns = 0; ///< longest such stall: the FIFO may fill, the engine pauses
    double zero_p = 0;             ///< chance that a read() returns 0 bytes (status-only packet)
    double partial_p = 0;          ///< chance that a read() returns only part of what arrived
    // Synchronous bit-bang (FT232R).
    /// The true bit-bang clock is baud rate x this. The backend assumes 16 and measures the
    /// tick at open: sources disagree (4, 16, 20 are all reported for the FT232R) and TN_120's
    /// erratum leaves the FT232R's bit-bang clock off its nominal rate.
    double syncbb_multiplier = 16;
    double syncbb_jitter = 0; ///< erratum mode: each tick off by up to this fraction
    std::uint64_t seed = 1;
    std::size_t truth_capacity = 0; ///< keep the truth of the first N stimulus edges
};

/**
 * @brief A simulated FTDI chip behind the ftdi_port interface, timed on CLOCK_MONOTONIC_RAW.
 *
 * What it models, because the backend relies on it:
 * - host to chip: a write reaches the chip at the next USB (micro)frame;
 * - the MPSSE subset the backend uses: 0x80/0x81/0x82/0x83 pins, 0x86 TCK divisor with
 *   0x8A/0x8B (60 or 12 MHz base), 0x87 send immediately, 0x84/0x85, 0x8C/0x8D, 0x96/0x97,
 *   read bytes 0x20/0x24/0x28/0x2C sampling the data-in pin on every TCK edge, and any
 *   other opcode echoed as 0xFA, opcode; commands run one after another on the chip's time;
 * - the chip-to-host FIFO: bytes leave it only while the host reads, in packets of 64 or
 *   512 bytes that each start with two modem-status bytes (stripped by read(), as libftdi
 *   does); a packet goes when full, at 0x87, or when the latency timer expires;
 * - pause-not-drop: when the FIFO is full the engine stops clocking until the host reads;
 *   the pause is invisible in the data (later samples are simply taken later);
 * - zero and partial reads, host stalls (hiccups, with the chances in the config);
 * - synchronous bit-bang: each written byte is put on the pins one tick after the previous
 *   one, and the pins are read just before each write; the tick is baud x multiplier (a
 *   multiplier other than the backend's 16 is a chip whose true tick is off its nominal one),
 *   and jitters in the erratum mode; burst() keeps the write and the read going together;
 * - the far end: it watches out_bit and answers each edge on in_bit after a delay drawn from
 *   the latency model (hw/sim), by following or toggling, or loses it.
 *
 * Not thread-safe: one user at a time, like a libftdi context.
 */
class ftdi_sim final : public ftdi_port
{
public:
    /** @brief What happened to one stimulus edge (chip time, ns of CLOCK_MONOTONIC_RAW). */
    struct truth final {
        std::int64_t edge_ns;   ///< the stimulus pin changed
        std::int64_t answer_ns; ///< the response changed at the chip's pin (0: lost); the
                                ///< target's own latency is answer - edge - path_ns
        bool level;             ///< the stimulus level after the edge
        /// A pulse injected on the response line before the answer (glitch_p), from glitch_ns
        /// to glitch_end_ns; both 0 when there was none.
        std::int64_t glitch_ns = 0, glitch_end_ns = 0;
    };

    explicit ftdi_sim(ftdi_sim_config c);

    int configure(const ftdi_port_config& c) override;
    int write(const std::uint8_t* data, std::size_t n) noexcept override;
    int read(std::uint8_t* data, std::size_t n) noexcept override;
    int purge() noexcept override;
    int burst(const std::uint8_t* out, std::uint8_t* in, std::size_t n) override;
    ftdi_chip chip() const noexcept override { return cfg_.chip; }
    std::string where() const override;
    const char* error_text() const noexcept override { return err_; }

    const std::vector<truth>& truths() const noexcept { return truth_; }
    /** @brief The true delay from a pin write (0x80) to the first sample of a following read. */
    double first_sample_offset_ns(bool neg_edge) const noexcept;
    double tick_ns() const noexcept;
    /** @brief Syncbb: the mean tick of the bit-bang clock, in ns. */
    double syncbb_tick_ns() const noexcept;
    std::uint64_t pauses() const noexcept { return pauses_; } ///< FIFO-full stops
    std::uint64_t stalls() const noexcept { return stalls_; } ///< injected host stalls
    std::uint64_t zero_reads() const noexcept { return zeros_; }
    std::uint64_t partial_reads() const noexcept { return partials_; }
    std::uint64_t bad_opcodes() const noexcept { return bad_ops_; }
    std::uint64_t glitches() const noexcept { return glitches_; }
    std::uint64_t packets() const noexcept { return packets_; }
    std::size_t fifo_size() const noexcept { return fifo_cap_; }
    /** @brief The low pin byte's outputs as last set (0x80 or a bit-bang write) and their
     * directions. */
    std::uint8_t low_value() const noexcept { return low_value_; }
    std::uint8_t low_direction() const noexcept { return low_dir_; }

private:
    /** @brief @p t (absolute ns) as engine time, after epoch_. */
    double rel(std::int64_t t) const noexcept { return static_cast<double>(t - epoch_); }
    /** @brief The engine's time as absolute ns. */
    std::int64_t eng_ns() const noexcept { return epoch_ + static_cast<std::int64_t>(t_eng_); }
    enum class op : std::uint8_t {
        set_low,
        get_low,
        set_high,
        get_high,
        divisor,
        flush,
        div5,
        read_bytes,
        echo,
        nop,
        syncbb
    };
    struct job {
        op kind;
        std::uint8_t a = 0, b = 0;
        std::uint32_t count = 0; ///< read_bytes: bytes left; syncbb: bytes left
        std::uint32_t done = 0;  ///< read_bytes: bytes produced
        std::uint32_t data = 0;  ///< syncbb: index in the written-data ring
    };
    struct transition {
        std::int64_t t;
        std::int8_t level; ///< 0/1: set; -1: toggle
    };
    struct packet {
        std::int64_t arrive;
        std::uint16_t len; ///< with the two status bytes
        std::uint16_t pos; ///< bytes of it already handed out
        std::uint8_t bytes[512];
    };

    void advance(std::int64_t t, bool reading) noexcept;
    bool run_job(job& j, std::int64_t t, double tick, bool reading) noexcept;
    void clock_read_bytes(job& j, std::int64_t t, double tick, bool reading) noexcept;
    void clock_syncbb(job& j, std::int64_t t, bool reading) noexcept;
    /** The job of the MPSSE opcode @p c, and its length in bytes (@p len). */
    static job decode(std::uint8_t c, std::size_t& len) noexcept;
    bool push(const job& j) noexcept;
    int write_mpsse(const std::uint8_t* data, std::size_t n) noexcept;
    bool produce(std::uint8_t b, std::int64_t t, bool reading) noexcept;
    void move_to_usb(std::size_t n, std::int64_t t) noexcept;
    void set_pins(std::uint8_t value, std::uint8_t dir, std::int64_t t) noexcept;
    bool level_at(std::int64_t t) noexcept;
    std::uint8_t pins_at(std::int64_t t) noexcept;
    void add_transition(std::int64_t t, int level) noexcept;
    std::int64_t next_frame(std::int64_t t) const noexcept;
    double unit() noexcept { return unit_(rng_); }

    ftdi_sim_config cfg_;
    std::size_t fifo_cap_;
    std::size_t payload_; ///< packet size less the two status bytes
    const char* err_ = "no error";
    ftdi_port_config port_{};
    bool mpsse_ = false, syncbb_ = false;
    // MPSSE state.
    unsigned divisor_ = 0;
    bool div5_ = true;
    std::uint8_t low_value_ = 0, low_dir_ = 0, high_value_ = 0, high_dir_ = 0;
    bool out_level_ = false;
    // The engine.
    static constexpr std::size_t job_slots = 256;
    job jobs_[job_slots];
    std::size_t job_head_ = 0, job_count_ = 0;
    /// Chip time of the engine's next step, in ns after epoch_ (fractional). Kept small on
    /// purpose: an absolute CLOCK_MONOTONIC_RAW time in a double loses sub-ns steps after
    /// ~10 h of uptime, and a window's 8000 additions of a tick then drift by several ns.
    double t_eng_ = 0;
    std::int64_t epoch_ = 0;      ///< the absolute time t_eng_ counts from (ns)
    std::int64_t t_last_adv_ = 0; ///< last advance() time
    bool paused_ = false;
    bool bursting_ = false; ///< in burst(): the host's read is in flight all along
    // Syncbb written data.
    static constexpr std::size_t data_slots = 1 << 16;
    std::vector<std::uint8_t> wdata_;
    std::size_t wdata_head_ = 0;
    // The far end's response line.
    static constexpr std::size_t transition_slots = 256;
    transition trans_[transition_slots];
    std::size_t trans_count_ = 0;
    bool resp_level_ = false;
    // Chip-to-host FIFO and the packets on the way to (or waiting in) the host.
    std::vector<std::uint8_t> fifo_;
    std::size_t fifo_head_ = 0, fifo_count_ = 0, flush_pending_ = 0;
    std::int64_t fifo_oldest_ = 0;
    static constexpr std::size_t packet_slots = 256;
    std::vector<packet> usb_;
    std::size_t usb_head_ = 0, usb_count_ = 0;

    std::mt19937_64 rng_;
    std::uniform_real_distribution<double> unit_{0.0, 1.0};
    std::vector<truth> truth_;
    std::uint64_t pauses_ = 0, stalls_ = 0, zeros_ = 0, partials_ = 0, bad_ops_ = 0, glitches_ = 0,
                  packets_ = 0;
};

} // namespace irqloop::hw
