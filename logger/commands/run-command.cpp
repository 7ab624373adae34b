// SPDX-License-Identifier: MIT
// `irqloop run` and `irqloop calibrate`: parse (one option table bound to the request),
// execute (the preflight, the wire, execute_run() with the gates as a plug-in), present.
#include "run-command.hpp"
#include "cli-main.hpp"
#include "error.hpp"
#include "floor-rule.hpp"
#include "gates.hpp"
#include "percentiles.hpp"
#include "read.hpp"
#include "registry.hpp"
#include "rt-options.hpp"
#include "run.hpp"
#include "stop-signal.hpp"
#include "table.hpp"
#include "units.hpp"
#include "worst-table.hpp"

#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
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

constexpr std::int64_t ms = 1'000'000, sec = 1000 * ms, hour = 3600 * sec, day = 24 * hour;

// What the table takes as text or a switch and finish_request() checks together.
struct run_switches {
    std::string db = "irqloop.db";
    std::vector<std::string> on_threshold, fail_p, fail_p_exceed;
    bool no_db = false, allow_silent = false, fail_on_lost = false, fail_on_overflow = false;
    base::rt_options rt;
};

// A notifier that converts an option's text into a field of the request.
template <class F> auto into(F f)
{
    return po::value<std::string>()->notifier(f);
}

// The defaults that differ for a floor run: the simulated board as a bare jumper, at 10 us.
struct table_defaults {
    const char* hw = "sim";
    const char* interval = "100us";
};

// A bound of the run (--samples, --duration): 0 is refused; without one it runs until SIGINT.
template <class T> T bound(T value, const std::string& text, const char* what, const char* least)
{
    if (value == 0)
        throw error(std::string("bad value for ") + what, "'" + text + "'",
                    std::string("give at least ") + least +
                        ", or leave it out to run until SIGINT");
    return value;
}

// --samples, --duration, --interval ... --gap-limit, into the request's timing figures.
void add_timing_options(po::options_description& d, run_request& req, const table_defaults& df)
{
    auto& o = req.opt;
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("hw", po::value(&req.hw)->default_value(std::string(df.hw)), "backend spec (see 'backends' below)")
        ("samples,n", into([&o](const std::string& v) { o.timing.samples = bound(parse_count(v, "--samples"), v, "--samples", "1"); }), "stop after this many stimuli (K/M/G suffixes: 100M)")
        ("duration,D", into([&o](const std::string& v) { o.timing.duration_ns = bound(parse_duration_ns(v, "--duration"), v, "--duration", "1us"); }), "stop after this long (ns/us/ms/s/m/h/d: 8h)")
        ("interval,i", into([&o](const std::string& v) { o.timing.interval_ns = parse_duration_ns_in(v, "--interval", 0, hour); })->default_value(std::string(df.interval)), "stimulus period; 0 = as fast as possible")
        ("jitter", into([&o](const std::string& v) { o.timing.jitter_ns = parse_duration_ns_in(v, "--jitter", 0, hour); })->default_value("0"), "random extra delay in [0, jitter) per stimulus, against phase lock")
        ("timeout", into([&o](const std::string& v) {
            o.timing.timeout_ns = parse_duration_ns(v, "--timeout");
            if (o.timing.timeout_ns == 0)
                throw error("bad value for --timeout", "'0'", "give the longest latency you accept, e.g. 10ms");
            if (o.timing.timeout_ns > sec)
                throw error("bad value for --timeout", "'" + v + "' is over 1s", "a lost response would stall the run; use at most 1s");
         })->default_value("10ms"), "a response later than this is counted lost")
        ("threshold", into([&o](const std::string& v) { o.recording.threshold_ns = parse_duration_ns_in(v, "--threshold", 0, hour); })->default_value("30us"), "samples above this are exceedances (kept, counted as % above)")
        ("warmup", into([&o](const std::string& v) { o.recording.warmup = parse_count(v, "--warmup"); })->default_value("1000"), "first N samples excluded from WARM MAX")
        ("stats-interval", into([&o](const std::string& v) { o.recording.stats_interval_ns = parse_duration_ns_in(v, "--stats-interval", 100 * ms, day); })->default_value("10s"), "length of one statistics window (one database commit)")
        // 0 would flag every sample disturbed: refused; 'auto' derives it from the loop's costs.
        ("gap-limit", into([&o](const std::string& v) { o.timing.gap_limit_ns = v == "auto" ? -1 : parse_duration_ns_in(v, "--gap-limit", 1, sec); })->default_value("auto"), "a sample whose bracket (drive() plus the polls around its answer) is wider than this is flagged disturbed; auto = max(1us, 20 x median poll period, 4 x median drive(), 3 x the cycle counter's step)");
    // clang-format on
}

