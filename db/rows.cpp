// SPDX-License-Identifier: MIT
#include "rows.hpp"

#include "error.hpp"

#include <array>

namespace irqloop::db
{

namespace
{

constexpr std::array<std::string_view, 4> status_text = {"running", "complete", "interrupted",
                                                         "failed"};
constexpr std::array<std::string_view, 3> kind_text = {"measure", "floor", "selftest"};
constexpr std::array<std::string_view, 4> target_status_text = {"exited", "killed", "timed_out",
                                                                "not_started"};

template <typename Enum, std::size_t N>
Enum parse(std::string_view text, const std::array<std::string_view, N>& names, const char* what)
{
    std::string known;
    for (std::size_t i = 0; i < N; ++i) {
        if (names[i] == text)
            return static_cast<Enum>(i);
        known += (i ? ", " : "") + std::string(names[i]);
    }
    throw error(std::string("read run ") + what,
                std::string("unknown ") + what + " '" + std::string(text) + "'",
                "this irqloop knows " + known + "; the file may come from a newer irqloop",
                exit_failure);
}

} // namespace

std::string_view to_text(run_status s) noexcept
{
    return status_text[static_cast<std::size_t>(s)];
}

std::string_view to_text(run_kind k) noexcept
{
    return kind_text[static_cast<std::size_t>(k)];
}

run_status parse_run_status(std::string_view text)
{
    return parse<run_status>(text, status_text, "status");
}

run_kind parse_run_kind(std::string_view text)
{
    return parse<run_kind>(text, kind_text, "kind");
}

std::string_view to_text(target_info_status s) noexcept
{
    return target_status_text[static_cast<std::size_t>(s)];
}

target_info_status parse_target_info_status(std::string_view text)
{
    return parse<target_info_status>(text, target_status_text, "target info status");
}

std::optional<std::string> target_info_row::fact(std::string_view key) const
{
    for (const auto& f : facts)
        if (f.key == key)
            return f.value;
    return std::nullopt;
}

} // namespace irqloop::db
