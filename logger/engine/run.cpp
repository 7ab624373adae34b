// SPDX-License-Identifier: MIT
// execute_run() drives three phases over one run_context, in the manner of rtla's tool_ops:
// set_up() (clock, real-time, calibration, configuration, the run row), measure() (the
// sampler, recorder and progress loops) and finalise() (closing events, final status).
#include "run.hpp"

#include "error.hpp"
#include "load-process.hpp"
#include "metrics-file.hpp"
#include "recorder.hpp"
#include "smi-counter.hpp"
#include "store.hpp"
#include "units.hpp"
#include "version.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

namespace irqloop::logger
{

namespace
{

std::int64_t unix_now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string make_uuid()
{
    std::random_device rd;
    std::uint64_t a = (static_cast<std::uint64_t>(rd()) << 32) | rd();
    std::uint64_t b = (static_cast<std::uint64_t>(rd()) << 32) | rd();
    a = (a & ~0xf000ull) | 0x4000ull;       // version 4
    b = (b & ~(3ull << 62)) | (2ull << 62); // RFC 4122 variant
    char s[40];
    std::snprintf(s, sizeof s, "%08llx-%04llx-%04llx-%04llx-%012llx",
                  static_cast<unsigned long long>(a >> 32),
                  static_cast<unsigned long long>((a >> 16) & 0xffff),
                  static_cast<unsigned long long>(a & 0xffff),
                  static_cast<unsigned long long>(b >> 48),
                  static_cast<unsigned long long>(b & 0xffffffffffffull));
    return s;
}

std::string uname_string()
{
    utsname u{};
    if (uname(&u) != 0)
        return "unknown";
    return std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine;
}

std::string host_name()
{
    char h[256] = {};
    gethostname(h, sizeof h - 1);
    return h;
}

std::string fmt_count(double n)
{
    char b[32];
    if (n >= 1e9)
        std::snprintf(b, sizeof b, "%.2fG", n / 1e9);
    else if (n >= 1e6)
        std::snprintf(b, sizeof b, "%.2fM", n / 1e6);
    else if (n >= 1e4)
        std::snprintf(b, sizeof b, "%.1fk", n / 1e3);
    else
        std::snprintf(b, sizeof b, "%.0f", n);
    return b;
}

void print_progress(const run_options& opt, const recorder::live& l, std::uint64_t stimuli,
                    double elapsed_s, double rate)
{
    std::string eta = "-";
    if (opt.samples && rate > 0 && stimuli < opt.samples)
        eta = format_duration((static_cast<double>(opt.samples - stimuli) / rate) * 1e9);
    else if (opt.duration_ns)
        eta =
            format_duration(std::max(0.0, static_cast<double>(opt.duration_ns) - elapsed_s * 1e9));
    char line[256];
    std::snprintf(
        line, sizeof line,
        "%s samples %s/s ETA %s | min %s avg %s max %s | lost %llu disturbed %llu",
        fmt_count(static_cast<double>(l.samples)).c_str(), fmt_count(rate).c_str(), eta.c_str(),
        format_duration(static_cast<double>(l.min_ns)).c_str(), format_duration(l.mean_ns).c_str(),
        format_duration(static_cast<double>(l.max_ns)).c_str(),
        static_cast<unsigned long long>(l.lost), static_cast<unsigned long long>(l.disturbed));
    if (opt.progress == progress_mode::tty)
        std::fprintf(stderr, "\r\033[K%s", line);
    else
        std::fprintf(stderr, "irqloop: run: %s\n", line);
}

// The wire is started for the run and stopped when the run's context goes, whatever happened.
struct started_wire {
    hw::lines& w;
    explicit started_wire(hw::lines& wire) : w(wire) { w.start(); }
    ~started_wire() { w.stop(); }
    started_wire(const started_wire&) = delete;
    started_wire& operator=(const started_wire&) = delete;
};

// The sampler's own thread. It applies the real-time settings, then parks until release():
// blocking, not spinning, since a SCHED_FIFO thread spinning there would starve the set-up
// work on its CPU and use up the RT throttling budget before the first stimulus. Destroyed
// without release (a set-up error), it halts the sampler and joins the thread.
class sampler_thread
{
public:
    sampler_thread(sampler& smp, base::rt_session& rt, sampler_end& end)
        : thread_([this, &smp, &rt, &end] {
              rt.apply_to_this_thread();
              started_.store(true);
              started_.notify_one();
              go_.wait(false);
              if (!halt_.load())
                  end = smp.run(halt_);
              done_.store(true, std::memory_order_release);
          })
    {
        started_.wait(false);
    }
    ~sampler_thread()
    {
        halt_.store(true);
        release();
        join();
    }
    sampler_thread(const sampler_thread&) = delete;
    sampler_thread& operator=(const sampler_thread&) = delete;