// --keep-disturbed ... --preflight-root: what is stored, and the soak's load and actions.
void add_recording_options(po::options_description& d, run_request& req, run_switches& sw)
{
    auto& o = req.opt;
    // clang-format off
    d.add_options()
        ("keep-disturbed", po::bool_switch(&o.recording.keep_disturbed), "count disturbed samples in the statistics (they are always counted and flagged)")
        // The top-K list is held in memory (and rewritten at every commit).
        ("top-k", into([&o](const std::string& v) { o.recording.top_k = parse_count_in(v, "--top-k", 0, 1'000'000); })->default_value("1000"), "number of worst samples kept")
        ("max-exceedances", into([&o](const std::string& v) { o.recording.max_exceedances = parse_count(v, "--max-exceedances"); })->default_value("1M"), "cap on stored samples above --threshold (the rest are counted)")
        ("raw", po::bool_switch(&o.recording.raw), "store every sample (about 21 bytes each; for short runs)")
        ("db", po::value(&sw.db)->default_value(sw.db), "SQLite results file (created if missing)")
        ("no-db", po::bool_switch(&sw.no_db), "do not store; print the summary only")
        ("label,l", po::value(&o.recording.label), "label for comparisons, e.g. rt-idle")
        ("target", po::value(&o.recording.target), "free text: the target board, kernel and config")
        ("load", po::value(&o.recording.load), "free text: the load on the target, e.g. 'hackbench -l 1000' (default: the --load-cmd)")
        ("load-cmd", po::value(&o.soak.load_cmd), "start this /bin/sh command once the warm-up is done, in its own process group; stopped when the run ends, and by its guard (irqloop-load-guard) when irqloop dies (its start, exit status and output tail are events)")
        ("load-required", po::bool_switch(&o.soak.load_required), "end the run when the --load-cmd load exits by itself")
        ("load-grace", into([&o](const std::string& v) { o.soak.load_grace_ns = parse_duration_ns_in(v, "--load-grace", 0, 600 * sec); })->default_value("5s"), "SIGTERM to the load's group, then SIGKILL after this long")
        ("on-threshold", po::value(&sw.on_threshold)->composing(), "on a sample above --threshold: shell,command=CMD | signal,pid=N,num=S | stop | trace (raise --trigger-line); repeatable")
        ("action-holdoff", into([&o](const std::string& v) { o.soak.action_holdoff_ns = parse_duration_ns_in(v, "--action-holdoff", 0, day); })->default_value("10s"), "after the actions fire, samples above --threshold within this long fire none (counted)")
        ("max-events", into([&o](const std::string& v) { o.recording.max_events = parse_count(v, "--max-events"); })->default_value("100K"), "cap on stored lost/disturbed/overflow events (the rest are counted)")
        ("metrics-file", po::value(&o.recording.metrics_file), "rewrite this file (temp file + rename) at every stats window with the run's figures in the Prometheus text format, for node_exporter's textfile collector (name it *.prom)")
        ("target-info", into([&o](const std::string& v) {
            if (v.find_first_not_of(" \t\n") == std::string::npos)
                throw error("bad value for --target-info", "an empty command", "give the /bin/sh command that prints the target's set-up, e.g. --target-info \"ssh board 'xl info; xl sched-credit2'\"");
            o.recording.target_info.command = v;
         }), "run this /bin/sh command once before the first stimulus and store its stdout, stderr, exit status and duration with the run, with the keys parsed from its output (xl info, xl sched-*, /sys/module/*/parameters, uname, key=value); a failing or hung command is recorded and the run goes on")
        ("target-info-timeout", into([&o](const std::string& v) { o.recording.target_info.timeout_ns = parse_duration_ns_in(v, "--target-info-timeout", ms, hour); })->default_value("30s"), "kill the --target-info command (its process group) after this long and record it as timed out")
        ("preflight-root", po::value(&req.preflight_root)->default_value(req.preflight_root), "read the preflight checks' sys/ and proc/, and the SMI counter's dev/cpu/N/msr, below this directory (as doctor --root)");
    // clang-format on
}

