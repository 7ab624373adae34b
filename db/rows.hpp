// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/**
 * The rows of the store. db/ knows these plain structs and SQL; it knows nothing of the
 * recorder's classes. All times are integers in nanoseconds: latencies on the logger's
 * calibrated cycle clock, wall-clock instants as Unix time (CLOCK_REALTIME).
 */
namespace irqloop::db
{

/** @brief Sample flags, stored as an integer bit set in worst, exceedances and raw rows. */
enum sample_flag : std::uint32_t {
    flag_rising = 1u << 0,    ///< stimulus edge was rising (else falling)
    flag_disturbed = 1u << 1, ///< the sample's bracket is wider than the gap limit
    flag_warmup = 1u << 2,    ///< sample lies inside the warm-up
    flag_lost = 1u << 3,      ///< no response before the timeout (raw rows only)
};

/**
 * @brief Where a run stands: runs.status. running from begin_run() until finish_run() sets one
 * of the others; a run whose writer died is found running and marked interrupted on the next
 * read-write open.
 */
enum class run_status { running, complete, interrupted, failed };

/** @brief What a run measured: runs.kind. floor runs measure the logger's own share. */
enum class run_kind { measure, floor, selftest };

/** @brief The text stored in runs.status / runs.kind: "running", "measure", ... */
std::string_view to_text(run_status s) noexcept;
std::string_view to_text(run_kind k) noexcept;

/**
 * @brief The status or kind stored as @p text.
 * @throws irqloop::error (exit_failure) for any other text, naming the text and the values
 *         this irqloop knows (a file written by a newer irqloop, or edited by hand).
 */
run_status parse_run_status(std::string_view text);
run_kind parse_run_kind(std::string_view text);

/** @brief One fact recognized in a run's --target-info output: target_facts. */
struct target_fact final {
    std::string key;
    std::string value;
    std::string source; ///< the parser that found it: "xl info", "xen cmdline", "line", ...

    bool operator==(const target_fact&) const = default;
};

/** @brief How a run's --target-info command ended: target_info.status. */
enum class target_info_status { exited, killed, timed_out, not_started };

/** @brief "exited", "killed", "timed_out", "not_started". */
std::string_view to_text(target_info_status s) noexcept;
/** @throws irqloop::error (exit_failure) for another text. */
target_info_status parse_target_info_status(std::string_view text);

/**
 * @brief The command `run --target-info` ran once before the first stimulus, how it ended,
 * what it wrote (each stream cut at the cap: *_bytes counts what was written) and the facts
 * parsed from its stdout: tables target_info and target_facts (schema version 9).
 */
struct target_info_row final {
    std::string command;
    target_info_status status = target_info_status::exited;
    std::optional<int> exit_code; ///< exited
    std::optional<int> signal;    ///< killed
    std::string error;            ///< not_started: why
    std::int64_t timeout_ns = 0;
    std::int64_t duration_ns = 0;
    std::string out, err;
    std::uint64_t out_bytes = 0, err_bytes = 0;
    std::vector<target_fact> facts; ///< in the order found, one per key

    bool out_truncated() const noexcept { return out_bytes > out.size(); }
    bool err_truncated() const noexcept { return err_bytes > err.size(); }
    /** @brief The value of @p key, or none. */
    std::optional<std::string> fact(std::string_view key) const;
    bool operator==(const target_info_row&) const = default;
};

/** @brief A run's metadata, written once when the run begins. */
struct run_row final {
    std::string uuid;  ///< RFC 4122 v4, unique across machines
    std::string label; ///< user's label for comparisons, may be empty
    run_kind kind = run_kind::measure;
    std::int64_t start_unix_ns = 0;
    std::string command_line;
    std::string version; ///< irqloop version
    std::string uname;   ///< sysname release version machine
    std::string hostname;
    std::string backend;      ///< canonical backend spec
    std::string clock_source; ///< "tsc", "cntvct", "monotonic_raw"
    double clock_hz = 0;
    double clock_read_ns = 0;
    std::int64_t interval_ns = 0;
    std::int64_t jitter_ns = 0;
    std::int64_t timeout_ns = 0;
    std::int64_t threshold_ns = 0;
    std::int64_t gap_limit_ns = 0;
    std::int64_t stats_interval_ns = 0;
    std::uint64_t warmup_samples = 0;
    std::uint64_t samples_requested = 0; ///< 0 when bounded by duration or unbounded
    std::int64_t duration_ns = 0;        ///< 0 when bounded by samples or unbounded
    std::string rt_settings; ///< what was obtained, e.g. "sched=fifo:80 mlockall=yes cpu=1"
    std::string target;      ///< free text: the target board and kernel
    std::string load;        ///< free text: the load on the target
    std::vector<std::pair<std::string, std::string>> metadata; ///< backend extras
    /// run --target-info: stored in target_info and target_facts; none without the option
    /// (and for every run of a file before version 9).
    std::optional<target_info_row> target_info;

