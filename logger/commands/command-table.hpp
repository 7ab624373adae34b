// SPDX-License-Identifier: MIT
#pragma once

#include <span>

namespace irqloop::logger
{

/**
 * @brief One `irqloop` subcommand: its whole body, its parse step alone and its line in
 * `irqloop --help`. The one list of commands: logger/main.cpp dispatches through it and the
 * CLI fuzz target (tests/fuzz/fuzz-cli.cpp) feeds each entry's parse step, so neither can
 * miss a command the other has.
 */
struct command_entry final {
    const char* name;
    int (*main)(int argc, char** argv);
    /// The command's parse() (command.hpp) with its result dropped: checks every argument,
    /// opens, creates, starts and prints nothing; refuses by throwing.
    void (*parse_only)(int argc, char** argv);
    const char* summary;
};

/** @brief Every subcommand, alphabetical. */
std::span<const command_entry> command_table() noexcept;

} // namespace irqloop::logger
