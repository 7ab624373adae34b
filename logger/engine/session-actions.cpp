// SPDX-License-Identifier: MIT
// The --on-threshold actions of a run (session-plugins.hpp).
#include "session-core.hpp"
#include "session-plugins.hpp"

namespace irqloop::logger
{

void threshold_actions::on_start(session&)
{
    threshold_cycles_ = s_.clock().from_ns(static_cast<double>(s_.opt.recording.threshold_ns));
    runner_.emplace(s_.opt.soak.actions, s_.opt.soak.action_holdoff_ns, [this] {
        stopped_run_.store(true);
        s_.halt();
    });
}

// The actions see the samples on the recorder's thread, off the sampler's; offer() never waits.
void threshold_actions::on_batch(std::span<const sample> batch)
{
    for (const auto& smp : batch) {
        if ((smp.flags & sample::lost) || smp.latency_cycles <= threshold_cycles_ ||
            ((smp.flags & sample::disturbed) && !s_.opt.recording.keep_disturbed))
            continue;
        const auto at = s_.anchor_unix +
                        static_cast<std::int64_t>(s_.clock().ns(smp.t0_cycles - s_.anchor_cycles));
        runner_->offer({smp.seq, at, static_cast<std::int64_t>(s_.clock().ns(smp.latency_cycles))});
    }
}

// The worker's events into the recorder, on its thread.
void threshold_actions::on_idle()
{
    for (auto& e : runner_->take_events())
        s_.add_event(std::move(e));
}

// The actions end with the measurement; their last events, their counts, a stop of theirs.
void threshold_actions::on_end(run_outcome& out)
{
    runner_->finish();
    for (auto& e : runner_->take_events())
        s_.add_event(std::move(e));
    out.actions_fired = runner_->fired();
    out.actions_held_off = runner_->suppressed();
    out.stopped_by_action = stopped_run_.load();
    if (out.end == sampler_end::stopped && stopped_run_.load())
        s_.claim_stop(
            {unix_now_ns(), s_.stimuli(), "signal", 0, "stopped by an --on-threshold stop action"});
}

} // namespace irqloop::logger
