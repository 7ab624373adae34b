// SPDX-License-Identifier: MIT
// `irqloop watch`: a read-only live view of the newest running run of a file, refreshed
// from another terminal while `irqloop run` writes it.
#include "watch-command.hpp"

#include "cli-main.hpp"
#include "error.hpp"
#include "plot.hpp"
#include "stop-signal.hpp"
#include "table.hpp"
#include "units.hpp"
#include "worst-table.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace po = boost::program_options;

namespace irqloop::logger
{

namespace
{

const db::run_record* newest_running(const db::catalog& c)
{
    const db::run_record* best = nullptr;
    for (const auto& r : c.runs())
        if (r.status == db::run_status::running &&
            (!best || r.meta.start_unix_ns >= best->meta.start_unix_ns))
            best = &r;
    return best;
}

/** @brief A latency in us with its unit, as every figure of the view. */
std::string us(std::int64_t ns)
{
    return format_latency(double(ns), latency_unit::us) + " us";
}

/** @brief A max as the other tables print it (format_max), in us. */
std::string max_text(std::optional<std::int64_t> max_ns, std::int64_t bracket_ns,
                     std::uint64_t lost, std::int64_t timeout_ns)
{
    return format_max({max_ns, bracket_ns, lost, timeout_ns}, latency_unit::us) + " us";
}

/** @brief The view of a running run: its counts, extremes, last window, worst and events. */
void print_running(const watch_outcome& o, const watch_request& r, std::ostream& out)
{
    const db::run_record* run = o.run;
    const auto& s = run->summary;
    char rate[32] = "\xe2\x80\x94"; // "—" until the run's first commit
    if (s.end_unix_ns > run->meta.start_unix_ns)
        std::snprintf(rate, sizeof rate, "%.0f/s", o.rate);
    out << "run " << run->id << " (" << message_text(run->name()) << ") running, "
        << message_text(run->meta.backend) << '\n';
    out << "  samples " << s.samples << "  stimuli " << s.stimuli << "  rate " << rate << "  lost "
        << s.lost << "  disturbed " << s.disturbed << "  overflows " << s.overflows << '\n';
    out << "  max so far "
        << max_text(run->has_stats ? std::optional<std::int64_t>(s.max_ns) : std::nullopt,
                    s.max_bracket_ns, s.lost, run->meta.timeout_ns)
        << "  warm max " << o.warm_max << (s.has_warm_max ? " us" : "") << "  above "
        << us(run->meta.threshold_ns) << ": " << s.above_threshold << '\n';
    if (const auto& w = o.window)
        out << "  window " << w->index << ": samples " << w->samples << "  max "
            << max_text(w->samples ? std::optional<std::int64_t>(w->max_ns) : std::nullopt,
                        w->max_bracket_ns, w->lost, run->meta.timeout_ns)
            << "  p99 " << (w->samples ? us(w->p99_ns) : std::string(absent_value)) << "  lost "
            << w->lost << '\n';
    if (const auto& w = o.window) {
        const auto lines = window_histogram_lines(o.buckets, w->lost, run->meta.timeout_ns);
        if (!lines.empty())
            out << "  window " << w->index
                << " histogram (us; its buckets, 4 per power of two; log10 bars):\n";
        for (const auto& l : lines)
            out << "    " << l << '\n';
    }
    if (r.top) {
        out << "  worst (us):";
        for (const auto& w : o.worst)
            out << ' ' << latency_with_bracket(w, latency_unit::us) << '@' << w.seq;
        out << '\n';
    }
    out << "  events:";
    for (const auto& e : o.events)
        out << ' ' << e.kind << ' ' << e.events;
    out << '\n';
}

/** @brief The summary of the run that was on screen, printed once below the last view when
 *  it ends (never cleared: it stays in the terminal's scrollback). */
void print_ended(const db::run_record& run, std::ostream& out)
{
    const auto& s = run.summary;
    out << "irqloop watch: " << message_text(run.name()) << " ended: " << db::to_text(run.status)
        << ", " << s.samples << " samples\n";
    out << "  stimuli " << s.stimuli << "  lost " << s.lost << "  late " << s.late << "  disturbed "
        << s.disturbed << "  overflows " << s.overflows << "  above " << us(run.meta.threshold_ns)
        << ": " << s.above_threshold << '\n';
    out << "  " << run_max_line(run, latency_unit::us) << '\n';
}

} // namespace

parsed<watch_request> parse_watch(int argc, char** argv)
{
    watch_request r;
    std::string refresh = "1s", count = "0", top_text = "5";
    po::options_description d(
        "irqloop watch: a live, read-only view of the newest running run in a file, "
        "refreshed every second; works while irqloop run writes it. Ends when no "
        "run is running (exit 0).\n\nusage: irqloop watch --db FILE\n\noptions");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("db", po::value(&r.db)->required(), "the irqloop file a run is writing")
        ("refresh", po::value(&refresh)->default_value(refresh), "time between two views")
        ("count", po::value(&count)->default_value(count), "stop after this many views; 0 = until the run ends or SIGINT")
        ("top", po::value(&top_text)->default_value(top_text), "worst samples shown (0 to 1000)");
    // clang-format on
    // No bare words: a stray one is refused, never dropped.
    auto vm = base::parse_options(argc, argv, d);
    if (vm.count("help")) {
        std::ostringstream help;
        help << d << "\nDocs: docs/commands/watch.md\n";
        return parsed<watch_request>::help(help.str());
    }
    po::notify(vm);
    r.refresh_ns = parse_duration_ns_in(refresh, "--refresh", 100'000'000, 3600LL * 1'000'000'000);
    r.views = parse_count(count, "--count");
    r.top = parse_count_in(top_text, "--top", 0, 1000);
    return parsed<watch_request>::of(std::move(r));
}

std::vector<std::string> window_histogram_lines(const std::vector<db::window_bucket_row>& buckets,
                                                std::uint64_t lost, std::int64_t timeout_ns,
                                                std::size_t bar_width)
{
    std::vector<std::string> out;
    std::uint64_t top = lost;
    for (const auto& b : buckets)
        top = std::max(top, b.count);
    if (buckets.empty())
        return out;
    const auto line = [&](const std::string& range, std::uint64_t n) {
        // Padded by display width: "≥" is one column, three bytes.
        const std::size_t w = display_width(range);
        char b[32];
        std::snprintf(b, sizeof b, " %9llu  ", static_cast<unsigned long long>(n));
        return range + std::string(w < 25 ? 25 - w : 0, ' ') + b + log_bar(n, top, bar_width);
    };
    const auto u = [](std::int64_t ns) { return format_latency(double(ns), latency_unit::us); };
    int last = -1;
    for (const auto& b : buckets) {
        if (!b.count)
            continue;
        if (last >= 0 && b.bucket > last + 1)
            out.push_back("...");
        last = b.bucket;
        char range[64];
        std::snprintf(range, sizeof range, "%10s - %10s",
                      u(db::window_buckets::lo_ns(b.bucket)).c_str(),
                      u(db::window_buckets::hi_ns(b.bucket)).c_str());
        out.push_back(line(range, b.count));
    }
    if (lost)
        out.push_back(line("\xe2\x89\xa5 " + u(timeout_ns) + " (lost)", lost));
    return out;
}

double watch_rate(watch_state& state, const std::string& uuid, std::uint64_t stimuli,
                  std::int64_t start_unix_ns, std::int64_t commit_unix_ns)
{
    if (state.watching != uuid) // a new run on screen: counted from its start, no stimulus yet
        state = watch_state{uuid, 0, start_unix_ns, 0.0, state.checked};
    if (commit_unix_ns > state.last_commit_ns && stimuli >= state.last_stimuli) {
        state.rate = double(stimuli - state.last_stimuli) * 1e9 /
                     double(commit_unix_ns - state.last_commit_ns);
        state.last_stimuli = stimuli;
        state.last_commit_ns = commit_unix_ns;
    }
    return state.rate;
}

watch_outcome execute_watch(const watch_request& r, watch_state& state)
{
    watch_outcome o;
    // Every page is checked at the first view; the views after it trust the file (a check
    // each refresh would cost 0.5 s of CPU per 100 MB of it).
    o.cat = std::make_unique<db::catalog>(std::vector<std::string>{r.db},
                                          state.checked ? db::store::pages::trust
                                                        : db::store::pages::check);
    state.checked = true;
    o.run = newest_running(*o.cat);
    if (!o.run) {
        o.watched = !state.watching.empty();
        for (const auto& run : o.cat->runs())
            if (o.watched && run.meta.uuid == state.watching)
                o.ended = &run;
        return o;
    }
    const auto& s = o.run->summary;
    o.rate =
        watch_rate(state, o.run->meta.uuid, s.stimuli, o.run->meta.start_unix_ns, s.end_unix_ns);
    if (auto iv = o.cat->intervals(*o.run); !iv.empty()) {
        o.window = iv.back();
        o.buckets = o.cat->window_histogram(*o.run, o.window->index);
    }
    if (r.top)
        o.worst = o.cat->worst(*o.run, r.top);
    o.events = o.cat->event_totals(*o.run);
    warm_lost warm;
    warm.known = true;
    if (s.lost) // the lost events tell where they fell: read only when there are any
        warm = lost_after_warmup(*o.run, o.cat->events(*o.run));
    o.warm_max = format_warm_max(*o.run, warm, latency_unit::us);
    return o;
}

int present_watch(const watch_outcome& o, const watch_request& r)
{
    std::ostream& out = std::cout;
    if (!o.run && !o.watched) {
        out << "irqloop watch: no running run in " << r.db << '\n';
    } else if (!o.run) {
        if (o.ended)
            print_ended(*o.ended, out);
    } else {
        const bool tty = isatty(STDOUT_FILENO);
        if (tty)
            out << "\033[H\033[J";
        print_running(o, r, out);
        if (!tty)
            out << '\n';
    }
    out.flush();
    if (!out || std::fflush(stdout) != 0)
        throw_from_errno(errno, "watch: write to standard output", {}, exit_failure);
    return 0;
}

int watch_command(int argc, char** argv)
{
    const auto p = parse_watch(argc, argv);
    if (!p.request) {
        std::cout << p.text;
        return 0;
    }
    const watch_request& r = *p.request;
    base::stop_signals signals;
    watch_state state;
    for (std::uint64_t shown = 0; !signals.flag().load();) {
        const auto o = execute_watch(r, state);
        present_watch(o, r);
        if (!o.run || (r.views && ++shown >= r.views))
            return 0;
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::nanoseconds(r.refresh_ns);
        while (!signals.flag().load() && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
}

} // namespace irqloop::logger
