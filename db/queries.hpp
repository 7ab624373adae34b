// SPDX-License-Identifier: MIT
#pragma once

#include "rows.hpp"
#include "store.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

/**
 * Plain read helpers over a store, for the report, worst, compare and export commands. They
 * only read (they work on read_only stores) and return the row structs of rows.hpp; anything
 * fancier is one SQL statement away through store::database() and the views of schema.sql.
 * Latency columns stored as NULL (no samples yet) read back as 0. Failures throw
 * irqloop::error (status exit_failure).
 */
namespace irqloop::db
{

/** @brief A run as stored: its metadata, where it stands, and its cumulative summary. */
struct run_record final {
    std::int64_t id = 0;
    run_status status = run_status::running;
    std::int64_t end_unix_ns = 0; ///< last commit while running; the end once finished
    run_row run;                  ///< with metadata
    summary_row summary;          ///< summary.end_unix_ns == end_unix_ns
};

/** @brief Every run of the file, oldest first (by start time, then id). */
std::vector<run_record> list_runs(store& s);

/** @brief One run by id; nullopt if there is none. */
std::optional<run_record> get_run(store& s, std::int64_t id);

/**
 * @brief Find a run the way a user names it on the command line, trying in this order:
 * "last" (the latest started); a decimal run id; a full uuid, or a unique uuid prefix of at
 * least 8 characters; a label (the latest run with that label).
 * @return nullopt when nothing matches.
 * @throws irqloop::error (exit_usage) when a uuid prefix matches more than one run.
 */
std::optional<run_record> find_run(store& s, const std::string& which);

/** @brief The run's intervals in order. */
std::vector<interval_row> intervals(store& s, std::int64_t run_id);

/** @brief The run's top-K, worst first; at most @p limit rows (0: all). */
std::vector<sample_row> worst(store& s, std::int64_t run_id, std::size_t limit = 0);

/** @brief The run's non-empty histogram buckets, by lo_ns. */
std::vector<bucket_row> histogram(store& s, std::int64_t run_id);

/** @brief The run's stored exceedances with from_unix_ns <= unix_ns < to_unix_ns, by seq. */
std::vector<sample_row> exceedances(store& s, std::int64_t run_id,
                                    std::int64_t from_unix_ns = INT64_MIN,
                                    std::int64_t to_unix_ns = INT64_MAX);

/** @brief The run's events in the order they were written. */
std::vector<event_row> events(store& s, std::int64_t run_id);

/** @brief Number of raw samples stored for the run. */
std::uint64_t raw_count(store& s, std::int64_t run_id);

/**
 * @brief Call @p fn for every raw sample of the run in the order they were appended (seq
 * order, as the recorder appends), without holding them in memory. unix_ns is 0: raw rows do
 * not store it. Scans the whole raw table: it has no index, for insert speed.
 */
void for_each_raw(store& s, std::int64_t run_id, const std::function<void(const sample_row&)>& fn);

} // namespace irqloop::db
