// SPDX-License-Identifier: MIT
#include "run.hpp"

#include "error.hpp"
#include "recorder.hpp"
#include "store.hpp"
#include "units.hpp"
#include "version.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <random>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

namespace irqloop::logger {

namespace {

std::int64_t unix_now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
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
        eta = format_duration(std::max(0.0, static_cast<double>(opt.duration_ns) - elapsed_s * 1e9));
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s samples %s/s ETA %s | min %s avg %s max %s | lost %llu disturbed %llu",
                  fmt_count(static_cast<double>(l.samples)).c_str(), fmt_count(rate).c_str(),
                  eta.c_str(), format_duration(static_cast<double>(l.min_ns)).c_str(),
                  format_duration(l.mean_ns).c_str(), format_duration(static_cast<double>(l.max_ns)).c_str(),
                  static_cast<unsigned long long>(l.lost), static_cast<unsigned long long>(l.disturbed));
    if (opt.progress == progress_mode::tty)
        std::fprintf(stderr, "\r\033[K%s", line);
    else
        std::fprintf(stderr, "irqloop: run: %s\n", line);
}

} // namespace

std::string make_uuid()
{
    std::random_device rd;
    std::uint64_t a = (static_cast<std::uint64_t>(rd()) << 32) | rd();
    std::uint64_t b = (static_cast<std::uint64_t>(rd()) << 32) | rd();
    a = (a & ~0xf000ull) | 0x4000ull;                 // version 4
    b = (b & ~(3ull << 62)) | (2ull << 62);          // RFC 4122 variant
    char s[40];
    std::snprintf(s, sizeof s, "%08llx-%04llx-%04llx-%04llx-%012llx",
                  static_cast<unsigned long long>(a >> 32), static_cast<unsigned long long>((a >> 16) & 0xffff),
                  static_cast<unsigned long long>(a & 0xffff), static_cast<unsigned long long>(b >> 48),
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

std::string join_command_line(int argc, char** argv)
{
    std::string s;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                       "0123456789-_=:,./+@%") == std::string::npos;
        if (!s.empty())
            s += ' ';
        if (plain) {
            s += a;
        } else {
            s += '\'';
            for (char c : a)
                s += c == '\'' ? std::string("'\\''") : std::string(1, c);
            s += '\'';
        }
    }
    return s;
}

