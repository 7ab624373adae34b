// SPDX-License-Identifier: MIT
#pragma once

#include <boost/program_options/options_description.hpp>

#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

/**
 * The shape every `irqloop` command has (docs/architecture.md, "Commands"): three steps.
 *
 * - `parse_X(argc, argv) -> parsed<X_request>`: pure. It reads the arguments and checks every
 *   value, and opens, creates, starts and prints nothing, so that tests and the CLI fuzz target
 *   (tests/fuzz/fuzz-cli.cpp) call it directly. A refusal throws irqloop::error (status 2) or a
 *   Boost.Program_options error. With --help, it returns no request, only the help text.
 * - `execute_X(const X_request&) -> X_outcome`: does the work (opens files, measures), and
 *   holds what it found in the outcome; it writes no report of its own.
 * - `present_X(const X_outcome&, ...) -> int`: prints the outcome and returns the exit status
 *   (docs/commands/exit-status.md). Gates are evaluated here, on the outcome, with no reopen.
 *
 * One option table per command (a function that registers the command's options on an
 * options_description, bound to the request's fields) feeds the command line, --help and the
 * man page (made from --help by help2man); `campaign` builds run requests from the same table.
 */
namespace irqloop::logger
{

/** @brief What a command's parse() returns: a request, or the text --help asked for. */
template <class Request> struct parsed final {
    std::optional<Request> request; ///< empty when only text is to be printed (exit 0)
    std::string text;               ///< --help output, when request is empty

    static parsed help(std::string t)
    {
        parsed p;
        p.text = std::move(t);
        return p;
    }
    static parsed of(Request r)
    {
        parsed p;
        p.request.emplace(std::move(r));
        return p;
    }
};

/** @brief "usage: @p usage", @p about and the options, as --help prints them. */
inline std::string help_text(const std::string& usage, const std::string& about,
                             const boost::program_options::options_description& desc)
{
    std::ostringstream o;
    o << "usage: " << usage << "\n\n" << about << "\n\n" << desc << '\n';
    return o.str();
}

/**
 * @brief parse, then execute, then present: the body of every `X_command(argc, argv)`.
 * @p out receives the --help text.
 */
template <class Parse, class Execute, class Present>
int run_steps(int argc, char** argv, Parse parse, Execute execute, Present present,
              std::ostream& out)
{
    auto p = parse(argc, argv);
    if (!p.request) {
        out << p.text;
        return 0;
    }
    return present(execute(*p.request), *p.request);
}

} // namespace irqloop::logger
