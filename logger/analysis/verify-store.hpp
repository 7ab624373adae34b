// SPDX-License-Identifier: MIT
// A verification (irqloop verify) as stored with its run: tables verifications and
// verification_outside of schema version 7 (db/migrations/0007-verify.sql).
#pragma once

#include "capture-align.hpp"
#include "store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace irqloop::analysis
{

/** @brief One stored verification: what was compared and what it found. */
struct verification final {
    std::int64_t run_id = 0;
    std::int64_t idx = 0;     ///< 1, 2, ... per run, in the order they were made
    std::int64_t unix_ns = 0; ///< when verify ran
    std::string capture;      ///< the capture file as given
    std::string stim, resp;   ///< its channels
    double samplerate_hz = 0;
    verify_figures figures; ///< pairs and diffs_ns are not stored (empty when read back)
};

/**
 * @brief Store @p v with its run in one transaction; v.idx is set to the next index.
 * @throws irqloop::error (exit 1) when the write fails.
 */
void store_verification(db::store& s, verification& v);

/**
 * @brief Every verification of run @p run_id in the file @p path, oldest first, outside
 * samples included; none for a file before version 7. Opens the file read-only.
 */
std::vector<verification> read_verifications(const std::string& path, std::int64_t run_id);

} // namespace irqloop::analysis
