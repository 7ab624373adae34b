// SPDX-License-Identifier: MIT
#pragma once
// The one table of the percentiles every run stores (summary_row) and every reader shows:
// report, compare, export, check and run's gates, the recorder and the metrics file.
#include "rows.hpp"

#include <array>
#include <cstdint>

namespace irqloop::db
{

/** @brief One stored percentile: its rank, its names and its field of summary_row. */
struct stored_percentile final {
    double rank;       ///< 99.99
    const char* label; ///< "p99.99", as tables and gates print it
    const char* key;   ///< "p9999", the stem of the column (p9999_ns) and of JSON keys
    std::int64_t summary_row::*field;
};

/** @brief p50, p99, p99.9, p99.99 and p99.9999, in that order. */
inline constexpr std::array<stored_percentile, 5> stored_percentiles{{
    {50, "p50", "p50", &summary_row::p50_ns},
    {99, "p99", "p99", &summary_row::p99_ns},
    {99.9, "p99.9", "p999", &summary_row::p999_ns},
    {99.99, "p99.99", "p9999", &summary_row::p9999_ns},
    {99.9999, "p99.9999", "p999999", &summary_row::p999999_ns},
}};

/** @brief The stored percentile of rank @p rank, or nullptr (a rank no run stores). */
constexpr const stored_percentile* find_stored_percentile(double rank) noexcept
{
    for (const auto& p : stored_percentiles)
        if (p.rank == rank)
            return &p;
    return nullptr;
}

} // namespace irqloop::db
