// SPDX-License-Identifier: MIT
#include "command-table.hpp"

#include "campaign-command.hpp"
#include "check-command.hpp"
#include "compare-command.hpp"
#include "doctor-command.hpp"
#include "explain-command.hpp"
#include "export-command.hpp"
#include "merge-command.hpp"
#include "plot-command.hpp"
#include "report-command.hpp"
#include "run-command.hpp"
#include "tail-command.hpp"
#include "verify-command.hpp"
#include "watch-command.hpp"
#include "worst-command.hpp"

namespace irqloop::logger
{
namespace
{

template <auto Parse> void parse_only(int argc, char** argv)
{
    (void)Parse(argc, argv);
}

// Alphabetical; each command lives in logger/commands/<name>-command.cpp.
constexpr command_entry commands[] = {
    {"calibrate", calibrate_command, parse_only<parse_calibrate>,
     "measure the logger's own floor (output jumpered to input)"},
    {"campaign", campaign_command, parse_only<parse_campaign>,
     "run the phases of an .ini file into one database, then compare"},
    {"check", check_command, parse_only<parse_check>,
     "hold stored runs to limits (max, percentiles, lost); exit 3 on a FAIL"},
    {"compare", compare_command, parse_only<parse_compare>,
     "side-by-side table of runs, labels or target info keys (published formats)"},
    {"doctor", doctor_command, parse_only<parse_doctor>,
     "check that this machine is fit to log latency (preflight)"},
    {"explain", explain_command, parse_only<parse_explain>,
     "where a run's worst samples spent their time, from the target's kernel trace"},
    {"export", export_command, parse_only<parse_export>,
     "write runs as json, csv, cyclictest-hist, rt-tests-json, prometheus, junit, lava, "
     "osadl-rtdataset, rtla-timerlat-hist or vcd"},
    {"merge", merge_command, parse_only<parse_merge>,
     "copy the runs of other irqloop files into one (by uuid)"},
    {"plot", plot_command, parse_only<parse_plot>,
     "gnuplot histogram, timeline, tail CDF, heatmap or long-term (SVG/PNG)"},
    {"report", report_command, parse_only<parse_report>,
     "one run: metadata, summary, histogram, timeline, worst"},
    {"run", run_command, parse_only<parse_run>,
     "measure latency through the wire (default: sim board)"},
    {"tail", tail_command, parse_only<parse_tail>,
     "extreme-value tail estimates with intervals and checks (return levels, P(>X))"},
    {"verify", verify_command, parse_only<parse_verify>,
     "a run against a logic analyzer's capture (sigrok .sr or VCD)"},
    {"watch", watch_command, parse_only<parse_watch>,
     "live read-only view of the running run in a file"},
    {"worst", worst_command, parse_only<parse_worst>,
     "the worst samples across runs or within one"},
};

} // namespace

std::span<const command_entry> command_table() noexcept
{
    return commands;
}

} // namespace irqloop::logger
