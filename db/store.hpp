// SPDX-License-Identifier: MIT
#pragma once

#include "rows.hpp"

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace irqloop::db {

/** @brief Everything one --stats-interval boundary commits, in one transaction. */
struct interval_commit final
{
    interval_row interval;
    summary_row summary;                     ///< cumulative, replaces the run's figures
    std::span<const sample_row> exceedances; ///< new exceedances since the last commit
    std::span<const sample_row> worst;       ///< the whole top-K so far, worst first
    std::span<const bucket_row> histogram;   ///< the whole histogram so far, non-empty buckets
    std::span<const event_row> events;       ///< new events since the last commit
};

/**
 * @brief One irqloop SQLite file (WAL mode), several runs per file.
 *
 * Opening creates the schema in a new or empty file, migrates an older irqloop schema, and
 * refuses (irqloop::error, file untouched) a file that is not SQLite, not irqloop's, or from
 * a newer irqloop. Opening for writing also marks runs left 'running' by a killed logger as
 * 'interrupted' (their committed intervals stay). Every write is one transaction; a failed
 * write (disk full, I/O error) rolls back and throws irqloop::error, earlier commits stay.
 */
class store final
{
public:
    enum class mode { read_only, read_write };

    /** @throws irqloop::error: `irqloop: open database 'F': why (hint)`. */
    explicit store(const std::string& path, mode m = mode::read_write);
    ~store();
    store(store&&) noexcept;
    store& operator=(store&&) noexcept;
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    /** @brief Runs that opening found marked running and marked interrupted. */
    const std::vector<std::int64_t>& recovered_runs() const noexcept;

    /** @brief Insert a run with status 'running'; returns its id. */
    std::int64_t begin_run(const run_row& run);

    /** @brief Commit one interval, its new exceedances and events, and the running totals. */
    void commit_interval(std::int64_t run_id, const interval_commit& c);

    /** @brief Append raw samples in one transaction (--raw). */
    void append_raw(std::int64_t run_id, std::span<const sample_row> rows);

    /** @brief Append events outside an interval commit (e.g. a signal at the end). */
    void append_events(std::int64_t run_id, std::span<const event_row> rows);

    /** @brief Set the final status ("complete", "interrupted", "failed") and end time. */
    void finish_run(std::int64_t run_id, const std::string& status, std::int64_t end_unix_ns);

    /** @brief The path given at open. */
    const std::string& path() const noexcept;

    /** @brief The schema version this build writes (PRAGMA user_version). */
    static int schema_version() noexcept;

    /** @brief The open connection, for the read-side queries of the logger/ commands. */
    SQLite::Database& database() noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace irqloop::db
