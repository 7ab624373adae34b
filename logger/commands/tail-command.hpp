// SPDX-License-Identifier: MIT
#pragma once
// `irqloop tail` as parse -> execute -> present (command.hpp): extreme-value estimates of a
// stored run's tail (logger/analysis/tail-fit.*, docs/methodology-tail.md).
#include "command.hpp"
#include "read.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "tail-fit.hpp"

#include <boost/program_options/options_description.hpp>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace irqloop::logger
{

struct tail_request final {
    selection_options sel;
    std::optional<std::int64_t> threshold_ns; ///< --threshold: overrides the automatic rule
    std::vector<std::int64_t> exceed_ns;      ///< --exceed X: P(latency > X), repeatable
    double confidence = 0.95;                 ///< --confidence
};

/** @brief One run's fit and the figures derived from it. */
struct tail_run_result final {
    const db::run_record* run = nullptr;
    analysis::tail_fit fit;
    double rate_per_s = 0;                        ///< samples per second over the run
    std::vector<analysis::tail_level> levels;     ///< 1e-6 ... 1e-12 per sample
    std::vector<analysis::tail_level> exceed;     ///< one per --exceed (or the observed max)
    analysis::gev_fit gev;                        ///< the second estimate, from the window maxima
    std::vector<analysis::tail_level> gev_levels; ///< 1e-6, 1e-9, 1e-12 per sample
};

struct tail_outcome final {
    std::unique_ptr<db::catalog> cat;
    std::vector<tail_run_result> runs;
};

/** @brief Check `irqloop tail`'s arguments into a request (pure). */
parsed<tail_request> parse_tail(int argc, char** argv);
/** @brief Read each selected run's histogram, exceedances and windows, and fit. */
tail_outcome execute_tail(const tail_request& r);
/** @brief Print every run's fit, levels, probabilities and checks; 0. */
int present_tail(const tail_outcome& o, const tail_request& r);

/** @brief One run's fit, levels, P(>X) and block-maxima fit, as `irqloop tail` makes them. */
tail_run_result fit_tail_run(db::catalog& cat, const db::run_record& run, const tail_request& r);

/**
 * @brief What `irqloop tail` prints of one run (report --tail prints it too): with_header, the
 * run's line (name, samples, rate, max) first.
 */
void print_tail_run(std::ostream& out, const tail_run_result& res, double confidence,
                    bool with_header);

/** @brief report's options --tail and --exceed X (repeatable; implies --tail). */
void add_tail_report_options(boost::program_options::options_description& desc, bool& tail,
                             std::vector<std::string>& exceed);
/** @brief The fit report --tail asks for (tail's defaults, --exceed's X), or none. */
std::optional<tail_request> tail_report_request(bool tail, const std::vector<std::string>& exceed);
/**
 * @brief report --tail's section: a heading, then what `irqloop tail` prints of the run but
 * its first line (as a code block in markdown, "# " lines in csv).
 */
void print_tail_section(std::ostream& out, table_format fmt, const tail_run_result& res,
                        double confidence);

/** @brief The tail data of one stored run, as analysis::fit_tail() reads it. */
analysis::tail_data read_tail_data(db::catalog& cat, const db::run_record& run);

/** @brief `irqloop tail`: parse, execute, present; returns the exit status. */
int tail_command(int argc, char** argv);

} // namespace irqloop::logger
