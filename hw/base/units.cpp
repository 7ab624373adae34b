// SPDX-License-Identifier: MIT
#include "units.hpp"

#include "error.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace irqloop
{

namespace
{

// strtod needs a terminated string; values are short, so a copy is fine (never on a hot path).
bool split_number(std::string_view text, double& value, std::string_view& suffix)
{
    // A number starts with a digit or a point: no sign, blank, hex, "inf" or "nan".
    if (text.empty() || !((text[0] >= '0' && text[0] <= '9') || text[0] == '.'))
        return false;
    if (text.size() > 1 && (text[1] == 'x' || text[1] == 'X'))
        return false;
    std::string copy(text);
    const char* begin = copy.c_str();
    char* end = nullptr;
    errno = 0;
    value = std::strtod(begin, &end);
    if (end == begin || errno == ERANGE || !std::isfinite(value))
        return false;
    suffix = text.substr(static_cast<std::size_t>(end - begin));
    return true;
}

[[noreturn]] void bad_value(std::string_view what, std::string_view text, const char* hint)
{
    throw error("bad value for " + std::string(what), "'" + std::string(text) + "'", hint);
}

double unit_ns(std::string_view unit)
{
    if (unit == "ns")
        return 1.0;
    if (unit == "us")
        return 1e3;
    if (unit == "ms")
        return 1e6;
    if (unit == "s")
        return 1e9;
    if (unit == "m" || unit == "min")
        return 60e9;
    if (unit == "h")
        return 3600e9;
    if (unit == "d")
        return 86400e9;
    return -1.0;
}

} // namespace

// The value in ns, not yet held against any limit.
static double duration_value_ns(std::string_view text, std::string_view what,
                                std::string_view default_unit)
{
    constexpr const char* hint = "use a number with a unit: ns, us, ms, s, m, h or d, e.g. 10us";
    double value = 0;
    std::string_view suffix;
    if (text.empty() || !split_number(text, value, suffix) || value < 0)
        bad_value(what, text, hint);
    double scale = unit_ns(suffix.empty() ? default_unit : suffix);
    if (scale < 0)
        bad_value(what, text, hint);
    return std::round(value * scale);
}

// A limit for messages in the largest unit that states it exactly: 1s, 24h, 100ms, 1ns.
static std::string limit_text(std::int64_t ns)
{
    if (ns == 0)
        return "0";
    struct unit {
        std::int64_t ns;
        const char* name;
    };
    static constexpr unit units[] = {{86'400'000'000'000, "d"}, {3'600'000'000'000, "h"},
                                     {60'000'000'000, "m"},     {1'000'000'000, "s"},
                                     {1'000'000, "ms"},         {1000, "us"}};
    for (const auto& u : units)
        if (ns % u.ns == 0 && !(u.ns == 86'400'000'000'000 && ns / u.ns == 1))
            return std::to_string(ns / u.ns) + u.name;
    return std::to_string(ns) + "ns";
}

std::int64_t parse_duration_ns(std::string_view text, std::string_view what,
                               std::string_view default_unit)
{
    const double ns = duration_value_ns(text, what, default_unit);
    if (ns > static_cast<double>(max_duration_ns))
        throw error("bad value for " + std::string(what),
                    "'" + std::string(text) + "' is above the limit of 3650d",
                    "no duration may exceed 3650d (about ten years)");
    return static_cast<std::int64_t>(ns);
}

std::int64_t parse_duration_ns_in(std::string_view text, std::string_view what, std::int64_t lo_ns,
                                  std::int64_t hi_ns, std::string_view default_unit)
{
    const double ns = duration_value_ns(text, what, default_unit);
    if (ns < static_cast<double>(lo_ns) || ns > static_cast<double>(hi_ns)) {
        const std::string lo = limit_text(lo_ns), hi = limit_text(hi_ns);
        throw error("bad value for " + std::string(what),
                    "'" + std::string(text) + "' is " +
                        (ns < static_cast<double>(lo_ns) ? "below the limit of " + lo
                                                         : "above the limit of " + hi),
                    "use " + lo + " to " + hi);
    }
    return static_cast<std::int64_t>(ns);
}

std::uint64_t parse_count(std::string_view text, std::string_view what)
{
    constexpr const char* hint = "use a whole number with an optional K, M or G suffix, e.g. 100M";
    double value = 0;
    std::string_view suffix;
    if (text.empty() || !split_number(text, value, suffix) || value < 0)
        bad_value(what, text, hint);
    double scale = 1;
    if (suffix == "K" || suffix == "k")
        scale = 1e3;
    else if (suffix == "M")
        scale = 1e6;
    else if (suffix == "G")
        scale = 1e9;
    else if (!suffix.empty())
        bad_value(what, text, hint);
    // A plain integer is read exactly; with a suffix or an exponent through the double.
    std::uint64_t exact = 0;
    if (text.find_first_not_of("0123456789") == std::string_view::npos) {
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), exact);
        if (ec == std::errc() && end == text.data() + text.size() && exact <= max_count)
            return exact;
    } else {
        double n = value * scale;
        if (n != std::floor(n))
            bad_value(what, text, hint);
        if (n < 9.2e18)
            return static_cast<std::uint64_t>(n);
    }
    throw error("bad value for " + std::string(what),
                "'" + std::string(text) + "' is above the limit of 2^63 - 1",
                "no count may exceed 9223372036854775807");
}

std::uint64_t parse_count_in(std::string_view text, std::string_view what, std::uint64_t lo,
                             std::uint64_t hi)
{
    const std::uint64_t n = parse_count(text, what);
    if (n < lo || n > hi)
        throw error("bad value for " + std::string(what),
                    "'" + std::string(text) + "' is " +
                        (n < lo ? "below the limit of " + format_count(lo)
                                : "above the limit of " + format_count(hi)),
                    "use " + format_count(lo) + " to " + format_count(hi));
    return n;
}

std::string format_count(std::uint64_t n)
{
    static const char* const suffixes[] = {"", "K", "M", "G"};
    int i = 0;
    while (i < 3 && n >= 1000 && n % 1000 == 0) {
        n /= 1000;
        ++i;
    }
    return std::to_string(n) + suffixes[i];
}

double parse_number(std::string_view text, std::string_view what)
{
    double value = 0;
    std::string_view suffix;
    if (text.empty() || !split_number(text, value, suffix) || !suffix.empty())
        bad_value(what, text, "use a plain number, e.g. 0.001 or 1e-5");
    return value;
}

std::string format_duration(double ns)
{
    char buf[48];
    double a = std::fabs(ns);
    if (a < 1e3)
        std::snprintf(buf, sizeof buf, "%.0fns", ns);
    else if (a < 1e6)
        std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
    else if (a < 1e9)
        std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
    else if (a < 60e9)
        std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
    else {
        auto s = static_cast<long long>(ns / 1e9);
        std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", s / 3600, (s / 60) % 60, s % 60);
    }
    return buf;
}

std::string format_scaled(double v, std::initializer_list<scale_step> steps)
{
    const scale_step* use = nullptr;
    for (const scale_step& s : steps) {
        use = &s;
        if (v >= s.from)
            break;
    }
    char b[48];
    if (!use)
        std::snprintf(b, sizeof b, "%g", v);
    else
        std::snprintf(b, sizeof b, "%g%s", v / use->divisor, use->unit);
    return b;
}

} // namespace irqloop