run_outcome execute_run(const run_options& opt, hw::lines& wire, const std::atomic<bool>& stop)
{
    run_outcome out;
    out.clock = hw::process_clock(opt.force_tsc);
    const auto& clk = out.clock;

    base::rt_session rt(opt.rt);

    wire.start();
    struct stopper
    {
        hw::lines& w;
        ~stopper() { w.stop(); }
    } stop_wire{wire};

    if (!opt.trigger_line.empty() && !wire.open_trigger(opt.trigger_line))
        throw error("open trigger line '" + opt.trigger_line + "'",
                    "backend '" + wire.describe() + "' has no trigger line",
                    "use a gpiod backend, or drop --trigger-line");

    wire.drive(false);
    const std::uint64_t drive_cycles = measure_drive_cycles(wire, false);
    out.drive_ns = clk.ns(drive_cycles);
    const std::uint64_t poll_cycles = measure_poll_cycles(wire);
    out.poll_ns = clk.ns(poll_cycles);
    // A quiet poll loop repeats within a few poll periods; 20 of them, and at least 1 us,
    // means something else ran on this CPU (an interrupt, an SMI, another task).
    out.gap_limit_ns = opt.gap_limit_ns >= 0
                           ? opt.gap_limit_ns
                           : std::max<std::int64_t>(1000, static_cast<std::int64_t>(20 * out.poll_ns));

    sampler_config sc;
    sc.samples = opt.samples;
    sc.duration_cycles = clk.from_ns(static_cast<double>(opt.duration_ns));
    sc.interval_cycles = clk.from_ns(static_cast<double>(opt.interval_ns));
    sc.jitter_cycles = clk.from_ns(static_cast<double>(opt.jitter_ns));
    sc.timeout_cycles = clk.from_ns(static_cast<double>(opt.timeout_ns));
    sc.gap_limit_cycles = clk.from_ns(static_cast<double>(out.gap_limit_ns));
    const std::int64_t quiet_ns = opt.quiet_ns >= 0 ? opt.quiet_ns : std::min<std::int64_t>(opt.timeout_ns, 1'000'000);
    sc.quiet_cycles = clk.from_ns(static_cast<double>(quiet_ns));
    sc.rearm_cycles = clk.from_ns(std::max(1000.0, static_cast<double>(opt.interval_ns) / 2));
    sc.seed = opt.seed;
    sc.both_edges = wire.far_end_answers_both_edges();
    sc.far_end_follows = sc.both_edges && wire.far_end_follows();
    sc.trigger_above_cycles = opt.trigger_above_ns ? clk.from_ns(static_cast<double>(opt.trigger_above_ns)) : 0;

    spsc_ring<sample> ring(opt.ring_samples);
    sampler smp(wire, ring, sc);
    std::atomic<bool> halt{false}; // the sampler's stop flag: the caller's stop, or a failure
    std::atomic<bool> go{false}, started{false}, sampler_done{false};
    std::thread sampler_thread([&] {
        rt.apply_to_this_thread();
        started.store(true);
        started.notify_one();
        // Block, not spin: a SCHED_FIFO thread spinning here would starve the set-up work
        // on this CPU and use up the RT throttling budget before the first stimulus.
        go.wait(false);
        if (!halt.load())
            out.end = smp.run(halt);
        sampler_done.store(true, std::memory_order_release);
    });
    // Until the measurement is under way, any error must also release and join the thread.
    struct launch_guard
    {
        std::atomic<bool>& halt;
        std::atomic<bool>& go;
        std::thread& t;
        bool armed = true;
        ~launch_guard()
        {
            if (armed) {
                halt.store(true);
                go.store(true);
                go.notify_one();
                t.join();
            }
        }
    } guard{halt, go, sampler_thread};
    started.wait(false);
    rt.check_strict();

    std::unique_ptr<db::store> store;
    out.uuid = make_uuid();
    if (!opt.db_path.empty()) {
        store = std::make_unique<db::store>(opt.db_path);
        db::run_row r;
        r.uuid = out.uuid;
        r.label = opt.label;
        r.kind = opt.kind;
        r.start_unix_ns = unix_now_ns();
        r.command_line = opt.command_line;
        r.version = irqloop::version;
        r.uname = uname_string();
        r.hostname = host_name();
        r.backend = wire.describe();
        r.clock_source = clk.source;
        r.clock_hz = clk.hz;
        r.clock_read_ns = clk.read_cost_ns;
        r.interval_ns = opt.interval_ns;
        r.jitter_ns = opt.jitter_ns;
        r.timeout_ns = opt.timeout_ns;
        r.threshold_ns = opt.threshold_ns;
        r.gap_limit_ns = out.gap_limit_ns;
        r.stats_interval_ns = opt.stats_interval_ns;
        r.warmup_samples = opt.warmup;
        r.samples_requested = opt.samples;
        r.duration_ns = opt.duration_ns;
        r.rt_settings = rt.summary();
        r.target = opt.target;
        r.load = opt.load;
        for (auto& m : wire.metadata())
            r.metadata.emplace_back(m.key, m.value);
        r.metadata.emplace_back("logger.poll_ns", std::to_string(out.poll_ns));
        r.metadata.emplace_back("logger.drive_ns", std::to_string(out.drive_ns));
        r.metadata.emplace_back("logger.quiet_ns", std::to_string(quiet_ns));
        r.metadata.emplace_back("logger.both_edges", sc.both_edges ? "yes" : "no");
        r.metadata.emplace_back("logger.answer", sc.far_end_follows ? "follow" : "toggle");
        r.metadata.emplace_back("logger.clock_invariant", clk.invariant ? "yes" : "no");
        r.metadata.emplace_back("logger.clock_agreement_ppm", std::to_string(clk.agreement_ppm));
        r.metadata.emplace_back("logger.keep_disturbed", opt.keep_disturbed ? "yes" : "no");
        if (!opt.trigger_line.empty())
            r.metadata.emplace_back("logger.trigger", opt.trigger_line + " above " +
                                                          std::to_string(opt.trigger_above_ns) + " ns");
        out.run_id = store->begin_run(r);
    }

    const std::uint64_t anchor_cycles = hw::cycles();
    const std::int64_t anchor_unix = unix_now_ns();
    recorder_config rc;
    rc.clock = clk;
    rc.threshold_ns = opt.threshold_ns;
    rc.warmup_samples = opt.warmup;
    rc.stats_interval_ns = opt.stats_interval_ns;
    rc.gap_limit_ns = out.gap_limit_ns;
    rc.top_k = opt.top_k;
    rc.max_exceedances = opt.max_exceedances;
    rc.raw = opt.raw;
    rc.keep_disturbed = opt.keep_disturbed;
    rc.anchor_unix_ns = anchor_unix;
    rc.anchor_cycles = anchor_cycles;
    recorder rec(rc, store.get(), out.run_id);
    guard.armed = false;
    go.store(true);
    go.notify_one();

    std::exception_ptr failure;
    std::thread recorder_thread([&] {
        std::vector<sample> batch(8192);
        std::uint64_t seen_overflows = 0, seen_late = 0;
        // Intervals close on sample timestamps; without samples they close once no sample
        // for them can still be in flight (timeout plus re-sync after a loss, plus margin).
        const std::uint64_t slack = sc.timeout_cycles + sc.quiet_cycles + clk.from_ns(100e6);
        try {
            while (true) {
                std::size_t n = ring.pop(batch);
                if (n) {
                    rec.add(std::span<const sample>(batch.data(), n));
                    continue;
                }
                auto ov = smp.counters().overflows.load();
                if (ov != seen_overflows) {
                    rec.add_overflows(ov - seen_overflows);
                    rec.add_event({unix_now_ns(), smp.counters().stimuli.load(), "overflow",
                                   static_cast<std::int64_t>(ov - seen_overflows),
                                   "ring full: the recorder fell behind"});
                    seen_overflows = ov;
                }
                auto late = smp.counters().late.load();
                if (late != seen_late) {
                    rec.add_late(late - seen_late);
                    seen_late = late;
                }
                if (stop.load())
                    halt.store(true);
                if (sampler_done.load(std::memory_order_acquire) && ring.size() == 0)
                    break;
                const std::uint64_t now = hw::cycles();
                if (now > anchor_cycles + slack)
                    rec.close_idle(now - slack);
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        } catch (...) {
            failure = std::current_exception();
            halt.store(true);
            // Drain so the sampler never sees a full ring for long; nothing more is stored.
            while (!sampler_done.load())
                if (!ring.pop(batch))
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });

    // Progress, on the caller's thread, which otherwise only waits.
    auto t_start = std::chrono::steady_clock::now();
    auto last_print = t_start;
    std::uint64_t last_stimuli = 0;
    const auto period = std::chrono::seconds(opt.progress == progress_mode::tty ? 1 : 10);
    while (!sampler_done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (stop.load())
            halt.store(true);
        auto now = std::chrono::steady_clock::now();
        if (opt.progress != progress_mode::none && now - last_print >= period) {
            std::uint64_t st = smp.counters().stimuli.load();
            double dt = std::chrono::duration<double>(now - last_print).count();
            print_progress(opt, rec.snapshot(), st, std::chrono::duration<double>(now - t_start).count(),
                           static_cast<double>(st - last_stimuli) / dt);
            last_stimuli = st;
            last_print = now;
        }
    }
    sampler_thread.join();
    recorder_thread.join();
    if (opt.progress == progress_mode::tty)
        std::fprintf(stderr, "\r\033[K");

    out.rt_settings = rt.summary();
    out.rt_misses = rt.misses();
    out.line_failure = wire.error();
    out.triggers = smp.counters().triggers.load();
    if (out.end == sampler_end::line_failure && !out.line_failure)
        out.line_failure = hw::line_error{EIO, "sense"};

    out.status = failure || out.end == sampler_end::line_failure ? db::run_status::failed
                 : out.end == sampler_end::stopped              ? db::run_status::interrupted
                                                                : db::run_status::complete;
    if (!failure) {
        try {
            if (out.end == sampler_end::stopped)
                rec.add_event({unix_now_ns(), smp.counters().stimuli.load(), "signal", 0,
                               "stopped by signal before the requested end"});
            if (out.end == sampler_end::line_failure)
                rec.add_event({unix_now_ns(), smp.counters().stimuli.load(), "error",
                               out.line_failure.errnum, out.line_failure.op ? out.line_failure.op : "line"});
            for (const auto& m : out.rt_misses)
                rec.add_event({anchor_unix, 0, "warning", 0, "real-time setting not obtained: " + m});
            rec.finish(hw::cycles());
        } catch (...) {
            failure = std::current_exception();
            out.status = db::run_status::failed;
        }
    }
    out.summary = rec.summary();
    out.intervals = rec.intervals_committed();
    if (store) {
        try {
            store->finish_run(out.run_id, out.status, unix_now_ns());
        } catch (...) {
            if (!failure)
                failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
    rt.check_strict();
    return out;
}

} // namespace irqloop::logger
