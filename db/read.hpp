// SPDX-License-Identifier: MIT
#pragma once

#include "rows.hpp"
#include "store.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/**
 * The one read side of the store: every reading command (report, worst, compare, plot,
 * export) and every test reads runs through a catalog. Files are opened through db::store in
 * read_only mode, so nothing is ever written, locked or recovered: a run a killed logger left
 * running stays so here and reads as partial. Latency columns stored as NULL (no samples yet)
 * read back as 0, with run_record::has_stats false. Failures throw irqloop::error: exit_usage
 * for a missing file or a selection that matches nothing, the store's error for a refused
 * file, exit_failure for an SQLite error while reading.
 */
namespace irqloop::db
{

/**
 * @brief A run as stored: its row in `runs` with metadata, where it stands, its cumulative
 * summary, and the file it came from.
 *
 * The summary is the one the recorder rewrites at every interval commit, so a run cut short
 * (running or interrupted) still has figures up to its last commit.
 */
struct run_record final {
    std::string db_path;      ///< the file it was read from
    std::size_t db_index = 0; ///< position of that file in the catalog
    std::int64_t id = 0;      ///< runs.id, unique only within its file
    run_status status = run_status::running;
    /** Last commit while running, the end once finished; none before the first commit. */
    std::optional<std::int64_t> end_unix_ns;
    run_row meta;           ///< metadata, backend extras included (by key)
    summary_row summary;    ///< summary.end_unix_ns == end_unix_ns or 0
    bool has_stats = false; ///< false while no sample made it into the statistics
    /// Measured under the bracket rule (schema version 2 on): a sample is disturbed when its
    /// bracket is wider than the gap limit. False for a version-1 run (largest poll gap
    /// anywhere in the wait), whose rows have no bracket and no interruption count.
    bool bracketed = false;
    /// A floor run whose samples are stored (`calibrate --raw`), bracketed: the smallest
    /// latency its clean samples prove, min(latency_ns - bracket_ns) over the undisturbed
    /// answered ones. None for other runs, and for a floor run without stored samples.
    std::optional<std::int64_t> floor_proven_ns;

    /** @brief Running or interrupted: the figures cover only part of the run. */
    bool partial() const noexcept;
    /** @brief The label, or "run <id>" for an unlabelled run. */
    std::string name() const;
    /** @brief summary.above_threshold as a percentage of summary.samples (0 without samples). */
    double pct_above() const noexcept;
    /** @brief The run's max never below what its lost answers prove (db::max_at_least_ns). */
    std::optional<std::int64_t> max_at_least_ns() const noexcept
    {
        return db::max_at_least_ns(has_stats ? std::optional(summary.max_ns) : std::nullopt,
                                   summary.lost, meta.timeout_ns);
    }
};

/**
 * @brief Which runs to read, as a user names them (--run, --label, --last). The rules, the
 * same for every command:
 * - a run is named by its id; by its full uuid; or by a unique uuid prefix of at least 4
 *   characters, as git takes an abbreviated hash. All digits is an id first; when no run has
 *   that id, the digits are tried as a uuid prefix. A prefix or id that matches two runs is
 *   refused, never guessed;
 * - a label names every run with exactly that label (a label is a configuration: compare
 *   --by label pools them); --last narrows to the latest;
 * - with neither, every run of kind measure (floor and selftest runs are read only when named);
 * - last keeps only the most recently started of what the above selected.
 */
struct run_selector final {
    std::vector<std::string> runs;   ///< ids, uuids, or unique uuid prefixes
    std::vector<std::string> labels; ///< exact labels
    bool last = false;