    bool operator==(const run_row&) const = default;
};

/**
 * @brief Cumulative figures of a run so far. Written with every interval commit, so that a
 * run cut short by SIGKILL still has a summary up to its last committed interval.
 * Latency statistics exclude lost samples, and disturbed ones unless the run keeps them.
 */
struct summary_row final {
    std::uint64_t samples = 0; ///< samples in the statistics
    std::uint64_t stimuli = 0; ///< edges driven (samples + lost + disturbed excluded)
    std::uint64_t lost = 0;
    std::uint64_t late = 0; ///< responses that arrived after their timeout
    std::uint64_t disturbed = 0;
    std::uint64_t overflows = 0; ///< samples dropped because the ring was full
    std::uint64_t above_threshold = 0;
    std::uint64_t rising = 0;
    std::uint64_t falling = 0;
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
    std::int64_t warm_max_ns = 0; ///< max over samples after the warm-up
    double mean_ns = 0;
    double stddev_ns = 0;
    std::int64_t p50_ns = 0;
    std::int64_t p99_ns = 0;
    std::int64_t p999_ns = 0;
    std::int64_t p9999_ns = 0;
    std::int64_t p999999_ns = 0;
    std::int64_t end_unix_ns = 0;          ///< time of the last commit
    std::uint64_t exceedances_dropped = 0; ///< above threshold but over --max-exceedances
    /// When the max (warm max) is a disturbed sample whose proven lower bound beat every
    /// undisturbed one: its bracket width (the max is its upper bound); 0 otherwise.
    std::int64_t max_bracket_ns = 0;
    std::int64_t warm_max_bracket_ns = 0;
    std::uint64_t interruptions = 0; ///< logger poll gaps above the gap limit outside a bracket
    /// SMIs over the run (MSR 0x34, schema version 4): the sum of the windows' counts while
    /// every window so far was counted; none (NULL, "n/a") otherwise.
    std::optional<std::uint64_t> smi_count;
    /// A sample after the warm-up counted for WARM MAX. False for a run shorter than its
    /// warm-up: warm_max_ns is then absent (stored NULL, shown "—"), never 0.
    bool has_warm_max = false;

    bool operator==(const summary_row&) const = default;
};

/**
 * @brief A max as one number, for an output with no room for "at least": the largest answered
 * latency @p answered_ns (none when nothing was answered); with @p lost answers, each of which
 * took at least @p timeout_ns and how much longer nobody knows, never below that timeout. The
 * value the gates compare, and the number behind the tables' "≥".
 */
inline std::optional<std::int64_t> max_at_least_ns(std::optional<std::int64_t> answered_ns,
                                                   std::uint64_t lost,
                                                   std::int64_t timeout_ns) noexcept
{
    if (lost == 0 || timeout_ns <= 0)
        return answered_ns;
    return answered_ns && *answered_ns > timeout_ns ? *answered_ns : timeout_ns;
}

/** @brief Statistics of one --stats-interval window. */
struct interval_row final {
    std::uint64_t index = 0; ///< 0, 1, 2, ... within the run
    std::int64_t start_unix_ns = 0;
    std::int64_t end_unix_ns = 0;
    std::uint64_t samples = 0;
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
    double mean_ns = 0;
    double stddev_ns = 0;
    std::int64_t p50_ns = 0;
    std::int64_t p99_ns = 0;
    std::int64_t p999_ns = 0;
    std::uint64_t above_threshold = 0;
    std::uint64_t lost = 0;
    std::uint64_t disturbed = 0;
    std::uint64_t overflows = 0;
    std::uint64_t interruptions = 0; ///< logger poll gaps above the gap limit outside a bracket
    std::int64_t max_bracket_ns = 0; ///< as summary_row::max_bracket_ns, for this window
    /// SMIs in the window (MSR 0x34 of the sampler's CPU, read at the window's commit; schema
    /// version 4); none (NULL, "n/a") where the counter cannot be read, never 0.
    std::optional<std::uint64_t> smi_count;
    /// The largest truth_ns of the window's answered samples, clean or disturbed, in the
    /// statistics or not (lost samples left out; schema version 6); none (NULL) where no such
    /// sample has a known truth: a real wire, or a window of drawn losses only.
    std::optional<std::int64_t> truth_max_ns;

