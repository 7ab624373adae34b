// SPDX-License-Identifier: MIT
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/variables_map.hpp>

#include <string_view>

namespace irqloop::base
{

/**
 * @brief Run a program's main, or one of its subcommands: the one place where an exception
 * becomes a message on stderr and an exit status, for both programs.
 *
 * - irqloop::error: its message (`NAME: what: why (hint)`), its own status (2 bad input or a
 *   refused file, 1 a runtime failure);
 * - a Boost.Program_options error: `NAME[: COMMAND]: what (see 'NAME[ COMMAND] --help')`, 2;
 * - any other exception: `NAME[: COMMAND]: what (this is a bug; please report it)`, 1.
 *
 * NAME is program_name(), set by the program's main before this.
 * @param main The body; its return value is the exit status.
 * @param command The subcommand's name in messages, or empty for a program without them.
 */
int run_main(int (*main)(int, char**), int argc, char** argv,
             std::string_view command = {}) noexcept;

/**
 * @brief Parse a command line against @p options. Bare words go to @p positional; with the
 * default (none), a stray bare word (`run --label rt idle`) is refused as a
 * Boost.Program_options error, never dropped. po::notify() is left to the caller.
 */
boost::program_options::variables_map
parse_options(int argc, char** argv, const boost::program_options::options_description& options,
              const boost::program_options::positional_options_description& positional = {});

/** @brief Print `NAME VERSION` to stdout, for --version. */
void print_version();

} // namespace irqloop::base
