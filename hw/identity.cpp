// SPDX-License-Identifier: MIT
#include "identity.hpp"

#include "enum-names.hpp"

#include <cmath>
#include <cstdlib>

namespace irqloop::hw
{

namespace
{

constexpr enum_name<backend_kind> kinds[] = {
    {backend_kind::ftdi, "ftdi"},       {backend_kind::gpiod, "gpiod"},
    {backend_kind::gpiomem, "gpiomem"}, {backend_kind::parport, "parport"},
    {backend_kind::shm, "shm"},         {backend_kind::sim, "sim"},
};

/** The value of @p key in a "name:key=value,..." text; nullopt when it has no such key. */
std::optional<std::string> spec_value(std::string_view text, std::string_view key)
{
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    std::string_view rest = text.substr(colon + 1);
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        if (item.size() > key.size() && item.substr(0, key.size()) == key &&
            item[key.size()] == '=')
            return std::string(item.substr(key.size() + 1));
        if (comma == std::string_view::npos)
            break;
        rest = rest.substr(comma + 1);
    }
    return std::nullopt;
}

/** A number written as metadata: nullopt unless the whole start of it reads as a finite one. */
std::optional<double> number(const std::string& value)
{
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

} // namespace

std::string_view kind_name(backend_kind k) noexcept
{
    return name_of(k, kinds, "");
}

backend_kind kind_of_spec(std::string_view spec_text) noexcept
{
    return value_of(spec_text.substr(0, spec_text.find(':')), kinds, backend_kind::other);
}

bool same_backend(std::string_view a, std::string_view b) noexcept
{
    return a.substr(0, a.find(':')) == b.substr(0, b.find(':'));
}

std::pair<std::string, std::string> backend_identity::line_names() const
{
    return {out.empty() ? "STIM" : "STIM (out=" + out + ")",
            in.empty() ? "RESP" : "RESP (in=" + in + ")"};
}

backend_identity identity_of_spec(std::string_view spec_text)
{
    backend_identity id;
    id.kind = kind_of_spec(spec_text);
    id.spec = std::string(spec_text);
    id.out = spec_value(spec_text, "out").value_or("");
    id.in = spec_value(spec_text, "in").value_or("");
    return id;
}

backend_identity
identity_from_record(std::string_view spec_text,
                     const std::vector<std::pair<std::string, std::string>>& metadata)
{
    backend_identity id = identity_of_spec(spec_text);
    const std::string prefix = std::string(spec_text.substr(0, spec_text.find(':'))) + ".";
    std::optional<double> tick, lower, upper, offset, share;
    for (const auto& [key, value] : metadata) {
        if (key.compare(0, prefix.size(), prefix) != 0)
            continue;
        const std::string k = key.substr(prefix.size());
        if (k == "tick_ns")
            tick = number(value);
        else if (k == "tick_lower_ns")
            lower = number(value);
        else if (k == "tick_upper_ns")
            upper = number(value);
        else if (k == "offset_ns")
            offset = number(value);
        else if (k == "floor_share_ns")
            share = number(value);
        else if (k == "wiring")
            id.wiring = value;
        else if (k == "floor_run")
            id.floor.floor_run = value;
    }
    if (tick && offset && *tick > 0)
        id.clock = device_clock{*tick, lower.value_or(*tick), upper.value_or(*tick), *offset};
    if (share)
        id.floor.floor_share_ns = std::max<std::int64_t>(0, std::llround(*share));
    return id;
}

} // namespace irqloop::hw
