// SPDX-License-Identifier: MIT
#pragma once
// `irqloop export` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "export-ci.hpp"
#include "export-vcd.hpp"
#include "gates.hpp"
#include "read.hpp"
#include "selection.hpp"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace irqloop::logger
{

/** @brief The formats of --format, in the order --help names them. */
enum class export_format {
    json,
    csv,
    cyclictest_hist,
    rt_tests_json,
    prometheus,
    junit,
    lava,
    osadl_rtdataset,
    rtla_timerlat_hist,
    vcd
};

struct export_request final {
    selection_options sel; ///< dbs already defaulted (db_paths_or_default)
    export_format format = export_format::json;
    /// json: the parts to write (summary always among them); csv: the one table, alone
    std::set<std::string> what;
    std::int64_t bins = 0; ///< cyclictest-hist, rt-tests-json: 0 for enough for the largest max
    std::string output;    ///< empty: standard output
    gate_limits limits;    ///< junit, lava: empty for the gates stored with each run
    export_vcd_choice vcd; ///< vcd: the samples to draw
};

/**
 * What execute_export() found: the runs selected, checked against what the format holds (one
 * run for rt-tests-json, raw samples for --what raw), the bins and the gates. The writers read
 * each run's rows through @ref cat as they write them: raw samples are streamed (a run keeps
 * millions), never held.
 */
struct export_outcome final {
    std::unique_ptr<db::catalog> cat; ///< the files read; runs point into it
    std::vector<const db::run_record*> runs;
    std::vector<gated_run> gated; ///< junit and lava: each run with its gates
    std::int64_t bins = 0;        ///< cyclictest-hist, rt-tests-json: the bins used
    vcd_waveform vcd;             ///< vcd: the drawing, made before anything is written
};

/** @brief Pure: reads and checks the arguments; --help returns its text. */
parsed<export_request> parse_export(int argc, char** argv);
/** @brief Opens the files, selects the runs, refuses what the format cannot hold. */
export_outcome execute_export(const export_request& r);
/**
 * @brief Writes the export to --output or stdout; 0. To a file, json, csv, the cyclictest
 * formats and prometheus are checked and removed on a failed write (output_file); junit and lava
 * are written to a plain stream with the flush checked, as they always were.
 */
int present_export(const export_outcome& o, const export_request& r);

/** @brief `irqloop export`: parse, execute, present; returns the exit status. */
int export_command(int argc, char** argv);

} // namespace irqloop::logger