// --fail-*: run's gates (not for a floor run).
void add_gate_options(po::options_description& d, run_request& req, run_switches& sw)
{
    auto& g = req.gates;
    // clang-format off
    d.add_options()
        ("fail-above", into([&g](const std::string& v) { if (!v.empty()) g.max_ns = parse_gate_duration(v, "--fail-above"); }), "gate: exit 3 when the max (the upper bound of the highest-ranking sample) is above this, e.g. 100us; a lost answer fails it at any limit")
        ("fail-p", po::value(&sw.fail_p)->composing(), "gate: exit 3 when a percentile is above a limit: P=LIMIT, e.g. 99.99=50us; repeatable")
        ("fail-p-exceed", po::value(&sw.fail_p_exceed)->composing(), "gate: exit 3 when the upper end of the 95 % interval of P(latency > X) per sample, from the tail fit of the stored run (irqloop tail), is above P: X=P, e.g. 100us=1e-9; repeatable. Exit 2 when the fit's checks do not allow the claim")
        ("fail-on-lost", po::bool_switch(&sw.fail_on_lost), "gate: exit 3 when a stimulus was lost")
        ("fail-on-overflow", po::bool_switch(&sw.fail_on_overflow), "gate: exit 3 when the sample ring overflowed");
    // clang-format on
}

// The real-time options, then --force-tsc ... --quiet.
void add_session_options(po::options_description& d, run_request& req, run_switches& sw)
{
    auto& o = req.opt;
    base::add_rt_options(d, sw.rt, "the sampler thread");
    // clang-format off
    d.add_options()
        ("force-tsc", po::bool_switch(&o.timing.force_tsc), "use the TSC even if it is not invariant")
        ("trigger-line", po::value(&o.timing.trigger_line), "raise this backend line when a sample exceeds --trigger-above (e.g. 22)")
        ("trigger-above", into([&o](const std::string& v) { o.timing.trigger_above_ns = parse_duration_ns_in(v, "--trigger-above", 0, hour); })->default_value("50us"), "latency that raises --trigger-line")
        ("seed", into([&o](const std::string& v) { o.timing.seed = parse_count(v, "--seed"); })->default_value("1"), "seed of the --jitter sequence")
        ("progress", into([&req](const std::string& v) {
            req.progress_auto = v == "auto"; // tty or log: chosen when it runs
            if (v == "tty")
                req.opt.progress = progress_mode::tty;
            else if (v == "log")
                req.opt.progress = progress_mode::log;
            else if (v != "auto" && v != "none")
                throw error("bad value for --progress", "'" + v + "'", "use auto, tty, log or none");
         })->default_value("auto"), "auto, tty (every 1 s), log (every 10 s) or none")
        ("allow-silent", po::bool_switch(&sw.allow_silent), "measure on when the first 100 stimuli, and 1 s, all time out (a silent wire measured on purpose); without it such a run stops there, is stored as failed and exits 4")
        ("quiet,q", po::bool_switch(&req.quiet), "no progress and no summary");
    // clang-format on
}

// The one option table of `run` (and, with @p floor, of `calibrate`), bound to @p req: the
// command line, campaign's phase keys and --help all go through it.
po::options_description run_option_table(run_request& req, run_switches& sw, bool floor)
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
    const table_defaults df =
        floor ? table_defaults{"sim:model=fixed,value=0", "10us"} : table_defaults{};
    req.floor = floor;
    if (floor)
        req.opt.recording.label = "floor"; // unless --label names it otherwise
    add_timing_options(d, req, df);
    add_recording_options(d, req, sw);
    if (!floor)
        add_gate_options(d, req, sw);
    add_session_options(d, req, sw);
    return d;
}

