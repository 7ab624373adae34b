// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

namespace irqloop::logger
{

/**
 * @brief One stimulus as the sampler saw it, in raw cycles; 48 bytes, the unit of the ring.
 *
 * Each answered sample carries a bracket, the interval in which the true latency provably
 * lies: the upper bound is latency_cycles (t0, just before drive(), to the poll that saw the
 * answer), the lower bound is latency_cycles - bracket_cycles (the end of drive() to the start
 * of the last poll that did not see it). The recorder converts cycles to nanoseconds. A lost
 * sample has latency_cycles == 0 and the lost flag.
 */
struct sample final {
    /**
     * @brief What the sampler knows about a sample, as bits of flags. The values are those of
     * the stored encoding (db::sample_flag, which adds the recorder's warm-up bit, 1 << 2), so
     * the recorder stores them as they are; recorder.cpp asserts that the two agree.
     */
    enum flag : std::uint32_t {
        rising = 1u << 0,    ///< the stimulus edge was rising (else falling)
        disturbed = 1u << 1, ///< the bracket is wider than the gap limit
        lost = 1u << 3,      ///< no response before the timeout
    };

    std::uint64_t seq;            ///< stimulus number within the run, from 0
    std::uint64_t t0_cycles;      ///< cycle counter just before the stimulus edge was driven
    std::uint64_t latency_cycles; ///< upper bound: from t0 to the end of the poll that saw it
    std::uint32_t bracket_cycles; ///< upper - lower bound (saturates); the sample's uncertainty
    std::uint32_t max_gap_cycles; ///< largest gap between two polls before the answer (saturates)
    std::uint32_t interruptions;  ///< poll gaps above the gap limit outside the bracket
    std::uint32_t flags;          ///< flag bits (rising, disturbed, lost)
    /**
     * @brief The true latency where the wire knows it (hw::truth_source: the simulated board's
     * computed far end), in cycles from the edge to the answer as drawn; -1 on a real wire,
     * and for an edge that gets no answer.
     */
    std::int64_t truth_cycles = -1;
};
static_assert(sizeof(sample) == 48);

} // namespace irqloop::logger
