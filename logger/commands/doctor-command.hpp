// SPDX-License-Identifier: MIT
#pragma once
// `irqloop doctor` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "preflight.hpp"

#include <vector>

namespace irqloop::logger
{

struct doctor_request final {
    preflight_options preflight; ///< --cpu, --root, --busy-window, checked
};

struct doctor_outcome final {
    std::vector<preflight_check> checks;
};

parsed<doctor_request> parse_doctor(int argc, char** argv);
doctor_outcome execute_doctor(const doctor_request& r);
/** @brief One line per check, then a count; 3 when a check FAILs, else 0. */
int present_doctor(const doctor_outcome& o, const doctor_request& r);

/** @brief `irqloop doctor`: parse, execute, present; returns the exit status. */
int doctor_command(int argc, char** argv);

} // namespace irqloop::logger
