// SPDX-License-Identifier: MIT
// The --metrics-file of a run (session-plugins.hpp).
#include "session-core.hpp"
#include "session-plugins.hpp"

namespace irqloop::logger
{

void metrics_writer::on_start(session&)
{
    metrics_run base;
    base.label = s_.opt.recording.label;
    base.uuid = s_.out.uuid;
    base.backend = s_.wire.describe();
    base.threshold_ns = s_.opt.recording.threshold_ns;
    base.timeout_ns = s_.opt.timing.timeout_ns;
    base.start_unix_ns = unix_now_ns();
    file_.emplace(s_.opt.recording.metrics_file, std::move(base));
    // The first write refuses a path that cannot be written, before the first stimulus.
    file_->write(db::summary_row{}, histogram(1), 0, true);
}

void metrics_writer::on_window(const db::summary_row& s, const histogram& h,
                               std::uint64_t windows) noexcept
{
    file_->write_noexcept(s, h, windows, true);
}

void metrics_writer::on_end(run_outcome&)
{
    if (!file_->first_error().empty())
        s_.add_event({unix_now_ns(), s_.stimuli(), "warning", 0,
                      "metrics file not updated: " + file_->first_error()});
}

// The last figures, marked as no longer recording, with the gates' verdicts (irqloop_gate_pass)
// once every plug-in has finished.
void metrics_writer::on_closed(run_outcome& out, const histogram& h) noexcept
{
    file_->set_gates(out.gates);
    file_->write_noexcept(out.summary, h, out.intervals, false);
    out.metrics_error = file_->first_error();
}

} // namespace irqloop::logger
