// SPDX-License-Identifier: MIT
#pragma once
// `irqloop plot` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "selection.hpp"
#include "table.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace irqloop::logger
{

enum class plot_kind { histogram, timeline, cdf, heatmap, long_term, tail };

struct plot_request final {
    selection_options sel; ///< dbs already defaulted (db_paths_or_default)
    plot_kind kind = plot_kind::histogram;
    std::string output; ///< *.svg or *.png; "irqloop-plot.svg" for --script without -o
    int width = 900, height = 600;
    latency_unit unit = latency_unit::us;
    std::int64_t bin_ns = 0;          ///< histogram: 0 for a 1-2-5 width of at most 400 bins
    std::string title;                ///< empty: says what is plotted
    bool linear = false;              ///< timeline, long-term: a linear latency axis
    bool logx = false;                ///< histogram, cdf: a log latency axis
    std::size_t max_points = 100'000; ///< timeline: exceedances drawn per run, at most
    bool print_script = false;        ///< --script: print the script, run no gnuplot
    std::string data_path;            ///< --data (heatmap, long-term); "-" for stdout
};

/**
 * What execute_plot() read: the plot as a gnuplot script, but for its first lines (terminal and
 * output file, which present_plot() puts in front: the picture is drawn to a temporary file
 * first), the rows --data writes, and the notes for stderr about runs it could not draw.
 */
struct plot_outcome final {
    std::string body;                   ///< the script after `set output`
    std::string data_header;            ///< heatmap, long-term: the --data header
    std::vector<std::string> data_rows; ///< tab-separated, one per drawn cell or point
    std::vector<std::string> notes;     ///< one line each, for stderr
    std::size_t runs = 0;               ///< the runs selected
};

/** @brief Pure: reads and checks the arguments; --help returns its text. */
parsed<plot_request> parse_plot(int argc, char** argv);
/** @brief Reads the selected runs into the plot's script and data. */
plot_outcome execute_plot(const plot_request& r);
/** @brief Prints the script, or draws it with gnuplot into --output; writes --data; 0. */
int present_plot(const plot_outcome& o, const plot_request& r);

/** @brief `irqloop plot`: parse, execute, present; returns the exit status. */
int plot_command(int argc, char** argv);

} // namespace irqloop::logger
