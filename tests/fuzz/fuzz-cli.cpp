// SPDX-License-Identifier: MIT
// libFuzzer target: the command line of every irqloop command, parse only. The input is one
// argument per line, the first the command's name (as `irqloop NAME ARGS...`). It calls the
// command's parse() directly (command.hpp; the list is logger::command_table(), the one
// logger/main.cpp dispatches through), which opens no file, device or thread; a refusal must
// be a Boost.Program_options error or an irqloop::error with status 2 (bad input).
#include "cli-main.hpp"
#include "command-table.hpp"
#include "error.hpp"
#include "fuzz-refusal.hpp"

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
    const logger::command_entry* c = nullptr;
    for (const auto& x : logger::command_table())
        if (args[0] == x.name)
            c = &x;
    if (!c)
        return -1; // not a command: keep out of the corpus
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    fuzz::refused_as_bad_input([&] { c->parse_only(static_cast<int>(args.size()), argv.data()); },
                               [&](const char* what) { bug(what, args); });
    return 0;
}
