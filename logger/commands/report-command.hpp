// SPDX-License-Identifier: MIT
#pragma once
// `irqloop report` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "tail-command.hpp"
#include "verify-store.hpp"
#include "worst-table.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace irqloop::logger
{

struct report_request final {
    selection_options sel; ///< no run named: the most recent measurement run
    latency_unit unit = latency_unit::us;
    table_format format = table_format::text;
    std::size_t top = 10;             ///< worst samples listed
    std::size_t timeline_rows = 48;   ///< 0: one row per interval
    std::string floor = "auto";       ///< auto, none or a run id
    bool list = false;                ///< --list: the runs of the file(s), nothing else
    bool target_output = false;       ///< --target-output: the stored stdout/stderr too
    std::optional<tail_request> tail; ///< --tail / --exceed: a tail section, as `irqloop tail`
};

/** @brief What the report of one run shows, read from its file. */
struct report_run final {
    const db::run_record* run = nullptr;
    const db::run_record* floor = nullptr; ///< the floor run that corrects it, or none
    bool writer_alive = false;             ///< a running run's logger still holds the file
    std::vector<db::interval_row> intervals;
    std::vector<db::bucket_row> histogram;
    std::vector<db::sample_row> worst;       ///< the top --top, worst first
    std::vector<db::sample_row> truth_worst; ///< every stored worst one, for a run with a truth
    std::vector<db::event_total> events;
    /// The causes the run's stored facts name for its stored disturbed samples (the worst list
    /// and those above the threshold): one note each, RT throttling and SMIs (disturbed_cause()).
    std::vector<std::string> cause_notes;
    warm_lost warm; ///< the lost answers after the warm-up, for WARM MAX (format_warm_max())
    std::vector<analysis::verification> verifications; ///< irqloop verify's, oldest first
    std::optional<tail_run_result> tail;               ///< --tail: the run's tail fit
};

struct report_outcome final {
    std::unique_ptr<db::catalog> cat; ///< the files read; runs point into it
    std::vector<report_run> runs;     ///< empty for --list
};

parsed<report_request> parse_report(int argc, char** argv);
report_outcome execute_report(const report_request& r);
int present_report(const report_outcome& o, const report_request& r);

/** @brief `irqloop report`: parse, execute, present; returns the exit status. */
int report_command(int argc, char** argv);

} // namespace irqloop::logger
