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

std::int64_t parse_duration_ns(std::string_view text, std::string_view what,
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
    double ns = std::round(value * scale);
    if (ns > 9.2e18)
        bad_value(what, text, "the value is too large");
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
    double n = value * scale;
    if (n != std::floor(n) || n > 1.8e19)
        bad_value(what, text, hint);
    return static_cast<std::uint64_t>(n);
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

} // namespace irqloop
