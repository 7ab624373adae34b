// SPDX-License-Identifier: MIT
#pragma once
// `irqloop compare` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "tail-fit.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace irqloop::logger
{

struct compare_request final {
    selection_options sel;
    bool by_label = false; ///< --by label: the runs of a label pooled in one row
    /// --by KEY[,KEY...]: the runs pooled by the values of these keys of their stored target
    /// info (run --target-info), one row per combination; empty: by run or label
    std::vector<std::string> by_keys;
    std::string preset = "default"; ///< a known preset (checked)
    std::string columns;            ///< --columns as given (checked), empty: the preset's
    std::string sort = "start";     ///< start, label or a figure, "-" first for descending
    bool floor_corrected = false;
    latency_unit unit = latency_unit::us; ///< --unit, else the preset's
    int decimals = 3;                     ///< --decimals, else the preset's (or the unit's)
    table_format format = table_format::text;
    bool tail = false; ///< --tail (or a tail column asked for): each run's tail fit, as `tail`'s

    /** @brief The per-window table of rt_eval, rather than one row per group. */
    bool rt_eval() const noexcept { return preset == "rt_eval" && columns.empty(); }
};

/**
 * @brief compare --tail: a run's tail fit as `irqloop tail` makes it (default options), its
 * shape and the return levels at 1e-6 and 1e-9 per sample with 95 % profile intervals, lowered
 * by the floor share under --floor-corrected; or what cannot be claimed.
 */
struct compare_tail final {
    std::string not_claimed; ///< the failed checks' names ("stationarity, independence"), or
                             ///< empty when the figures are claimed
    double xi = 0;
    analysis::tail_interval xi_ci;
    analysis::tail_level level_6, level_9; ///< 1e-6 and 1e-9 per sample
};

/** @brief One row: a run, or every run of one label pooled. */
struct compare_group final {
    std::string key; ///< the label, "#" and the uuid of an unlabelled run, or the --by keys'
                     ///< values ("sched=credit2, vwfi=trap")
    std::vector<const db::run_record*> runs;
    db::summary_row s; ///< the pooled (and floor-corrected) figures
    bool has_stats = false;
    std::int64_t threshold_ns = 0; ///< the largest of the runs'
    /// The largest timeout (floor-corrected like the figures) of the runs that lost answers:
    /// the max of the row is at least this (max_figure); 0 when none lost any.
    std::int64_t lost_bound_ns = 0;
    /// rt_eval only: the stats windows of each run, as runs.
    std::vector<std::vector<db::interval_row>> windows;
    /// --tail only (--by run): the run's tail fit.
    std::optional<compare_tail> tail;
};

/** @brief A run that --floor-corrected corrects, with its floor run and share; floor null: none. */
struct compare_floor final {
    const db::run_record* run = nullptr;
    const db::run_record* floor = nullptr;
    std::int64_t share_ns = 0;
};

struct compare_outcome final {
    std::unique_ptr<db::catalog> cat;        ///< the files read; the runs point into it
    std::vector<const db::run_record*> runs; ///< as selected
    std::vector<compare_group> groups;       ///< in --sort order
    std::vector<compare_floor> floors;       ///< with --floor-corrected: each non-floor run
    bool gated = false;                      ///< a run has the gates' outcome stored
};

parsed<compare_request> parse_compare(int argc, char** argv);
compare_outcome execute_compare(const compare_request& r);
int present_compare(const compare_outcome& o, const compare_request& r);

/** @brief `irqloop compare`: parse, execute, present; returns the exit status. */
int compare_command(int argc, char** argv);

} // namespace irqloop::logger