    bool empty() const noexcept { return runs.empty() && labels.empty() && !last; }
};

/** @brief Events of one kind, for a per-kind total. */
struct event_total final {
    std::string kind;
    std::uint64_t events = 0;
    std::int64_t value_sum = 0;
    std::int64_t first_unix_ns = 0;
    std::int64_t last_unix_ns = 0;
};

/**
 * @brief The runs of one or more irqloop files, opened read-only.
 *
 * Runs are listed by start time, then file order, then id. A run whose uuid already came from
 * an earlier file (the same run copied into two files) is listed once, from the first file.
 * The list is read once, at construction: a catalog is a snapshot of the runs' rows.
 */
class catalog final
{
public:
    /**
     * @throws irqloop::error (exit_usage) when @p paths is empty or a file does not exist;
     *         the store's irqloop::error when a file is refused.
     */
    explicit catalog(const std::vector<std::string>& paths,
                     store::pages pages = store::pages::check);
    ~catalog();
    catalog(catalog&&) noexcept;
    catalog& operator=(catalog&&) noexcept;
    catalog(const catalog&) = delete;
    catalog& operator=(const catalog&) = delete;

    const std::vector<run_record>& runs() const noexcept;
    const std::vector<std::string>& paths() const noexcept;
    /** @brief The paths joined with ", ", for messages. */
    std::string describe() const;

    /**
     * @brief Apply @p sel (see run_selector), in catalog order without duplicates.
     * @throws irqloop::error (exit_usage): the files hold no runs (hint: record one); an id,
     *         uuid or label matches nothing (the message lists what exists); an id or prefix
     *         matches more than one run (hint: give the uuid, or more of it); nothing is left.
     */
    std::vector<const run_record*> select(const run_selector& sel) const;

    /** @brief The run's intervals by index. */
    std::vector<interval_row> intervals(const run_record& run);
    /**
     * @brief The run's per-window histograms (schema version 3 on): non-empty buckets, by window
     * index then bucket. Empty for a run recorded before version 3 (see has_window_histograms).
     */
    std::vector<window_bucket_row> window_histograms(const run_record& run);
    /** @brief One window's histogram (window_histograms() of window @p idx only): what watch
     *  reads at each refresh, one window's rows instead of the whole run's. */
    std::vector<window_bucket_row> window_histogram(const run_record& run, std::uint64_t idx);
    /**
     * @brief Whether the run was recorded with per-window histograms: its file is version 3 or
     * later and its metadata names the bucket scheme (logger.window_histogram). A run without
     * them reads "no per-window histograms in this run" in the heatmap.
     */
    bool has_window_histograms(const run_record& run) const;
    /** @brief The run's non-empty histogram buckets, by lo_ns. */
    std::vector<bucket_row> histogram(const run_record& run);
    /** @brief The run's top-K, worst first (rank 1 first); at most @p limit rows (0: all). */
    std::vector<sample_row> worst(const run_record& run, std::size_t limit = 0);
    /** @brief The run's stored exceedances with from <= unix_ns < to, by seq. */
    std::vector<sample_row> exceedances(const run_record& run,
                                        std::int64_t from_unix_ns = INT64_MIN,
                                        std::int64_t to_unix_ns = INT64_MAX);
    /**
     * @brief The run's events in time order (unix_ns), events of the same instant in the order
     * they were written, like a trace sorted by timestamp. A recovery note, written later with
     * the time of the last commit, takes its place in time.
     */
    std::vector<event_row> events(const run_record& run);
    /** @brief Per event kind, by kind: count, sum of values, first and last time. */
    std::vector<event_total> event_totals(const run_record& run);
    /** @brief Number of raw samples stored (--raw runs only). */
    std::uint64_t raw_count(const run_record& run);
    /**
     * @brief Call @p fn for every raw sample of the run in the order the recorder appended them
     * (seq order), streaming: nothing is held in memory and nothing is sorted (the raw table has
     * no index, for insert speed; its rowid order is the append order). unix_ns is the
     * stimulus's time from version 7 on, 0 in rows recorded before.
     */
    void for_each_raw(const run_record& run, const std::function<void(const sample_row&)>& fn);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace irqloop::db