// What no single option decides: the pairs that exclude or need each other, the gates'
// switches, the spec's keys (checked, not opened).
void finish_request(run_request& req, const run_switches& sw, const po::variables_map& vm)
{
    auto& opt = req.opt;
    if (vm.count("samples") && vm.count("duration"))
        throw error("run", "--samples and --duration both given",
                    "choose one bound, or none to run until SIGINT");
    opt.recording.kind = req.floor ? db::run_kind::floor : db::run_kind::measure;
    if (sw.no_db && !vm["db"].defaulted())
        throw error("run", "--db and --no-db both given", "choose one");
    if (!sw.no_db && sw.db.empty())
        throw error("bad value for --db", "an empty path",
                    "give a file name, e.g. --db irqloop.db, or --no-db to store nothing");
    opt.recording.db_path = sw.no_db ? "" : sw.db;
    if (opt.timing.trigger_line.empty()) {
        if (!vm["trigger-above"].defaulted())
            throw error("run", "--trigger-above given without --trigger-line",
                        "name the line to raise with --trigger-line");
        opt.timing.trigger_above_ns = 0;
    }
    if (opt.recording.load.empty())
        opt.recording.load = opt.soak.load_cmd; // the description defaults to the command
    if (!vm["target-info-timeout"].defaulted() && opt.recording.target_info.command.empty())
        throw error("run", "--target-info-timeout given without --target-info",
                    "give the command with --target-info");
    if (opt.soak.load_required && opt.soak.load_cmd.empty())
        throw error("run", "--load-required given without --load-cmd",
                    "give the load to run with --load-cmd");
    for (const auto& a : sw.on_threshold)
        opt.soak.actions.push_back(parse_action(a));
    for (const auto& a : opt.soak.actions) {
        if (a.kind != action_kind::trace)
            continue;
        if (opt.timing.trigger_line.empty())
            throw error("bad value for --on-threshold", "'trace' needs a line to raise",
                        "name it with --trigger-line (a gpiod backend line)");
        if (vm["trigger-above"].defaulted())
            opt.timing.trigger_above_ns =
                opt.recording.threshold_ns; // trace fires with the other actions
    }
    for (const auto& p : sw.fail_p) {
        req.gates.percentiles.push_back(parse_percentile_limit(p, "--fail-p"));
        if (sw.no_db && !is_stored_percentile(req.gates.percentiles.back().first))
            throw error("bad value for --fail-p",
                        "'" + p +
                            "': a run without a database knows only p50, p99, p99.9, "
                            "p99.99 and p99.9999",
                        "use one of those, or drop --no-db");
    }
    for (const auto& p : sw.fail_p_exceed) {
        req.gates.p_exceed.push_back(parse_p_exceed_limit(p, "--fail-p-exceed"));
        if (sw.no_db)
            throw error("bad value for --fail-p-exceed",
                        "'" + p +
                            "': the tail fit reads the stored run; a run without a "
                            "database keeps no tail",
                        "drop --no-db");
    }
    if (sw.fail_on_lost)
        req.gates.lost = 0;
    if (sw.fail_on_overflow)
        req.gates.overflows = 0;
    opt.timing.dead_wire_stimuli = sw.allow_silent ? 0 : run_options::dead_wire_default;
    opt.rt = base::to_rt_request(sw.rt);
    // The spec's keys and values too, without opening the hardware (a campaign's last phase).
    hw::check_lines_spec(req.hw, hw::role::logger);
}

