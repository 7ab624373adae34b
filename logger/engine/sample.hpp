// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

namespace irqloop::logger
{

/**
 * @brief One stimulus as the sampler saw it, in raw cycles; 32 bytes, the unit of the ring.
 *
 * The recorder converts cycles to nanoseconds. A lost sample has latency_cycles == 0 and
 * the lost flag; its max_gap_cycles is still meaningful.
 */
struct sample final {
    /**
     * @brief What the sampler knows about a sample, as bits of flags. The values are those of
     * the stored encoding (db::sample_flag, which adds the recorder's warm-up bit, 1 << 2), so
     * the recorder stores them as they are; recorder.cpp asserts that the two agree.
     */
    enum flag : std::uint32_t {
        rising = 1u << 0,    ///< the stimulus edge was rising (else falling)
        disturbed = 1u << 1, ///< a poll gap exceeded the gap limit: the logger was disturbed
        lost = 1u << 3,      ///< no response before the timeout
    };

    std::uint64_t seq;            ///< stimulus number within the run, from 0
    std::uint64_t t0_cycles;      ///< cycle counter just before the stimulus edge was driven
    std::uint64_t latency_cycles; ///< from t0 to the first poll that saw the response
    std::uint32_t max_gap_cycles; ///< largest gap between two polls (saturates): the resolution
    std::uint32_t flags;          ///< flag bits (rising, disturbed, lost)
};
static_assert(sizeof(sample) == 32);

} // namespace irqloop::logger