    bool operator==(const interval_row&) const = default;
};

/** @brief One sample, for the worst, exceedances and raw tables. */
struct sample_row final {
    std::uint64_t seq = 0;       ///< stimulus number within the run, from 0
    std::int64_t unix_ns = 0;    ///< logger wall-clock time of the stimulus
    std::int64_t latency_ns = 0; ///< -1 for a lost sample
    std::int64_t gap_ns = 0;     ///< largest gap between two polls before the answer
    std::uint32_t flags = 0;     ///< sample_flag bits
    /// Upper minus lower bound: the true latency lies in [latency_ns - bracket_ns, latency_ns].
    std::int64_t bracket_ns = 0;
    /// The true latency where the wire knew it (the simulated board's drawn delay, on the same
    /// clock and converted like latency_ns; schema version 6); none (NULL) on a real wire, for
    /// a drawn loss, and in rows recorded before version 6.
    std::optional<std::int64_t> truth_ns;

    bool operator==(const sample_row&) const = default;
};

/** @brief Something that happened during a run. */
struct event_row final {
    std::int64_t unix_ns = 0;
    std::uint64_t seq = 0; ///< sample number it relates to, or the count so far
    std::string kind; ///< "lost", "late", "disturbed", "overflow", "signal", "warning", "error"
    std::int64_t value = 0; ///< kind-specific: a count, a gap in ns, a signal number
    std::string detail;
};

/** @brief A non-empty histogram bucket: count samples in [lo_ns, hi_ns). */
struct bucket_row final {
    std::int64_t lo_ns = 0;
    std::int64_t hi_ns = 0;
    std::uint64_t count = 0;
};

/**
 * @brief Per-window latency histograms (schema version 3, table interval_histograms): log-spaced
 * buckets, four per octave. Bucket b holds [lo, hi): for b < 4, [b, b + 1) ns; above,
 * lo = (4 + b % 4) << (b / 4 - 1) and hi = (5 + b % 4) << (b / 4 - 1), so a bucket is a quarter
 * to a seventh of its lower edge wide. The same formula is the window_histograms view's.
 */
namespace window_buckets
{
/** @brief Buckets per power of two. */
inline constexpr int per_octave = 4;
/** @brief The stored encoding, in run metadata key logger.window_histogram. */
inline constexpr const char* scheme = "log2/4";

/** @brief The bucket holding @p ns (negative values as 0). */
inline int index_of(std::int64_t ns) noexcept
{
    if (ns < 4)
        return ns < 0 ? 0 : static_cast<int>(ns);
    const int e = 63 - __builtin_clzll(static_cast<unsigned long long>(ns));
    return 4 * (e - 1) + static_cast<int>((ns >> (e - 2)) & 3);
}
/** @brief The lower edge of bucket @p b, in ns. */
inline std::int64_t lo_ns(int b) noexcept
{
    return b < 4 ? b : std::int64_t(4 + b % 4) << (b / 4 - 1);
}
/** @brief The upper edge (exclusive) of bucket @p b, in ns. */
inline std::int64_t hi_ns(int b) noexcept
{
    return b < 4 ? b + 1 : std::int64_t(5 + b % 4) << (b / 4 - 1);
}
/** @brief Buckets a latency up to 2^62 ns can need. */
inline constexpr int count = 4 * 62;
} // namespace window_buckets

/** @brief One non-empty bucket of one window's histogram (interval_histograms). */
struct window_bucket_row final {
    std::uint64_t interval = 0; ///< intervals.idx
    int bucket = 0;             ///< see window_buckets
    std::uint64_t count = 0;
};

/**
 * @brief "% above threshold": above_threshold over the answered stimuli (stimuli - lost).
 * The denominator is every answered sample because a disturbed sample whose proven lower bound
 * lies above the threshold counts as above it, in the statistics or not. 0 with no answer.
 */
inline double pct_above(const summary_row& s) noexcept
{
    const std::uint64_t answered = s.stimuli > s.lost ? s.stimuli - s.lost : 0;
    return answered ? 100.0 * double(s.above_threshold) / double(answered) : 0.0;
}

/**
 * @brief What a sample ranks by in worst lists, maxima and exceedances: its latency, or for a
 * disturbed sample the lower bound it proves (so a bracket widened by the logger never ranks a
 * sample above one that was measured cleanly, and a long answer is never dropped).
 */
inline std::int64_t rank_ns(const sample_row& r) noexcept
{
    return (r.flags & flag_disturbed) ? r.latency_ns - r.bracket_ns : r.latency_ns;
}

} // namespace irqloop::db
