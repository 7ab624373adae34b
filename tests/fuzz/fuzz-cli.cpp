// SPDX-License-Identifier: MIT
// libFuzzer target: the command line of every irqloop command, parse only. The input is one
// argument per line, the first the command's name (as `irqloop NAME ARGS...`). Each command
// stops at base::options_parsed(), before it opens a file, a device or a thread; a refusal
// must be a Boost.Program_options error or an irqloop::error with status 2 (bad input).
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"

#include <boost/program_options/errors.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

using namespace irqloop;

namespace
{

struct command {
    const char* name;
    int (*main)(int, char**);
};

// Every command of logger/main.cpp (fuzz-cli's CTest test checks the list against --help).
constexpr command commands[] = {
    {"calibrate", logger::calibrate_command}, {"campaign", logger::campaign_command},
    {"check", logger::check_command},         {"compare", logger::compare_command},
    {"doctor", logger::doctor_command},       {"export", logger::export_command},
    {"merge", logger::merge_command},         {"plot", logger::plot_command},
    {"report", logger::report_command},       {"run", logger::run_command},
    {"watch", logger::watch_command},         {"worst", logger::worst_command},
};

[[noreturn]] void bug(const char* what, const std::vector<std::string>& args)
{
    std::fprintf(stderr, "fuzz-cli: %s for:", what);
    for (const auto& a : args)
        std::fprintf(stderr, " '%s'", a.c_str());
    std::fprintf(stderr, "\n");
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    base::stop_after_parsing(true);
    set_program_name("irqloop");
    // --help texts go nowhere. (No chdir to a scratch directory: libFuzzer reads the corpus
    // and writes artifacts by the paths it was given, relative ones included.)
    const int null = ::open("/dev/null", O_WRONLY);
    if (null < 0 || ::dup2(null, STDOUT_FILENO) < 0)
        std::abort();
    ::close(null);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::vector<std::string> args;
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        args.emplace_back(rest.substr(0, nl));
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    if (args.empty())
        return 0;
    const command* c = nullptr;
    for (const auto& x : commands)
        if (args[0] == x.name)
            c = &x;
    if (!c)
        return -1; // not a command: keep out of the corpus
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    try {
        c->main(static_cast<int>(args.size()), argv.data());
    } catch (const base::parsing_done&) {
    } catch (const boost::program_options::error&) {
    } catch (const error& e) {
        if (e.status() != exit_usage)
            bug("a command-line refusal that is not bad input (status 2)", args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz-cli: %s\n", e.what());
        bug("a non-irqloop exception (run_main would call it a bug)", args);
    }
    return 0;
}
