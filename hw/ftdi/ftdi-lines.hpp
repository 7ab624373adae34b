// SPDX-License-Identifier: MIT
#pragma once

#include "ftdi-decode.hpp"
#include "ftdi-port.hpp"
#include "ftdi-sim.hpp"
#include "lines.hpp"
#include "spec.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace irqloop::hw
{

/** @brief How an ftdi_lines pair is wired and timed. */
struct ftdi_options final {
    bool syncbb = false;  ///< synchronous bit-bang (FT232R, FT-X) instead of MPSSE
    unsigned out_bit = 4; ///< stimulus pin (bit of the low byte / D0..D7)
    unsigned in_bit = 2;  ///< response pin; MPSSE: must be ADBUS2 (data in)
    int trigger_bit = -1; ///< trace-trigger pin, -1: none
    char interface = 'A';
    double tck_hz = 30e6;   ///< MPSSE: requested TCK, rounded down to 60 MHz / (2 (1+d))
    std::size_t window = 0; ///< bytes per read window; 0: 3/4 of the FIFO (MPSSE), 62 (syncbb)
    ftdi_bit_order order = ftdi_bit_order::msb_first;
    bool neg_edge = false;    ///< sample on the falling TCK edge
    double offset_ns = -1;    ///< command offset; < 0: the nominal one (or a floor run's)
    bool offset_auto = true;  ///< offset=auto: take the newest matching floor run's share
    bool follow = true;       ///< far end answers with the stimulus level (else toggles)
    unsigned latency_ms = 1;  ///< latency timer, 1..255
    int baud = 62500;         ///< syncbb clock base
    std::string pin_names[3]; ///< out, in, trigger as given (for describe())
};

/**
 * @brief A line pair on an FTDI chip, device-timed: the chip measures each sample on its own
 * clock (ftdi_port: libftdi1 or the chip simulator).
 *
 * MPSSE (FT232H, FT2232H, FT4232H): one USB write per sample, `0x81` (the level before the
 * edge), `0x80 value dir` (the edge), a read-bytes command of `window` bytes (the data-in
 * pin sampled on every TCK edge), `0xAA` (a bad opcode whose echo `0xFA 0xAA` closes the
 * frame) and `0x87`. The first sample at the answer level, after the calibrated offset,
 * gives the latency to within a tick. No answer in the window: further windows are read,
 * each another USB round trip, and the sample gets the bracket the host clock proves
 * (latency = the host's round trip, an upper bound). The window stays within the chip's
 * FIFO, so that the engine never pauses inside it (a pause would hide time).
 *
 * Sync bit-bang (FT232R): one write of `window` bytes (at most one 64-byte packet) whose
 * second byte carries the edge; each byte read back is the pins just before the matching
 * write. The tick (baud x a multiplier sources disagree on, with the FT232R's erratum) is
 * measured at open against the host clock (calibrate_syncbb()); latencies use its upper
 * bound, lower bounds its lower one. Experimental.
 *
 * Open: configure the port (bit mode reset, latency timer, chunk sizes, flush, mode), then
 * sync the MPSSE with a bad opcode (stale bytes of a previous program are thrown away),
 * set the clock and pins. drive()/sense() also work (host-timed, one round trip each), for
 * re-synchronising and for responders; measure() is the sampler's path.
 */
class ftdi_lines final : public polled_wire,
                         public lines,
                         public device_timed_wire,
                         public trigger_line
{
public:
    /** @throws irqloop::error when the chip does not answer as expected or the options do not fit
     * it. */
    ftdi_lines(std::unique_ptr<ftdi_port> port, ftdi_options o,
               const calibration_lookup& floor = {});
    ~ftdi_lines() override;

    void drive(bool high) noexcept override;
    int sense() noexcept override;
    void open_trigger(const std::string& line) override;
    void trigger(bool high) noexcept override;
    void stop() noexcept override;
    int measure(bool high, std::int64_t timeout_ns, device_sample& out) noexcept override;
    std::int64_t device_bracket_ns() const noexcept override;
    /** @brief The spec, the wiring, the device clock and the floor share taken in. */
    backend_identity identity() const override;
    std::string describe() const override;
    std::vector<metadata_item> metadata() const override;

    double tick_ns() const noexcept { return tick_ns_; }
    /** @brief Syncbb: the bounds of the tick measured at open (MPSSE: both the tick). */
    double tick_lower_ns() const noexcept { return tick_lo_; }
    double tick_upper_ns() const noexcept { return tick_hi_; }
    double offset_ns() const noexcept { return offset_ns_; }
    std::size_t window_bytes() const noexcept { return window_; }
    /** @brief Samples in one window times the tick. */
    double window_ns() const noexcept;
    /** @brief Set the command offset (from `irqloop calibrate`). */
    void set_offset_ns(double ns) noexcept { offset_ns_ = ns; }
    /** @brief MPSSE: the nominal offset: the read command's three bytes plus the first half tick.
     */
    double nominal_offset_ns() const noexcept;
    std::uint64_t framing_errors() const noexcept { return framing_errors_; }
    std::uint64_t chained() const noexcept { return chained_; }
    ftdi_port& port() noexcept { return *port_; }

private:
    int send(const std::uint8_t* b, std::size_t n) noexcept;
    int receive(std::uint8_t* b, std::size_t n, std::int64_t deadline_ns) noexcept;
    void check_pins(ftdi_chip chip, const std::string& what) const;
    ftdi_port_config size_window(ftdi_chip chip, const std::string& what);
    void take_floor(const calibration& c);
    void sync_mpsse();
    void setup_mpsse();
    void calibrate_syncbb();
    int resync() noexcept;
    int measure_mpsse(bool high, std::int64_t timeout_ns, device_sample& out) noexcept;
    int measure_chained(std::uint8_t read_op, bool idle, bool answer, bool glitch,
                        std::int64_t t_w0, std::int64_t timeout_ns, device_sample& out) noexcept;
    int measure_syncbb(bool high, std::int64_t timeout_ns, device_sample& out) noexcept;
    std::int64_t answer_run(std::size_t from, bool idle, bool answer, bool& glitch) const noexcept;
    void syncbb_bracket(bool first, std::int64_t start, std::uint64_t before, bool glitch,
                        std::int64_t t_w0, device_sample& out) noexcept;
    std::uint8_t pins(bool high) const noexcept;
    std::string wiring() const;

    std::unique_ptr<ftdi_port> port_;
    ftdi_options opt_;
    double tick_ns_ = 0, offset_ns_ = 0;
    unsigned divisor_ = 0;
    std::size_t window_ = 0;
    std::uint8_t dir_ = 0;
    bool out_high_ = false, trig_high_ = false, trigger_open_ = false;
    std::vector<std::uint8_t> cmd_, buf_; // sized at open: no allocation while measuring
    std::uint64_t framing_errors_ = 0, chained_ = 0;
    double tick_lo_ = 0, tick_hi_ = 0; // syncbb: the calibrated tick's bounds
    std::string tick_source_;          // how the tick was found (run metadata)
    std::string offset_source_;        // how the offset was found (run metadata)
    std::int64_t floor_share_ns_ = -1; // the floor run's share in the offset; < 0: none
};

/** @brief Everything a spec says about an ftdi pair, taken before any hardware is touched. */
struct ftdi_spec final {
    ftdi_options options;
    bool sim = false;
    ftdi_sim_config sim_config; ///< with sim
    ftdi_open_params device;    ///< without sim
};

/**
 * @brief Take the `ftdi:` keys; touches nothing (the registry opens with open_ftdi() after
 * spec::finish()).
 *
 * Keys: one of `desc=` (libftdi description string), `serial=`, `bus=BUS:ADDR` or
 * `sim=ft232h|ft2232h|ft232r` (the chip simulator); `interface=A|B|C|D`,
 * `mode=mpsse|syncbb`, `out=`, `in=`, `trigger=` (pin names: ADBUS0-7 / BDBUS0-7 ..., or
 * D0-D7 in syncbb), `tck=30MHz`, `window=BYTES`, `order=msb|lsb`, `edge=rising|falling`,
 * `offset=auto|nominal|NS` (auto, the default: the nominal command offset less the share of
 * the newest floor run on the same wiring in the run's --db; nominal: no floor taken in), the
 * far-end keys (see far_end:
 * `answer=toggle|follow`, default toggle like irqloop-responder and the kernel responder,
 * follow with sim; `edges=both` only: a single-edge far end is not measured here),
 * `latency=1..255` (ms), `baud=` (syncbb), `detach=yes|no`; with sim: the latency-model keys
 * of the sim backend and `glitch_p`, `stall_p`, `stall_max`, `zero_p`, `partial_p`, `fifo`,
 * `multiplier` (the true bit-bang tick is baud x this), `jitter`, `path` (see ftdi_sim_config).
 */
ftdi_spec take_ftdi_spec(spec& s, role r);

/** @brief Open the chip (or the simulator) and set it up. */
std::unique_ptr<lines> open_ftdi(const ftdi_spec& x, const calibration_lookup& floor = {});

} // namespace irqloop::hw
