// SPDX-License-Identifier: MIT
// `irqloop doctor`: the preflight checks of the logger machine, one line each.
#include "doctor-command.hpp"

#include "cli-main.hpp"
#include "error.hpp"

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace po = boost::program_options;

namespace irqloop::logger
{

parsed<doctor_request> parse_doctor(int argc, char** argv)
{
    doctor_request r;
    preflight_options& o = r.preflight;
    po::options_description d(
        "irqloop doctor: check that this machine is fit to log latency: each check "
        "reads OK, WARN or FAIL with a one-line hint.\n\nusage: irqloop doctor [--cpu "
        "N]\n\noptions");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("cpu,a", po::value(&o.cpu)->default_value(o.cpu), "the sampler CPU (as run --cpu); -1 = not pinned: per-CPU checks cover every online CPU")
        ("root", po::value(&o.root)->default_value(o.root), "read sys/, proc/ and dev/ below this directory (a saved or fake tree)")
        ("busy-window", po::value(&o.busy_window_ms)->default_value(o.busy_window_ms), "ms to watch an SMT sibling for load");
    // clang-format on
    // No bare words: a stray one is refused, never dropped.
    auto vm = base::parse_options(argc, argv, d);
    if (vm.count("help")) {
        std::ostringstream help;
        help << d
             << "\nExit status: 0 when no check FAILs, 3 when one does (a FAIL means the figures "
                "would be wrong),\n2 for bad options.\nDocs: docs/commands/doctor.md\n";
        return parsed<doctor_request>::help(help.str());
    }
    po::notify(vm);
    if (o.cpu < -1)
        throw error("bad value for --cpu", "'" + std::to_string(o.cpu) + "'",
                    "give a CPU number, or -1");
    if (o.busy_window_ms < 0 || o.busy_window_ms > 10000)
        throw error("bad value for --busy-window", "'" + std::to_string(o.busy_window_ms) + "'",
                    "use 0 to 10000 ms");
    return parsed<doctor_request>::of(std::move(r));
}

doctor_outcome execute_doctor(const doctor_request& r)
{
    return {run_preflight(r.preflight)};
}

int present_doctor(const doctor_outcome& o, const doctor_request& r)
{
    const int cpu = r.preflight.cpu;
    std::printf("irqloop doctor: sampler %s\n",
                cpu < 0 ? "not pinned" : ("cpu" + std::to_string(cpu)).c_str());
    std::fputs(format_preflight(o.checks).c_str(), stdout);
    if (std::fflush(stdout) != 0)
        throw_from_errno(errno, "doctor: write to standard output", {}, exit_failure);
    return worst_level(o.checks) == check_level::fail ? 3 : 0;
}

int doctor_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_doctor, execute_doctor, present_doctor, std::cout);
}

} // namespace irqloop::logger
