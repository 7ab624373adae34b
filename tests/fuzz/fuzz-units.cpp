// SPDX-License-Identifier: MIT
// libFuzzer target: the units parser (durations, counts, plain numbers) and the duration
// formatter. A refusal is an irqloop::error; a value it accepts must be in range.
#include "error.hpp"
#include "fuzz-refusal.hpp"
#include "units.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

using namespace irqloop;

namespace
{

[[noreturn]] void bug(const char* what, std::string_view text)
{
    std::fprintf(stderr, "fuzz-units: %s for '%.*s'\n", what, static_cast<int>(text.size()),
                 text.data());
    std::abort();
}

template <class F> void refused_or(std::string_view text, F f)
{
    fuzz::refused_as_bad_input(f, [&](const char* what) { bug(what, text); });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const char* unit : {"ns", "us", "ms", "s"})
        refused_or(text, [&] {
            const std::int64_t ns = parse_duration_ns(text, "--fuzz", unit);
            if (ns < 0)
                bug("a negative duration", text);
            (void)format_duration(static_cast<double>(ns));
        });
    refused_or(text, [&] { (void)parse_count(text, "--fuzz"); });
    refused_or(text, [&] {
        const double v = parse_number(text, "--fuzz");
        if (!std::isfinite(v))
            bug("a number that is not finite", text);
    });
    return 0;
}
