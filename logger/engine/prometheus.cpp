// SPDX-License-Identifier: MIT
#include "prometheus.hpp"

#include "percentiles.hpp"

#include <cinttypes>
#include <cstdio>

namespace irqloop::logger
{

void metrics_run::add_bucket(std::int64_t lo_ns, std::int64_t hi_ns, std::uint64_t n) noexcept
{
    (void)lo_ns;
    const std::int64_t top = hi_ns - 1; // the bucket's highest value
    for (std::size_t i = 0; i < metrics_le_ns.size(); ++i)
        if (top <= metrics_le_ns[i])
            le_count[i] += n;
    count += n;
}

void metrics_run::add_histogram(const histogram& h, double mean_ns)
{
    h.for_each_bucket(
        [&](std::int64_t lo, std::int64_t hi, std::uint64_t n) { add_bucket(lo, hi, n); });
    sum_ns = mean_ns * double(count);
}

std::string valid_utf8(std::string_view s)
{
    std::string o;
    o.reserve(s.size());
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    auto cont = [&](std::size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
    for (std::size_t i = 0; i < n;) {
        const unsigned char c = p[i];
        std::size_t len = 0;
        if (c < 0x80)
            len = 1;
        else if (c >= 0xC2 && c <= 0xDF)
            len = cont(i + 1) ? 2 : 0;
        else if (c >= 0xE0 && c <= 0xEF) {
            const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
            len = i + 1 < n && p[i + 1] >= lo && p[i + 1] <= hi && cont(i + 2) ? 3 : 0;
        } else if (c >= 0xF0 && c <= 0xF4) {
            const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
            len =
                i + 1 < n && p[i + 1] >= lo && p[i + 1] <= hi && cont(i + 2) && cont(i + 3) ? 4 : 0;
        }
        if (len == 0) {
            o += "\xEF\xBF\xBD"; // U+FFFD for the one byte that starts no valid sequence
            ++i;
        } else {
            o.append(s.substr(i, len));
            i += len;
        }
    }
    return o;
}

namespace
{

/** @brief A label value: valid UTF-8, with backslash, double quote and newline escaped. */
std::string label_value(std::string_view v)
{
    std::string o;
    for (char c : valid_utf8(v)) {
        if (c == '\\')
            o += "\\\\";
        else if (c == '"')
            o += "\\\"";
        else if (c == '\n')
            o += "\\n";
        else
            o += c;
    }
    return o;
}

std::string seconds(double ns)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.12g", ns / 1e9);
    return b;
}

std::string integer(std::uint64_t v)
{
    return std::to_string(v);
}

class writer final
{
public:
    writer(std::ostream& out, std::span<const metrics_run> runs) : out_(out), runs_(runs) {}

    void family(const char* name, const char* type, const char* help)
    {
        out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
    }

    /** @brief One sample per run; @p value returns "" to leave a run out. */
    template <typename F> void samples(const std::string& name, F&& value, std::string extra = {})
    {
        for (const auto& r : runs_) {
            const std::string v = value(r);
            if (!v.empty())
                out_ << name << '{' << labels(r) << extra << "} " << v << '\n';
        }
    }

    /** @brief One sample of run @p r, with @p extra labels after the run's. */
    void sample(const std::string& name, const metrics_run& r, const std::string& extra,
                const std::string& value)
    {
        out_ << name << '{' << labels(r) << extra << "} " << value << '\n';
    }

    std::span<const metrics_run> runs() const noexcept { return runs_; }

private:
    static std::string labels(const metrics_run& r)
    {
        return "label=\"" + label_value(r.label) + "\",uuid=\"" + label_value(r.uuid) +
               "\",backend=\"" + label_value(r.backend) + '"';
    }

    std::ostream& out_;
    std::span<const metrics_run> runs_;
};

// One figure of the summary: its metric's name and help, and its field.
template <class T> struct summary_figure {
    const char* name;
    const char* help;
    T db::summary_row::*field;
};

// A family of one sample per run: its TYPE and HELP, then @p value of each run.
template <class T, class Value>
void one_family(writer& w, const summary_figure<T>& f, const char* type, Value value)
{
    w.family(f.name, type, f.help);
    w.samples(f.name, value);
}

// The latency histogram: cumulative buckets, +Inf, sum and count.
void write_histogram(writer& w)
{
    w.family("irqloop_latency_seconds", "histogram",
             "Stimulus-to-answer latency of the samples in the statistics (lost and disturbed "
             "samples excluded); a bucket counts under le only when all its values are <= le.");
    for (std::size_t i = 0; i < metrics_le_ns.size(); ++i)
        w.samples(
            "irqloop_latency_seconds_bucket",
            [&](const metrics_run& r) { return integer(r.le_count[i]); },
            ",le=\"" + seconds(double(metrics_le_ns[i])) + '"');
    w.samples(
        "irqloop_latency_seconds_bucket", [](const metrics_run& r) { return integer(r.count); },
        ",le=\"+Inf\"");
    w.samples("irqloop_latency_seconds_sum",
              [](const metrics_run& r) { return seconds(r.sum_ns); });
    w.samples("irqloop_latency_seconds_count",
              [](const metrics_run& r) { return integer(r.count); });
}

// Min, max, warm max and the stored percentiles, in seconds.
void write_latency_gauges(writer& w)
{
    const summary_figure<std::int64_t> figures[] = {
        {"irqloop_latency_min_seconds", "Smallest latency in the statistics.",
         &db::summary_row::min_ns},
        {"irqloop_latency_warm_max_seconds", "Largest latency after the warm-up samples.",
         &db::summary_row::warm_max_ns},
    };
    one_family(w, figures[0], "gauge", [&](const metrics_run& r) {
        return r.has_stats ? seconds(double(r.summary.min_ns)) : std::string();
    });
    // The max never below what the lost answers prove: each took at least the timeout.
    const summary_figure<std::int64_t> max{
        "irqloop_latency_max_seconds",
        "Largest latency (the upper bound of the highest-ranking sample); with lost answers, "
        "at least the timeout each of them took.",
        &db::summary_row::max_ns};
    one_family(w, max, "gauge", [&](const metrics_run& r) {
        const auto m =
            db::max_at_least_ns(r.has_stats ? std::optional(r.summary.max_ns) : std::nullopt,
                                r.summary.lost, r.timeout_ns);
        return m ? seconds(double(*m)) : std::string();
    });
    one_family(w, figures[1], "gauge", [&](const metrics_run& r) {
        return r.has_stats ? seconds(double(r.summary.warm_max_ns)) : std::string();
    });
    w.family("irqloop_latency_percentile_seconds", "gauge",
             "Latency percentile from the 0.1 % histogram (never below the true value).");
    for (const auto& p : db::stored_percentiles)
        w.samples(
            "irqloop_latency_percentile_seconds",
            [&](const metrics_run& r) {
                return r.has_stats ? seconds(double(r.summary.*p.field)) : std::string();
            },
            std::string(",percentile=\"") + (p.label + 1) + '"'); // "99.99" of "p99.99"
}

// The summary's counts, and the windows committed.
void write_counters(writer& w)
{
    const summary_figure<std::uint64_t> counters[] = {
        {"irqloop_stimuli_total", "Stimulus edges driven.", &db::summary_row::stimuli},
        {"irqloop_samples_total", "Samples in the statistics.", &db::summary_row::samples},
        {"irqloop_lost_total", "Stimuli without an answer before the timeout.",
         &db::summary_row::lost},
        {"irqloop_late_total", "Answers that came after their timeout.", &db::summary_row::late},
        {"irqloop_disturbed_total", "Samples whose bracket was wider than the gap limit.",
         &db::summary_row::disturbed},
        {"irqloop_ring_overflows_total", "Samples dropped because the sampler's ring was full.",
         &db::summary_row::overflows},
        {"irqloop_above_threshold_total", "Samples above the run's threshold.",
         &db::summary_row::above_threshold},
    };
    for (const auto& c : counters)
        one_family(w, c, "counter",
                   [&](const metrics_run& r) { return integer(r.summary.*c.field); });
    w.family("irqloop_windows_total", "counter", "Statistics windows committed.");
    w.samples("irqloop_windows_total", [](const metrics_run& r) { return integer(r.windows); });
}

// The run's threshold, start and whether it is still recording.
void write_run_gauges(writer& w)
{
    w.family("irqloop_threshold_seconds", "gauge", "The run's latency threshold (--threshold).");
    w.samples("irqloop_threshold_seconds",
              [](const metrics_run& r) { return seconds(double(r.threshold_ns)); });
    w.family("irqloop_run_start_time_seconds", "gauge", "When the run began, Unix time.");
    w.samples("irqloop_run_start_time_seconds", [](const metrics_run& r) {
        char b[64];
        std::snprintf(b, sizeof b, "%" PRId64 ".%09" PRId64, r.start_unix_ns / 1'000'000'000,
                      r.start_unix_ns % 1'000'000'000);
        return std::string(b);
    });
    w.family("irqloop_run_active", "gauge", "1 while the run is recording, 0 once it ended.");
    w.samples("irqloop_run_active",
              [](const metrics_run& r) { return std::string(r.active ? "1" : "0"); });
}

// The gates: 1 for a limit met, 0 for one failed, per limit and for the run as a whole.
void write_gates(writer& w)
{
    bool any = false;
    for (const auto& r : w.runs())
        any = any || !r.gates.empty();
    if (!any)
        return;
    w.family("irqloop_gate_pass", "gauge",
             "1 when the run met the limit, 0 when it failed it (run --fail-*, campaign); "
             "limit=\"all\": every limit, and 0 for a run that cannot pass (interrupted, "
             "failed, no sample).");
    for (const auto& r : w.runs())
        for (const auto& [key, pass] : r.gates)
            w.sample("irqloop_gate_pass", r, ",limit=\"" + label_value(key) + '"',
                     pass ? "1" : "0");
}

} // namespace

void write_prometheus(std::ostream& out, std::span<const metrics_run> runs)
{
    writer w(out, runs);
    write_histogram(w);
    write_latency_gauges(w);
    write_counters(w);
    write_run_gauges(w);
    write_gates(w);
}

} // namespace irqloop::logger