void print_summary(const run_outcome& r, const run_options& opt)
{
    const auto& s = r.summary;
    // No sample, no statistics: absent figures print "—" (and are stored NULL), never 0.
    const bool have = s.samples > 0;
    auto us = [have](double ns) {
        return format_latency(have ? std::optional<double>(ns) : std::nullopt, latency_unit::us, 3);
    };
    std::printf(
        "run %s%s: %s, %llu samples", r.run_id ? std::to_string(r.run_id).c_str() : "-",
        opt.recording.label.empty() ? "" : (" (" + message_text(opt.recording.label) + ")").c_str(),
        db::to_text(r.status).data(), static_cast<unsigned long long>(s.samples));
    if (!opt.recording.db_path.empty())
        std::printf(" -> %s", opt.recording.db_path.c_str());
    std::printf("\n");
    // MAX and WARM MAX as every table prints them (format_max, format_warm_max): a maximum held
    // by a disturbed sample with its bracket; with lost answers that no sample outlasts, the
    // timeout they prove ("≥ 10000.000 (12 lost)"), never the largest answered sample alone.
    db::run_record rec;
    rec.meta.timeout_ns = opt.timing.timeout_ns;
    rec.summary = s;
    rec.has_stats = have;
    const max_figure mx{have ? std::optional<std::int64_t>(s.max_ns) : std::nullopt,
                        s.max_bracket_ns, s.lost, opt.timing.timeout_ns};
    std::printf(
        "  latency us: min %s  avg %s  max %s  warm max %s  stddev %s\n", us(s.min_ns).c_str(),
        us(s.mean_ns).c_str(), format_max(mx, latency_unit::us).c_str(),
        format_warm_max(rec, warm_lost{r.lost_after_warmup, true}, latency_unit::us).c_str(),
        us(s.stddev_ns).c_str());
    std::string pct = "  percentiles us:";
    for (const auto& p : db::stored_percentiles)
        pct += std::string(&p == db::stored_percentiles.data() ? " " : "  ") + p.label + " " +
               us(double(s.*p.field));
    std::printf("%s\n", pct.c_str());
    std::printf("  above %s: %llu (%.6f%%)  lost %llu  late %llu  disturbed %llu  overflows %llu"
                "  logger interruptions %llu\n",
                format_duration(static_cast<double>(opt.recording.threshold_ns)).c_str(),
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
    if (r.target_info)
        std::printf("  target info: %s\n", message_text(target_info_line(*r.target_info)).c_str());
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
    return [db_path](hw::backend_kind kind,
                     const std::string& wiring) -> std::optional<hw::calibration> {
        db::catalog cat({db_path});
        if (const db::run_record* f = analysis::newest_floor_for_wiring(cat, kind, wiring))
            return hw::calibration{analysis::floor_share_ns(*f), "floor run " +
                                                                     std::to_string(f->id) + " (" +
                                                                     f->meta.uuid + ")"};
        return std::nullopt;
    };
}

// --help's text after the option table (the man page is made from it by help2man).
std::string run_help(const po::options_description& desc)
{
    std::ostringstream o;
    o << desc << "\nbackends:\n"
      << hw::backends_help()
      << "\nDurations take ns, us, ms, s, m, h or d; counts take K, M or G.\n"
         "SIGINT/SIGTERM/SIGHUP stop the run cleanly within --timeout + 1s; what was "
         "measured stays\nin --db. Exit status: 0 ok, 1 runtime failure, 2 refused, 128 + "
         "signal (docs/commands/exit-status.md).\n"
         "SIGUSR1 during the run stores a 'mark' event (the stimulus count, the sender).\n"
         "Before the first stimulus the run performs irqloop doctor's checks, stores them "
         "as\n"
         "preflight.* metadata and prints the WARN/FAIL lines; --strict-rt refuses a FAIL.\n"
         "With --fail-* gates the run prints one line per limit (value, limit, PASS or "
         "FAIL),\n"
         "stores the outcome as gate.* metadata and exits 3 when a limit failed (0 when all\n"
         "passed; 1 and 2 stay runtime failures and bad input). Docs: "
         "docs/commands/check.md\n"
         "Docs: docs/commands/run.md, docs/methodology.md, docs/soak-runs.md\n";
    return o.str();
}

parsed<run_request> parse_like(int argc, char** argv, bool floor)
{
    run_request req;
    run_switches sw;
    const auto desc = run_option_table(req, sw, floor);
    // No bare words: a stray one (run --label rt idle) is refused, never dropped.
    auto vm = base::parse_options(argc, argv, desc);
    if (vm.count("help"))
        return parsed<run_request>::help(run_help(desc));
    po::notify(vm);
    finish_request(req, sw, vm);
    req.opt.recording.command_line = "irqloop " + join_command_line(argc, argv);
    return parsed<run_request>::of(std::move(req));
}

// The preflight of `irqloop doctor`, stored with the run; a FAIL refuses a --strict-rt run.
void preflight(run_request& req)
{
    run_options& opt = req.opt;
    preflight_options pre;
    pre.cpu = opt.rt.cpu;
    pre.root = req.preflight_root;
    opt.recording.smi_root = req.preflight_root;
    opt.recording.preflight = run_preflight(pre);
    for (const auto& c : opt.recording.preflight)
        if (c.level == check_level::warn || c.level == check_level::fail)
            std::fprintf(stderr, "irqloop: preflight: %s %s: %s (%s)\n", level_name(c.level),
                         c.key.c_str(), c.value.c_str(), c.hint.c_str());
    if (opt.rt.strict)
        for (const auto& c : opt.recording.preflight)
            if (c.level == check_level::fail)
                throw error("run: preflight check " + c.key, c.value,
                            c.hint + "; or drop --strict-rt");
}

// A run that did not measure: no answer, a failure, or no sample in the statistics.
void refuse_failed(const run_result& res, const run_request& req)
{
    const auto& r = res.run;
    const auto& opt = req.opt;
    const std::string stored = opt.recording.db_path.empty()
                                   ? ""
                                   : "; run " + std::to_string(r.run_id) + " in " +
                                         opt.recording.db_path + " is " +
                                         std::string(db::to_text(r.status));
    if (r.no_answer)
        throw error("run", r.no_answer_reason + stored,
                    "is the responder running on the target? are STIM and RESP swapped? do the "
                    "boards share a ground? --allow-silent measures a silent wire on purpose",
                    exit_no_answer);
    if (r.status == db::run_status::failed)
        throw_from_errno(
            r.line_failure.errnum,
            std::string("run: ") + (r.line_failure.op ? r.line_failure.op : "line access") +
                " failed after " + std::to_string(r.summary.stimuli) + " stimuli",
            "check the wiring and the device; results so far are in the database", exit_failure);
}

// The lines after the summary: the metrics warning, the gates, dropped events, actions, load.
void present_extras(const run_result& res, const run_request& req)
{
    const auto& r = res.run;
    const auto& opt = req.opt;
    if (!r.metrics_error.empty())
        std::fprintf(stderr, "irqloop: warning: %s (the run went on; the metrics file is stale)\n",
                     r.metrics_error.c_str());
    if (const auto& t = r.target_info;
        t && !(t->status == db::target_info_status::exited && t->exit_code == 0))
        std::fprintf(stderr,
                     "irqloop: warning: --target-info command %s (the run went on; its output "
                     "is stored: irqloop report --target-output)\n",
                     message_text(target_info_outcome(*t)).c_str());
    if (res.gates) {
        std::fputs(format_gate_lines(*res.gates).c_str(), stdout);
        std::printf("  gates: %s (%zu of %zu limits failed)\n", res.gates->pass() ? "PASS" : "FAIL",
                    res.gates->failed(), res.gates->lines.size());
        std::fflush(stdout);
    }
    if (r.events_dropped)
        std::fprintf(stderr,
                     "irqloop: run: %llu lost/disturbed/overflow events over --max-events %llu "
                     "were counted, not stored\n",
                     static_cast<unsigned long long>(r.events_dropped),
                     static_cast<unsigned long long>(opt.recording.max_events));
    if (!opt.soak.actions.empty() && !req.quiet)
        std::printf("  actions: fired %llu, held off %llu\n",
                    static_cast<unsigned long long>(r.actions_fired),
                    static_cast<unsigned long long>(r.actions_held_off));
    if (!opt.soak.load_cmd.empty() && !req.quiet)
        std::printf("  load: %s\n", r.load_end.empty()
                                        ? "not started (the run ended within the warm-up)"
                                        : r.load_end.c_str());
}

// How an interrupted run ends: the load's end, a stop action, or a signal.
int present_interrupted(const run_result& res, const run_request& req, int gates_status)
{
    const auto& r = res.run;
    const auto& opt = req.opt;
    const std::string where_db = opt.recording.db_path.empty()
                                     ? ""
                                     : "; results so far are in " + opt.recording.db_path +
                                           " as run " + std::to_string(r.run_id);
    if (r.load_died && opt.soak.load_required && !res.signal) {
        const bool never = r.load_end.rfind("not started", 0) == 0;
        std::fprintf(stderr,
                     "irqloop: run: the load %s (%s) and --load-required is set: "
                     "stopped after %llu stimuli (run marked interrupted%s)\n",
                     never ? "could not be started" : "exited by itself", r.load_end.c_str(),
                     static_cast<unsigned long long>(r.summary.stimuli), where_db.c_str());
        return exit_failure;
    }
    if (r.stopped_by_action && !res.signal) {
        std::fprintf(stderr,
                     "irqloop: run: stopped by --on-threshold stop after %llu stimuli (run marked "
                     "interrupted%s)\n",
                     static_cast<unsigned long long>(r.summary.stimuli), where_db.c_str());
        return gates_status;
    }
    const int sig = res.signal ? res.signal : SIGINT;
    std::fprintf(stderr,
                 "irqloop: run: interrupted by %s after %llu stimuli (run marked interrupted%s)\n",
                 sigabbrev_np(sig) ? (std::string("SIG") + sigabbrev_np(sig)).c_str() : "a signal",
                 static_cast<unsigned long long>(r.summary.stimuli), where_db.c_str());
    return 128 + sig;
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

parsed<run_request> parse_run(int argc, char** argv)
{
    return parse_like(argc, argv, false);
}

parsed<run_request> parse_calibrate(int argc, char** argv)
{
    return parse_like(argc, argv, true);
}

run_result execute_run_request(run_request& req)
{
    run_options& opt = req.opt;
    if (req.progress_auto)
        opt.progress = req.quiet               ? progress_mode::none
                       : isatty(STDERR_FILENO) ? progress_mode::tty
                                               : progress_mode::log;
    preflight(req);
    // SIGINT/SIGTERM end the run cleanly: the sampler stops, the open interval is committed
    // and the run is marked interrupted. A second signal gets the default action. Caught
    // from before the wire is opened, so that a signal at any time after unwinds and closes
    // it: a shm segment this run created is removed (issue 32).
    base::stop_signals signals;
    // Everything that can be refused is checked before the first stimulus.
    auto wire =
        hw::open_lines(hw::spec(req.hw), hw::role::logger,
                       req.floor ? hw::calibration_lookup{} : floor_lookup(opt.recording.db_path));
    // Gates: evaluated on the outcome the run holds, stored with it as gate.* (a plug-in).
    std::optional<gate_plugin> gates;
    std::vector<run_plugin*> plugins;
    if (!req.gates.empty())
        plugins.push_back(&gates.emplace(req.gates, opt.recording.db_path));
    run_result res;
    res.run = execute_run(opt, *wire, signals.flag(), plugins);
    res.signal = signals.signal();
    if (gates)
        res.gates = gates->outcome();
    return res;
}

int present_run(const run_result& res, const run_request& req)
{
    const auto& r = res.run;
    if (!req.quiet)
        print_summary(r, req.opt);
    for (const auto& m : r.rt_misses)
        std::fprintf(stderr, "irqloop: warning: real-time setting not obtained: %s\n", m.c_str());
    refuse_failed(res, req);
    present_extras(res, req);
    const int gates_status = res.gates && !res.gates->pass() ? exit_gate_failed : 0;
    if (r.status == db::run_status::interrupted && r.load_died && req.opt.soak.load_required &&
        !res.signal)
        return present_interrupted(res, req, gates_status);
    if (r.summary.samples == 0 && r.status != db::run_status::interrupted)
        throw error("run",
                    "no sample in the statistics: " + std::to_string(r.summary.stimuli) +
                        " stimuli, " + std::to_string(r.summary.lost) + " lost, " +
                        std::to_string(r.summary.disturbed) + " disturbed" +
                        (req.opt.recording.db_path.empty()
                             ? ""
                             : "; run " + std::to_string(r.run_id) + " in " +
                                   req.opt.recording.db_path + " is " +
                                   std::string(db::to_text(r.status))),
                    r.summary.disturbed ? "raise --gap-limit, or --keep-disturbed"
                                        : "check the wiring and the responder",
                    exit_no_answer);
    if (r.status == db::run_status::interrupted)
        return present_interrupted(res, req, gates_status);
    // A --fail-p-exceed whose tail fit's checks fail is no verdict: refused (2), stored as
    // "not claimed" (an interrupted run keeps its own status, above).
    if (res.gates)
        throw_if_refused(*res.gates, "run " + std::to_string(r.run_id));
    return gates_status;
}

run_request parse_run_keys(const run_keys& keys, std::string command_line)
{
    run_request req;
    run_switches sw;
    const auto desc = run_option_table(req, sw, false);
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
    finish_request(req, sw, vm);
    req.opt.recording.command_line = std::move(command_line);
    return req;
}

namespace
{

int run_like(int argc, char** argv, bool floor)
{
    return run_steps(
        argc, argv, [floor](int c, char** v) { return parse_like(c, v, floor); },
        execute_run_request, present_run, std::cout);
}

} // namespace

int run_command(int argc, char** argv)
{
    return run_like(argc, argv, false);
}

int calibrate_command(int argc, char** argv)
{
    return run_like(argc, argv, true);
}

} // namespace irqloop::logger
