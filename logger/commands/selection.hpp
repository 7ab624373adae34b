// SPDX-License-Identifier: MIT
#pragma once

#include "command.hpp"
#include "read.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include <optional>
#include <string>
#include <vector>

/**
 * The command-line half of reading: the options every reading command shares. What they
 * select is decided by db::catalog::select (see db::run_selector for the rules).
 */
namespace irqloop::logger
{

/** @brief The database and selection options every reading command shares. */
struct selection_options final {
    std::vector<std::string> dbs; ///< --db and bare arguments
    db::run_selector sel;         ///< --run, --label, --last
};

/** @brief @p dbs (from --db and positional files), or {"irqloop.db"} when empty. */
std::vector<std::string> db_paths_or_default(std::vector<std::string> dbs);

/**
 * @brief Register --help, --db (repeatable), --run (repeatable), --label (repeatable) and
 *        --last on @p desc, storing into @p o. Help texts name the defaults.
 */
void add_selection_options(boost::program_options::options_description& desc, selection_options& o);

/** @brief How a reading command takes bare arguments. */
enum class bare_arguments { db_files, refused };

/**
 * @brief Parse a reading command's arguments against @p desc and notify its values, for a
 * command's parse() (command.hpp). Bare arguments count as --db files (or are refused).
 * nullopt when --help was given (the caller returns its help_text()). Prints nothing.
 */
std::optional<boost::program_options::variables_map>
parse_reading_options(int argc, char** argv,
                      const boost::program_options::options_description& desc,
                      bare_arguments bare = bare_arguments::db_files);

/** @brief What a command's --help says above its options (help_text()). */
struct command_help final {
    const char* usage; ///< after "usage: "
    const char* about;
};

/**
 * @brief The parse() of a reading command (command.hpp) whose options in @p desc are bound to
 * @p r: parse_reading_options(), then @p check() (the values kept as text, checked into
 * @p r), then the default file (db_paths_or_default). With --help, only the help text.
 */
template <class Request, class Check>
parsed<Request> parse_reading(int argc, char** argv,
                              const boost::program_options::options_description& desc,
                              const command_help& help, Request& r, Check&& check,
                              bare_arguments bare = bare_arguments::db_files)
{
    if (!parse_reading_options(argc, argv, desc, bare))
        return parsed<Request>::help(help_text(help.usage, help.about, desc));
    check();
    r.sel.dbs = db_paths_or_default(r.sel.dbs);
    return parsed<Request>::of(std::move(r));
}

/**
 * @brief parse_reading() for a command whose option table is a function (command.hpp):
 * @p add registers the options on a fresh table, bound to a Request and to its Texts (the
 * values kept as text until they are checked), then @p check checks the Texts into the
 * Request.
 */
template <class Request, class Texts>
parsed<Request> parse_reading_table(int argc, char** argv, const command_help& help,
                                    void (*add)(boost::program_options::options_description&,
                                                Request&, Texts&),
                                    void (*check)(Request&, const Texts&),
                                    bare_arguments bare = bare_arguments::db_files)
{
    Request r;
    Texts t;
    boost::program_options::options_description desc("options");
    add(desc, r, t);
    const auto check_texts = [&] { check(r, t); };
    return parse_reading(argc, argv, desc, help, r, check_texts, bare);
}

} // namespace irqloop::logger
