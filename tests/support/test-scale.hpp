// SPDX-License-Identifier: MIT
// Sample counts of the tests that spin real-time threads, scaled for slow builds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace irqloop::test
{

/**
 * @brief @p n times $IRQLOOP_TEST_SCALE (a number in (0, 1]; 1 when unset or malformed), and
 * at least @p at_least. The TSan run sets 0.1 (tests/sanitize/run-tests.sh): the instrumented
 * threads are about ten times slower, and a spinning test must still end within the kernel's
 * real-time throttling window. What a test checks must not depend on the scale.
 */
inline std::uint64_t scaled(std::uint64_t n, std::uint64_t at_least = 100)
{
    double f = 1.0;
    if (const char* s = std::getenv("IRQLOOP_TEST_SCALE")) {
        char* end = nullptr;
        const double v = std::strtod(s, &end);
        if (end != s && *end == '\0' && v > 0 && v <= 1)
            f = v;
    }
    return std::max<std::uint64_t>(std::min(n, at_least), static_cast<std::uint64_t>(n * f));
}

} // namespace irqloop::test
