// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace irqloop::hw
{

/**
 * @brief Read the cycle counter: the logger's only clock for latency.
 *
 * x86-64: `lfence; rdtsc` (the fence keeps the read from moving before earlier loads, such
 * as the poll that saw the response). aarch64: `isb; mrs cntvct_el0`. Elsewhere
 * CLOCK_MONOTONIC_RAW in nanoseconds. Never allocates, never throws, no syscall on x86-64
 * and aarch64.
 */
inline std::uint64_t cycles() noexcept
{
#if defined(__x86_64__)
    std::uint32_t lo, hi;
    asm volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return (static_cast<std::uint64_t>(hi) << 32) | lo;
#elif defined(__aarch64__)
    std::uint64_t v;
    asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#else
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + ts.tv_nsec;
#endif
}

/** @brief CLOCK_MONOTONIC_RAW in nanoseconds. */
inline std::int64_t monotonic_raw_ns() noexcept
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/** @brief CLOCK_MONOTONIC in nanoseconds: the clock of the kernel's GPIO event stamps and of
 *  the logger's host-side timeouts. */
inline std::int64_t monotonic_ns() noexcept
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/** @brief The result of calibrating the cycle counter. */
struct clock_info final {
    std::string source;       ///< "tsc", "cntvct" or "monotonic_raw"
    double hz = 0;            ///< counts per second
    double read_cost_ns = 0;  ///< median cost of one cycles() call
    bool invariant = true;    ///< false when the TSC is not invariant (only with force)
    double agreement_ppm = 0; ///< difference between the last two rate estimates
    int rounds = 0;           ///< estimates taken until two agreed

    double ns(std::uint64_t c) const noexcept { return static_cast<double>(c) * 1e9 / hz; }
    /** @brief @p n ns in counts; negative reads as 0, and past 2^62 saturates there. */
    std::uint64_t from_ns(double n) const noexcept
    {
        const double c = n * hz / 1e9;
        if (!(c > 0))
            return 0;
        return c >= 4.6e18 ? std::uint64_t(1) << 62 : static_cast<std::uint64_t>(c);
    }
};

/** @brief Where cycles() reads from on this build: "tsc", "cntvct" or "monotonic_raw". */
const char* cycle_source() noexcept;

/** @brief True when CPUID reports an invariant TSC (always true off x86-64). */
bool tsc_invariant() noexcept;

/**
 * @brief Measure the rate of cycles() against CLOCK_MONOTONIC_RAW.
 *
 * Takes estimates over growing windows (from @p window_ns) until two successive ones agree
 * within @p tolerance_ppm, up to @p max_rounds. The same measurement on every
 * architecture: on aarch64 the architectural frequency CNTFRQ_EL0 is not read, nor
 * compared with the measured rate.
 * @param force Accept a TSC that is not invariant.
 * @throws irqloop::error when the TSC is not invariant (without force) or when the
 *         estimates never agree (a loaded or migrating machine).
 */
clock_info calibrate_clock(bool force = false, double tolerance_ppm = 100,
                           std::int64_t window_ns = 50'000'000, int max_rounds = 12);

/**
 * @brief The calibration shared by everything in this process (sampler, simulated board),
 * done on first use and cached. Thread-safe.
 * @throws irqloop::error as calibrate_clock().
 */
const clock_info& process_clock(bool force = false);

} // namespace irqloop::hw
