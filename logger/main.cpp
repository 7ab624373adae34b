// SPDX-License-Identifier: MIT
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"

#include <cstdio>
#include <string_view>

namespace
{

struct command {
    const char* name;
    int (*main)(int, char**);
    const char* summary;
};

// Alphabetical; each command lives in logger/<name>-command.cpp.
constexpr command commands[] = {
    {"calibrate", irqloop::logger::calibrate_command,
     "measure the logger's own floor (output jumpered to input)"},
    {"campaign", irqloop::logger::campaign_command,
     "run the phases of an .ini file into one database, then compare"},
    {"check", irqloop::logger::check_command,
     "hold stored runs to limits (max, percentiles, lost); exit 3 on a FAIL"},
    {"compare", irqloop::logger::compare_command,
     "side-by-side table of runs or labels (published formats)"},
    {"doctor", irqloop::logger::doctor_command,
     "check that this machine is fit to log latency (preflight)"},
    {"export", irqloop::logger::export_command, "write runs as JSON or one table as CSV"},
    {"merge", irqloop::logger::merge_command,
     "copy the runs of other irqloop files into one (by uuid)"},
    {"plot", irqloop::logger::plot_command, "gnuplot histogram, timeline or tail CDF (SVG/PNG)"},
    {"report", irqloop::logger::report_command,
     "one run: metadata, summary, histogram, timeline, worst"},
    {"run", irqloop::logger::run_command, "measure latency through the wire (default: sim board)"},
    {"watch", irqloop::logger::watch_command, "live read-only view of the running run in a file"},
    {"worst", irqloop::logger::worst_command, "the worst samples across runs or within one"},
};

void usage(FILE* out)
{
    std::fprintf(out, "usage: irqloop <command> [options]\n\n"
                      "External interrupt-latency logger with a hardware loopback.\n\n"
                      "commands:\n");
    for (const auto& c : commands)
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
    for (const auto& c : commands)
        if (name == c.name)
            return irqloop::base::run_main(c.main, argc - 1, argv + 1, c.name);
    std::fprintf(stderr, "irqloop: unknown command '%s' (see 'irqloop --help')\n", argv[1]);
    return irqloop::exit_usage;
}