    void release()
    {
        go_.store(true);
        go_.notify_one();
    }
    void halt() noexcept { halt_.store(true); }
    bool done() const noexcept { return done_.load(std::memory_order_acquire); }
    void join()
    {
        if (thread_.joinable())
            thread_.join();
    }

private:
    std::atomic<bool> halt_{false}; // the sampler's stop flag: the caller's stop, or a failure
    std::atomic<bool> go_{false}, started_{false}, done_{false};
    std::thread thread_; // last: the flags above exist before it starts
};

// Everything a run holds between its phases, in the order it is built (and torn down in
// reverse: the recorder and store go first, the sampler thread is joined before the wire stops).
struct run_context {
    const run_options& opt;
    hw::lines& wire;
    const std::atomic<bool>& stop;
    run_outcome out;

    // set_up()
    std::optional<base::rt_session> rt;
    std::optional<started_wire> started;
    sampler_config sc;
    std::int64_t quiet_ns = 0;
    std::optional<spsc_ring<sample>> ring;
    std::optional<sampler> smp;
    std::optional<sampler_thread> sampling;
    std::unique_ptr<db::store> store;
    std::uint64_t anchor_cycles = 0;
    std::int64_t anchor_unix = 0;
    std::optional<metrics_file> metrics; // --metrics-file, written on the recorder's thread
    std::optional<smi_counter> smi;
    std::optional<recorder> rec;

    // measure()
    std::exception_ptr failure; // a store failure on the recorder's thread
    std::optional<load_process> load;
    bool load_started = false, load_reported = false;
    std::optional<action_runner> actions;
    std::atomic<bool> action_stop{false}, load_stop{false};
    // Events made on other threads (load, actions), handed to the recorder's thread.
    std::mutex inbox_mu;
    std::vector<db::event_row> inbox;
    // The dead-wire check, on the recorder's thread: stimuli seen lost so far while no answer
    // came; wire_alive once one came (or the check is off), no_answer once the check failed.
    std::uint64_t silent = 0, first_t0 = 0;
    std::atomic<bool> wire_alive{false}, no_answer{false};
    // The late-start check: the sampler's release, and whether the first stimulus was seen.
    std::uint64_t release_cycles = 0;
    bool first_stimulus_seen = false;

