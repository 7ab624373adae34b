// SPDX-License-Identifier: MIT
#pragma once

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <string>

namespace irqloop::db
{

/**
 * @brief Turn an SQLite failure into irqloop::error (status exit_failure) with a hint for the
 * causes a user can act on: a full disk (SQLITE_FULL, or an I/O error whose errno is ENOSPC or
 * EDQUOT), other I/O errors, a busy or read-only file, corruption.
 * @param db The connection, for its errno (sqlite3_system_errno); may be null.
 */
[[noreturn]] void throw_store_error(const std::string& what, const SQLite::Exception& e,
                                    sqlite3* db);

} // namespace irqloop::db
