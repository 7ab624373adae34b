// SPDX-License-Identifier: MIT
// `irqloop check`: hold stored runs to limits after the fact (a CI gate); exit 3 if any fails.
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "gates.hpp"
#include "selection.hpp"

#include <boost/program_options.hpp>

#include <cerrno>
#include <cstdio>

namespace irqloop::logger
{

int check_command(int argc, char** argv)
{
    namespace po = boost::program_options;
    selection_options sel;
    gate_limit_args lt;
    po::options_description desc("options");
    add_selection_options(desc, sel);
    add_gate_limit_options(desc, lt);
    if (!parse_reading_command(
            argc, argv, desc,
            "irqloop check [--db F] [--run ID | --label L | --last] [--max 100us] "
            "[--p 99.99=50us ...] [--lost 0] [--overflows 0]",
            "Hold the selected runs (default: every measurement run) to limits: one line per\n"
            "limit with the value, the limit and PASS or FAIL. Durations need a unit (100us).\n"
            "Exit status: 0 when every limit of every run passed, 3 when one failed, 2 for bad\n"
            "options or a selection that matches nothing, 1 when the file cannot be read.\n"
            "Docs: docs/commands/check.md"))
        return 0;
    const gate_limits limits = parse_gate_limits(lt);
    if (limits.empty())
        throw error("check", "no limit given", "give --max, --p, --lost or --overflows");
    base::options_parsed();
    db::catalog cat(db_paths_or_default(sel.dbs));
    const auto runs = cat.select(sel.sel);
    std::size_t failed = 0;
    std::string failed_names;
    for (const auto* r : runs) {
        const auto g = evaluate_gates(cat, *r, limits);
        std::printf("run %lld%s: %s, %llu samples%s: %s\n", static_cast<long long>(r->id),
                    r->meta.label.empty() ? "" : (" (" + r->meta.label + ")").c_str(),
                    std::string(db::to_text(r->status)).c_str(),
                    static_cast<unsigned long long>(r->summary.samples),
                    cat.paths().size() > 1 ? (" in " + r->db_path).c_str() : "",
                    g.pass() ? "PASS" : "FAIL");
        std::fputs(format_gate_lines(g).c_str(), stdout);
        if (!g.pass()) {
            ++failed;
            failed_names += (failed_names.empty() ? "" : ", ") + std::to_string(r->id);
        }
    }
    if (failed)
        std::printf("check: FAIL: %zu of %zu runs failed a limit (run %s)\n", failed, runs.size(),
                    failed_names.c_str());
    else
        std::printf("check: PASS: %zu run%s, every limit met\n", runs.size(),
                    runs.size() == 1 ? "" : "s");
    if (std::fflush(stdout) != 0)
        throw_from_errno(errno, "check: write to standard output", {}, exit_failure);
    return failed ? exit_gate_failed : 0;
}

} // namespace irqloop::logger
