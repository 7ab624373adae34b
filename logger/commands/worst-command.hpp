// SPDX-License-Identifier: MIT
#pragma once
// `irqloop worst` as parse -> execute -> present (command.hpp).
#include "command.hpp"
#include "selection.hpp"
#include "table.hpp"
#include "worst-table.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace irqloop::logger
{

struct worst_request final {
    selection_options sel;
    latency_unit unit = latency_unit::us;
    table_format format = table_format::text;
    std::size_t top = 20;
};

struct worst_outcome final {
    std::unique_ptr<db::catalog> cat;        ///< the files read; hits point into it
    std::vector<worst_entry> hits;           ///< worst first, at most top
    std::vector<const db::run_record*> runs; ///< the runs searched, as selected (the header)
};

/** @brief Check `irqloop worst`'s arguments against its option table into a request (pure). */
parsed<worst_request> parse_worst(int argc, char** argv);
worst_outcome execute_worst(const worst_request& r);
int present_worst(const worst_outcome& o, const worst_request& r);

/** @brief `irqloop worst`: parse, execute, present; returns the exit status. */
int worst_command(int argc, char** argv);

} // namespace irqloop::logger
