// SPDX-License-Identifier: MIT
// `irqloop check`: hold stored runs to limits after the fact (a CI gate); exit 3 if any fails.
#include "check-command.hpp"

#include "error.hpp"

#include <boost/program_options.hpp>

#include <cerrno>
#include <cstdio>
#include <iostream>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

constexpr command_help check_help = {
    "irqloop check [--db F] [--run ID | --label L | --last] [--max 100us] "
    "[--p 99.99=50us ...] [--p-exceed 100us=1e-9 ...] [--lost 0] [--overflows 0]",
    "Hold the selected runs (default: every measurement run) to limits: one line per\n"
    "limit with the value, the limit and PASS or FAIL. Durations need a unit (100us).\n"
    "A run that did not end complete, or has no sample, fails whatever its limits, as\n"
    "the CI exports fail it. Exit status: 0 when every run passed; else the first failed\n"
    "run's: 1 when it did not end complete, 4 when it has no sample, 3 when a limit\n"
    "failed; 2 for bad options, a selection that matches nothing, or a --p-exceed whose\n"
    "tail fit's checks do not allow the claim (irqloop tail shows them).\n"
    "Docs: docs/commands/check.md"};

} // namespace

parsed<check_request> parse_check(int argc, char** argv)
{
    check_request r;
    gate_limit_args lt;
    po::options_description desc("options");
    add_selection_options(desc, r.sel);
    add_gate_limit_options(desc, lt);
    return parse_reading(argc, argv, desc, check_help, r, [&] {
        r.limits = parse_gate_limits(lt);
        if (r.limits.empty())
            throw error("check", "no limit given",
                        "give --max, --p, --p-exceed, --lost or --overflows");
    });
}

check_outcome execute_check(const check_request& r)
{
    check_outcome o;
    o.cat = std::make_unique<db::catalog>(r.sel.dbs);
    for (const auto* run : o.cat->select(r.sel.sel)) {
        o.runs.push_back({run, evaluate_gates(*o.cat, *run, r.limits)});
        // A probability the run's tail fit cannot claim is no verdict at all: refused (2).
        throw_if_refused(o.runs.back().gates, "run " + std::to_string(run->id));
    }
    return o;
}

int present_check(const check_outcome& o, const check_request&)
{
    std::size_t failed = 0;
    std::string failed_names;
    int status = exit_ok;
    for (const auto& [r, g] : o.runs) {
        // As run_return_code() of the CI exports: a run that cannot pass fails with its own
        // status (1 unfinished, 4 no sample) before its limits are looked at.
        const std::string why = run_unfinished_reason(*r);
        const int st = !why.empty() ? run_unfinished_status(*r)
                       : g.pass()   ? exit_ok
                                    : exit_gate_failed;
        std::printf("run %lld%s: %s, %llu samples%s: %s\n", static_cast<long long>(r->id),
                    r->meta.label.empty() ? "" : (" (" + message_text(r->meta.label) + ")").c_str(),
                    std::string(db::to_text(r->status)).c_str(),
                    static_cast<unsigned long long>(r->summary.samples),
                    o.cat->paths().size() > 1 ? (" in " + r->db_path).c_str() : "",
                    st == exit_ok ? "PASS" : "FAIL");
        std::fputs(format_gate_lines(g).c_str(), stdout);
        if (!why.empty())
            std::printf("  run cannot pass: it %s\n", why.c_str());
        if (st != exit_ok) {
            if (status == exit_ok)
                status = st;
            ++failed;
            failed_names += (failed_names.empty() ? "" : ", ") + std::to_string(r->id);
        }
    }
    if (failed)
        std::printf("check: FAIL: %zu of %zu runs failed (run %s)\n", failed, o.runs.size(),
                    failed_names.c_str());
    else
        std::printf("check: PASS: %zu run%s, every limit met\n", o.runs.size(),
                    o.runs.size() == 1 ? "" : "s");
    if (std::fflush(stdout) != 0)
        throw_from_errno(errno, "check: write to standard output", {}, exit_failure);
    return status;
}

int check_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_check, execute_check, present_check, std::cout);
}

} // namespace irqloop::logger
