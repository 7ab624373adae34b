// SPDX-License-Identifier: MIT
#include "rt-options.hpp"

#include "error.hpp"

#include <boost/program_options/value_semantic.hpp>
#include <sched.h>

namespace po = boost::program_options;

namespace irqloop::base
{

void add_rt_options(po::options_description& d, rt_options& o, const std::string& thread)
{
    const std::string prio = "SCHED_FIFO priority of " + thread + "; 0 = SCHED_OTHER";
    const std::string cpu = "pin " + thread + " to this CPU; -1 = no pinning";
    // clang-format off
    d.add_options()
        ("priority,p", po::value(&o.priority)->default_value(o.priority), prio.c_str())
        ("cpu,a", po::value(&o.cpu)->default_value(o.cpu), cpu.c_str())
        ("no-mlock", po::bool_switch(&o.no_mlock), "do not mlockall()")
        ("no-dma-latency", po::bool_switch(&o.no_dma_latency), "do not hold /dev/cpu_dma_latency at 0")
        ("strict-rt", po::bool_switch(&o.strict), "fail if a real-time setting cannot be obtained");
    // clang-format on
}

rt_request to_rt_request(const rt_options& o)
{
    if (o.priority < 0 || o.priority > 99)
        throw error("bad value for --priority", "'" + std::to_string(o.priority) + "'",
                    "use 0 (SCHED_OTHER) to 99");
    if (o.cpu < -1 || o.cpu >= CPU_SETSIZE)
        throw error("bad value for --cpu", "'" + std::to_string(o.cpu) + "'",
                    "use -1 (no pinning) or a CPU number below " + std::to_string(CPU_SETSIZE));
    rt_request r;
    r.priority = o.priority;
    r.cpu = o.cpu;
    r.mlock = !o.no_mlock;
    r.dma_latency = !o.no_dma_latency;
    r.strict = o.strict;
    return r;
}

} // namespace irqloop::base
