// SPDX-License-Identifier: MIT
#include "spec.hpp"

#include "error.hpp"
#include "units.hpp"

#include <utility>

namespace irqloop::hw
{

spec::spec(std::string_view text) : text_(text)
{
    auto colon = text.find(':');
    name_ = std::string(text.substr(0, colon));
    if (name_.empty())
        throw error("bad backend spec '" + text_ + "'", "no backend name",
                    "write e.g. sim, sim:model=normal,mean=8us,sd=1us or shm:name=bench1");
    if (colon == std::string_view::npos)
        return;
    std::string_view rest = text.substr(colon + 1);
    while (!rest.empty()) {
        auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        auto eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0)
            throw error("bad backend spec '" + text_ + "'",
                        "'" + std::string(item) + "' is not key=value",
                        "separate parameters with commas, e.g. " + name_ + ":key=value,key=value");
        std::string key(item.substr(0, eq));
        if (has(key))
            throw error("bad backend spec '" + text_ + "'", "key '" + key + "' given twice");
        params_.emplace_back(std::move(key), std::string(item.substr(eq + 1)));
    }
    taken_.assign(params_.size(), false);
}

bool spec::has(std::string_view key) const
{
    return peek(key).has_value();
}

std::optional<std::string> spec::peek(std::string_view key) const
{
    for (const auto& [k, v] : params_)
        if (k == key)
            return v;
    return std::nullopt;
}

void spec::set_default(std::string_view key, std::string value)
{
    if (has(key))
        return;
    params_.emplace_back(std::string(key), std::move(value));
    taken_.push_back(false);
}

std::optional<std::string> spec::take(std::string_view key)
{
    for (std::size_t i = 0; i < params_.size(); ++i)
        if (params_[i].first == key) {
            taken_[i] = true;
            return params_[i].second;
        }
    return std::nullopt;
}

std::string spec::context() const
{
    return "backend '" + name_ + "'";
}

std::string spec::take_string(std::string_view key, std::string_view fallback)
{
    auto v = take(key);
    return v ? *v : std::string(fallback);
}

std::int64_t spec::take_duration_ns(std::string_view key, std::int64_t fallback)
{
    auto v = take(key);
    return v ? parse_duration_ns(*v, context() + " key '" + std::string(key) + "'") : fallback;
}

double spec::take_number(std::string_view key, double fallback)
{
    auto v = take(key);
    return v ? parse_number(*v, context() + " key '" + std::string(key) + "'") : fallback;
}

std::uint64_t spec::take_count(std::string_view key, std::uint64_t fallback)
{
    auto v = take(key);
    return v ? parse_count(*v, context() + " key '" + std::string(key) + "'") : fallback;
}

std::int64_t spec::take_duration_ns(std::string_view key, std::int64_t fallback, std::int64_t lo_ns,
                                    std::int64_t hi_ns)
{
    auto v = take(key);
    return v ? parse_duration_ns_in(*v, context() + " key '" + std::string(key) + "'", lo_ns, hi_ns)
             : fallback;
}

std::uint64_t spec::take_count(std::string_view key, std::uint64_t fallback, std::uint64_t lo,
                               std::uint64_t hi)
{
    auto v = take(key);
    return v ? parse_count_in(*v, context() + " key '" + std::string(key) + "'", lo, hi) : fallback;
}

std::size_t spec::take_choice(std::string_view key, std::initializer_list<std::string_view> choices,
                              std::string_view fallback, std::string_view what)
{
    const std::string v = take_string(key, fallback);
    std::size_t i = 0;
    std::string list;
    for (auto c : choices) {
        if (v == c)
            return i;
        list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(c);
        ++i;
    }
    throw error("bad backend spec '" + text() + "'",
                "unknown value '" + v + "' of key '" + std::string(key) + "'",
                "use " + list + ": " + std::string(what));
}

bool spec::take_bool(std::string_view key, bool fallback)
{
    auto v = take(key);
    if (!v)
        return fallback;
    if (*v == "1" || *v == "yes" || *v == "true" || *v == "on")
        return true;
    if (*v == "0" || *v == "no" || *v == "false" || *v == "off")
        return false;
    throw error("bad value for " + context() + " key '" + std::string(key) + "'", "'" + *v + "'",
                "use yes or no");
}

void spec::finish() const
{
    for (std::size_t i = 0; i < params_.size(); ++i)
        if (!taken_[i])
            throw error("bad backend spec '" + text_ + "'",
                        "unknown key '" + params_[i].first + "' for " + context(),
                        "see 'irqloop run --help' or docs/backends/" + name_ + ".md");
}

} // namespace irqloop::hw
