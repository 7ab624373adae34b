// SPDX-License-Identifier: MIT
#pragma once
// `irqloop campaign FILE.ini` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "error.hpp"
#include "gates.hpp"
#include "run-request.hpp"

#include <optional>
#include <string>
#include <vector>

namespace irqloop::logger
{

/** @brief One [section] of the file: its run, parsed whole, and its gates. */
struct campaign_phase final {
    std::string section;
    run_keys keys;             ///< run options, in file order
    gate_limit_args gate_text; ///< max, p, p-exceed, lost, overflows
    gate_limits gates;
    std::string label; ///< the section's name unless it sets label
    run_request request;
};

struct campaign_request final {
    std::string file, db = "irqloop.db";
    std::vector<campaign_phase> phases;
};

struct campaign_outcome final {
    int status = 0;                  ///< a phase's non-zero exit status ends the campaign
    std::vector<std::string> failed; ///< labels of the phases whose gates failed
    std::optional<error> refused;    ///< the first phase's p-exceed its tail fit cannot claim
};

/**
 * @brief The options and FILE.ini, every phase parsed into its run request before the first
 *        one runs: a bad key or value in any phase is refused (status 2). Reads the file it
 *        is given and nothing else; creates nothing.
 */
parsed<campaign_request> parse_campaign(int argc, char** argv);
/** @brief The phases in order (a complete one skipped), each one's gates after it. */
campaign_outcome execute_campaign(campaign_request& req);
/** @brief The compare table by label and the gates' verdict; the exit status. */
int present_campaign(const campaign_outcome& o, const campaign_request& req);

/** @brief `irqloop campaign`: parse, execute, present; returns the exit status. */
int campaign_command(int argc, char** argv);

} // namespace irqloop::logger
