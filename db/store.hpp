// SPDX-License-Identifier: MIT
#pragma once

#include "migrate.hpp"
#include "rows.hpp"

#include <SQLiteCpp/Database.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace irqloop::db
{

/** @brief Everything one --stats-interval boundary commits, in one transaction. */
struct interval_commit final {
    interval_row interval;
    summary_row summary;                     ///< cumulative, replaces the run's figures
    std::span<const sample_row> exceedances; ///< new exceedances since the last commit
    std::span<const sample_row> worst;       ///< the whole top-K so far, worst first
    std::span<const bucket_row> histogram;   ///< the whole histogram so far, non-empty buckets
    std::span<const event_row> events;       ///< new events since the last commit
    /// This window's latency histogram, non-empty buckets (window_buckets), its index ignored:
    /// stored under interval.index.
    std::span<const window_bucket_row> window_histogram = {};
};

/**
 * @brief One irqloop SQLite file (WAL mode), several runs per file.
 *
 * **Opening.** A missing or empty file is created with the schema (read_write only). A file
 * that is not SQLite (a text file named .db), an SQLite file that is not irqloop's (it has
 * tables but not our application_id), a file from a newer irqloop (user_version above
 * schema_version()), a corrupt file, a directory, or a path whose file or directory cannot be
 * written (read_write) is refused with irqloop::error `irqloop: open database 'F': why (hint)`
 * and left byte for byte as it was: every check happens on the header bytes and through a
 * read-only connection before anything is written. An older irqloop file is migrated
 * (read_write) or read as it is (read_only: see file_version()).
 *
 * **Connection.** WAL journal, synchronous=NORMAL, foreign keys on, a 5 s busy timeout.
 *
 * **Live runs and recovery.** A run's writer holds an exclusive OFD lock (fcntl
 * F_OFD_SETLK) on byte `run id` of the side file `F-lock` from begin_run() until finish_run()
 * or until its process dies, when the kernel drops it. Opening read_write marks every
 * 'running' run whose byte is not locked as 'interrupted', with end_unix_ns set to the end of
 * its last committed interval, and keeps its intervals; a run another live process is still
 * writing is left alone. read_only opens never write, lock or recover.
 *
 * **Writes.** Each is one transaction. A failed write (SQLITE_FULL, I/O error, busy) rolls back
 * and throws irqloop::error with status exit_failure; earlier commits stay and the store
 * remains usable once the cause is gone (e.g. after freeing disk space).
 *
 * Not thread-safe: one thread uses one store.
 */
class store final
{
public:
    enum class mode { read_only, read_write };
    /**
     * @brief Whether the open reads every page (`PRAGMA quick_check`, linear in the file's
     * size: about 0.5 s of CPU per 100 MB) and refuses a damaged file (exit 2). Every open
     * does, except the repeated views of `irqloop watch` after its first.
     */
    enum class pages { check, trust };

    /** @throws irqloop::error: `irqloop: open database 'F': why (hint)`. */
    explicit store(const std::string& path, mode m = mode::read_write, pages p = pages::check);
    /**
     * @brief Open with other migration steps and views than the shipped ones. For tests of the
     * migration path; users always get shipped_plan().
     */
    store(const std::string& path, mode m, const schema_plan& plan);
    store(const std::string& path, mode m, const schema_plan& plan, pages p);
    ~store();
    store(store&&) noexcept;
    store& operator=(store&&) noexcept;
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    /** @brief Runs that opening found marked running and marked interrupted. */
    const std::vector<std::int64_t>& recovered_runs() const noexcept;

    /**
     * @brief How long a write keeps trying while another process holds the write lock past
     * the 5 s busy timeout: tries again with a back-off (100 ms doubling to 1 s) until
     * @p budget has passed since the first try; 0: fail after the busy timeout. The default,
     * 10 s, is the default statistics window (it covers the writes of the open itself); a run
     * sets its own window.
     */
    void set_busy_retry(std::chrono::milliseconds budget) noexcept;

    /**
     * @brief Insert a run with status 'running' and its metadata; returns its id. Takes the
     * run's lock (see above) before the row becomes visible to other processes.
     */
    std::int64_t begin_run(const run_row& run);

    /**
     * @brief Commit one interval, its new exceedances and events, the running totals (also
     * runs.end_unix_ns = summary.end_unix_ns), and replace the run's worst and histogram rows.
     * Latency columns are stored as NULL where there are no samples (interval or run).
     */
    void commit_interval(std::int64_t run_id, const interval_commit& c);

    /** @brief Append raw samples in one transaction (--raw), unix_ns too (version 7). */
    void append_raw(std::int64_t run_id, std::span<const sample_row> rows);

    /** @brief Append events outside an interval commit (e.g. a signal at the end). */
    void append_events(std::int64_t run_id, std::span<const event_row> rows);

    /**
     * @brief Set the final status (complete, interrupted or failed; running is refused with
     * exit_failure) and end time, and release the run's lock.
     */
    void finish_run(std::int64_t run_id, run_status status, std::int64_t end_unix_ns);

    /**
     * @brief Set metadata keys of a finished or running run (insert, or replace the value of a
     * key it already has), in one transaction: e.g. the outcome of its gates (`gate.*`), known
     * only once its figures are. Throws exit_failure when no run has @p run_id.
     */
    void set_run_metadata(std::int64_t run_id,
                          std::span<const std::pair<std::string, std::string>> keys);

    /** @brief The path given at open. */
    const std::string& path() const noexcept;

    /** @brief The lock side file of @p db_path: db_path + "-lock". */
    static std::string lock_path(const std::string& db_path);

    /**
     * @brief The file's schema version as opened: schema_version() after a read-write open
     * (which migrates), possibly older after a read-only one.
     */
    int file_version() const noexcept;

    /** @brief The schema version this build writes (PRAGMA user_version). */
    static int schema_version() noexcept;

    /** @brief PRAGMA application_id of every irqloop file: 0x49524C50, 'IRLP'. */
    static constexpr std::int32_t application_id = 0x49524C50;

    /** @brief The open connection, for the read-side queries of the logger/ commands. */
    SQLite::Database& database() noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;

    /** One try of the open; false: another connection held a lock briefly, try again. */
    bool try_open(const std::string& path, mode m, const schema_plan& plan, pages p, bool last_try,
                  bool& created_here);
};

/**
 * @brief Is a process still writing run @p run_id of the file at @p db_path? Tests the run's
 * byte in the lock file without taking it; false when there is no lock file. Never writes.
 */
bool writer_alive(const std::string& db_path, std::int64_t run_id);

} // namespace irqloop::db
