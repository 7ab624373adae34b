// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

namespace irqloop::logger
{

/**
 * @brief One stimulus as the sampler saw it, in raw cycles; 40 bytes, the unit of the ring.
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

    /**
     * @brief The largest count the interruptions field holds; more saturates to it. A gap
     * counted is one above the gap limit, so a wait needs 65,535 of them (0.65 s at a limit of
     * 10 us) to get there.
     */
    static constexpr std::uint16_t max_interruptions = UINT16_MAX;
    /** @brief The stored truth of a sample without one (see truth_cycles()). */
    static constexpr std::uint32_t no_truth = UINT32_MAX;

    std::uint64_t seq;            ///< stimulus number within the run, from 0
    std::uint64_t t0_cycles;      ///< cycle counter just before the stimulus edge was driven
    std::uint64_t latency_cycles; ///< upper bound: from t0 to the end of the poll that saw it
    std::uint32_t bracket_cycles; ///< upper - lower bound (saturates); the sample's uncertainty
    std::uint32_t max_gap_cycles; ///< largest gap between two polls before the answer (saturates)
    std::uint16_t interruptions;  ///< poll gaps above the gap limit outside the bracket (saturates)
    std::uint16_t flags;          ///< flag bits (rising, disturbed, lost)
    /**
     * @brief The true latency where the wire knows it (hw::truth_source: the simulated board's
     * computed far end), in cycles from the edge to the answer as drawn; no_truth on a real
     * wire, for an edge that gets no answer, and for a drawn delay of 2^32 - 1 cycles or more
     * (over a second), which is stored as unknown rather than as a smaller value. Kept to 32
     * bits, and the two fields above to 16 (plain stores, not bit-fields), so that a sample
     * stays 40 bytes: the ring's traffic is much of the hot loop's cost.
     */
    std::uint32_t truth = no_truth;

    /** @brief The truth in cycles, or -1 where there is none. */
    std::int64_t truth_cycles() const noexcept
    {
        return truth == no_truth ? -1 : static_cast<std::int64_t>(truth);
    }
    /** @brief Sets the truth from a wire's reading (-1: none); see truth. */
    void set_truth(std::int64_t cycles) noexcept
    {
        truth = cycles < 0 || cycles >= static_cast<std::int64_t>(no_truth)
                    ? no_truth
                    : static_cast<std::uint32_t>(cycles);
    }
};
static_assert(sizeof(sample) == 40);

} // namespace irqloop::logger
