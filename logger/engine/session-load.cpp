// SPDX-License-Identifier: MIT
// The --load-cmd process of a run (session-plugins.hpp).
#include "error.hpp"
#include "session-core.hpp"
#include "session-plugins.hpp"

#include <cstdio>

namespace irqloop::logger
{

namespace
{

std::string one_line(std::string t)
{
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
        t.pop_back();
    for (auto& ch : t)
        if (ch == '\n')
            ch = '|';
    return t;
}

} // namespace

void load_runner::on_start(session&)
{
    load_.emplace(load_options{s_.opt.soak.load_cmd, s_.opt.soak.load_grace_ns, 1024});
}

db::event_row load_runner::end_event(const load_result& r, const char* how)
{
    std::string d = std::string(how) + ": " + r.describe();
    char secs[32];
    std::snprintf(secs, sizeof secs, " after %.1f s", r.seconds);
    d += secs;
    if (r.killed)
        d += " (SIGKILL after the grace period)";
    if (!r.tail.empty())
        d += "; output: " + one_line(r.tail);
    s_.out.load_end = r.describe();
    return {unix_now_ns(), s_.stimuli(), "load", r.status, d};
}

void load_runner::start(std::uint64_t stimuli)
{
    started_ = true;
    try {
        load_->start();
    } catch (const error& e) {
        reported_ = true;
        s_.out.load_died = true;
        s_.out.load_end = "not started: " + e.message();
        s_.post({unix_now_ns(), stimuli, "load", -1, s_.out.load_end});
        if (s_.opt.soak.load_required) {
            stopped_run_.store(true);
            s_.halt();
        }
        return;
    }
    s_.post({unix_now_ns(), stimuli, "load", 0,
             "started after " + std::to_string(stimuli) + " samples (process group " +
                 std::to_string(load_->pgid()) + ", guard " + std::to_string(load_->guard_pid()) +
                 "): " + s_.opt.soak.load_cmd});
}

// The load starts once the warm-up samples are taken; an early death is recorded and, with
// --load-required, ends the run.
void load_runner::on_tick()
{
    if (reported_)
        return;
    const std::uint64_t stimuli = s_.stimuli();
    if (!started_) {
        if (stimuli >= s_.opt.recording.warmup && wire_.alive() && !s_.sampler_done())
            start(stimuli);
        return;
    }
    if (load_->exited() && !s_.sampler_done()) {
        reported_ = true;
        s_.out.load_died = true;
        s_.post(end_event(load_->stop(), "exited by itself"));
        if (s_.opt.soak.load_required) {
            stopped_run_.store(true);
            s_.halt();
        }
    }
}

// The load ends with the measurement, whatever ended it.
void load_runner::on_end(run_outcome& out)
{
    if (started_ && !reported_) {
        reported_ = true;
        const bool died = load_->exited();
        s_.add_event(
            end_event(load_->stop(), died ? "exited by itself" : "stopped at the end of the run"));
    }
    if (out.end == sampler_end::stopped && stopped_run_.load())
        s_.claim_stop({unix_now_ns(), s_.stimuli(), "signal", 0,
                       "stopped: the load exited and --load-required is set"});
}

} // namespace irqloop::logger
