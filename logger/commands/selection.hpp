// SPDX-License-Identifier: MIT
#pragma once

#include "read.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include <string>
#include <vector>

/**
 * The command-line half of reading: the options every reading command shares. What they
 * select is decided by db::catalog::select (see db::run_selector for the rules).
 */
namespace irqloop::logger
{

/** @brief The database and selection options every reading command shares. */
struct selection_options final {
    std::vector<std::string> dbs; ///< --db and bare arguments
    db::run_selector sel;         ///< --run, --label, --last
};

/** @brief @p dbs (from --db and positional files), or {"irqloop.db"} when empty. */
std::vector<std::string> db_paths_or_default(std::vector<std::string> dbs);

/**
 * @brief Register --help, --db (repeatable), --run (repeatable), --label (repeatable) and
 *        --last on @p desc, storing into @p o. Help texts name the defaults.
 */
void add_selection_options(boost::program_options::options_description& desc, selection_options& o);

/**
 * @brief Parse a reading command's arguments against @p desc, bare arguments counting as
 *        --db files. Does not notify: the caller handles --help first.
 */
boost::program_options::variables_map
parse_selection_command(int argc, char** argv,
                        const boost::program_options::options_description& desc);

/** @brief Print "usage: irqloop CMD ..." and @p desc to stdout, for --help. */
void print_command_help(const char* usage, const char* about,
                        const boost::program_options::options_description& desc);

} // namespace irqloop::logger
