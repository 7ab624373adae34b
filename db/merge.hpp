// SPDX-License-Identifier: MIT
#pragma once

#include "store.hpp"

#include <cstdint>
#include <string>

namespace irqloop::db
{

/** @brief What merge_into() did, run by run. */
struct merge_result final {
    std::uint64_t copied = 0;          ///< runs copied, under new ids
    std::uint64_t already_present = 0; ///< runs whose uuid @p dst already holds: skipped
    std::uint64_t still_running = 0;   ///< runs marked running in the source: skipped
};

/**
 * @brief Copy the runs of another irqloop file into @p dst, with every row that belongs to them
 * (metadata, intervals, histogram, worst, exceedances, events, raw samples).
 *
 * Runs are matched by uuid, so merging the same file twice copies nothing the second time, and
 * runs recorded on different machines never clash: each copied run gets a fresh id in @p dst.
 * Runs still marked 'running' in the source are skipped; open the source once for writing
 * (which marks dead runs interrupted) or wait for its logger to finish, then merge again.
 * The whole merge is one transaction.
 *
 * @param dst A store opened read_write.
 * @param src_path The other file. It is validated like store(src_path, read_only) (refusing
 *        non-irqloop, newer, older and corrupt files) and never written.
 * @throws irqloop::error on a refused source, on @p src_path being @p dst itself, or on a
 *         failed write (then @p dst is unchanged).
 */
merge_result merge_into(store& dst, const std::string& src_path);

} // namespace irqloop::db
