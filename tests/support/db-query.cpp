// SPDX-License-Identifier: MIT
#include "db-query.hpp"

#include <SQLiteCpp/Database.h>

namespace irqloop::test
{

std::int64_t query_int(const std::string& db, const std::string& sql)
{
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    return d.execAndGet(sql).getInt64();
}

std::string query_text(const std::string& db, const std::string& sql)
{
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    return d.execAndGet(sql).getString();
}

} // namespace irqloop::test
