// SPDX-License-Identifier: MIT
// The late-start note (session-plugins.hpp).
#include "session-core.hpp"
#include "session-plugins.hpp"

namespace irqloop::logger
{

// The first stimulus, timed from the run's start (window 0), on the recorder's thread: a late
// one is a `late_start` event, so that the empty windows before it and a wall time beyond
// --duration (which counts from the first stimulus) are explained. The release time tells the
// set-up's share (the caller's thread) from the sampler's (its wake-up and first settle).
void late_start_note::on_batch(std::span<const sample> batch)
{
    if (seen_ || batch.empty())
        return;
    seen_ = true;
    const sample& first = batch.front();
    auto& out = s_.out;
    out.sampler_release_ns = s_.since_start_ns(s_.release_cycles);
    out.first_stimulus_ns = s_.since_start_ns(first.t0_cycles);
    if (out.first_stimulus_ns <= run_options::late_start_ns)
        return;
    out.late_start = true;
    s_.add_event({s_.anchor_unix + out.first_stimulus_ns, first.seq, "late_start",
                  out.first_stimulus_ns,
                  "first stimulus " + seconds_text(out.first_stimulus_ns) +
                      " after the run began (sampler released after " +
                      seconds_text(out.sampler_release_ns) + "); the windows before it are empty"});
}

// No stimulus at all in a run longer than the late-start limit: said so too.
void late_start_note::on_end(run_outcome& out)
{
    const auto lasted = static_cast<std::int64_t>(s_.clock().ns(hw::cycles() - s_.anchor_cycles));
    if (seen_ || lasted <= run_options::late_start_ns)
        return;
    out.late_start = true;
    out.sampler_release_ns =
        static_cast<std::int64_t>(s_.clock().ns(s_.release_cycles - s_.anchor_cycles));
    s_.add_event({unix_now_ns(), 0, "late_start", lasted,
                  "no stimulus in the " + seconds_text(lasted) +
                      " the run lasted (sampler released after " +
                      seconds_text(out.sampler_release_ns) + ")"});
}

} // namespace irqloop::logger
