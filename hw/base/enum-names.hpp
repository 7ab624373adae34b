// SPDX-License-Identifier: MIT
// An enum's names as one table, read both ways: the name of a value (for describe(), metadata
// and messages) and the value of a name. Replaces a switch per enum.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

namespace irqloop
{

/** @brief One value of an enum and its name. */
template <class E> using enum_name = std::pair<E, const char*>;

/** @brief The name of @p e in @p names, or @p otherwise when the table has none. */
template <class E, std::size_t N>
constexpr const char* name_of(E e, const enum_name<E> (&names)[N], const char* otherwise) noexcept
{
    for (const auto& [value, name] : names)
        if (value == e)
            return name;
    return otherwise;
}

/** @brief The value named @p name in @p names, or @p otherwise when none is. */
template <class E, std::size_t N>
constexpr E value_of(std::string_view name, const enum_name<E> (&names)[N], E otherwise) noexcept
{
    for (const auto& [value, n] : names)
        if (n == name)
            return value;
    return otherwise;
}

} // namespace irqloop
