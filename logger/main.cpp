// SPDX-License-Identifier: MIT
#include "cli-main.hpp"
#include "command-table.hpp"
#include "error.hpp"

#include <cstdio>
#include <string_view>

namespace
{

void usage(FILE* out)
{
    std::fprintf(out, "usage: irqloop <command> [options]\n\n"
                      "External interrupt-latency logger with a hardware loopback.\n\n"
                      "commands:\n");
    for (const auto& c : irqloop::logger::command_table())
        std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
    std::fprintf(out, "\n'irqloop <command> --help' shows each command's options.\n"
                      "Docs: docs/ in the source tree.\n");
}

} // namespace

int main(int argc, char** argv)
{
    irqloop::set_program_name("irqloop");
    if (argc < 2) {
        usage(stderr);
        return irqloop::exit_usage;
    }
    std::string_view name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        usage(stdout);
        return irqloop::exit_ok;
    }
    if (name == "--version") {
        irqloop::base::print_version();
        return irqloop::exit_ok;
    }
    for (const auto& c : irqloop::logger::command_table())
        if (name == c.name)
            return irqloop::base::run_main(c.main, argc - 1, argv + 1, c.name);
    std::fprintf(stderr, "irqloop: unknown command '%s' (see 'irqloop --help')\n", argv[1]);
    return irqloop::exit_usage;
}
