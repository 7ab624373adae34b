// SPDX-License-Identifier: MIT
// irqloop worst: the worst samples across runs or within one.
#include "commands.hpp"
#include "error.hpp"
#include "selection.hpp"
#include "table.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>

namespace irqloop::logger
{

int worst_command(int argc, char** argv)
{
    namespace po = boost::program_options;
    selection_options sel;
    std::string unit = "us", fmt = "text";
    std::size_t top = 20;
    po::options_description desc("options");
    add_selection_options(desc, sel);
    auto add = desc.add_options();
    add("top", po::value(&top)->default_value(top),
        "samples to list (each run keeps its top-K, --top-k of 'irqloop run', default 1000)");
    add("unit", po::value(&unit)->default_value(unit), "latency unit: ns or us");
    add("format", po::value(&fmt)->default_value(fmt), "table format: text, markdown or csv");
    po::variables_map vm = parse_selection_command(argc, argv, desc);
    if (vm.count("help")) {
        print_command_help(
            "irqloop worst [--db F ...] [--top 20] [--run ID] [--label L] [--last]",
            "List the worst samples of the selected runs (default: every measurement\n"
            "run of the file(s)), worst first, with the logger's wall-clock time.",
            desc);
        return 0;
    }
    po::notify(vm);
    const auto u = parse_latency_unit(unit);
    const auto f = parse_table_format(fmt);
    if (top == 0)
        throw error("bad --top", "0 samples", "give at least 1");
    db::catalog cat(db_paths_or_default(sel.dbs));
    const auto runs = cat.select(sel.sel);

    struct hit {
        const db::run_record* run;
        db::sample_row s;
    };
    std::vector<hit> hits;
    for (const auto* r : runs)
        for (const auto& s : cat.worst(*r, top))
            hits.push_back({r, s});
    // Ties keep catalog (start) order, then seq: the same database always prints the same list.
    std::stable_sort(hits.begin(), hits.end(),
                     [](const hit& a, const hit& b) { return a.s.latency_ns > b.s.latency_ns; });
    if (hits.size() > top)
        hits.resize(top);

    const bool many_files = cat.paths().size() > 1;
    const std::string us = std::string(" (") + unit_name(u) + ")";
    table t;
    t.add_column("rank");
    t.add_column("run");
    t.add_column("label", table::align::left);
    t.add_column("seq");
    t.add_column("time (UTC)", table::align::left);
    t.add_column("latency" + us);
    t.add_column("gap" + us);
    t.add_column("edge", table::align::left);
    t.add_column("flags", table::align::left);
    if (many_files)
        t.add_column("file", table::align::left);
    for (std::size_t i = 0; i < hits.size(); ++i) {
        const auto& [r, s] = hits[i];
        std::string flags;
        if (s.flags & db::flag_disturbed)
            flags += "disturbed ";
        if (s.flags & db::flag_warmup)
            flags += "warmup ";
        if (r->partial())
            flags += "partial-run ";
        if (!flags.empty())
            flags.pop_back();
        std::vector<std::string> row{std::to_string(i + 1),
                                     std::to_string(r->id),
                                     r->meta.label,
                                     std::to_string(s.seq),
                                     format_utc(s.unix_ns, 6),
                                     format_latency(double(s.latency_ns), u),
                                     format_latency(double(s.gap_ns), u),
                                     (s.flags & db::flag_rising) ? "rising" : "falling",
                                     flags};
        if (many_files)
            row.push_back(r->db_path);
        t.add_row(std::move(row));
    }
    t.print(std::cout, f);
    if (hits.empty())
        std::cerr << "irqloop: worst: the selected runs have no samples yet\n";
    return 0;
}

} // namespace irqloop::logger
