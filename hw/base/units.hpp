// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace irqloop
{

/**
 * @brief The longest duration any option or spec key takes: 3650 days. Every duration is
 * refused above it when it is parsed, so one converted to clock cycles fits 64 bits at any
 * clock below 58 GHz (cycle_clock's from_ns() saturates anyway).
 */
inline constexpr std::int64_t max_duration_ns = 3650LL * 86400 * 1'000'000'000;

/**
 * @brief The largest count any option or spec key takes: 2^63 - 1 (the largest integer the
 * results file stores). Counts are refused above it when they are parsed.
 */
inline constexpr std::uint64_t max_count = 9'223'372'036'854'775'807ULL;

/**
 * @brief Parse a duration with a unit suffix into nanoseconds.
 *
 * Accepted units: ns, us, ms, s, m (minutes), h, d. A bare number is taken in @p default_unit
 * ("ns", "us", ...). Fractions are allowed ("1.5ms"). Negative values are refused.
 * @param text The text to parse, e.g. "10us", "8h", "0".
 * @param what Name of the option or key, used in the error message.
 * @throws irqloop::error naming @p what on a malformed value or unknown unit.
 */
std::int64_t parse_duration_ns(std::string_view text, std::string_view what,
                               std::string_view default_unit = "ns");

/**
 * @brief parse_duration_ns() refusing a value outside [@p lo_ns, @p hi_ns]; the message names
 * the limit that was crossed, e.g. "'90000d' is above the limit of 1d" with the hint
 * "use 100ms to 1d".
 */
std::int64_t parse_duration_ns_in(std::string_view text, std::string_view what, std::int64_t lo_ns,
                                  std::int64_t hi_ns, std::string_view default_unit = "ns");

/**
 * @brief Parse a count with an optional K/M/G suffix (powers of 1000), e.g. "100M", "1G", "1e6".
 * @throws irqloop::error naming @p what on a malformed value.
 */
std::uint64_t parse_count(std::string_view text, std::string_view what);

/** @brief parse_count() refusing a value outside [@p lo, @p hi], naming the limit crossed. */
std::uint64_t parse_count_in(std::string_view text, std::string_view what, std::uint64_t lo,
                             std::uint64_t hi);

/** @brief A count for messages: 1000000 -> "1M", 1500 -> "1500". */
std::string format_count(std::uint64_t n);

/** @brief Parse a plain floating-point number, e.g. a probability "1e-5". */
double parse_number(std::string_view text, std::string_view what);

/**
 * @brief Format nanoseconds for humans with a unit picked to keep 3-4 significant digits,
 * e.g. 1234 -> "1.234us", 3600e9 -> "1h00m00s".
 */
std::string format_duration(double ns);

/** @brief One step of format_scaled(): from @p from up, the value / @p divisor, with @p unit. */
struct scale_step final {
    double from;
    double divisor;
    const char* unit;
};

/**
 * @brief @p v in the first of @p steps (largest first) that it reaches, printed with %g and
 * the step's unit; the last step takes whatever is left. E.g. with {{1e6, 1e6, "MHz"},
 * {1e3, 1e3, "kHz"}, {0, 1, "Hz"}}: 30e6 -> "30MHz", 457.8 -> "457.8Hz".
 */
std::string format_scaled(double v, std::initializer_list<scale_step> steps);

} // namespace irqloop
