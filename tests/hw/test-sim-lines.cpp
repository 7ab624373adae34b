// SPDX-License-Identifier: MIT
// Ground truth: the simulated board knows every delay it injected; the sampler must measure
// each one at or just above it.
#include "cycle-clock.hpp"
#include "emulation.hpp"
#include "recorder.hpp"
#include "registry.hpp"
#include "rows.hpp"
#include "sampler.hpp"
#include "sim/sim-lines.hpp"
#include "test-scale.hpp"

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cmath>
#include <pthread.h>
#include <thread>
#include <vector>

using namespace irqloop;

namespace
{

struct sim_run {
    std::vector<logger::sample> samples;
    std::vector<hw::sim_lines::truth> truth;
    std::uint64_t stimuli = 0, lost = 0, edges_seen = 0, edges_lost = 0;
    int wire_errno = 0;
    /** The sampler's gap limit, as 'irqloop run' sets it by default (logger::auto_gap_limit:
     * max(1 us, 20 x the median poll period, 4 x the median drive(), 3 x the counter's
     * step)), measured on the sampler's thread. 1 us on a native build (polls of tens of ns);
     * 3 us under qemu-aarch64, whose cntvct_el0 steps in 1 us. Also the limit for the
     * target's gaps. */
    std::uint64_t gap_limit_cycles = 0;
};

// Sampler on this thread, target on another; both SCHED_FIFO and pinned apart when the
// machine allows, and short (< 0.9 s) so RT throttling never cuts in.
sim_run run_sim(const std::string& model, std::uint64_t n, double interval_ns, double timeout_ns)
{
    const auto& clk = hw::process_clock(true);
    const bool two_cpus = std::thread::hardware_concurrency() >= 2;
    std::string spec = "sim:" + model + (two_cpus ? ",cpu=1,priority=70" : "");
    auto wire = hw::open_lines(spec, hw::role::logger);
    auto* sim = dynamic_cast<hw::sim_lines*>(wire.get());
    REQUIRE(sim);
    sim->record_truth(n + n / 100 + 100); // room for the re-arm edges after losses
    logger::spsc_ring<logger::sample> ring(n + 1);
    logger::sampler_config cfg;
    cfg.samples = n;
    cfg.interval_cycles = clk.from_ns(interval_ns);
    cfg.timeout_cycles = clk.from_ns(timeout_ns);
    cfg.quiet_cycles = clk.from_ns(std::min(timeout_ns, 1e6));
    cfg.rearm_cycles = clk.from_ns(1000);
    cfg.both_edges = wire->far_end_answers_both_edges();
    cfg.far_end_follows = cfg.both_edges && wire->far_end_follows();
    sim_run r;
    // The far end is started from this (SCHED_OTHER) thread, as `irqloop run` starts it from
    // its main thread: a thread inherits its creator's policy and CPU, and one started from the
    // SCHED_FIFO sampler thread below would spin at its priority on its CPU. Under TSan,
    // whose pthread_create waits until the new thread runs, the creator then never ran again.
    wire->start();
    std::thread t([&] {
        if (two_cpus) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(0, &set);
            pthread_setaffinity_np(pthread_self(), sizeof set, &set);
            sched_param sp{};
            sp.sched_priority = 71;
            pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); // best effort
        }
        wire->drive(false); // as run's calibration: drive() measured without an edge
        const auto limit =
            logger::auto_gap_limit(clk.ns(logger::measure_poll_cycles(*wire)),
                                   clk.ns(logger::measure_drive_cycles(*wire, false)),
                                   clk.ns(1) * logger::measure_clock_step_cycles());
        cfg.gap_limit_cycles = clk.from_ns(static_cast<double>(limit.ns));
        r.gap_limit_cycles = cfg.gap_limit_cycles;
        std::atomic<bool> stop{false};
        logger::sampler s(*wire, ring, cfg);
        s.run(stop);
        r.stimuli = s.counters().stimuli.load();
        r.lost = s.counters().lost.load();
        wire->stop();
    });
    t.join();
    r.samples.resize(n);
    r.samples.resize(ring.pop(r.samples));
    r.truth = sim->truths();
    r.edges_seen = sim->edges_seen();
    r.edges_lost = sim->edges_lost();
    r.wire_errno = wire->error().errnum;
    return r;
}

/**
 * How far below the injected delay a measurement may read, from counting alone: max(5 ns,
 * 2 counter ticks). The target waits until its clock has advanced by the delay in whole
 * ticks (truncated: up to 1 tick short), and both sides convert ticks to ns at the same
 * calibrated rate, so a measurement can read up to a tick below the delay, never more; the
 * second tick is margin. 5 ns on the TSC (a tick under 1 ns); 32 ns on qemu-aarch64's
 * cntvct_el0 (62.5 MHz), 37 ns on a Raspberry Pi's (54 MHz).
 */
