// SPDX-License-Identifier: MIT
// The dead-wire watchdog (session-plugins.hpp).
#include "session-core.hpp"
#include "session-plugins.hpp"

namespace irqloop::logger
{

dead_wire_watch::dead_wire_watch(session& s) : s_(s)
{
    if (s.opt.timing.dead_wire_stimuli == 0)
        alive_.store(true); // --allow-silent
}

// Over the first samples, in stimulus order: an answer settles it; the first
// dead_wire_stimuli all lost, over at least dead_wire_ns, halt the sampler before the soak.
// (The time keeps a far end that is only starved for a moment, a simulated target on a busy
// machine, from being called dead.)
void dead_wire_watch::on_batch(std::span<const sample> batch)
{
    if (alive_.load() || dead_.load())
        return;
    const std::uint64_t min_cycles = s_.clock().from_ns(double(run_options::dead_wire_ns));
    for (const auto& smp : batch) {
        if (!(smp.flags & sample::lost)) {
            alive_.store(true);
            return;
        }
        if (silent_++ == 0)
            first_t0_ = smp.t0_cycles;
        if (silent_ >= s_.opt.timing.dead_wire_stimuli && smp.t0_cycles - first_t0_ >= min_cycles) {
            dead_.store(true);
            s_.halt();
            return;
        }
    }
}

// The check failed, or the run reached its bound before the check could end and no stimulus
// was ever answered: no answer, a failed run, and the stop's closing event.
void dead_wire_watch::on_end(run_outcome& out)
{
    const bool all_silent = !alive_.load() && silent_ > 0 && out.end == sampler_end::done;
    if (!(dead_.load() || all_silent) || out.end == sampler_end::line_failure)
        return;
    out.no_answer = true;
    const auto [stim, resp] = s_.wire.identity().line_names();
    out.no_answer_reason = std::string("no answer: ") + (dead_.load() ? "the first " : "all ") +
                           std::to_string(silent_) + " stimuli on " + stim +
                           " timed out waiting for " + resp + " (backend '" + s_.wire.describe() +
                           "')";
    s_.claim_stop({unix_now_ns(), s_.stimuli(), "error", static_cast<std::int64_t>(silent_),
                   out.no_answer_reason});
}

} // namespace irqloop::logger
