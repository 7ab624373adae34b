// SPDX-License-Identifier: MIT
// irqloop worst: the worst samples across runs or within one.
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "units.hpp"
#include "worst-table.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>

namespace irqloop::logger
{

int worst_command(int argc, char** argv)
{
    namespace po = boost::program_options;
    selection_options sel;
    std::string unit = "us", fmt = "text", top_text = "20";
    po::options_description desc("options");
    add_selection_options(desc, sel);
    auto add = desc.add_options();
    add("top", po::value(&top_text)->default_value(top_text),
        "samples to list, 1 to 1M (each run keeps its top-K, --top-k of 'irqloop run', default "
        "1000)");
    add("unit", po::value(&unit)->default_value(unit), "latency unit: ns or us");
    add("format", po::value(&fmt)->default_value(fmt), "table format: text, markdown or csv");
    if (!parse_reading_command(
            argc, argv, desc,
            "irqloop worst [--db F ...] [--top 20] [--run ID] [--label L] [--last]",
            "List the worst samples of the selected runs (default: every measurement\n"
            "run of the file(s)), worst first, with the logger's wall-clock time."))
        return 0;
    const auto u = parse_latency_unit(unit);
    const auto f = parse_table_format(fmt);
    const std::size_t top = parse_count_in(top_text, "--top", 1, 1'000'000);
    base::options_parsed();
    db::catalog cat(db_paths_or_default(sel.dbs));
    const auto runs = cat.select(sel.sel);

    std::vector<worst_entry> hits;
    for (const auto* r : runs)
        for (const auto& s : cat.worst(*r, top))
            hits.push_back({r, s});
    // By what each sample proves (a disturbed one by its bracket's lower bound), as each run's
    // recorder ranked them. Ties keep catalog (start) order, then seq: the same database
    // always prints the same list.
    std::stable_sort(hits.begin(), hits.end(), [](const worst_entry& a, const worst_entry& b) {
        const std::int64_t ra = db::rank_ns(a.sample), rb = db::rank_ns(b.sample);
        return ra != rb ? ra > rb : a.sample.latency_ns > b.sample.latency_ns;
    });
    if (hits.size() > top)
        hits.resize(top);
    print_worst_table(
        hits, cat.paths().size() > 1 ? worst_columns::with_run_file : worst_columns::with_run, u, f,
        std::cout);
    if (hits.empty())
        std::cerr << "irqloop: worst: the selected runs have no samples yet\n";
    return 0;
}

} // namespace irqloop::logger
