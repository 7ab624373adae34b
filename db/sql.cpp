// SPDX-License-Identifier: MIT
#include "sql.hpp"

#include <SQLiteCpp/Exception.h>

#include <cctype>
#include <cstring>
#include <utility>

namespace irqloop::db::sql
{

statement::statement(sqlite3* db, std::string_view text) : db_(db)
{
    int rc = sqlite3_prepare_v3(db, text.data(), static_cast<int>(text.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK)
        throw SQLite::Exception(db, rc);
}

statement::~statement()
{
    sqlite3_finalize(stmt_);
}

statement::statement(statement&& o) noexcept : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)) {}

statement& statement::operator=(statement&& o) noexcept
{
    if (this != &o) {
        sqlite3_finalize(stmt_);
        db_ = o.db_;
        stmt_ = std::exchange(o.stmt_, nullptr);
    }
    return *this;
}

void statement::reset() noexcept
{
    sqlite3_reset(stmt_);
}

static void check_bind(sqlite3* db, int rc)
{
    if (rc != SQLITE_OK)
        throw SQLite::Exception(db, rc);
}

void statement::bind(int i, std::int64_t v)
{
    check_bind(db_, sqlite3_bind_int64(stmt_, i, v));
}

void statement::bind(int i, double v)
{
    check_bind(db_, sqlite3_bind_double(stmt_, i, v));
}

void statement::bind(int i, std::string_view v)
{
    check_bind(db_,
               sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
}

void statement::bind_null(int i)
{
    check_bind(db_, sqlite3_bind_null(stmt_, i));
}

bool statement::step()
{
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    SQLite::Exception e(db_, rc);
    sqlite3_reset(stmt_);
    throw e;
}

void statement::run()
{
    while (step()) {
    }
    sqlite3_reset(stmt_);
}

std::int64_t statement::int64(int col) const noexcept
{
    return sqlite3_column_int64(stmt_, col);
}

double statement::real(int col) const noexcept
{
    return sqlite3_column_double(stmt_, col);
}

std::string statement::text(int col) const
{
    auto p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
}

bool statement::is_null(int col) const noexcept
{
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

std::string file_uri(const std::string& path, const std::string& query)
{
    static const char hex[] = "0123456789ABCDEF";
    std::string uri = path.starts_with('/') ? "file://" : "file:";
    for (unsigned char ch : path) {
        if (std::isalnum(ch) || std::strchr("/-._~", ch)) {
            uri += static_cast<char>(ch);
        } else {
            uri += '%';
            uri += hex[ch >> 4];
            uri += hex[ch & 15];
        }
    }
    return uri + "?" + query;
}

void exec(sqlite3* db, const char* text)
{
    int rc = sqlite3_exec(db, text, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
        throw SQLite::Exception(db, rc);
}

std::int64_t scalar_int(sqlite3* db, const char* text)
{
    statement q(db, text);
    return q.step() ? q.int64(0) : 0;
}

std::string scalar_text(sqlite3* db, const char* text)
{
    statement q(db, text);
    return q.step() ? q.text(0) : std::string();
}

write_transaction::write_transaction(sqlite3* db) : db_(db)
{
    exec(db, "BEGIN IMMEDIATE");
}

write_transaction::~write_transaction()
{
    // After SQLITE_FULL or IOERR SQLite may already have rolled back; then this is a no-op.
    if (open_ && !sqlite3_get_autocommit(db_))
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void write_transaction::commit()
{
    exec(db_, "COMMIT");
    open_ = false;
}

} // namespace irqloop::db::sql
