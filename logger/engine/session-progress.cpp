// SPDX-License-Identifier: MIT
// The ring's counters and the progress line of a run (session-plugins.hpp), and the list of
// the engine's plug-ins.
#include "session-core.hpp"
#include "session-plugins.hpp"
#include "units.hpp"

#include <cstdio>

namespace irqloop::logger
{

namespace
{

// 12.3k, 4.56M: a count in a progress line.
std::string fmt_count(double n)
{
    struct step {
        double at, unit;
        int decimals;
        const char* suffix;
    };
    static constexpr step steps[] = {{1e9, 1e9, 2, "G"}, {1e6, 1e6, 2, "M"}, {1e4, 1e3, 1, "k"}};
    char b[32];
    for (const auto& s : steps)
        if (n >= s.at) {
            std::snprintf(b, sizeof b, "%.*f%s", s.decimals, n / s.unit, s.suffix);
            return b;
        }
    std::snprintf(b, sizeof b, "%.0f", n);
    return b;
}

void print_progress(const run_options& opt, const recorder::live& l, std::uint64_t stimuli,
                    double elapsed_s, double rate)
{
    std::string eta = "-";
    if (opt.timing.samples && rate > 0 && stimuli < opt.timing.samples)
        eta = format_duration((static_cast<double>(opt.timing.samples - stimuli) / rate) * 1e9);
    else if (opt.timing.duration_ns)
        eta = format_duration(
            std::max(0.0, static_cast<double>(opt.timing.duration_ns) - elapsed_s * 1e9));
    // cyclictest's Act: the latest sample; then the count above --threshold, as rtla and
    // latmus users watch it grow.
    const std::string act =
        l.latest_ns < 0 ? std::string("-") : format_duration(static_cast<double>(l.latest_ns));
    char line[320];
    std::snprintf(
        line, sizeof line,
        "%s samples %s/s ETA %s | act %s min %s avg %s max %s | above %s: %llu | lost %llu "
        "disturbed %llu",
        fmt_count(static_cast<double>(l.samples)).c_str(), fmt_count(rate).c_str(), eta.c_str(),
        act.c_str(), format_duration(static_cast<double>(l.min_ns)).c_str(),
        format_duration(l.mean_ns).c_str(), format_duration(static_cast<double>(l.max_ns)).c_str(),
        format_duration(static_cast<double>(l.threshold_ns)).c_str(),
        static_cast<unsigned long long>(l.above), static_cast<unsigned long long>(l.lost),
        static_cast<unsigned long long>(l.disturbed));
    if (opt.progress == progress_mode::tty)
        std::fprintf(stderr, "\r\033[K%s", line);
    else
        std::fprintf(stderr, "irqloop: run: %s\n", line);
}

} // namespace

void ring_counters::on_idle()
{
    const auto& counters = s_.counters();
    const auto ov = counters.overflows.load();
    if (ov != overflows_) {
        s_.rec->add_overflows(ov - overflows_);
        s_.add_event({unix_now_ns(), counters.stimuli.load(), "overflow",
                      static_cast<std::int64_t>(ov - overflows_),
                      "ring full: the recorder fell behind"});
        overflows_ = ov;
    }
    const auto late = counters.late.load();
    if (late != late_) {
        s_.rec->add_late(late - late_);
        late_ = late;
    }
}

void progress_line::on_tick()
{
    const auto now = std::chrono::steady_clock::now();
    if (!start_)
        start_ = last_print_ = now;
    const auto period = std::chrono::seconds(s_.opt.progress == progress_mode::tty ? 1 : 10);
    if (now - last_print_ < period)
        return;
    const std::uint64_t st = s_.stimuli();
    const double dt = std::chrono::duration<double>(now - last_print_).count();
    print_progress(s_.opt, s_.rec->snapshot(), st,
                   std::chrono::duration<double>(now - *start_).count(),
                   static_cast<double>(st - last_stimuli_) / dt);
    last_stimuli_ = st;
    last_print_ = now;
}

void progress_line::on_end(run_outcome&)
{
    if (s_.opt.progress == progress_mode::tty)
        std::fprintf(stderr, "\r\033[K");
}

std::vector<std::unique_ptr<run_plugin>> engine_plugins(session& s)
{
    std::vector<std::unique_ptr<run_plugin>> v;
    auto wire = std::make_unique<dead_wire_watch>(s);
    const dead_wire_watch& watch = *wire;
    v.push_back(std::move(wire));
    v.push_back(std::make_unique<late_start_note>(s));
    if (!s.opt.soak.load_cmd.empty())
        v.push_back(std::make_unique<load_runner>(s, watch));
    if (!s.opt.soak.actions.empty())
        v.push_back(std::make_unique<threshold_actions>(s));
    if (!s.opt.recording.metrics_file.empty())
        v.push_back(std::make_unique<metrics_writer>(s));
    v.push_back(std::make_unique<ring_counters>(s));
    v.push_back(std::make_unique<run_marks>(s));
    if (s.opt.progress != progress_mode::none)
        v.push_back(std::make_unique<progress_line>(s));
    return v;
}

} // namespace irqloop::logger
