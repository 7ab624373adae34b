// SPDX-License-Identifier: MIT
#pragma once
// `irqloop check` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "gates.hpp"
#include "selection.hpp"

#include <memory>
#include <vector>

namespace irqloop::logger
{

struct check_request final {
    selection_options sel; ///< no run named: every measurement run
    gate_limits limits;    ///< at least one
};

/** @brief One selected run and its gates. */
struct check_run final {
    const db::run_record* run = nullptr;
    gate_outcome gates;
};

struct check_outcome final {
    std::unique_ptr<db::catalog> cat; ///< the files read; the runs point into it
    std::vector<check_run> runs;      ///< as selected
};

parsed<check_request> parse_check(int argc, char** argv);
check_outcome execute_check(const check_request& r);
/** @brief One verdict line per run and its limit lines, then the total; 3 when one failed. */
int present_check(const check_outcome& o, const check_request& r);

/** @brief `irqloop check`: parse, execute, present; returns the exit status. */
int check_command(int argc, char** argv);

} // namespace irqloop::logger
