// SPDX-License-Identifier: MIT
#pragma once

#include "actions.hpp"
#include "cycle-clock.hpp"
#include "lines.hpp"
#include "preflight.hpp"
#include "rows.hpp"
#include "rt-setup.hpp"
#include "sampler.hpp"
#include "session.hpp"
#include "target-info.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace irqloop::logger
{

/** @brief How a run shows progress. */
enum class progress_mode { none, tty, log };

/** @brief The wire and its timing: what the sampler is configured from. */
struct run_timing final {
    std::uint64_t samples = 0;    ///< 0 = not bounded by count
    std::int64_t duration_ns = 0; ///< 0 = not bounded by time
    std::int64_t interval_ns = 100'000;
    std::int64_t jitter_ns = 0;
    std::int64_t timeout_ns = 10'000'000;
    std::int64_t gap_limit_ns = -1; ///< -1 = auto (from the measured poll period)
    std::int64_t quiet_ns = -1;     ///< -1 = auto: min(timeout, 1ms) after a loss
    std::size_t ring_samples = 1u << 19;
    bool force_tsc = false;
    std::uint64_t seed = 1;
    std::int64_t trigger_above_ns = 0; ///< 0 = no trigger line use
    std::string trigger_line;
    /// The dead-wire check: when the first this many stimuli (and 1 s) all time out, the run stops
    /// before the soak and is stored as failed (run_outcome::no_answer); 0 = --allow-silent.
    std::uint64_t dead_wire_stimuli = dead_wire_default;
    static constexpr std::uint64_t dead_wire_default = 100;
};

/** @brief What is recorded and stored: the recorder's figures and the run row. */
struct run_recording final {
    std::int64_t threshold_ns = 30'000;
    std::uint64_t warmup = 1000;
    std::int64_t stats_interval_ns = 10'000'000'000;
    std::size_t top_k = 1000;
    std::uint64_t max_exceedances = 1'000'000;
    std::uint64_t max_events = 100'000; ///< cap on stored lost/disturbed/overflow events
    bool raw = false;
    bool keep_disturbed = false;
    db::run_kind kind = db::run_kind::measure; ///< measure or floor
    std::string label, target, load;
    std::string db_path; ///< empty = no store (summary only)
    std::string command_line;
    /// --metrics-file: Prometheus text rewritten (temp file + rename) at every window; "" = none
    std::string metrics_file;
    /// Root of the SMI counter's device file: ROOT/dev/cpu/N/msr for the sampler's CPU (N = 0
    /// when not pinned); the preflight's root, so tests point it at a fake tree.
    std::string smi_root = "/";
    std::vector<preflight_check> preflight; ///< stored as run metadata preflight.<key>
    /// --target-info: run once before the first stimulus, stored with the run; command "" = none
    target_info_options target_info;
};

/** @brief The soak's side tasks: the load process and the threshold actions. */
struct run_soak final {
    /// A /bin/sh command started once the warm-up samples are taken, in its own process group,
    /// and stopped (SIGTERM, SIGKILL after load_grace_ns) when the run ends; "" = none.
    std::string load_cmd;
    bool load_required = false; ///< the load exiting by itself ends the run
    std::int64_t load_grace_ns = 5'000'000'000;
    std::vector<action_spec> actions; ///< --on-threshold, for samples above threshold_ns
    std::int64_t action_holdoff_ns = 10'000'000'000;
};

/** @brief Everything `irqloop run` and `irqloop calibrate` take, in ns and counts. */
struct run_options final {
    run_timing timing;
    run_recording recording;
    run_soak soak;
    base::rt_request rt;
    progress_mode progress = progress_mode::none;
    static constexpr std::uint64_t dead_wire_default = run_timing::dead_wire_default;
    static constexpr std::int64_t dead_wire_ns = 1'000'000'000; ///< and at least this long
    /// A first stimulus later than this after the run's start (its window 0) is a late start:
    /// a `late_start` event and a summary line (docs/commands/run.md, "A late start").
    static constexpr std::int64_t late_start_ns = 1'000'000'000;
};

/** @brief What a run ended with. */
struct run_outcome final {
    std::int64_t run_id = 0; ///< 0 without a store
    std::string uuid;
    db::run_status status = db::run_status::running; ///< complete, interrupted or failed once done
    sampler_end end = sampler_end::done;
    hw::line_error line_failure;
    db::summary_row summary;
    hw::clock_info clock;
    double poll_ns = 0;       ///< median gap between two polls
    double drive_ns = 0;      ///< median cost of one drive() that changes nothing
    double clock_step_ns = 0; ///< the cycle counter's step (measure_clock_step_cycles)
    std::int64_t gap_limit_ns = 0;
    std::string gap_limit_rule; ///< "--gap-limit", or "auto: " and the term that set it
    std::string rt_settings;
    std::vector<std::string> rt_misses;
    std::uint64_t intervals = 0;
    std::uint64_t triggers = 0;
    bool load_died = false; ///< the load exited by itself during the measurement
    std::string load_end;   ///< how the load ended ("exit 3", "killed by SIGTERM"), "" = none
    bool stopped_by_action = false; ///< an --on-threshold stop action ended the run
    std::uint64_t actions_fired = 0, actions_held_off = 0;
    std::uint64_t events_dropped = 0;    ///< over max_events, counted and not stored
    std::uint64_t lost_after_warmup = 0; ///< recorder::lost_after_warmup(): exact, not capped
    std::string metrics_error;           ///< the first --metrics-file write failure, "" = none
    /// The run's gates (run --fail-*), set by the gate plug-in's on_finish: {limit key, passed}
    /// per limit, then "all" for the run as a whole. Empty: no gate (or a failed run).
    std::vector<std::pair<std::string, bool>> gates;
    /// The dead-wire check stopped the run: the first run_options::dead_wire_stimuli stimuli
    /// all timed out. The run is failed; no_answer_reason is the stored event's text.
    bool no_answer = false;
    std::string no_answer_reason;
    /// From the run's start (the anchor of window 0, after the run row was begun) to the
    /// sampler's release, and to its first stimulus; -1: no stimulus came.
    std::int64_t sampler_release_ns = 0;
    std::int64_t first_stimulus_ns = -1;
    /// The first stimulus came more than run_options::late_start_ns after the run's start, or
    /// none came in a run longer than that: stored as a `late_start` event, shown in the summary.
    bool late_start = false;
    /// --target-info's command, how it ended and what it printed; none without the option.
    std::optional<db::target_info_row> target_info;
};

/**
 * @brief Measure through @p wire until done or @p stop: the core session (session-core.hpp):
 * the sampler on a thread of its own (real-time settings applied there), the recorder on
 * another, the plug-ins' ticks on the caller's.
 *
 * With a db_path the run is begun in the store before the first stimulus and each interval
 * is committed as it closes; the final status is set before returning.
 * The engine's own plug-ins (session-plugins.hpp) come first, then @p extra (a command's, e.g.
 * its gates), each hook in that order.
 * @throws irqloop::error for a store failure (the run is marked failed if the store still
 *         accepts writes; committed intervals stay) or a strict real-time miss.
 */
run_outcome execute_run(const run_options& opt, hw::lines& wire, const std::atomic<bool>& stop,
                        std::span<run_plugin* const> extra = {});

} // namespace irqloop::logger
