// SPDX-License-Identifier: MIT
// A logic analyzer's capture as irqloop reads it: the transitions of each 1-bit channel, in
// picoseconds from the capture's start. Read from a VCD (our own parser, the shape sigrok's
// VCD output writes and the common subset of IEEE 1364 value change dumps) or from a sigrok
// session file (.sr), which Debian's sigrok-cli converts to that VCD (`-i FILE -O vcd`).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace irqloop::analysis
{

/** @brief One 1-bit channel: its level at the start and every change after it. */
struct capture_channel final {
    std::string name;
    int initial = -1; ///< level at time 0 (the first value dumped): 0, 1, or -1 (unknown)
    /// Each change of level, in time order: time in ps from the capture's start, new level.
    /// A value record that repeats the current level is not a change and is not kept.
    std::vector<std::pair<std::int64_t, int>> changes;
};

/** @brief A whole capture. */
struct capture final {
    std::vector<capture_channel> channels;
    /// The analyzer's sample rate: from sigrok's "Acquisition with N/M channels at R" comment
    /// when present, else 1 / the VCD's time unit. resolution_ps() is one sample.
    double samplerate_hz = 0;
    std::int64_t end_ps = 0; ///< the last time stamp of the file

    /** @brief One analyzer sample in ps (rounded): the finest difference the capture shows. */
    std::int64_t resolution_ps() const noexcept;
    /** @brief The channel named @p name, or null. */
    const capture_channel* find(const std::string& name) const noexcept;
};

/**
 * @brief Parse a VCD. Scalar (1-bit) wires only are kept; vectors, reals and x/z values are
 * skipped (x and z are no level: no change is recorded). @p source names the input in
 * messages.
 * @throws irqloop::error (exit 2) for a file that is not a VCD, a damaged record, time going
 *         backwards, no $enddefinitions, or a file cut short (its last line without a newline).
 */
capture parse_vcd(std::istream& in, const std::string& source);

/**
 * @brief Read @p path: a sigrok session (.sr, a zip file: converted by `sigrok-cli -i PATH -O
 * vcd`, found on PATH, with no capability of an irqloop-rt) or else a VCD.
 * @throws irqloop::error (exit 2) for a missing or damaged file, or when sigrok-cli is needed
 *         and absent or refuses the file (its message is quoted).
 */
capture read_capture(const std::string& path);

/** @brief Where sigrok-cli is on PATH (secure_getenv), or "" when it is not. */
std::string find_sigrok_cli();

/**
 * @brief Write @p c as a VCD in the shape sigrok's VCD output has: a comment naming the
 * sample rate, timescale @p timescale_ps (1, 10, 100, 1000, ...), one scope, the channels
 * named as they are, and a last time stamp at end_ps. Times are rounded to the timescale.
 */
void write_vcd(std::ostream& out, const capture& c, std::int64_t timescale_ps);

} // namespace irqloop::analysis
