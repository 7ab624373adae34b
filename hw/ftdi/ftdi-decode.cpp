// SPDX-License-Identifier: MIT
#include "ftdi-decode.hpp"

namespace irqloop::hw
{

bool ftdi_sample_bit(const std::uint8_t* bytes, std::size_t i, ftdi_bit_order order) noexcept
{
    const unsigned shift = order == ftdi_bit_order::msb_first ? 7 - (i & 7) : (i & 7);
    return (bytes[i >> 3] >> shift) & 1;
}

ftdi_decoded ftdi_decode(const std::uint8_t* bytes, std::size_t n, ftdi_bit_order order, bool idle,
                         bool answer) noexcept
{
    ftdi_decoded d;
    if (n == 0) {
        d.last_level = idle;
        d.stale = idle == answer;
        return d;
    }
    d.last_level = ftdi_sample_bit(bytes, n * 8 - 1, order);
    if (idle == answer) {
        d.stale = true;
        return d;
    }
    const std::uint8_t idle_byte = idle ? 0xff : 0x00;
    const std::uint8_t answer_byte = answer ? 0xff : 0x00;
    // The first byte holding any sample away from idle.
    std::size_t k = 0;
    while (k < n && bytes[k] == idle_byte)
        ++k;
    if (k == n)
        return d;
    // Walk back from the end over whole bytes at the answer level: the final run starts in
    // byte j (or at byte j+1 when byte j is not partly at the answer level).
    if (d.last_level != answer) {
        d.glitch = true; // left idle and came back: no settled answer in this window
        return d;
    }
    std::size_t j = n - 1;
    while (j > k && bytes[j] == answer_byte)
        --j;
    // Samples from j*8 to the end: find the last sample not at the answer level.
    std::int64_t last_other = -1;
    for (std::size_t i = j * 8; i < j * 8 + 8; ++i) // bytes after j are all at the answer
        if (ftdi_sample_bit(bytes, i, order) != answer)
            last_other = static_cast<std::int64_t>(i);
    if (last_other < 0) {
        // Byte j is wholly at the answer level: j == k, the change is at byte k's start.
        d.first = static_cast<std::int64_t>(j * 8);
    } else {
        d.first = last_other + 1;
    }
    // A glitch: some sample before the final run already left the idle level.
    for (std::size_t i = k * 8; i < static_cast<std::size_t>(d.first); ++i)
        if (ftdi_sample_bit(bytes, i, order) != idle) {
            d.glitch = true;
            break;
        }
    return d;
}

} // namespace irqloop::hw
