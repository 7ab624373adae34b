// SPDX-License-Identifier: MIT
// One value out of a database file, read-only: what the tests of the commands that write a file
// check in it.
#pragma once

#include <cstdint>
#include <string>

namespace irqloop::test
{

/** @brief The first column of the first row of @p sql on @p db (opened read-only), as an integer.
 */
std::int64_t query_int(const std::string& db, const std::string& sql);

/** @brief The same as query_int(), as text. */
std::string query_text(const std::string& db, const std::string& sql);

} // namespace irqloop::test
