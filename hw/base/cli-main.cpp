// SPDX-License-Identifier: MIT
#include "cli-main.hpp"

#include "error.hpp"
#include "version.hpp"

#include <boost/program_options/errors.hpp>
#include <cstdio>
#include <exception>
#include <string>

namespace irqloop::base
{

namespace
{

void complain(std::string_view command, const char* what, const std::string& hint)
{
    std::string where = program_name();
    if (!command.empty())
        where += ": " + std::string(command);
    std::fprintf(stderr, "%s: %s (%s)\n", where.c_str(), what, hint.c_str());
}

} // namespace

int run_main(int (*main)(int, char**), int argc, char** argv, std::string_view command) noexcept
{
    try {
        try {
            return main(argc, argv);
        } catch (const error& e) {
            print_error(e);
            return e.status();
        } catch (const boost::program_options::error& e) {
            std::string help = program_name();
            if (!command.empty())
                help += " " + std::string(command);
            complain(command, e.what(), "see '" + help + " --help'");
            return exit_usage;
        } catch (const std::exception& e) {
            complain(command, e.what(), "this is a bug; please report it");
            return exit_failure;
        }
    } catch (...) { // out of memory while reporting, or something not derived from std::exception
        std::fprintf(stderr, "%s: unexpected error (this is a bug; please report it)\n",
                     program_name().c_str());
        return exit_failure;
    }
}

void print_version()
{
    std::printf("%s %s\n", program_name().c_str(), irqloop::version);
}

} // namespace irqloop::base
