// SPDX-License-Identifier: MIT
// A short seeded run on the simulated board with --raw, and its raw samples: the stored run
// the capture, verify and VCD tests draw from; and one on scripted time (explain's tests).
#pragma once

#include "rows.hpp"

#include <cstddef>
#include <cstdint>
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

/**
 * @brief The same shape of run on scripted time, with no process and no clock read: a run row
 * (interval 100 us, jitter 10 us) and @p samples raw samples fed to the recorder on a 1 GHz
 * synthetic clock, stimulus k at 1 ms + k x 100 us + a uniform jitter of +-10 us, latencies
 * normal(8 us, 1 us) (at least 1 us), all drawn from @p seed: the same rows on every machine.
 * Into @p db, labelled @p label; returns its raw samples. For the tests of logic that need a
 * stored run with stimulus times (explain's). The samples whose seqs are in @p lost are lost
 * (no answer; the run's timeout is then 50 us).
 */
std::vector<db::sample_row> scripted_raw_run(const std::string& db, std::size_t samples,
                                             const std::string& label, int seed,
                                             const std::vector<std::uint64_t>& lost = {});

} // namespace irqloop::test
