// SPDX-License-Identifier: MIT
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

/**
 * Thin RAII over the sqlite3 C API, for db/ only: prepared statements reused across commits
 * and IMMEDIATE write transactions. Failures throw SQLite::Exception (code and message of the
 * connection); the public db/ functions turn those into irqloop::error with context.
 */
namespace irqloop::db::sql
{

template <typename T> inline constexpr bool is_optional = false;
template <typename T> inline constexpr bool is_optional<std::optional<T>> = true;
template <typename T> inline constexpr bool is_tuple = false;
template <typename... T> inline constexpr bool is_tuple<std::tuple<T...>> = true;

/** @brief A prepared statement, finalized on destruction. Move-only. */
class statement final
{
public:
    statement() = default;
    /** @throws SQLite::Exception if @p text does not compile. */
    statement(sqlite3* db, std::string_view text);
    ~statement();
    statement(statement&& o) noexcept;
    statement& operator=(statement&& o) noexcept;
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;

    explicit operator bool() const noexcept { return stmt_ != nullptr; }

    /**
     * @brief Make the statement ready for new bindings. Also what releases a read statement's
     * hold on its snapshot; a failed step leaves its error code behind, which is ignored here.
     */
    void reset() noexcept;

    /** @brief Bind parameter @p i (from 1). Binding errors are programming errors: they throw. */
    void bind(int i, std::int64_t v);
    void bind(int i, double v);
    void bind(int i, std::string_view v); ///< copied by SQLite (SQLITE_TRANSIENT)
    void bind_null(int i);

    /**
     * @brief Bind @p values to parameters 1, 2, ... (integers of any width as int64, doubles,
     * strings and string_views as text, an empty std::optional as NULL, a std::tuple's
     * elements one parameter each, in order), then run().
     */
    template <typename... T> void run_with(const T&... values)
    {
        int i = 0;
        (bind_next(i, values), ...);
        run();
    }

    /** @brief Step once: true when a row is ready, false when done. @throws SQLite::Exception */
    bool step();
    /** @brief Step a statement that returns no rows, then reset it. @throws SQLite::Exception */
    void run();

    std::int64_t int64(int col) const noexcept;
    double real(int col) const noexcept;
    std::string text(int col) const;
    bool is_null(int col) const noexcept;

private:
    template <typename T> void bind_next(int& i, const T& v)
    {
        if constexpr (is_tuple<T>)
            std::apply([&](const auto&... e) { (bind_next(i, e), ...); }, v);
        else
            bind_value(++i, v);
    }

    template <typename T> void bind_value(int i, const T& v)
    {
        if constexpr (is_optional<T>) {
            if (v)
                bind_value(i, *v);
            else
                bind_null(i);
        } else if constexpr (std::is_integral_v<T>)
            bind(i, static_cast<std::int64_t>(v));
        else if constexpr (std::is_floating_point_v<T>)
            bind(i, static_cast<double>(v));
        else
            bind(i, std::string_view(v));
    }

    sqlite3* db_ = nullptr;
    sqlite3_stmt* stmt_ = nullptr;
};

/** @brief A `file:` URI for @p path with query @p query (e.g. "mode=ro"), percent-encoded. */
std::string file_uri(const std::string& path, const std::string& query);

/** @brief Run one or more statements that return nothing. @throws SQLite::Exception */
void exec(sqlite3* db, const char* text);

/** @brief The first column of the first row of @p text (0 / "" without a row). */
std::int64_t scalar_int(sqlite3* db, const char* text);
std::string scalar_text(sqlite3* db, const char* text);

/**
 * @brief BEGIN IMMEDIATE ... COMMIT, rolled back by the destructor unless committed.
 *
 * IMMEDIATE takes the write lock at BEGIN, so a busy database waits out busy_timeout there,
 * instead of failing half way when a read transaction tries to become a write one.
 */
class write_transaction final
{
public:
    explicit write_transaction(sqlite3* db);
    ~write_transaction();
    write_transaction(const write_transaction&) = delete;
    write_transaction& operator=(const write_transaction&) = delete;

    /** @throws SQLite::Exception (e.g. SQLITE_FULL while writing the WAL frames). */
    void commit();

private:
    sqlite3* db_;
    bool open_ = true;
};

} // namespace irqloop::db::sql
