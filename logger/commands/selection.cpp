// SPDX-License-Identifier: MIT
#include "selection.hpp"

#include "cli-main.hpp"
#include "command.hpp"
#include "error.hpp"

#include <boost/program_options.hpp>

namespace irqloop::logger
{

std::vector<std::string> db_paths_or_default(std::vector<std::string> dbs)
{
    for (const auto& p : dbs)
        if (p.empty())
            throw error("bad value for --db", "an empty path",
                        "give the results file, e.g. --db irqloop.db");
    if (dbs.empty())
        dbs.push_back("irqloop.db");
    return dbs;
}

void add_selection_options(boost::program_options::options_description& desc, selection_options& o)
{
    namespace po = boost::program_options;
    auto add = desc.add_options();
    add("help,h", "show this help");
    add("db", po::value(&o.dbs)->composing(),
        "database file; repeat to combine files (default: irqloop.db)");
    add("run", po::value(&o.sel.runs)->composing(),
        "run id, or uuid (a unique prefix of >= 4 characters will do); repeatable");
    add("label", po::value(&o.sel.labels)->composing(), "every run with this label; repeatable");
    add("last", po::bool_switch(&o.sel.last),
        "only the most recently started of the selected runs");
}

std::optional<boost::program_options::variables_map>
parse_reading_options(int argc, char** argv,
                      const boost::program_options::options_description& desc, bare_arguments bare)
{
    namespace po = boost::program_options;
    po::positional_options_description pos;
    if (bare == bare_arguments::db_files)
        pos.add("db", -1);
    auto vm = base::parse_options(argc, argv, desc, pos);
    if (vm.count("help"))
        return std::nullopt;
    po::notify(vm);
    return vm;
}

} // namespace irqloop::logger
