// SPDX-License-Identifier: MIT
#pragma once
// `irqloop merge` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "merge.hpp"

#include <string>
#include <vector>

namespace irqloop::logger
{

struct merge_request final {
    std::string dst = "irqloop.db";   ///< --db: the destination, created if missing
    std::vector<std::string> sources; ///< at least one, none empty; never written
};

struct merge_outcome final {
    std::vector<db::merge_result> results; ///< one per source, in request order
};

parsed<merge_request> parse_merge(int argc, char** argv);
/**
 * @brief Check every source, then merge them into the destination, each in one transaction.
 * A destination this merge created is removed again when it fails.
 */
merge_outcome execute_merge(const merge_request& r);
/** @brief One line per source: what was copied and skipped. */
int present_merge(const merge_outcome& o, const merge_request& r);

/** @brief `irqloop merge`: parse, execute, present; returns the exit status. */
int merge_command(int argc, char** argv);

} // namespace irqloop::logger
