// SPDX-License-Identifier: MIT
#pragma once

#include "gates.hpp"
#include "run.hpp"

#include <string>
#include <utility>
#include <vector>

namespace irqloop::logger
{

/**
 * @brief One `irqloop run` (or `irqloop calibrate`), parsed and checked, nothing opened: what
 * `run` builds from its command line and `campaign` from each phase's keys, before the first
 * phase starts (libgpiod's gpioget: parse_config() fills a plain struct, main works from it).
 */
struct run_request final {
    run_options opt;   ///< everything execute_run() takes but the preflight, done at execute
    std::string hw;    ///< the backend spec; its keys and values checked, not opened
    gate_limits gates; ///< --fail-*
    std::string preflight_root = "/";
    bool progress_auto = true; ///< --progress auto: tty or log is chosen at execute
    bool quiet = false;
    bool floor = false; ///< calibrate: a floor run
};

/** @brief The keys of one campaign phase, in file order: run's option names without the
 *  dashes, and their values ("" for a switch given bare). */
using run_keys = std::vector<std::pair<std::string, std::string>>;

/**
 * @brief Parse @p keys as `irqloop run` parses its command line: the same option table, the
 *        same range checks, the backend spec's keys through hw::check_lines_spec(). Pure: no
 *        file, device or thread is opened, created or started.
 * @param command_line The command line stored with the run.
 * @throws irqloop::error (exit_usage) or a Boost.Program_options error, as `irqloop run` does.
 */
run_request parse_run_keys(const run_keys& keys, std::string command_line);

/** @brief @p word as one shell word: as it is when plain, else single-quoted (stored
 *  command lines). */
std::string shell_word(const std::string& word);

} // namespace irqloop::logger
