// SPDX-License-Identifier: MIT
// execute_run(): the core session (session-core.hpp) through three phases, in the manner of
// rtla's tool_ops: set_up() (clock, real-time, calibration, configuration, the run row),
// measure() (the sampler, the recorder's thread, the caller's ticks) and finalise() (closing
// events, final status). All else a run does is a plug-in (session-plugins.hpp).
#include "run.hpp"

#include "error.hpp"
#include "session-core.hpp"
#include "session-plugins.hpp"
#include "thread-name.hpp"
#include "version.hpp"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <pthread.h>
#include <random>
#include <sys/utsname.h>
#include <unistd.h>

namespace irqloop::logger
{

std::int64_t unix_now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string seconds_text(std::int64_t ns)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.3f s", static_cast<double>(ns) / 1e9);
    return b;
}

// --- the session's own parts ------------------------------------------------------------

sampler_thread::sampler_thread(sampler& smp, base::rt_session& rt, sampler_end& end)
    : thread_([this, &smp, &rt, &end] {
          base::name_this_thread("irqloop-sampler");
          // No signal handler runs on the measuring thread: a mark (SIGUSR1) or a stop
          // signal goes to another thread of the process, which the kernel then picks.
          sigset_t block;
          sigemptyset(&block);
          for (int sig : {SIGUSR1, SIGINT, SIGTERM, SIGHUP})
              sigaddset(&block, sig);
          pthread_sigmask(SIG_BLOCK, &block, nullptr);
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

sampler_thread::~sampler_thread()
{
    halt_.store(true);
    release();
    join();
}

void sampler_thread::release()
{
    go_.store(true);
    go_.notify_one();
}

void sampler_thread::join()
{
    if (thread_.joinable())
        thread_.join();
}

std::int64_t session::since_start_ns(std::uint64_t t) const noexcept
{
    return t > anchor_cycles ? static_cast<std::int64_t>(out.clock.ns(t - anchor_cycles))
                             : std::int64_t{0};
}

void session::post(db::event_row e)
{
    std::lock_guard lk(inbox_mu_);
    inbox_.push_back(std::move(e));
}

void session::drain_inbox()
{
    {
        std::lock_guard lk(inbox_mu_);
        posted_.swap(inbox_);
    }
    for (auto& e : posted_)
        add_event(std::move(e));
    posted_.clear();
}

void session::claim_stop(db::event_row why)
{
    if (!stop_event_)
        stop_event_ = std::move(why);
}

std::optional<db::event_row> session::take_stop_event()
{
    if (!stop_event_ && out.end == sampler_end::stopped)
        stop_event_ = db::event_row{unix_now_ns(), stimuli(), "signal", 0,
                                    "stopped by signal before the requested end"};
    return std::exchange(stop_event_, std::nullopt);
}

namespace
{

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

// --- set-up -----------------------------------------------------------------------------

// The loop's own costs, and from them the gap limit that marks a sample disturbed.
void calibrate_loop(session& c)
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
    if (c.opt.timing.gap_limit_ns >= 0) {
        c.out.gap_limit_ns = c.opt.timing.gap_limit_ns;
        c.out.gap_limit_rule = "--gap-limit";
    } else {
        const auto a = auto_gap_limit(c.out.poll_ns, c.out.drive_ns, c.out.clock_step_ns,
                                      device ? device->device_bracket_ns() : 0);
        c.out.gap_limit_ns = a.ns;
        c.out.gap_limit_rule = std::string("auto: ") + a.rule;
    }
}

sampler_config make_sampler_config(const session& c)
{
    const auto& opt = c.opt;
    const auto& clk = c.out.clock;
    auto cycles_of = [&](std::int64_t ns) { return clk.from_ns(static_cast<double>(ns)); };
    sampler_config sc;
    sc.samples = opt.timing.samples;
    sc.duration_cycles = cycles_of(opt.timing.duration_ns);
    sc.interval_cycles = cycles_of(opt.timing.interval_ns);
    sc.jitter_cycles = cycles_of(opt.timing.jitter_ns);
    sc.timeout_cycles = cycles_of(opt.timing.timeout_ns);
    sc.gap_limit_cycles = cycles_of(c.out.gap_limit_ns);
    sc.quiet_cycles = cycles_of(c.quiet_ns);
    sc.rearm_cycles =
        clk.from_ns(std::max(1000.0, static_cast<double>(opt.timing.interval_ns) / 2));
    sc.seed = opt.timing.seed;
    sc.both_edges = c.wire.far_end_answers_both_edges();
    sc.far_end_follows = sc.both_edges && c.wire.far_end_follows();
    sc.trigger_above_cycles =
        opt.timing.trigger_above_ns ? cycles_of(opt.timing.trigger_above_ns) : 0;
    sc.cycles_per_ns = clk.hz / 1e9;
    return sc;
}

db::run_row make_run_row(const session& c)
{
    const auto& opt = c.opt;
    const auto& clk = c.out.clock;
    db::run_row r;
    r.uuid = c.out.uuid;
    r.label = opt.recording.label;
    r.kind = opt.recording.kind;
    r.start_unix_ns = unix_now_ns();
    r.command_line = opt.recording.command_line;
    r.version = irqloop::version;
    r.uname = uname_string();
    r.hostname = host_name();
    r.backend = c.wire.describe();
    r.clock_source = clk.source;
    r.clock_hz = clk.hz;
    r.clock_read_ns = clk.read_cost_ns;
    r.interval_ns = opt.timing.interval_ns;
    r.jitter_ns = opt.timing.jitter_ns;
    r.timeout_ns = opt.timing.timeout_ns;
    r.threshold_ns = opt.recording.threshold_ns;
    r.gap_limit_ns = c.out.gap_limit_ns;
    r.stats_interval_ns = opt.recording.stats_interval_ns;
    r.warmup_samples = opt.recording.warmup;
    r.samples_requested = opt.timing.samples;
    r.duration_ns = opt.timing.duration_ns;
    r.rt_settings = c.rt->summary();
    r.target = opt.recording.target;
    r.load = opt.recording.load;
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
    meta("logger.keep_disturbed", opt.recording.keep_disturbed ? "yes" : "no");
    // How a sample is judged disturbed: by the width of its bracket (the polls around the
    // answer plus drive()), never by a gap elsewhere in the wait. Version-1 runs lack the key.
    meta("logger.disturbed_rule", "bracket");
    // Each window's latency histogram is stored (interval_histograms, schema version 3) in
    // these buckets; runs recorded before have no key and no rows.
    meta("logger.window_histogram", db::window_buckets::scheme);
    if (!opt.timing.trigger_line.empty())
        meta("logger.trigger", opt.timing.trigger_line + " above " +
                                   std::to_string(opt.timing.trigger_above_ns) + " ns");
    for (auto& [k, v] : preflight_metadata(opt.recording.preflight))
        r.metadata.emplace_back(k, v);
    if (!opt.soak.load_cmd.empty()) {
        meta("load.command", opt.soak.load_cmd);
        meta("load.required", opt.soak.load_required ? "yes" : "no");
        meta("load.grace_ns", std::to_string(opt.soak.load_grace_ns));
    }
    std::string acts;
    for (const auto& a : opt.soak.actions)
        acts += (acts.empty() ? "" : "; ") + a.text;
    if (!acts.empty()) {
        meta("actions.on_threshold", acts);
        meta("actions.holdoff_ns", std::to_string(opt.soak.action_holdoff_ns));
    }
    meta("logger.max_events", std::to_string(opt.recording.max_events));
    r.target_info = c.out.target_info;
    meta("logger.smi_counter",
         c.smi->available() ? c.smi->device() + " MSR 0x34" : "n/a: " + c.smi->why());
    return r;
}

recorder_config make_recorder_config(const session& c)
{
    recorder_config rc;
    rc.clock = c.out.clock;
    rc.threshold_ns = c.opt.recording.threshold_ns;
    rc.warmup_samples = c.opt.recording.warmup;
    rc.stats_interval_ns = c.opt.recording.stats_interval_ns;
    rc.gap_limit_ns = c.out.gap_limit_ns;
    rc.top_k = c.opt.recording.top_k;
    rc.max_exceedances = c.opt.recording.max_exceedances;
    rc.max_events = c.opt.recording.max_events;
    rc.raw = c.opt.recording.raw;
    rc.keep_disturbed = c.opt.recording.keep_disturbed;
    rc.anchor_unix_ns = c.anchor_unix;
    rc.anchor_cycles = c.anchor_cycles;
    if (c.smi->available())
        rc.smi_read = [&s = *c.smi] { return s.read(); };
    return rc;
}

// Clock, real-time settings, the wire and its trigger, calibration, the sampler parked on
// its thread, the plug-ins' start, the run row: everything that can be refused, before the
// first stimulus.
void set_up(session& c)
{
    c.out.clock = hw::process_clock(c.opt.timing.force_tsc);
    // The results file first: a refused file refuses the run before the wire is started (a
    // shm wire this run created is then removed again, docs/commands/exit-status.md).
    if (!c.opt.recording.db_path.empty()) {
        c.store = std::make_unique<db::store>(c.opt.recording.db_path);
        // Another process holding the write lock: each commit keeps trying for one window.
        c.store->set_busy_retry(
            std::chrono::milliseconds(c.opt.recording.stats_interval_ns / 1'000'000));
    }
    // The trigger line too: a backend without one refuses before its wire is started.
    hw::trigger_line* trigger = hw::find<hw::trigger_line>(c.wire);
    if (!c.opt.timing.trigger_line.empty() && trigger)
        trigger->open_trigger(c.opt.timing.trigger_line);
    else if (!c.opt.timing.trigger_line.empty())
        throw error("open trigger line '" + c.opt.timing.trigger_line + "'",
                    "backend '" + c.wire.describe() + "' has no trigger line",
                    "use a gpiod backend, or drop --trigger-line");
    c.rt.emplace(c.opt.rt);
    // --strict-rt refuses before the wire starts (a shm segment this run made goes again).
    c.rt->check_strict_early();
    c.started.emplace(c.wire);
    calibrate_loop(c);
    // After a loss, the response must stay still this long before the next stimulus.
    c.quiet_ns = c.opt.timing.quiet_ns >= 0
                     ? c.opt.timing.quiet_ns
                     : std::min<std::int64_t>(c.opt.timing.timeout_ns, 1'000'000);
    c.sc = make_sampler_config(c);
    c.ring.emplace(c.opt.timing.ring_samples);
    c.smp.emplace(c.wire, *c.ring, c.sc);
    c.sampling.emplace(*c.smp, *c.rt, c.out.end);
    c.rt->check_strict();
    c.out.uuid = make_uuid();
    for (auto* p : c.plugins)
        p->on_start(c);
    c.smi.emplace(c.opt.recording.smi_root, c.opt.rt.cpu);
    // The target's set-up (--target-info), asked once: the wire is up and the sampler parked,
    // nothing is sent before it is done, and the run goes on however the command ends.
    if (!c.opt.recording.target_info.command.empty())
        c.out.target_info = run_target_info(c.opt.recording.target_info, c.stop);
    if (c.store)
        c.out.run_id = c.store->begin_run(make_run_row(c));
    c.anchor_cycles = hw::cycles();
    c.anchor_unix = unix_now_ns();
    recorder_config rc = make_recorder_config(c);
    rc.on_window = [&c](const db::summary_row& s, const histogram& h, std::uint64_t windows) {
        for (auto* p : c.plugins)
            p->on_window(s, h, windows);
    };
    c.rec.emplace(rc, c.store.get(), c.out.run_id);
}

// --- the measurement --------------------------------------------------------------------

// The recorder's thread: drains the ring into the plug-ins and the recorder until the
// sampler is done and the ring empty. A store failure halts the sampler and is kept for
// finalise().
void record(session& c)
{
    auto& ring = *c.ring;
    std::vector<sample> batch(8192);
    // Intervals close on sample timestamps; without samples they close once no sample
    // for them can still be in flight (timeout plus re-sync after a loss, plus margin).
    const std::uint64_t slack =
        c.sc.timeout_cycles + c.sc.quiet_cycles + c.out.clock.from_ns(100e6);
    try {
        while (true) {
            if (const std::size_t n = ring.pop(batch)) {
                const std::span<const sample> got(batch.data(), n);
                for (auto* p : c.plugins)
                    p->on_batch(got);
                c.rec->add(got);
                continue;
            }
            c.drain_inbox();
            for (auto* p : c.plugins)
                p->on_idle();
            if (c.sampler_done() && ring.size() == 0) {
                c.drain_inbox();
                break;
            }
            const std::uint64_t now = hw::cycles();
            if (now > c.anchor_cycles + slack)
                c.rec->close_idle(now - slack);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    } catch (...) {
        c.failure = std::current_exception();
        c.halt();
        // Drain so the sampler never sees a full ring for long; nothing more is stored.
        while (!c.sampler_done())
            if (!ring.pop(batch))
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// The sampler drives and senses, the recorder stores, the caller relays the stop flag and
// ticks the plug-ins; returns when the sampler has ended (done, stopped, or a line failure)
// and the ring is drained.
void measure(session& c)
{
    c.release_cycles = hw::cycles();
    c.sampling->release();
    std::thread recorder_thread([&c] {
        base::name_this_thread("irqloop-record");
        record(c);
    });
    struct joiner // also when a tick throws: halt, so the recorder's loop ends
    {
        session& c;
        std::thread& t;
        ~joiner()
        {
            c.halt();
            t.join();
        }
    } join_recorder{c, recorder_thread};
    while (!c.sampler_done()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (c.stop.load())
            c.halt();
        for (auto* p : c.plugins)
            p->on_tick();
    }
    c.sampling->join();
}

// --- finalisation -----------------------------------------------------------------------

// The closing events of the core (why it stopped, a line failure, real-time misses) and the
// last, partial window.
void close_recording(session& c)
{
    auto& out = c.out;
    if (auto why = c.take_stop_event())
        c.add_event(std::move(*why));
    if (out.end == sampler_end::line_failure)
        c.add_event({unix_now_ns(), c.stimuli(), "error", out.line_failure.errnum,
                     out.line_failure.op ? out.line_failure.op : "line"});
    for (const auto& m : out.rt_misses)
        c.add_event({c.anchor_unix, 0, "warning", 0, "real-time setting not obtained: " + m});
    c.rec->finish(hw::cycles());
}

// How the run ended, the plug-ins' closing events and the last (partial) interval, the run's
// final status in the store. A store failure is rethrown after the status is set, if it can be.
run_outcome finalise(session& c)
{
    auto& out = c.out;
    out.rt_settings = c.rt->summary();
    out.rt_misses = c.rt->misses();
    out.line_failure = c.wire.error();
    out.triggers = c.counters().triggers.load();
    if (out.end == sampler_end::line_failure && !out.line_failure)
        out.line_failure = hw::line_error{EIO, "sense"};
    c.drain_inbox(); // what the plug-ins posted last, before their closing events
    for (auto* p : c.plugins)
        p->on_end(out);
    out.status = c.failure || out.no_answer || out.end == sampler_end::line_failure
                     ? db::run_status::failed
                 : out.end == sampler_end::stopped ? db::run_status::interrupted
                                                   : db::run_status::complete;
    if (!c.failure) {
        try {
            close_recording(c);
        } catch (...) {
            c.failure = std::current_exception();
            out.status = db::run_status::failed;
        }
    }
    out.summary = c.rec->summary();
    out.intervals = c.rec->intervals_committed();
    out.events_dropped = c.rec->events_dropped();
    out.lost_after_warmup = c.rec->lost_after_warmup();
    try {
        for (auto* p : c.plugins)
            p->on_finish(out, c.rec->run_histogram());
    } catch (...) {
        if (!c.failure)
            c.failure = std::current_exception();
    }
    for (auto* p : c.plugins)
        p->on_closed(out, c.rec->run_histogram());
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

run_outcome execute_run(const run_options& opt, hw::lines& wire, const std::atomic<bool>& stop,
                        std::span<run_plugin* const> extra)
{
    session c{opt, wire, stop, {}};
    const auto own = engine_plugins(c);
    for (const auto& p : own)
        c.plugins.push_back(p.get());
    c.plugins.insert(c.plugins.end(), extra.begin(), extra.end());
    set_up(c);
    measure(c);
    return finalise(c);
}

} // namespace irqloop::logger
