// SPDX-License-Identifier: MIT
// A short seeded run on the simulated board with --raw, and its raw samples: the stored run
// the capture, verify and VCD tests draw from.
#pragma once

#include "rows.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace irqloop::test
{

/**
 * @brief `irqloop run` on sim:model=normal,mean=8us,sd=1us,seed=@p seed, @p samples stimuli
 * 100 us apart (10 us jitter), --raw, labelled @p label, into @p db; the raw samples of the
 * runs with that label. REQUIREs status 0 and @p samples rows.
 */
std::vector<db::sample_row> seeded_raw_run(const std::string& db, std::size_t samples,
                                           const std::string& label, int seed);

} // namespace irqloop::test
