// SPDX-License-Identifier: MIT
#pragma once
// `irqloop run` and `irqloop calibrate` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "gates.hpp"
#include "run-request.hpp"

#include <optional>

namespace irqloop::logger
{

/** @brief What one run ended with: the engine's outcome, its gates, the stop signal. */
struct run_result final {
    run_outcome run;
    std::optional<gate_outcome> gates; ///< evaluated on the outcome when --fail-* was given
    int signal = 0;                    ///< the signal that stopped the run, 0 = none
};

/** @brief `irqloop run ARGS`: the request, or --help's text. Pure: opens nothing. */
parsed<run_request> parse_run(int argc, char** argv);
/** @brief `irqloop calibrate ARGS`: a floor run's request, or --help's text. Pure. */
parsed<run_request> parse_calibrate(int argc, char** argv);

/**
 * @brief Measure what @p req says: the preflight (its WARN/FAIL lines on standard error), the
 *        wire opened, execute_run() with the gates as a plug-in.
 * @throws irqloop::error as `irqloop run` refuses (a --strict-rt preflight FAIL, a wire that
 *         cannot be opened, a store failure).
 */
run_result execute_run_request(run_request& req);

/** @brief The summary, the gate lines, the warnings; the exit status of `irqloop run` (or
 *  throws irqloop::error with it: a dead wire, a failed run, no sample). */
int present_run(const run_result& r, const run_request& req);

/** @brief `irqloop run`: parse, execute, present; returns the exit status. */
int run_command(int argc, char** argv);
/** @brief `irqloop calibrate` (a floor run): parse, execute, present; the exit status. */
int calibrate_command(int argc, char** argv);

} // namespace irqloop::logger
