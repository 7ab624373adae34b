// SPDX-License-Identifier: MIT
// `irqloop run` and `irqloop calibrate`: parse options, open the wire, measure, summarise.
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "floor-rule.hpp"
#include "gates.hpp"
#include "read.hpp"
#include "registry.hpp"
#include "rt-options.hpp"
#include "run-request.hpp"
#include "run.hpp"
#include "stop-signal.hpp"
#include "table.hpp"
#include "units.hpp"

#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace po = boost::program_options;

namespace irqloop::logger
{

namespace
{

// argv joined with shell quoting where needed: the command line stored with the run.
std::string join_command_line(int argc, char** argv)
{
    std::string s;
    for (int i = 0; i < argc; ++i)
        s += (s.empty() ? "" : " ") + shell_word(argv[i]);
    return s;
}

struct raw_options {
    std::string hw = "sim", samples, duration, interval = "100us", jitter = "0", timeout = "10ms",
                threshold = "30us", warmup = "1000", stats_interval = "10s", gap_limit = "auto",
                top_k = "1000", max_exceedances = "1M", db = "irqloop.db", label, target, load,
                trigger_line, trigger_above = "50us", seed = "1", progress = "auto", load_cmd,
                load_grace = "5s", action_holdoff = "10s", max_events = "100K",
                preflight_root = "/";
    std::string metrics_file;
    std::vector<std::string> on_threshold;
    std::string fail_above;
    std::vector<std::string> fail_p;
    bool fail_on_lost = false, fail_on_overflow = false;
    bool load_required = false;
    base::rt_options rt;
    bool raw = false, keep_disturbed = false, force_tsc = false, no_db = false, quiet = false,
         allow_silent = false;
};

po::options_description describe_options(raw_options& o, bool floor)
{
    po::options_description d(
        floor ? "irqloop calibrate: measure the logger's own loop floor with the output "
                "jumpered to the input; stored as a run of kind 'floor'. report and compare "
                "--floor-corrected subtract from later runs what it proves, the smallest latency "
                "its samples prove (exact with --raw); a device-timed backend (ftdi, "
                "offset=auto) takes that into later runs' offset on the same wiring and "
                "--db.\n\n"
                "usage: irqloop calibrate [options]\n\noptions"
              : "irqloop run: measure end-to-end latency through the wire.\n\n"
                "usage: irqloop run [options]\n\noptions");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("hw", po::value(&o.hw)->default_value(o.hw), "backend spec (see 'backends' below)")
        ("samples,n", po::value(&o.samples), "stop after this many stimuli (K/M/G suffixes: 100M)")
        ("duration,D", po::value(&o.duration), "stop after this long (ns/us/ms/s/m/h/d: 8h)")
        ("interval,i", po::value(&o.interval)->default_value(o.interval), "stimulus period; 0 = as fast as possible")
        ("jitter", po::value(&o.jitter)->default_value(o.jitter), "random extra delay in [0, jitter) per stimulus, against phase lock")
        ("timeout", po::value(&o.timeout)->default_value(o.timeout), "a response later than this is counted lost")
        ("threshold", po::value(&o.threshold)->default_value(o.threshold), "samples above this are exceedances (kept, counted as % above)")
        ("warmup", po::value(&o.warmup)->default_value(o.warmup), "first N samples excluded from WARM MAX")
        ("stats-interval", po::value(&o.stats_interval)->default_value(o.stats_interval), "length of one statistics window (one database commit)")
        ("gap-limit", po::value(&o.gap_limit)->default_value(o.gap_limit), "a sample whose bracket (drive() plus the polls around its answer) is wider than this is flagged disturbed; auto = max(1us, 20 x median poll period, 4 x median drive(), 3 x the cycle counter's step)")
        ("keep-disturbed", po::bool_switch(&o.keep_disturbed), "count disturbed samples in the statistics (they are always counted and flagged)")
        ("top-k", po::value(&o.top_k)->default_value(o.top_k), "number of worst samples kept")
        ("max-exceedances", po::value(&o.max_exceedances)->default_value(o.max_exceedances), "cap on stored samples above --threshold (the rest are counted)")
        ("raw", po::bool_switch(&o.raw), "store every sample (about 21 bytes each; for short runs)")
        ("db", po::value(&o.db)->default_value(o.db), "SQLite results file (created if missing)")
        ("no-db", po::bool_switch(&o.no_db), "do not store; print the summary only")
        ("label,l", po::value(&o.label), "label for comparisons, e.g. rt-idle")
        ("target", po::value(&o.target), "free text: the target board, kernel and config")
        ("load", po::value(&o.load), "free text: the load on the target, e.g. 'hackbench -l 1000' (default: the --load-cmd)")
        ("load-cmd", po::value(&o.load_cmd), "start this /bin/sh command once the warm-up is done, in its own process group; stopped when the run ends, and by its guard (irqloop-load-guard) when irqloop dies (its start, exit status and output tail are events)")
        ("load-required", po::bool_switch(&o.load_required), "end the run when the --load-cmd load exits by itself")
        ("load-grace", po::value(&o.load_grace)->default_value(o.load_grace), "SIGTERM to the load's group, then SIGKILL after this long")
        ("on-threshold", po::value(&o.on_threshold)->composing(), "on a sample above --threshold: shell,command=CMD | signal,pid=N,num=S | stop | trace (raise --trigger-line); repeatable")
        ("action-holdoff", po::value(&o.action_holdoff)->default_value(o.action_holdoff), "after the actions fire, samples above --threshold within this long fire none (counted)")
        ("max-events", po::value(&o.max_events)->default_value(o.max_events), "cap on stored lost/disturbed/overflow events (the rest are counted)")
        ("metrics-file", po::value(&o.metrics_file), "rewrite this file (temp file + rename) at every stats window with the run's figures in the Prometheus text format, for node_exporter's textfile collector (name it *.prom)")
        ("preflight-root", po::value(&o.preflight_root)->default_value(o.preflight_root), "read the preflight checks' sys/ and proc/, and the SMI counter's dev/cpu/N/msr, below this directory (as doctor --root)");
    if (!floor)
        d.add_options()
            ("fail-above", po::value(&o.fail_above), "gate: exit 3 when the max (the upper bound of the highest-ranking sample) is above this, e.g. 100us")
            ("fail-p", po::value(&o.fail_p)->composing(), "gate: exit 3 when a percentile is above a limit: P=LIMIT, e.g. 99.99=50us; repeatable")
            ("fail-on-lost", po::bool_switch(&o.fail_on_lost), "gate: exit 3 when a stimulus was lost")
            ("fail-on-overflow", po::bool_switch(&o.fail_on_overflow), "gate: exit 3 when the sample ring overflowed");
    base::add_rt_options(d, o.rt, "the sampler thread");
    d.add_options()
        ("force-tsc", po::bool_switch(&o.force_tsc), "use the TSC even if it is not invariant")
        ("trigger-line", po::value(&o.trigger_line), "raise this backend line when a sample exceeds --trigger-above (e.g. 22)")
        ("trigger-above", po::value(&o.trigger_above)->default_value(o.trigger_above), "latency that raises --trigger-line")
        ("seed", po::value(&o.seed)->default_value(o.seed), "seed of the --jitter sequence")
        ("progress", po::value(&o.progress)->default_value(o.progress), "auto, tty (every 1 s), log (every 10 s) or none")
        ("allow-silent", po::bool_switch(&o.allow_silent), "measure on when the first 100 stimuli, and 1 s, all time out (a silent wire measured on purpose); without it such a run stops there, is stored as failed and exits 4")
        ("quiet,q", po::bool_switch(&o.quiet), "no progress and no summary");
    // clang-format on
    return d;
}

void print_summary(const run_outcome& r, const run_options& opt)
{
    const auto& s = r.summary;
    // No sample, no statistics: absent figures print "—" (and are stored NULL), never 0.
    const bool have = s.samples > 0;
    auto us = [have](double ns) {
        return format_latency(have ? std::optional<double>(ns) : std::nullopt, latency_unit::us, 3);
    };
    std::printf("run %s%s: %s, %llu samples", r.run_id ? std::to_string(r.run_id).c_str() : "-",
                opt.label.empty() ? "" : (" (" + opt.label + ")").c_str(),
                db::to_text(r.status).data(), static_cast<unsigned long long>(s.samples));
    if (!opt.db_path.empty())
        std::printf(" -> %s", opt.db_path.c_str());
    std::printf("\n");
    // A maximum held by a disturbed sample is its upper bound, shown with its bracket.
    auto bracketed = [&](std::int64_t v, std::int64_t bracket, bool known = true) {
        if (!known)
            return std::string(absent_value);
        return bracket > 0 ? us(double(v)) + " (bracket " + us(double(bracket)) + ")"
                           : us(double(v));
    };
    std::printf("  latency us: min %s  avg %s  max %s  warm max %s  stddev %s\n",
                us(s.min_ns).c_str(), us(s.mean_ns).c_str(),
                bracketed(s.max_ns, s.max_bracket_ns).c_str(),
                bracketed(s.warm_max_ns, s.warm_max_bracket_ns, s.has_warm_max).c_str(),
                us(s.stddev_ns).c_str());
    std::printf("  percentiles us: p50 %s  p99 %s  p99.9 %s  p99.99 %s  p99.9999 %s\n",
                us(s.p50_ns).c_str(), us(s.p99_ns).c_str(), us(s.p999_ns).c_str(),
                us(s.p9999_ns).c_str(), us(s.p999999_ns).c_str());
    std::printf("  above %s: %llu (%.6f%%)  lost %llu  late %llu  disturbed %llu  overflows %llu"
                "  logger interruptions %llu\n",
                format_duration(static_cast<double>(opt.threshold_ns)).c_str(),
                static_cast<unsigned long long>(s.above_threshold), db::pct_above(s),
                static_cast<unsigned long long>(s.lost), static_cast<unsigned long long>(s.late),
                static_cast<unsigned long long>(s.disturbed),
                static_cast<unsigned long long>(s.overflows),
                static_cast<unsigned long long>(s.interruptions));
    // The counter's step is named only where it set the limit (qemu-user's 1 us cntvct_el0).
    const std::string step = r.gap_limit_rule == "auto: 3 x clock step"
                                 ? " (3 x clock step " + format_duration(r.clock_step_ns) + ")"
                                 : "";
    std::printf("  edges: rising %llu falling %llu | poll %.0f ns, gap limit %s%s | %s\n",
                static_cast<unsigned long long>(s.rising),
                static_cast<unsigned long long>(s.falling), r.poll_ns,
                format_duration(static_cast<double>(r.gap_limit_ns)).c_str(), step.c_str(),
                r.rt_settings.c_str());
    // Over run_options::late_start_ns: the empty windows before it, and a wall time beyond
    // --duration, are explained (the `late_start` event says the same).
    if (r.late_start && r.first_stimulus_ns >= 0)
        std::printf("  late start: first stimulus %.3f s after the run began (sampler released "
                    "after %.3f s); the windows before it are empty\n",
                    static_cast<double>(r.first_stimulus_ns) / 1e9,
                    static_cast<double>(r.sampler_release_ns) / 1e9);
    else if (r.late_start)
        std::printf("  late start: no stimulus in the run (sampler released after %.3f s)\n",
                    static_cast<double>(r.sampler_release_ns) / 1e9);
}

/**
 * A device-timed backend that asks for it (ftdi, offset=auto) takes the share of the newest
 * floor run on the same wiring in the run's own --db into its reading, and stores which one.
 * The same file, because that is where `irqloop calibrate --db` put it and where report will
 * look; the newest, because a recalibration replaces the old one; the same wiring, because the
 * share is the wires' delay (docs/backends/ftdi.md, "Calibration").
 */
hw::calibration_lookup floor_lookup(const std::string& db_path)
{
    std::error_code ec;
    if (db_path.empty() || !std::filesystem::exists(db_path, ec))
        return {};
    return [db_path](hw::backend_kind kind, const std::string& wiring)
               -> std::optional<hw::calibration> {
        db::catalog cat({db_path});
        if (const db::run_record* f = analysis::newest_floor_for_wiring(cat, kind, wiring))
            return hw::calibration{analysis::floor_share_ns(*f),
                                   "floor run " + std::to_string(f->id) + " (" + f->meta.uuid +
                                       ")"};
        return std::nullopt;
    };
}

// Every option of @p vm (bound to @p o) checked and converted, nothing opened: the request.
run_request make_request(const po::variables_map& vm, const raw_options& o, bool floor)
{
    // Every number is range-checked here, before anything is opened; each limit keeps the
    // value's conversion to clock cycles and bytes inside 64 bits (docs/commands/run.md).
    constexpr std::int64_t ms = 1'000'000, s = 1000 * ms, hour = 3600 * s, day = 24 * hour;
    run_request req;
    req.floor = floor;
    run_options& opt = req.opt;
    if (vm.count("samples") && vm.count("duration"))
        throw error("run", "--samples and --duration both given",
                    "choose one bound, or none to run until SIGINT");
    if (vm.count("samples")) {
        opt.samples = parse_count(o.samples, "--samples");
        if (opt.samples == 0)
            throw error("bad value for --samples", "'" + o.samples + "'",
                        "give at least 1, or leave it out to run until SIGINT");
    }
    if (vm.count("duration")) {
        opt.duration_ns = parse_duration_ns(o.duration, "--duration");
        if (opt.duration_ns == 0)
            throw error("bad value for --duration", "'" + o.duration + "'",
                        "give at least 1us, or leave it out to run until SIGINT");
    }
    opt.interval_ns = parse_duration_ns_in(o.interval, "--interval", 0, hour);
    opt.jitter_ns = parse_duration_ns_in(o.jitter, "--jitter", 0, hour);
    opt.timeout_ns = parse_duration_ns(o.timeout, "--timeout");
    if (opt.timeout_ns == 0)
        throw error("bad value for --timeout", "'0'",
                    "give the longest latency you accept, e.g. 10ms");
    if (opt.timeout_ns > 1'000'000'000)
        throw error("bad value for --timeout", "'" + o.timeout + "' is over 1s",
                    "a lost response would stall the run; use at most 1s");
    opt.threshold_ns = parse_duration_ns_in(o.threshold, "--threshold", 0, hour);
    opt.warmup = parse_count(o.warmup, "--warmup");
    opt.stats_interval_ns =
        parse_duration_ns_in(o.stats_interval, "--stats-interval", 100 * ms, day);
    // 0 would flag every sample disturbed: refused; 'auto' derives it from the loop's costs.
    opt.gap_limit_ns =
        o.gap_limit == "auto" ? -1 : parse_duration_ns_in(o.gap_limit, "--gap-limit", 1, s);
    // The top-K list is held in memory (and rewritten at every commit).
    opt.top_k = parse_count_in(o.top_k, "--top-k", 0, 1'000'000);
    opt.max_exceedances = parse_count(o.max_exceedances, "--max-exceedances");
    opt.raw = o.raw;
    opt.metrics_file = o.metrics_file;
    opt.keep_disturbed = o.keep_disturbed;
    opt.force_tsc = o.force_tsc;
    opt.seed = parse_count(o.seed, "--seed");
    opt.kind = floor ? db::run_kind::floor : db::run_kind::measure;
    opt.label = o.label;
    opt.target = o.target;
    opt.load = o.load;
    if (o.no_db && vm["db"].defaulted() == false)
        throw error("run", "--db and --no-db both given", "choose one");
    if (!o.no_db && o.db.empty())
        throw error("bad value for --db", "an empty path",
                    "give a file name, e.g. --db irqloop.db, or --no-db to store nothing");
    opt.db_path = o.no_db ? "" : o.db;
    if (!o.trigger_line.empty()) {
        opt.trigger_line = o.trigger_line;
        opt.trigger_above_ns = parse_duration_ns_in(o.trigger_above, "--trigger-above", 0, hour);
    } else if (!vm["trigger-above"].defaulted()) {
        throw error("run", "--trigger-above given without --trigger-line",
                    "name the line to raise with --trigger-line");
    }
    opt.load_cmd = o.load_cmd;
    if (opt.load.empty())
        opt.load = o.load_cmd; // the description defaults to the command
    opt.load_required = o.load_required;
    if (o.load_required && o.load_cmd.empty())
        throw error("run", "--load-required given without --load-cmd",
                    "give the load to run with --load-cmd");
    opt.load_grace_ns = parse_duration_ns_in(o.load_grace, "--load-grace", 0, 600 * s);
    for (const auto& a : o.on_threshold)
        opt.actions.push_back(parse_action(a));
    opt.action_holdoff_ns = parse_duration_ns_in(o.action_holdoff, "--action-holdoff", 0, day);
    for (const auto& a : opt.actions) {
        if (a.kind != action_kind::trace)
            continue;
        if (opt.trigger_line.empty())
            throw error("bad value for --on-threshold", "'trace' needs a line to raise",
                        "name it with --trigger-line (a gpiod backend line)");
        if (vm["trigger-above"].defaulted())
            opt.trigger_above_ns = opt.threshold_ns; // trace fires with the other actions
    }
    opt.max_events = parse_count(o.max_events, "--max-events");
    gate_limits gates;
    if (!o.fail_above.empty())
        gates.max_ns = parse_gate_duration(o.fail_above, "--fail-above");
    for (const auto& p : o.fail_p) {
        gates.percentiles.push_back(parse_percentile_limit(p, "--fail-p"));
        if (o.no_db && !is_stored_percentile(gates.percentiles.back().first))
            throw error("bad value for --fail-p",
                        "'" + p +
                            "': a run without a database knows only p50, p99, p99.9, "
                            "p99.99 and p99.9999",
                        "use one of those, or drop --no-db");
    }
    if (o.fail_on_lost)
        gates.lost = 0;
    if (o.fail_on_overflow)
        gates.overflows = 0;
    opt.dead_wire_stimuli = o.allow_silent ? 0 : run_options::dead_wire_default;
    opt.rt = base::to_rt_request(o.rt);
    req.progress_auto = o.progress == "auto"; // tty or log: chosen when it runs
    if (req.progress_auto)
        opt.progress = progress_mode::none;
    else if (o.progress == "tty")
        opt.progress = progress_mode::tty;
    else if (o.progress == "log")
        opt.progress = progress_mode::log;
    else if (o.progress == "none")
        opt.progress = progress_mode::none;
    else
        throw error("bad value for --progress", "'" + o.progress + "'",
                    "use auto, tty, log or none");
    req.gates = std::move(gates);
    req.quiet = o.quiet;
    req.preflight_root = o.preflight_root;
    // The spec's keys and values too, without opening the hardware (a campaign's last phase).
    hw::check_lines_spec(o.hw, hw::role::logger);
    req.hw = o.hw;
    return req;
}

int run_like(int argc, char** argv, bool floor)
{
    raw_options o;
    if (floor) {
        o.hw = "sim:model=fixed,value=0"; // the simulated board as a bare jumper
        o.label = "floor";
        o.samples = "1M";
        o.interval = "10us";
    }
    auto desc = describe_options(o, floor);
    // No bare words: a stray one (run --label rt idle) is refused, never dropped.
    auto vm = base::parse_options(argc, argv, desc);
    if (vm.count("help")) {
        std::cout
            << desc << "\nbackends:\n"
            << hw::backends_help()
            << "\nDurations take ns, us, ms, s, m, h or d; counts take K, M or G.\n"
               "SIGINT/SIGTERM/SIGHUP stop the run cleanly within --timeout + 1s; what was "
               "measured stays\nin --db. Exit status: 0 ok, 1 runtime failure, 2 refused, 128 + "
               "signal (docs/commands/exit-status.md).\n"
               "Before the first stimulus the run performs irqloop doctor's checks, stores them "
               "as\n"
               "preflight.* metadata and prints the WARN/FAIL lines; --strict-rt refuses a FAIL.\n"
               "With --fail-* gates the run prints one line per limit (value, limit, PASS or "
               "FAIL),\n"
               "stores the outcome as gate.* metadata and exits 3 when a limit failed (0 when all\n"
               "passed; 1 and 2 stay runtime failures and bad input). Docs: "
               "docs/commands/check.md\n"
               "Docs: docs/commands/run.md, docs/methodology.md, docs/soak-runs.md\n";
        return 0;
    }
    po::notify(vm);
    run_request req = make_request(vm, o, floor);
    req.opt.command_line = "irqloop " + join_command_line(argc, argv);
    base::options_parsed();
    return execute_run_request(req);
}

} // namespace

std::string shell_word(const std::string& a)
{
    const bool plain =
        !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_=:,./+@%") == std::string::npos;
    if (plain)
        return a;
    std::string s = "'";
    for (char c : a)
        s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return s + "'";
}

int execute_run_request(run_request& req)
{
    run_options& opt = req.opt;
    if (req.progress_auto)
        opt.progress = req.quiet               ? progress_mode::none
                       : isatty(STDERR_FILENO) ? progress_mode::tty
                                               : progress_mode::log;

    // The preflight of `irqloop doctor`, stored with the run; a FAIL refuses a --strict-rt run.
    preflight_options pre;
    pre.cpu = opt.rt.cpu;
    pre.root = req.preflight_root;
    opt.smi_root = req.preflight_root;
    opt.preflight = run_preflight(pre);
    for (const auto& c : opt.preflight)
        if (c.level == check_level::warn || c.level == check_level::fail)
            std::fprintf(stderr, "irqloop: preflight: %s %s: %s (%s)\n", level_name(c.level),
                         c.key.c_str(), c.value.c_str(), c.hint.c_str());
    if (opt.rt.strict)
        for (const auto& c : opt.preflight)
            if (c.level == check_level::fail)
                throw error("run: preflight check " + c.key, c.value,
                            c.hint + "; or drop --strict-rt");

    // Everything that can be refused is checked before the first stimulus.
    auto wire = hw::open_lines(hw::spec(req.hw), hw::role::logger,
                               req.floor ? hw::calibration_lookup{} : floor_lookup(opt.db_path));

    // SIGINT/SIGTERM end the run cleanly: the sampler stops, the open interval is committed
    // and the run is marked interrupted. A second signal gets the default action.
    base::stop_signals signals;
    run_outcome r = execute_run(opt, *wire, signals.flag());

    if (!req.quiet)
        print_summary(r, opt);
    for (const auto& m : r.rt_misses)
        std::fprintf(stderr, "irqloop: warning: real-time setting not obtained: %s\n", m.c_str());
    const std::string stored = opt.db_path.empty()
                                   ? ""
                                   : "; run " + std::to_string(r.run_id) + " in " + opt.db_path +
                                         " is " + std::string(db::to_text(r.status));
    if (r.no_answer)
        throw error("run", r.no_answer_reason + stored,
                    "is the responder running on the target? are STIM and RESP swapped? do the "
                    "boards share a ground? --allow-silent measures a silent wire on purpose",
                    exit_no_answer);
    if (r.status == db::run_status::failed) {
        throw_from_errno(
            r.line_failure.errnum,
            std::string("run: ") + (r.line_failure.op ? r.line_failure.op : "line access") +
                " failed after " + std::to_string(r.summary.stimuli) + " stimuli",
            "check the wiring and the device; results so far are in the database", exit_failure);
    }
    if (!r.metrics_error.empty())
        std::fprintf(stderr, "irqloop: warning: %s (the run went on; the metrics file is stale)\n",
                     r.metrics_error.c_str());
    // Gates: evaluated as `irqloop check` would on the stored run, stored with it as gate.*.
    bool gates_failed = false;
    if (!req.gates.empty()) {
        gate_outcome g;
        if (opt.db_path.empty() || r.run_id == 0) {
            db::run_record rec;
            rec.id = r.run_id;
            rec.status = r.status;
            rec.summary = r.summary;
            rec.has_stats = r.summary.samples > 0;
            g = evaluate_gates(rec, req.gates);
        } else {
            db::catalog cat({opt.db_path});
            db::run_selector one;
            one.runs.push_back(std::to_string(r.run_id));
            const auto runs = cat.select(one);
            g = evaluate_gates(cat, *runs.front(), req.gates);
            store_gate_outcome(opt.db_path, r.run_id, g);
        }
        std::fputs(format_gate_lines(g).c_str(), stdout);
        std::printf("  gates: %s (%zu of %zu limits failed)\n", g.pass() ? "PASS" : "FAIL",
                    g.failed(), g.lines.size());
        std::fflush(stdout);
        gates_failed = !g.pass();
    }
    if (r.events_dropped)
        std::fprintf(stderr,
                     "irqloop: run: %llu lost/disturbed/overflow events over --max-events %llu "
                     "were counted, not stored\n",
                     static_cast<unsigned long long>(r.events_dropped),
                     static_cast<unsigned long long>(opt.max_events));
    if (!opt.actions.empty() && !req.quiet)
        std::printf("  actions: fired %llu, held off %llu\n",
                    static_cast<unsigned long long>(r.actions_fired),
                    static_cast<unsigned long long>(r.actions_held_off));
    if (!opt.load_cmd.empty() && !req.quiet)
        std::printf("  load: %s\n", r.load_end.empty()
                                        ? "not started (the run ended within the warm-up)"
                                        : r.load_end.c_str());
    const std::string where_db = opt.db_path.empty() ? ""
                                                     : "; results so far are in " + opt.db_path +
                                                           " as run " + std::to_string(r.run_id);
    if (r.status == db::run_status::interrupted && r.load_died && opt.load_required &&
        !signals.signal()) {
        const bool never = r.load_end.rfind("not started", 0) == 0;
        std::fprintf(stderr,
                     "irqloop: run: the load %s (%s) and --load-required is set: "
                     "stopped after %llu stimuli (run marked interrupted%s)\n",
                     never ? "could not be started" : "exited by itself", r.load_end.c_str(),
                     static_cast<unsigned long long>(r.summary.stimuli), where_db.c_str());
        return exit_failure;
    }
    if (r.summary.samples == 0 && r.status != db::run_status::interrupted)
        throw error("run",
                    "no sample in the statistics: " + std::to_string(r.summary.stimuli) +
                        " stimuli, " + std::to_string(r.summary.lost) + " lost, " +
                        std::to_string(r.summary.disturbed) + " disturbed" + stored,
                    r.summary.disturbed ? "raise --gap-limit, or --keep-disturbed"
                                        : "check the wiring and the responder",
                    exit_no_answer);
    if (r.status == db::run_status::interrupted && r.stopped_by_action && !signals.signal()) {
        std::fprintf(stderr,
                     "irqloop: run: stopped by --on-threshold stop after %llu stimuli (run marked "
                     "interrupted%s)\n",
                     static_cast<unsigned long long>(r.summary.stimuli), where_db.c_str());
        return gates_failed ? exit_gate_failed : 0;
    }
    if (r.status == db::run_status::interrupted) {
        int sig = signals.signal() ? signals.signal() : SIGINT;
        std::string where = opt.db_path.empty() ? ""
                                                : "; results so far are in " + opt.db_path +
                                                      " as run " + std::to_string(r.run_id);
        std::fprintf(
            stderr,
            "irqloop: run: interrupted by %s after %llu stimuli (run marked interrupted%s)\n",
            sigabbrev_np(sig) ? (std::string("SIG") + sigabbrev_np(sig)).c_str() : "a signal",
            static_cast<unsigned long long>(r.summary.stimuli), where.c_str());
        return 128 + sig;
    }
    return gates_failed ? exit_gate_failed : 0;
}

run_request parse_run_keys(const run_keys& keys, std::string command_line)
{
    raw_options o;
    const auto desc = describe_options(o, false);
    // The phase's keys go through run's own option table, as a config file's would.
    po::parsed_options parsed(&desc);
    for (const auto& [key, value] : keys) {
        po::option opt;
        opt.string_key = key;
        opt.original_tokens.push_back(key); // messages name the key as the file spells it
        if (!value.empty()) {
            opt.value.push_back(value);
            opt.original_tokens.push_back(value);
        }
        parsed.options.push_back(std::move(opt));
    }
    po::variables_map vm;
    po::store(parsed, vm);
    po::notify(vm);
    run_request req = make_request(vm, o, false);
    req.opt.command_line = std::move(command_line);
    return req;
}

int run_command(int argc, char** argv)
{
    return run_like(argc, argv, false);
}

int calibrate_command(int argc, char** argv)
{
    return run_like(argc, argv, true);
}

} // namespace irqloop::logger
