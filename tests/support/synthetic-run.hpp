// SPDX-License-Identifier: MIT
// A run whose samples a test or benchmark makes itself and feeds the recorder, on a synthetic
// clock of 1 GHz (cycles are nanoseconds): its run row and the recorder's clock.
#pragma once

#include "recorder.hpp"
#include "rows.hpp"

#include <cstdint>
#include <string>

namespace irqloop::test
{

/**
 * @brief The run row of such a run: written by @p program (its command line), with @p host as
 * version, uname and host name, backend and clock "synthetic" at 1 GHz.
 */
inline db::run_row synthetic_run_row(const std::string& uuid, const std::string& label,
                                     std::int64_t start_unix_ns, const std::string& program,
                                     const std::string& host)
{
    db::run_row r;
    r.uuid = uuid;
    r.label = label;
    r.start_unix_ns = start_unix_ns;
    r.command_line = program;
    r.version = r.uname = r.hostname = host;
    r.backend = "synthetic";
    r.clock_source = "synthetic";
    r.clock_hz = 1e9;
    return r;
}

/**
 * @brief The recorder settings of such a run: the synthetic 1 GHz clock, windows of
 * @p stats_interval_ns, cycle 0 at @p anchor_unix_ns; the rest the recorder's defaults.
 */
inline logger::recorder_config synthetic_recorder_config(std::int64_t stats_interval_ns,
                                                         std::int64_t anchor_unix_ns)
{
    logger::recorder_config c;
    c.clock.hz = 1e9; // cycles are ns
    c.clock.source = "synthetic";
    c.stats_interval_ns = stats_interval_ns;
    c.anchor_unix_ns = anchor_unix_ns;
    c.anchor_cycles = 0;
    return c;
}

} // namespace irqloop::test