double tick_allowance_ns(const hw::clock_info& clk)
{
    return std::max(5.0, 2 * clk.ns(1));
}

} // namespace

TEST_CASE("sim: measured minus injected delay is within a small floor for 99.9% of samples",
          "[sim]")
{
    const std::uint64_t n = test::scaled(40'000);
    auto r = run_sim("model=normal,mean=8us,sd=1us,seed=7", n, 12'000, 50e6);
    const auto& clk = hw::process_clock(true);
    REQUIRE(r.samples.size() == n);
    REQUIRE(r.truth.size() == n);
    CHECK(r.stimuli == n);
    CHECK(r.edges_seen == n);
    CHECK(r.lost == 0);

    // Causality on every sample: nothing is measured shorter than the delay the target took.
    // Then the floor: on samples where neither side was disturbed (a bracket above the gap
    // limit on the logger, flagged by the sampler; or a poll gap above it on the simulated
    // target's own thread, which the simulation records), measured minus injected lies in
    // [0, 5 us] for 98% (below). The gap limit is 1 us natively (see sim_run::gap_limit_cycles).
    const std::uint64_t gap_limit = r.gap_limit_cycles;
    // Checked once, not per sample: 40 000 assertions are slow under an emulator.
    std::uint64_t out_of_order = 0;
    for (std::size_t i = 0; i < n; ++i)
        out_of_order += r.samples[i].seq != i;
    REQUIRE(out_of_order == 0);
    const double allowance = tick_allowance_ns(clk);
    std::vector<double> excess;
    std::uint64_t negative = 0, disturbed = 0, within = 0;
    double lowest = 1e300; // measured - injected over all samples, disturbed or not
    for (std::size_t i = 0; i < n; ++i) {
        const auto& s = r.samples[i];
        const auto& t = r.truth[i];
        double d = clk.ns(s.latency_cycles) - t.delay_ns;
        lowest = std::min(lowest, d);
        negative += d < -allowance;
        if ((s.flags & db::flag_disturbed) || t.max_gap_cycles > gap_limit) {
            ++disturbed;
            continue;
        }
        excess.push_back(d);
        within += d >= -allowance && d <= 5000;
    }
    std::sort(excess.begin(), excess.end());
    const auto m = excess.size();
    REQUIRE(m > 0);
    WARN("sim floor (measured - injected, undisturbed samples): min "
         << excess.front() << " ns, median " << excess[m / 2] << " ns, p99.9 "
         << excess[m * 999 / 1000] << " ns; " << disturbed << " of " << n
         << " samples disturbed on one side; gap limit " << clk.ns(gap_limit)
         << " ns; lowest measured - injected " << lowest << " ns (allowed down to -" << allowance
         << " ns: 2 ticks of " << clk.source << ")");
    // The truth, on any machine: nothing measured below the injected delay beyond counting.
    CHECK(negative == 0);
    // The rest are claims about a native loop's speed; under an emulator they are left out,
    // and the output says so (SKIP, with the figures in the WARN line above).
    if (const auto& why = test::emulated(); !why.empty())
        SKIP("timing claims not checked (" << why << "): at most 10 % of samples disturbed, "
                                           << "98 % of the undisturbed within [0, 5 us] (here "
                                           << within << " of " << m << "); checked: counts, "
                                           << "no loss, never below the injected delay");
    // A shared 2-core VM interrupts now and then; most samples must still be clean.
    CHECK(static_cast<double>(disturbed) <= 0.10 * n);
    // 98 %, not more: on some virtual machines a store on one CPU is now and then seen on
    // the other tens of microseconds after the writer's clock read that follows it, with
    // neither side interrupted (tests/bench/bench-visibility: 0.015 % of 8 us answers, worst
    // 61 us, on this project's CI guests). Such an answer did reach the logger late, so it is
    // late here; it is never early (`negative` above stays 0 everywhere).
    CHECK(static_cast<double>(within) >= 0.98 * static_cast<double>(m));
}

TEST_CASE("sim: the count and polarity split match the simulation exactly", "[sim]")
{
    const std::uint64_t n = test::scaled(20'000);
    auto r = run_sim("model=uniform,min=1us,max=3us,seed=3", n, 6'000, 50e6);
    std::uint64_t rising = 0, truth_rising = 0;
    for (auto& s : r.samples)
        rising += (s.flags & db::flag_rising) != 0;
    for (auto& t : r.truth)
        truth_rising += t.rising;
    CHECK(r.samples.size() == n);
    CHECK(rising == truth_rising);
    CHECK(rising == n / 2);
}

TEST_CASE("sim: lost responses with p=1e-3 are counted exactly and within binomial bounds", "[sim]")
{
    const std::uint64_t n = test::scaled(30'000);
    constexpr double p = 1e-3;
    auto r = run_sim("model=fixed,value=2us,loss_p=1e-3,seed=11", n, 5'000, 200e3);
    const auto& clk = hw::process_clock(true);
    // Each loss adds one re-arm edge; a re-arm that lands while the target is still busy
    // collapses into the next edge (as an IRQ's pending bit would).
    CHECK(r.edges_seen >= n);
    CHECK(r.edges_seen <= n + r.lost);
    // Each sample pairs with the target's events by time and level. The events the target saw
    // between this sample's t0 and the next one's belong to this sample: the first at the
    // stimulus's level is its answer or loss (edges the target saw together collapse into one
    // event at the line's present level); the others are the unmeasured edges the logger
    // drives after a loss to bring a following target back in step, at the other level.
    // A sample with no such event: the target did not poll in the whole window (preempted),
    // and its edge collapsed into a later event.
    std::uint64_t flagged = 0, injected = 0, timed_out = 0, unstalled = 0, absent = 0,
                  absent_measured = 0;
    double latest_ns = 0; // the latest answer the logger counted lost, after its stimulus
    std::size_t ti = 0;
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
        const auto& s = r.samples[i];
        const std::uint64_t end =
            i + 1 < r.samples.size() ? r.samples[i + 1].t0_cycles : UINT64_MAX;
        const bool rising = s.flags & db::flag_rising;
        const bool lost_flag = s.flags & db::flag_lost;
        flagged += lost_flag;
        while (ti < r.truth.size() && r.truth[ti].seen_cycles < s.t0_cycles)
            ++ti;
        std::size_t k = ti;
        while (k < r.truth.size() && r.truth[k].seen_cycles < end && r.truth[k].rising != rising)
            ++k;
        if (k == r.truth.size() || r.truth[k].seen_cycles >= end) {
            ++absent;
            absent_measured += !lost_flag;
            continue;
        }
        const auto& t = r.truth[k];
        injected += t.lost;
        // The truth, on any machine: an injected loss is never measured.
        if (t.lost)
            CHECK(lost_flag);
        // An answer the target did send may come after the logger's 200 us timeout (the
        // target's thread was late); the logger counts that one lost.
        if (lost_flag && !t.lost) {
            ++timed_out;
            latest_ns = std::max(latest_ns, clk.ns(t.answer_cycles - s.t0_cycles));
            // A 2 us answer 200 us late: the target's thread stalled (a poll gap above the gap
            // limit before it saw the edge or while it answered), as the simulation records.
            unstalled += t.max_gap_cycles <= r.gap_limit_cycles;
        }
    }
    CHECK(flagged == r.lost);
    CHECK(r.samples.size() == n);
    // Within 5 standard deviations of Binomial(n, 1e-3): for n = 30000, 30 +- 27, so 3..57.
    const double mean = double(n) * p, sd = std::sqrt(double(n) * p * (1 - p));
    CHECK(double(injected) >= mean - 5 * sd);
    CHECK(double(injected) <= mean + 5 * sd);
    WARN("lost: " << r.lost << " (injected " << injected << ", answered after the timeout "
                  << timed_out << ", the latest " << latest_ns << " ns after its stimulus, "
                  << unstalled << " of them with no stall of the target's thread; " << absent
                  << " samples the target saw no edge for, " << absent_measured
                  << " of them measured)");
    // The target answering within the timeout whenever its thread was not stalled is a claim
    // about a native machine's speed: an emulated thread is slow without a single long gap.
    // Where the machine stalled the simulated target's thread past the 200 us timeout (seen
    // natively on this project's loaded 2-core VM: 664 us), the logger rightly counts the late
    // answer lost; that is the machine, recorded in the truth, not a miscount.
    if (const auto& why = test::emulated(); !why.empty())
        SKIP("timing claim not checked (" << why << "): every answer of a target thread that "
                                          << "did not stall within the 200 us timeout (here "
                                          << unstalled << " were not); checked: every "
                                          << "injected loss counted lost, counts, binomial "
                                          << "bounds");
    CHECK(unstalled == 0);
}

TEST_CASE("sim: a single-edge target is re-armed on the falling edge without measuring it", "[sim]")
{
    const std::uint64_t n = test::scaled(5'000);
    auto r = run_sim("model=fixed,value=3us,edges=rising,seed=5", n, 10'000, 1e6);
    CHECK(r.lost == 0);
    CHECK(r.edges_seen == n);
    for (auto& s : r.samples)
        REQUIRE((s.flags & db::flag_rising) != 0);
}

TEST_CASE("sim: the model keys produce the distribution they describe", "[sim]")
{
    hw::spec s(
        "sim:model=lognormal,mean=10us,sd=2us,spike_p=0.01,spike_min=60us,spike_max=200us,seed=9");
    auto m = hw::latency_model::from_spec(s);
    double sum = 0;
    int spikes = 0, n = 200'000;
    for (int i = 0; i < n; ++i) {
        auto d = m.draw();
        if (d.spike) {
            ++spikes;
            CHECK(d.delay_ns >= 60'000);
            CHECK(d.delay_ns <= 200'000);
        } else {
            sum += d.delay_ns;
        }
    }
    CHECK(std::fabs(sum / (n - spikes) - 10'000) < 100);
    CHECK(spikes > 1700);
    CHECK(spikes < 2300);
}

namespace
{

std::int64_t proven_ns(const logger::sample& s, const hw::clock_info& clk)
{
    return static_cast<std::int64_t>(clk.ns(s.latency_cycles - s.bracket_cycles));
}

} // namespace

TEST_CASE("sim: every bracket contains the truth, and no spike is dropped", "[sim]")
{
    // The spike model of the fidelity issue: 8 us answers, and with p = 2e-3 a spike of
    // 300-400 us. Kept below 0.9 s of spinning so RT throttling never cuts in.
    const std::uint64_t n = test::scaled(8'000);
    constexpr double p = 2e-3;
    // About 0.8 s of SCHED_FIFO spinning on both CPUs: begun right after the cases before it
    // (0.3 s more), it would pass RT throttling's 950 ms of every 1 s, and the kernel would
    // stop the simulated target's thread for the rest of that second, so that an answer came
    // up to 50 ms late and was lost (seen natively: REQUIRE( r.lost == 0 ) 1 == 0). After 1 s
    // asleep the spinning starts with the whole budget.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto r = run_sim("model=fixed,value=8us,spike_p=2e-3,spike_min=300us,spike_max=400us,seed=11",
                     n, 100'000, 50e6);
    const auto& clk = hw::process_clock(true);
    REQUIRE(r.samples.size() == n);
    REQUIRE(r.truth.size() == n);
    REQUIRE(r.lost == 0);

    logger::recorder_config rc;
    rc.clock = clk;
    rc.threshold_ns = 250'000;
    rc.warmup_samples = 0;
    // Windows start at the first stimulus, as in a run. Left at 0, the recorder would cut
    // every empty 10 s window since the counter's zero: since boot on a TSC, but since 1970
    // on qemu-user's cntvct_el0 (1.8e8 windows; the emulated test spun there for minutes).
    rc.anchor_cycles = r.samples.front().t0_cycles;
    logger::recorder rec(rc, nullptr, 0);
    rec.add(r.samples);
    rec.finish(r.samples.back().t0_cycles + 1);
    const auto sum = rec.summary();

    std::uint64_t injected = 0, target_late = 0, below = 0, past = 0, dropped = 0;
    // The target reads the clock just after its store to the response word; the store can
    // reach the logger's core a little later (store buffer, cache transfer), and the two
    // cores' counters agree only to tens of ns. So the lower bound may pass the recorded
    // answer time by that much, never by more.
    const double slack_ns = 300;
    const double allowance = tick_allowance_ns(clk);
    double worst_over = -1e18;
    std::int64_t best_proven = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& s = r.samples[i];
        const auto& t = r.truth[i];
        // The truth: the answer left the target at answer_cycles; the stimulus left between
        // t0 and the end of drive(). So the bracket's lower end can be no later than
        // answer - t0, and its upper end no earlier than the injected delay.
        const double over = double(proven_ns(s, clk)) - clk.ns(t.answer_cycles - s.t0_cycles);
        worst_over = std::max(worst_over, over);
        below += clk.ns(s.latency_cycles) < t.delay_ns - allowance;
        past += over > slack_ns;
        best_proven = std::max(best_proven, proven_ns(s, clk));
        const bool spike = t.delay_ns > 250'000;
        injected += spike;
        target_late += !spike && t.max_gap_cycles > r.gap_limit_cycles;
        const bool disturbed = s.flags & db::flag_disturbed;
        const double ranked = disturbed ? double(proven_ns(s, clk)) : clk.ns(s.latency_cycles);
        dropped += spike && ranked <= 250'000;
    }
    const double mean = n * p, sd = std::sqrt(n * p * (1 - p));
    WARN("spikes injected above 250 us: " << injected << " (expected " << mean << " +- " << sd
                                          << "); counted above: " << sum.above_threshold
                                          << "; disturbed " << sum.disturbed << " of " << n
                                          << "; logger interruptions " << sum.interruptions
                                          << "; lower bound past the recorded answer by at most "
                                          << worst_over << " ns, on " << past << " samples");
    // Every bracket contains the truth: the upper end is never below the injected delay,
    // on any machine. The lower end may pass the target's recorded answer time only where
    // the machine itself delivered the store late (see the floor test above and
    // tests/bench/bench-visibility): there the recorded time is only a lower estimate of the
    // answer's arrival. That is rare, bounded here at 1 in 1000 samples; on bare metal it is 0.
    CHECK(below == 0);
    CHECK(dropped == 0); // every spike ranks above the threshold, disturbed or not
    // The simulation's own count lies within binomial bounds, and the count above the
    // threshold is exactly the injected spikes plus answers the simulated target itself was
    // late with (its thread preempted: not a spike, but a real late answer).
    CHECK(std::abs(double(injected) - mean) <= 5 * sd + 1);
    CHECK(sum.above_threshold >= injected);
    CHECK(sum.above_threshold <= injected + target_late);
    // Nothing reported sits below a proven latency.
    CHECK(sum.max_ns >= best_proven);
    CHECK(sum.warm_max_ns >= best_proven);
    REQUIRE_FALSE(rec.worst().empty());
    CHECK(db::rank_ns(rec.worst().front()) >= best_proven);
    // The 300 ns slack is a native machine's store delivery and clock; under qemu-user the
    // counter itself steps in 1 us (QEMU 7.2 derives cntvct_el0 from gettimeofday), so the
    // lower end's excess is a count of steps there, not of late stores: left out, and said so.
    if (const auto& why = test::emulated(); !why.empty())
        SKIP("timing claim not checked (" << why << "): the lower bound past the recorded "
                                          << "answer by more than " << slack_ns << " ns on at "
                                          << "most 1 in 1000 samples (here " << past << " of " << n
                                          << "); checked: no bracket below the injected "
                                          << "delay, no spike dropped, counts");
    CHECK(past <= n / 1000);
}

TEST_CASE("sim: a 2 ms target is disturbed no more than 3x as often as a 10 us one, plus 5 % for "
          "chance",
          "[sim]")
{
    // The old rule flagged a sample when any poll gap of its wait exceeded the limit, so the
    // longer the answer, the likelier the flag (72 % of 2 ms answers on a 1 kHz-tick logger).
    // The bracket rule judges only the polls around the answer.
    constexpr std::uint64_t n = 300;
    auto fraction = [&](const char* model) {
        auto r = run_sim(model, n, 2'500'000, 50e6);
        std::uint64_t disturbed = 0, kept = 0;
        for (const auto& s : r.samples) {
            disturbed += (s.flags & db::flag_disturbed) != 0;
            kept += !(s.flags & (db::flag_disturbed | db::flag_lost));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // RT throttling window
        return std::pair{disturbed, kept};
    };
    const auto [d10, k10] = fraction("model=fixed,value=10us");
    const auto [d2m, k2m] = fraction("model=fixed,value=2ms");
    WARN("disturbed: 10 us " << d10 << "/" << n << ", 2 ms " << d2m << "/" << n
                             << "; in the statistics at 2 ms: " << k2m << "/" << n);
    // Shares of disturbed samples are claims about a native loop: left out under emulation.
    if (const auto& why = test::emulated(); !why.empty())
        SKIP("timing claims not checked (" << why << "): 80 % of 2 ms answers in the "
                                           << "statistics, 2 ms disturbed at most 3x as often "
                                           << "as 10 us plus 5 %");
    // 80 %: the old rule kept 28 %. A fresh-clone CI run on this 2-core VM kept 275 of 300
    // (its 10 us run had 69 disturbed: the machine, not the rule).
    CHECK(k2m >= 0.8 * n);
    // Within 3x, plus 5 % of the samples for chance: the host's own preemptions land in either
    // run at random, a few samples' worth (a fresh-clone CI run saw 0 at 10 us and 5 at 2 ms).
    // The old rule's 72 % at 2 ms stays far outside.
    CHECK(d2m <= 3 * d10 + n / 20);
}