    void post(db::event_row e)
    {
        std::lock_guard lk(inbox_mu);
        inbox.push_back(std::move(e));
    }
};

// --- set-up -----------------------------------------------------------------------------

// The loop's own costs, and from them the gap limit that marks a sample disturbed.
void calibrate_loop(run_context& c)
{
    const auto& clk = c.out.clock;
    hw::polled(c.wire).drive(false);
    // A device-timed backend times each sample on its own clock: no host poll to measure
    // (and each of its drives and senses is a USB round trip).
    const hw::device_timed_wire* device = hw::find<hw::device_timed_wire>(c.wire);
    c.out.drive_ns = device ? 0 : clk.ns(measure_drive_cycles(c.wire, false));
    c.out.poll_ns = device ? 0 : clk.ns(measure_poll_cycles(c.wire));
    // The counter's own step: a few ns on a TSC, 1 us on qemu-user's cntvct_el0, where it also
    // reads the poll and drive() above as 0.
    c.out.clock_step_ns = device ? 0 : measure_clock_step_cycles() * 1e9 / clk.hz;
    // A sample's bracket spans drive() and the two polls around the answer. A quiet loop
    // keeps it within a few of each: 20 poll periods, 4 drive() costs, at least 1 us, and at
    // least 3 steps of the counter (auto_gap_limit). More means something else ran on this
    // CPU (an interrupt, an SMI, another task) exactly there. (drive() is measured without an
    // edge, so the far end sees nothing; a backend whose edge costs far more, the event-mode
    // shm wire's futex wake, needs an explicit --gap-limit.) A device-timed backend: at least
    // the widest bracket its own clock gives (a slow TCK, the syncbb tick's uncertainty);
    // wider ones are the host's.
    if (c.opt.gap_limit_ns >= 0) {
        c.out.gap_limit_ns = c.opt.gap_limit_ns;
        c.out.gap_limit_rule = "--gap-limit";
    } else {
        const auto a = auto_gap_limit(c.out.poll_ns, c.out.drive_ns, c.out.clock_step_ns,
                                      device ? device->device_bracket_ns() : 0);
        c.out.gap_limit_ns = a.ns;
        c.out.gap_limit_rule = std::string("auto: ") + a.rule;
    }
}

sampler_config make_sampler_config(const run_context& c)
{
    const auto& opt = c.opt;
    const auto& clk = c.out.clock;
    auto cycles_of = [&](std::int64_t ns) { return clk.from_ns(static_cast<double>(ns)); };
    sampler_config sc;
    sc.samples = opt.samples;
    sc.duration_cycles = cycles_of(opt.duration_ns);
    sc.interval_cycles = cycles_of(opt.interval_ns);
    sc.jitter_cycles = cycles_of(opt.jitter_ns);
    sc.timeout_cycles = cycles_of(opt.timeout_ns);
    sc.gap_limit_cycles = cycles_of(c.out.gap_limit_ns);
    sc.quiet_cycles = cycles_of(c.quiet_ns);
    sc.rearm_cycles = clk.from_ns(std::max(1000.0, static_cast<double>(opt.interval_ns) / 2));
    sc.seed = opt.seed;
    sc.both_edges = c.wire.far_end_answers_both_edges();
    sc.far_end_follows = sc.both_edges && c.wire.far_end_follows();
    sc.trigger_above_cycles = opt.trigger_above_ns ? cycles_of(opt.trigger_above_ns) : 0;
    sc.cycles_per_ns = clk.hz / 1e9;
    return sc;
}

db::run_row make_run_row(const run_context& c)
{
    const auto& opt = c.opt;
    const auto& clk = c.out.clock;
    db::run_row r;
    r.uuid = c.out.uuid;
    r.label = opt.label;
    r.kind = opt.kind;
    r.start_unix_ns = unix_now_ns();
    r.command_line = opt.command_line;
    r.version = irqloop::version;
    r.uname = uname_string();
    r.hostname = host_name();
    r.backend = c.wire.describe();
    r.clock_source = clk.source;
    r.clock_hz = clk.hz;
    r.clock_read_ns = clk.read_cost_ns;
    r.interval_ns = opt.interval_ns;
    r.jitter_ns = opt.jitter_ns;
    r.timeout_ns = opt.timeout_ns;
    r.threshold_ns = opt.threshold_ns;
    r.gap_limit_ns = c.out.gap_limit_ns;
    r.stats_interval_ns = opt.stats_interval_ns;
    r.warmup_samples = opt.warmup;
    r.samples_requested = opt.samples;
    r.duration_ns = opt.duration_ns;
    r.rt_settings = c.rt->summary();
    r.target = opt.target;
    r.load = opt.load;
    for (auto& m : c.wire.metadata())
        r.metadata.emplace_back(m.key, m.value);
    auto meta = [&](const char* key, std::string value) {
        r.metadata.emplace_back(key, std::move(value));
    };
    meta("logger.poll_ns", std::to_string(c.out.poll_ns));
    meta("logger.drive_ns", std::to_string(c.out.drive_ns));
    meta("logger.clock_step_ns", std::to_string(c.out.clock_step_ns));
    meta("logger.gap_limit_rule", c.out.gap_limit_rule);
    meta("logger.quiet_ns", std::to_string(c.quiet_ns));
    meta("logger.both_edges", c.sc.both_edges ? "yes" : "no");
    meta("logger.answer", c.sc.far_end_follows ? "follow" : "toggle");
    meta("logger.clock_invariant", clk.invariant ? "yes" : "no");
    meta("logger.clock_agreement_ppm", std::to_string(clk.agreement_ppm));
    meta("logger.keep_disturbed", opt.keep_disturbed ? "yes" : "no");
    // How a sample is judged disturbed: by the width of its bracket (the polls around the
    // answer plus drive()), never by a gap elsewhere in the wait. Version-1 runs lack the key.
    meta("logger.disturbed_rule", "bracket");
    // Each window's latency histogram is stored (interval_histograms, schema version 3) in
    // these buckets; runs recorded before have no key and no rows.
    meta("logger.window_histogram", db::window_buckets::scheme);
    if (!opt.trigger_line.empty())
        meta("logger.trigger",
             opt.trigger_line + " above " + std::to_string(opt.trigger_above_ns) + " ns");
    for (auto& [k, v] : preflight_metadata(opt.preflight))
        r.metadata.emplace_back(k, v);
    if (!opt.load_cmd.empty()) {
        meta("load.command", opt.load_cmd);
        meta("load.required", opt.load_required ? "yes" : "no");
        meta("load.grace_ns", std::to_string(opt.load_grace_ns));
    }
    std::string acts;
    for (const auto& a : opt.actions)
        acts += (acts.empty() ? "" : "; ") + a.text;
    if (!acts.empty()) {
        meta("actions.on_threshold", acts);
        meta("actions.holdoff_ns", std::to_string(opt.action_holdoff_ns));
    }
    meta("logger.max_events", std::to_string(opt.max_events));
    meta("logger.smi_counter",
         c.smi->available() ? c.smi->device() + " MSR 0x34" : "n/a: " + c.smi->why());
    return r;
}

recorder_config make_recorder_config(const run_context& c)
{
    recorder_config rc;
    rc.clock = c.out.clock;
    rc.threshold_ns = c.opt.threshold_ns;
    rc.warmup_samples = c.opt.warmup;
    rc.stats_interval_ns = c.opt.stats_interval_ns;
    rc.gap_limit_ns = c.out.gap_limit_ns;
    rc.top_k = c.opt.top_k;
    rc.max_exceedances = c.opt.max_exceedances;
    rc.max_events = c.opt.max_events;
    rc.raw = c.opt.raw;
    rc.keep_disturbed = c.opt.keep_disturbed;
    rc.anchor_unix_ns = c.anchor_unix;
    rc.anchor_cycles = c.anchor_cycles;
    if (c.smi->available())
        rc.smi_read = [&s = *c.smi] { return s.read(); };
    return rc;
}

// Clock, real-time settings, the wire and its trigger, calibration, the sampler parked on
// its thread, the run row: everything that can be refused, before the first stimulus.
void set_up(run_context& c)
{
    c.out.clock = hw::process_clock(c.opt.force_tsc);
    // The results file first: a refused file refuses the run before the wire is started (a
    // shm wire this run created is then removed again, docs/commands/exit-status.md).
    if (!c.opt.db_path.empty()) {
        c.store = std::make_unique<db::store>(c.opt.db_path);
        // Another process holding the write lock: each commit keeps trying for one window.
        c.store->set_busy_retry(std::chrono::milliseconds(c.opt.stats_interval_ns / 1'000'000));
    }
    // The trigger line too: a backend without one refuses before its wire is started.
    hw::trigger_line* trigger = hw::find<hw::trigger_line>(c.wire);
    if (!c.opt.trigger_line.empty() && trigger)
        trigger->open_trigger(c.opt.trigger_line);
    else if (!c.opt.trigger_line.empty())
        throw error("open trigger line '" + c.opt.trigger_line + "'",
                    "backend '" + c.wire.describe() + "' has no trigger line",
                    "use a gpiod backend, or drop --trigger-line");
    c.rt.emplace(c.opt.rt);
    // --strict-rt refuses before the wire starts (a shm segment this run made goes again).
    c.rt->check_strict_early();
    c.started.emplace(c.wire);
    calibrate_loop(c);
    // After a loss, the response must stay still this long before the next stimulus.
    c.quiet_ns =
        c.opt.quiet_ns >= 0 ? c.opt.quiet_ns : std::min<std::int64_t>(c.opt.timeout_ns, 1'000'000);
    c.sc = make_sampler_config(c);
    c.ring.emplace(c.opt.ring_samples);
    c.smp.emplace(c.wire, *c.ring, c.sc);
    c.sampling.emplace(*c.smp, *c.rt, c.out.end);
    c.rt->check_strict();

    c.out.uuid = make_uuid();
    if (!c.opt.metrics_file.empty()) {
        metrics_run base;
        base.label = c.opt.label;
        base.uuid = c.out.uuid;
        base.backend = c.wire.describe();
        base.threshold_ns = c.opt.threshold_ns;
        base.start_unix_ns = unix_now_ns();
        c.metrics.emplace(c.opt.metrics_file, std::move(base));
        // The first write refuses a path that cannot be written, before the first stimulus.
        c.metrics->write(db::summary_row{}, histogram(1), 0, true);
    }
    c.smi.emplace(c.opt.smi_root, c.opt.rt.cpu);
    if (c.store)
        c.out.run_id = c.store->begin_run(make_run_row(c));
    c.anchor_cycles = hw::cycles();
    c.anchor_unix = unix_now_ns();
    recorder_config rc = make_recorder_config(c);
    if (c.metrics)
        rc.on_window = [m = &*c.metrics](const db::summary_row& s, const histogram& h,
                                         std::uint64_t windows) {
            m->write_noexcept(s, h, windows, true);
        };
    c.rec.emplace(rc, c.store.get(), c.out.run_id);
    if (!c.opt.load_cmd.empty())
        c.load.emplace(load_options{c.opt.load_cmd, c.opt.load_grace_ns, 1024});
    if (!c.opt.actions.empty())
        c.actions.emplace(c.opt.actions, c.opt.action_holdoff_ns, [&c] {
            c.action_stop.store(true);
            c.sampling->halt();
        });
}

// --- the measurement --------------------------------------------------------------------

// The actions see the samples on the recorder's thread, off the sampler's; offer() never waits.
void offer_to_actions(run_context& c, std::span<const sample> batch)
{
    const std::uint64_t threshold_cycles =
        c.out.clock.from_ns(static_cast<double>(c.opt.threshold_ns));
    for (const auto& s : batch) {
        if ((s.flags & sample::lost) || s.latency_cycles <= threshold_cycles ||
            ((s.flags & sample::disturbed) && !c.opt.keep_disturbed))
            continue;
        const auto at = c.anchor_unix +
                        static_cast<std::int64_t>(c.out.clock.ns(s.t0_cycles - c.anchor_cycles));
        c.actions->offer({s.seq, at, static_cast<std::int64_t>(c.out.clock.ns(s.latency_cycles))});
    }
}

// Events made on other threads (the inbox, the actions' own) into the recorder; @p posted is
// the recorder thread's scratch vector.
void drain_inbox(run_context& c, std::vector<db::event_row>& posted)
{
    {
        std::lock_guard lk(c.inbox_mu);
        posted.swap(c.inbox);
    }
    if (c.actions)
        for (auto& e : c.actions->take_events())
            posted.push_back(std::move(e));
    for (auto& e : posted)
        c.rec->add_event(std::move(e));
    posted.clear();
}

// The dead-wire check over the first samples, in stimulus order: an answer settles it; the
// first dead_wire_stimuli all lost, over at least dead_wire_ns, halt the sampler before the
// soak. (The time keeps a far end that is only starved for a moment, a simulated target on a
// busy machine, from being called dead.)
void check_wire(run_context& c, std::span<const sample> batch)
{
    const std::uint64_t min_cycles = c.out.clock.from_ns(double(run_options::dead_wire_ns));
    for (const auto& s : batch) {
        if (!(s.flags & sample::lost)) {
            c.wire_alive.store(true);
            return;
        }
        if (c.silent++ == 0)
            c.first_t0 = s.t0_cycles;
        if (c.silent >= c.opt.dead_wire_stimuli && s.t0_cycles - c.first_t0 >= min_cycles) {
            c.no_answer.store(true);
            c.sampling->halt();
            return;
        }
    }
}

std::string seconds_text(std::int64_t ns)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.3f s", static_cast<double>(ns) / 1e9);
    return b;
}

// The first stimulus, timed from the run's start (window 0), on the recorder's thread: a late
// one is a `late_start` event, so that the empty windows before it and a wall time beyond
// --duration (which counts from the first stimulus) are explained. The release time tells the
// set-up's share (the caller's thread) from the sampler's (its wake-up and first settle).
void note_first_stimulus(run_context& c, const sample& s)
{
    c.first_stimulus_seen = true;
    const auto since_start = [&](std::uint64_t t) {
        return t > c.anchor_cycles ? static_cast<std::int64_t>(c.out.clock.ns(t - c.anchor_cycles))
                                   : std::int64_t{0};
    };
    c.out.sampler_release_ns = since_start(c.release_cycles);
    c.out.first_stimulus_ns = since_start(s.t0_cycles);
    if (c.out.first_stimulus_ns <= run_options::late_start_ns)
        return;
    c.out.late_start = true;
    c.rec->add_event(
        {c.anchor_unix + c.out.first_stimulus_ns, s.seq, "late_start", c.out.first_stimulus_ns,
         "first stimulus " + seconds_text(c.out.first_stimulus_ns) +
             " after the run began (sampler released after " +
             seconds_text(c.out.sampler_release_ns) + "); the windows before it are empty"});
}

// The recorder's thread: drains the ring into the recorder until the sampler is done and the
// ring empty. A store failure halts the sampler and is kept for finalise().
void record(run_context& c)
{
    auto& ring = *c.ring;
    auto& rec = *c.rec;
    const auto& counters = c.smp->counters();
    std::vector<sample> batch(8192);
    std::vector<db::event_row> posted;
    std::uint64_t seen_overflows = 0, seen_late = 0;
    // Intervals close on sample timestamps; without samples they close once no sample
    // for them can still be in flight (timeout plus re-sync after a loss, plus margin).
    const std::uint64_t slack =
        c.sc.timeout_cycles + c.sc.quiet_cycles + c.out.clock.from_ns(100e6);
    try {
        while (true) {
            std::size_t n = ring.pop(batch);
            if (n) {
                if (!c.first_stimulus_seen)
                    note_first_stimulus(c, batch[0]);
                if (!c.wire_alive.load() && !c.no_answer.load())
                    check_wire(c, std::span<const sample>(batch.data(), n));
                if (c.actions)
                    offer_to_actions(c, std::span<const sample>(batch.data(), n));
                rec.add(std::span<const sample>(batch.data(), n));
                continue;
            }
            drain_inbox(c, posted);
            auto ov = counters.overflows.load();
            if (ov != seen_overflows) {
                rec.add_overflows(ov - seen_overflows);
                rec.add_event({unix_now_ns(), counters.stimuli.load(), "overflow",
                               static_cast<std::int64_t>(ov - seen_overflows),
                               "ring full: the recorder fell behind"});
                seen_overflows = ov;
            }
            auto late = counters.late.load();
            if (late != seen_late) {
                rec.add_late(late - seen_late);
                seen_late = late;
            }
            if (c.stop.load())
                c.sampling->halt();
            if (c.sampling->done() && ring.size() == 0) {
                drain_inbox(c, posted);
                break;
            }
            const std::uint64_t now = hw::cycles();
            if (now > c.anchor_cycles + slack)
                rec.close_idle(now - slack);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    } catch (...) {
        c.failure = std::current_exception();
        c.sampling->halt();
        // Drain so the sampler never sees a full ring for long; nothing more is stored.
        while (!c.sampling->done())
            if (!ring.pop(batch))
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

std::string one_line(std::string t)
{
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
        t.pop_back();
    for (auto& ch : t)
        if (ch == '\n')
            ch = '|';
    return t;
}

db::event_row load_end_event(run_context& c, const load_result& r, const char* how)
{
    std::string d = std::string(how) + ": " + r.describe();
    char secs[32];
    std::snprintf(secs, sizeof secs, " after %.1f s", r.seconds);
    d += secs;
    if (r.killed)
        d += " (SIGKILL after the grace period)";
    if (!r.tail.empty())
        d += "; output: " + one_line(r.tail);
    c.out.load_end = r.describe();
    return {unix_now_ns(), c.smp->counters().stimuli.load(), "load", r.status, d};
}

// The load starts once the warm-up samples are taken; an early death is recorded and, with
// --load-required, ends the run.
void service_load(run_context& c)
{
    if (!c.load || c.load_reported)
        return;
    const std::uint64_t stimuli = c.smp->counters().stimuli.load();
    if (!c.load_started) {
        if (stimuli < c.opt.warmup || !c.wire_alive.load() || c.sampling->done())
            return;
        c.load_started = true;
        try {
            c.load->start();
        } catch (const error& e) {
            c.load_reported = true;
            c.out.load_died = true;
            c.out.load_end = "not started: " + e.message();
            c.post({unix_now_ns(), stimuli, "load", -1, c.out.load_end});
            if (c.opt.load_required) {
                c.load_stop.store(true);
                c.sampling->halt();
            }
            return;
        }
        c.post({unix_now_ns(), stimuli, "load", 0,
                "started after " + std::to_string(stimuli) + " samples (process group " +
                    std::to_string(c.load->pgid()) + ", guard " +
                    std::to_string(c.load->guard_pid()) + "): " + c.opt.load_cmd});
        return;
    }
    if (c.load->exited() && !c.sampling->done()) {
        c.load_reported = true;
        c.out.load_died = true;
        c.post(load_end_event(c, c.load->stop(), "exited by itself"));
        if (c.opt.load_required) {
            c.load_stop.store(true);
            c.sampling->halt();
        }
    }
}

// Progress, on the caller's thread, which otherwise only waits for the sampler.
void show_progress(run_context& c)
{
    const auto t_start = std::chrono::steady_clock::now();
    auto last_print = t_start;
    std::uint64_t last_stimuli = 0;
    const auto period = std::chrono::seconds(c.opt.progress == progress_mode::tty ? 1 : 10);
    while (!c.sampling->done()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (c.stop.load())
            c.sampling->halt();
        service_load(c);
        auto now = std::chrono::steady_clock::now();
        if (c.opt.progress != progress_mode::none && now - last_print >= period) {
            std::uint64_t st = c.smp->counters().stimuli.load();
            double dt = std::chrono::duration<double>(now - last_print).count();
            print_progress(c.opt, c.rec->snapshot(), st,
                           std::chrono::duration<double>(now - t_start).count(),
                           static_cast<double>(st - last_stimuli) / dt);
            last_stimuli = st;
            last_print = now;
        }
    }
    if (c.opt.progress == progress_mode::tty)
        std::fprintf(stderr, "\r\033[K");
}

// The sampler drives and senses, the recorder stores, the caller shows progress; returns
// when the sampler has ended (done, stopped, or a line failure) and the ring is drained.
void measure(run_context& c)
{
    if (c.opt.dead_wire_stimuli == 0)
        c.wire_alive.store(true); // --allow-silent
    c.release_cycles = hw::cycles();
    c.sampling->release();
    std::thread recorder_thread([&c] { record(c); });
    struct joiner // also when show_progress() throws: halt, so the recorder's loop ends
    {
        run_context& c;
        std::thread& t;
        ~joiner()
        {
            c.sampling->halt();
            t.join();
        }
    } join_recorder{c, recorder_thread};
    show_progress(c);
    c.sampling->join();
}

// --- finalisation -----------------------------------------------------------------------

// The load and the actions end with the measurement, whatever ended it; their last events
// go to the inbox.
void end_side_tasks(run_context& c)
{
    auto& out = c.out;
    if (c.load && c.load_started && !c.load_reported) {
        c.load_reported = true;
        const bool died = c.load->exited();
        c.post(load_end_event(c, c.load->stop(),
                              died ? "exited by itself" : "stopped at the end of the run"));
    }
    if (c.actions) {
        c.actions->finish();
        for (auto& e : c.actions->take_events())
            c.post(std::move(e));
        out.actions_fired = c.actions->fired();
        out.actions_held_off = c.actions->suppressed();
    }
    out.stopped_by_action = c.action_stop.load();
}

// The closing events (inbox, why it stopped, a line failure, real-time misses) and the last,
// partial window.
void close_recording(run_context& c)
{
    auto& out = c.out;
    auto& rec = *c.rec;
    const auto& counters = c.smp->counters();
    for (auto& e : c.inbox)
        rec.add_event(std::move(e));
    c.inbox.clear();
    if (out.no_answer)
        rec.add_event({unix_now_ns(), counters.stimuli.load(), "error",
                       static_cast<std::int64_t>(c.silent), out.no_answer_reason});
    else if (out.end == sampler_end::stopped && c.load_stop.load())
        rec.add_event({unix_now_ns(), counters.stimuli.load(), "signal", 0,
                       "stopped: the load exited and --load-required is set"});
    else if (out.end == sampler_end::stopped && c.action_stop.load())
        rec.add_event({unix_now_ns(), counters.stimuli.load(), "signal", 0,
                       "stopped by an --on-threshold stop action"});
    else if (out.end == sampler_end::stopped)
        rec.add_event({unix_now_ns(), counters.stimuli.load(), "signal", 0,
                       "stopped by signal before the requested end"});
    if (out.end == sampler_end::line_failure)
        rec.add_event({unix_now_ns(), counters.stimuli.load(), "error", out.line_failure.errnum,
                       out.line_failure.op ? out.line_failure.op : "line"});
    for (const auto& m : out.rt_misses)
        rec.add_event({c.anchor_unix, 0, "warning", 0, "real-time setting not obtained: " + m});
    if (c.metrics && !c.metrics->first_error().empty())
        rec.add_event({unix_now_ns(), counters.stimuli.load(), "warning", 0,
                       "metrics file not updated: " + c.metrics->first_error()});
    const std::uint64_t now = hw::cycles();
    const auto lasted = static_cast<std::int64_t>(c.out.clock.ns(now - c.anchor_cycles));
    if (!c.first_stimulus_seen && lasted > run_options::late_start_ns) {
        out.late_start = true;
        out.sampler_release_ns =
            static_cast<std::int64_t>(c.out.clock.ns(c.release_cycles - c.anchor_cycles));
        rec.add_event({unix_now_ns(), 0, "late_start", lasted,
                       "no stimulus in the " + seconds_text(lasted) +
                           " the run lasted (sampler released after " +
                           seconds_text(out.sampler_release_ns) + ")"});
    }
    rec.finish(now);
}

// How the run ended, the closing events and the last (partial) interval, the run's final
// status in the store. A store failure is rethrown after the status is set, if it can be.
run_outcome finalise(run_context& c)
{
    auto& out = c.out;
    auto& rec = *c.rec;
    const auto& counters = c.smp->counters();
    out.rt_settings = c.rt->summary();
    out.rt_misses = c.rt->misses();
    out.line_failure = c.wire.error();
    out.triggers = counters.triggers.load();
    if (out.end == sampler_end::line_failure && !out.line_failure)
        out.line_failure = hw::line_error{EIO, "sense"};

    // The dead-wire check failed, or the run reached its bound before the check could end and
    // no stimulus was ever answered: no answer, a failed run.
    const bool all_silent = !c.wire_alive.load() && c.silent > 0 && out.end == sampler_end::done;
    if ((c.no_answer.load() || all_silent) && out.end != sampler_end::line_failure) {
        out.no_answer = true;
        const auto [stim, resp] = c.wire.identity().line_names();
        out.no_answer_reason =
            std::string("no answer: ") + (c.no_answer.load() ? "the first " : "all ") +
            std::to_string(c.silent) + " stimuli on " + stim + " timed out waiting for " + resp +
            " (backend '" + c.wire.describe() + "')";
    }
    out.status = c.failure || out.no_answer || out.end == sampler_end::line_failure
                     ? db::run_status::failed
                 : out.end == sampler_end::stopped ? db::run_status::interrupted
                                                   : db::run_status::complete;
    end_side_tasks(c);
    if (!c.failure) {
        try {
            close_recording(c);
        } catch (...) {
            c.failure = std::current_exception();
            out.status = db::run_status::failed;
        }
    }
    out.summary = rec.summary();
    out.intervals = rec.intervals_committed();
    if (c.metrics) {
        // The last figures, marked as no longer recording.
        c.metrics->write_noexcept(out.summary, rec.run_histogram(), out.intervals, false);
        out.metrics_error = c.metrics->first_error();
    }
    out.events_dropped = rec.events_dropped();
    if (c.store) {
        try {
            c.store->finish_run(out.run_id, out.status, unix_now_ns());
        } catch (...) {
            if (!c.failure)
                c.failure = std::current_exception();
        }
    }
    if (c.failure)
        std::rethrow_exception(c.failure);
    c.rt->check_strict();
    return std::move(out);
}

} // namespace

run_outcome execute_run(const run_options& opt, hw::lines& wire, const std::atomic<bool>& stop)
{
    run_context c{opt, wire, stop};
    set_up(c);
    measure(c);
    return finalise(c);
}

} // namespace irqloop::logger
