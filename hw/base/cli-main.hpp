// SPDX-License-Identifier: MIT
#pragma once

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

/** @brief Print `NAME VERSION` to stdout, for --version. */
void print_version();

} // namespace irqloop::base
