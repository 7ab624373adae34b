// SPDX-License-Identifier: MIT
#pragma once
// `irqloop watch` as parse -> execute -> present (command.hpp), the one command that repeats:
// watch_command() runs execute_watch() and present_watch() once per view, until no run is
// running, --count views were shown, or SIGINT.
#include "command.hpp"
#include "read.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace irqloop::logger
{

struct watch_request final {
    std::string db;                          ///< the file a run is writing
    std::int64_t refresh_ns = 1'000'000'000; ///< between two views
    std::uint64_t views = 0;                 ///< stop after this many; 0: until the run ends
    std::size_t top = 5;                     ///< worst samples shown
};

/** @brief What one view keeps for the next: the run on screen, for its rate. */
struct watch_state final {
    std::string watching;            ///< uuid of the run on screen, empty before the first view
    std::uint64_t last_stimuli = 0;  ///< its stimuli at the last commit seen
    std::int64_t last_commit_ns = 0; ///< the logger's wall time of that commit
    double rate = 0;                 ///< the rate shown, kept until the next commit
    bool checked = false;            ///< every page of the file was checked at the first view
};

/**
 * @brief The rate a view shows: the stimuli the run stored between the last two commits @p state
 * saw, over the logger's wall time between them (the run's own commit times, never watch's
 * refresh clock: the stored counts move only at a commit, so a per-refresh rate read 0, then a
 * burst). The first view of a run: its stimuli over the time from its start to its last
 * commit. A view with no new commit keeps the rate before. Updates @p state.
 */
double watch_rate(watch_state& state, const std::string& uuid, std::uint64_t stimuli,
                  std::int64_t start_unix_ns, std::int64_t commit_unix_ns);

/** @brief One view of the file. */
struct watch_outcome final {
    std::unique_ptr<db::catalog> cat;       ///< the file as read for this view
    const db::run_record* run = nullptr;    ///< the newest running run; none: the last view
    bool watched = false;                   ///< with no run: a run was on screen before
    const db::run_record* ended = nullptr;  ///< with no run: the one on screen before, as it ended
    double rate = 0;                        ///< stimuli per second (watch_rate)
    std::optional<db::interval_row> window; ///< the run's last committed stats window
    std::vector<db::window_bucket_row> buckets; ///< that window's histogram (schema version 3)
    std::vector<db::sample_row> worst;          ///< its top --top
    std::vector<db::event_total> events;
    std::string warm_max; ///< WARM MAX as report prints it (format_warm_max), in us
};

/**
 * @brief The live histogram of a window: one line per non-empty bucket of its stored histogram
 * (log-spaced, 4 per power of two: db::window_buckets), "from - to us  count  bars" with log10
 * bars (log_bar), a "..." line where empty buckets are skipped, and for a window that lost
 * answers a last line "≥ timeout us (lost)  N  bars". Empty for a window without buckets.
 */
std::vector<std::string> window_histogram_lines(const std::vector<db::window_bucket_row>& buckets,
                                                std::uint64_t lost, std::int64_t timeout_ns,
                                                std::size_t bar_width = 40);

parsed<watch_request> parse_watch(int argc, char** argv);
/** @brief Read one view of the file; @p state carries what the next view needs. */
watch_outcome execute_watch(const watch_request& r, watch_state& state);
/** @brief Print one view (clearing the terminal first on a tty). */
int present_watch(const watch_outcome& o, const watch_request& r);

/** @brief `irqloop watch`: parse, execute, present; returns the exit status. */
int watch_command(int argc, char** argv);

} // namespace irqloop::logger
