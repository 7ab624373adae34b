// SPDX-License-Identifier: MIT
#pragma once

#include "rt-setup.hpp"

#include <boost/program_options/options_description.hpp>
#include <string>

namespace irqloop::base
{

/** @brief The real-time options as typed on the command line, before any check. */
struct rt_options final {
    int priority = 80;
    int cpu = -1;
    bool no_mlock = false;
    bool no_dma_latency = false;
    bool strict = false;
};

/**
 * @brief Declare --priority/-p, --cpu/-a, --no-mlock, --no-dma-latency and --strict-rt on
 * @p d, bound to @p o (whose values are the defaults shown). Both programs take the same five.
 * @param thread The thread they apply to, for the help text, e.g. "the sampler thread".
 */
void add_rt_options(boost::program_options::options_description& d, rt_options& o,
                    const std::string& thread);

/**
 * @brief Check the typed options and turn them into a request for rt_session.
 * @throws irqloop::error (exit 2) for a priority outside 0..99 or a CPU outside -1..1023.
 */
rt_request to_rt_request(const rt_options& o);

} // namespace irqloop::base
