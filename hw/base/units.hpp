// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace irqloop
{

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
 * @brief Parse a count with an optional K/M/G suffix (powers of 1000), e.g. "100M", "1G", "1e6".
 * @throws irqloop::error naming @p what on a malformed value.
 */
std::uint64_t parse_count(std::string_view text, std::string_view what);

/** @brief Parse a plain floating-point number, e.g. a probability "1e-5". */
double parse_number(std::string_view text, std::string_view what);

/**
 * @brief Format nanoseconds for humans with a unit picked to keep 3-4 significant digits,
 * e.g. 1234 -> "1.234us", 3600e9 -> "1h00m00s".
 */
std::string format_duration(double ns);

} // namespace irqloop
