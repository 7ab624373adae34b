// SPDX-License-Identifier: MIT
#include "cli-main.hpp"

#include "error.hpp"
#include "version.hpp"

#include <boost/program_options/errors.hpp>
#include <boost/program_options/parsers.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
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

/**
 * Standard output flushed and checked: a lost write (a full disk, /dev/full, a closed pipe's
 * EPIPE) is a failure, never a silent success. Returns @p status, or exit_failure when the
 * output was lost and @p status was 0.
 */
int check_stdout(std::string_view command, int status)
{
    errno = 0;
    std::cout.flush();
    int err = errno;
    bool lost = !std::cout.good();
    if (std::fflush(stdout) != 0) {
        lost = true;
        err = errno;
    }
    if (std::ferror(stdout))
        lost = true;
    if (!lost)
        return status;
    std::string where = program_name();
    if (!command.empty())
        where += ": " + std::string(command);
    // A failed write earlier (a full stdio buffer) leaves the error flag; its errno is gone.
    std::fprintf(stderr, "%s: write to standard output: %s (%s)\n", where.c_str(),
                 err ? std::strerror(err) : "the output was lost",
                 "check the file, disk or device standard output goes to: is it full?");
    std::clearerr(stdout);
    std::cout.clear();
    return status == exit_ok ? exit_failure : status;
}

} // namespace

int run_main(int (*main)(int, char**), int argc, char** argv, std::string_view command) noexcept
{
    try {
        try {
            return check_stdout(command, main(argc, argv));
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

boost::program_options::variables_map
parse_options(int argc, char** argv, const boost::program_options::options_description& options,
              const boost::program_options::positional_options_description& positional)
{
    namespace po = boost::program_options;
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(),
              vm);
    return vm;
}

} // namespace irqloop::base
