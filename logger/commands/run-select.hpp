// SPDX-License-Identifier: MIT
#pragma once

#include "rows.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>


namespace SQLite
{
class Database;
}

namespace irqloop::logger
{

/**
 * @brief One run as the reading commands see it: its row in `runs`, plus where it came from.
 *
 * The summary is the cumulative one the recorder rewrote at every interval commit, so a run
 * cut short (status running or interrupted) still has figures up to its last commit.
 */
struct run_info final {
    std::string db_path;      ///< the file it was read from
    std::size_t db_index = 0; ///< position of that file in the catalog
    std::int64_t id = 0;      ///< runs.id, unique only within its file
    db::run_status status = db::run_status::running;
    std::optional<std::int64_t> end_unix_ns;
    db::run_row meta; ///< metadata, backend extras included
    db::summary_row summary;
    bool has_stats = false; ///< false while no sample made it into the statistics

    /** @brief True for running and interrupted runs: their figures cover only part of the run. */
    bool partial() const noexcept
    {
        return status == db::run_status::running || status == db::run_status::interrupted;
    }
    /** @brief The label, or "run <id>" for an unlabelled run. */
    std::string name() const;
    /** @brief summary.above_threshold as a percentage of summary.samples (0 without samples). */
    double pct_above() const noexcept;
};

/**
 * @brief The runs of one or more irqloop database files, opened read-only.
 *
 * Files are opened through db::store in read_only mode, so a file that is not irqloop's, or
 * comes from a newer irqloop, is refused with the store's message; nothing is ever written
 * (a run a killed logger left 'running' stays so here and reads as partial). Runs are listed
 * by start time (then file order and id). A run whose uuid already came from an earlier file
 * (the same run copied into two files) is listed once, from the first file.
 */
class run_catalog final
{
public:
    /**
     * @throws irqloop::error (exit 2) when @p paths is empty or a file does not exist;
     *         the store's irqloop::error when a file is refused.
     */
    explicit run_catalog(const std::vector<std::string>& paths);
    ~run_catalog();
    run_catalog(run_catalog&&) noexcept;
    run_catalog& operator=(run_catalog&&) noexcept;
    run_catalog(const run_catalog&) = delete;
    run_catalog& operator=(const run_catalog&) = delete;

    const std::vector<run_info>& runs() const noexcept;
    const std::vector<std::string>& paths() const noexcept;
    /** @brief The paths joined with ", " for messages. */
    std::string describe() const;

    /** @brief The read-only connection of the run's file, for ad-hoc queries. */
    SQLite::Database& database(const run_info& run);

    std::vector<db::interval_row> intervals(const run_info& run);
    /** @brief Non-empty buckets in ascending order. */
    std::vector<db::bucket_row> histogram(const run_info& run);
    /** @brief The top-K worst, worst first (rank 1 first), at most @p limit (0: all). */
    std::vector<db::sample_row> worst(const run_info& run, std::size_t limit = 0);
    /** @brief Stored exceedances in seq order. */
    std::vector<db::sample_row> exceedances(const run_info& run);
    std::vector<db::event_row> events(const run_info& run);
    /** @brief Number of raw samples stored (--raw runs only). */
    std::uint64_t raw_count(const run_info& run);
    /** @brief Stream the raw samples in seq order; unix_ns is 0 (the raw table keeps none). */
    void for_each_raw(const run_info& run, const std::function<void(const db::sample_row&)>& fn);

    /**
     * @brief The floor run that corrects @p run: a run of kind 'floor' with samples, in the
     *        same file, on the same backend kind (the spec's name before ':'), preferring the
     *        latest one started before @p run, else the earliest after it. Null when none.
     */
    const run_info* floor_for(const run_info& run) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/** @brief Which runs a command reads: --run, --label, --last. Empty means "not narrowed". */
struct run_selector final {
    std::vector<std::string> runs;   ///< ids, uuids, or unique uuid prefixes (>= 4 characters)
    std::vector<std::string> labels; ///< exact labels; every run with the label
    bool last = false;               ///< only the most recently started of what remains

    bool empty() const noexcept { return runs.empty() && labels.empty() && !last; }
};

/**
 * @brief Apply @p sel to the catalog, in catalog order without duplicates.
 *
 * With neither runs nor labels, all runs of kind 'measure' are the candidates (floor and
 * selftest runs are picked only by naming them); --last then keeps the latest candidate.
 * @throws irqloop::error (exit 2): the catalog holds no runs ("holds no runs" + hint to record
 *         one); an id or label matches nothing (message lists what exists); a bare id is
 *         ambiguous across files (hint: use the uuid).
 */
std::vector<const run_info*> select_runs(const run_catalog& cat, const run_selector& sel);

/** @brief @p dbs (from --db and positional files), or {"irqloop.db"} when empty. */
std::vector<std::string> db_paths_or_default(std::vector<std::string> dbs);

/** @brief The database and selection options every reading command shares. */
struct selection_options final {
    std::vector<std::string> dbs;
    run_selector sel;
};

/**
 * @brief Register --db (repeatable), --run (repeatable), --label (repeatable) and --last on
 *        @p desc, storing into @p o. Help texts name the defaults.
 */
void add_selection_options(boost::program_options::options_description& desc, selection_options& o);

/**
 * @brief Parse a reading command's arguments against @p desc, bare arguments counting as
 *        --db files. Does not notify: the caller handles --help first.
 */
boost::program_options::variables_map
parse_selection_command(int argc, char** argv,
                        const boost::program_options::options_description& desc);

/**
 * @brief Print "usage: irqloop CMD ..." and @p desc to stdout, for --help.
 */
void print_command_help(const char* usage, const char* about,
                        const boost::program_options::options_description& desc);

} // namespace irqloop::logger
