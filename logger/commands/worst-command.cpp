// SPDX-License-Identifier: MIT
// irqloop worst: the worst samples across runs or within one.
#include "worst-command.hpp"

#include "breakdown-store.hpp"
#include "error.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>
#include <map>

namespace irqloop::logger
{

namespace
{

namespace po = boost::program_options;

constexpr command_help worst_help = {
    "irqloop worst [--db F ...] [--top 20] [--run ID] [--label L] [--last]",
    "List the worst samples of the selected runs (default: every measurement\n"
    "run of the file(s)), worst first, with the logger's wall-clock time."};

} // namespace

parsed<worst_request> parse_worst(int argc, char** argv)
{
    worst_request r;
    std::string unit = "us", fmt = "text", top_text = "20";
    po::options_description desc("options");
    add_selection_options(desc, r.sel);
    auto add = desc.add_options();
    add("top", po::value(&top_text)->default_value(top_text),
        "samples to list, 1 to 1M (each run keeps its top-K, --top-k of 'irqloop run', default "
        "1000)");
    add("unit", po::value(&unit)->default_value(unit), "latency unit: ns or us");
    add("format", po::value(&fmt)->default_value(fmt), "table format: text, markdown or csv");
    return parse_reading(argc, argv, desc, worst_help, r, [&] {
        r.unit = parse_latency_unit(unit);
        r.format = parse_table_format(fmt);
        r.top = parse_count_in(top_text, "--top", 1, 1'000'000);
    });
}

worst_outcome execute_worst(const worst_request& r)
{
    worst_outcome o;
    o.cat = std::make_unique<db::catalog>(r.sel.dbs);
    o.runs = o.cat->select(r.sel.sel);
    for (const auto* run : o.runs)
        for (const auto& s : o.cat->worst(*run, r.top))
            o.hits.push_back({run, s});
    // By what each sample proves (a disturbed one by its bracket's lower bound), as each run's
    // recorder ranked them. Ties keep catalog (start) order, then seq: the same database
    // always prints the same list.
    std::stable_sort(o.hits.begin(), o.hits.end(), [](const worst_entry& a, const worst_entry& b) {
        const std::int64_t ra = db::rank_ns(a.sample), rb = db::rank_ns(b.sample);
        return ra != rb ? ra > rb : a.sample.latency_ns > b.sample.latency_ns;
    });
    if (o.hits.size() > r.top)
        o.hits.resize(r.top);
    // What the runs' stored facts say of each disturbed sample listed.
    std::map<const db::run_record*, std::vector<db::interval_row>> windows;
    for (auto& h : o.hits)
        if (h.sample.flags & db::flag_disturbed) {
            auto it = windows.find(h.run);
            if (it == windows.end())
                it = windows.emplace(h.run, o.cat->intervals(*h.run)).first;
            h.cause = disturbed_cause(*h.run, h.sample, it->second);
        }
    // What irqloop explain --store kept of each listed sample: the why column.
    std::map<const db::run_record*, std::map<std::uint64_t, analysis::stored_breakdown>> kept;
    for (auto& h : o.hits) {
        auto it = kept.find(h.run);
        if (it == kept.end())
            it = kept.emplace(h.run, analysis::read_breakdowns(h.run->db_path, h.run->id)).first;
        if (const auto b = it->second.find(h.sample.seq); b != it->second.end())
            h.why = analysis::why_text(b->second);
    }
    return o;
}

int present_worst(const worst_outcome& o, const worst_request& r)
{
    // The header: each run's max and lost answers, which the list of answered samples cannot
    // show (a lost answer has no latency to rank). CSV keeps the table first, these lines after
    // it as comments, as compare's notes.
    const bool csv = r.format == table_format::csv;
    auto header = [&] {
        for (const auto* run : o.runs)
            print_note(std::cout, r.format, run_max_line(*run, r.unit));
    };
    if (!csv) {
        header();
        if (r.format == table_format::text && !o.runs.empty())
            std::cout << '\n';
    }
    print_worst_table(
        o.hits, o.cat->paths().size() > 1 ? worst_columns::with_run_file : worst_columns::with_run,
        r.unit, r.format, std::cout);
    if (csv)
        header();
    if (o.hits.empty())
        std::cerr << "irqloop: worst: the selected runs have no samples yet\n";
    return 0;
}

int worst_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_worst, execute_worst, present_worst, std::cout);
}

} // namespace irqloop::logger
