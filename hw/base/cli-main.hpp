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
 * @brief Thrown by options_parsed() when stop_after_parsing() is on. Not an exception of the
 * program's own: only the CLI fuzz target (tests/fuzz) turns the switch on, and catches it.
 */
struct parsing_done final {
};

/**
 * @brief Mark the point of a command where its options are parsed and checked and nothing has
 * been opened, created or started yet. Does nothing in the programs; throws parsing_done
 * after stop_after_parsing(true), so that a fuzzer can feed any argument vector to a
 * command without touching a file, a device or a thread.
 */
void options_parsed();

/** @brief Turn the parse-only mode of options_parsed() on or off (off by default). */
void stop_after_parsing(bool on) noexcept;

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
