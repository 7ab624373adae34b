// SPDX-License-Identifier: MIT
#pragma once

#include "error.hpp"
#include "histogram.hpp"
#include "read.hpp"
#include "session.hpp"

#include <boost/program_options/options_description.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

/**
 * Gates: limits a run's figures must meet, the one place they are evaluated. `run --fail-*`,
 * `check`, `campaign` phase gates and the JUnit/LAVA exports all go through
 * evaluate_gates() on a run as db/read.hpp reads it.
 *
 * The rules (docs/commands/check.md):
 * - max: the run's max, which is the upper bound of the highest-ranking sample (a disturbed
 *   sample ranks by the lower bound it proves). It fails when that upper bound is above the
 *   limit. So a sample proven above the limit always fails the gate (it ranks at least as high
 *   as its lower bound, and the max is at least that), and a disturbed sample that ranks
 *   highest fails it by its upper bound even when its lower bound is under the limit: a gate
 *   passes only on what is proven under the limit.
 * - pN: the percentile of the statistics (clean samples; disturbed ones too with
 *   --keep-disturbed), as report shows it: p50, p99, p99.9, p99.99 and p99.9999 as stored,
 *   any other from the stored histogram by the same rank rule (the bucket's top, clamped to
 *   min and max: never below the true sample).
 * - p-exceed X=P: the upper end of the 95 % profile-likelihood interval of P(latency > X) per
 *   sample, from the tail fit `irqloop tail` shows (analysis/tail-fit.hpp), fails when above
 *   P. A fit whose checks do not allow the claim (too few exceedances, a step change across
 *   the run's windows, exceedances in bursts) is neither a pass nor a fail: the line is
 *   refused ("not claimed", gate_line::refused) and the commands exit 2 (throw_if_refused()).
 * - lost, overflows: counts, failing when above the limit.
 * - A run without samples in its statistics has no max or percentile: those limits FAIL
 *   ("n/a"), never pass.
 * - A value equal to its limit passes: a limit is the largest value accepted.
 */
namespace irqloop::logger
{

/** @brief The exit status of a command whose limit failed (docs/commands/exit-status.md). */
constexpr int exit_gate_failed = exit_limit;

/** @brief The limits a run is held to; unset limits are not checked. */
struct gate_limits final {
    std::optional<std::int64_t> max_ns;
    std::vector<std::pair<double, std::int64_t>> percentiles; ///< {p, limit ns}, as given
    std::vector<std::pair<std::int64_t, double>> p_exceed;    ///< {X ns, P per sample}, as given
    std::optional<std::uint64_t> lost;
    std::optional<std::uint64_t> overflows;

    bool empty() const noexcept
    {
        return !max_ns && percentiles.empty() && p_exceed.empty() && !lost && !overflows;
    }
};

/** @brief One limit checked against one run. */
struct gate_line final {
    std::string key;          ///< max_us, p99.99_us, p_exceed_100us, lost, overflows (gate.<key>)
    std::string name;         ///< max, p99.99, P(>100us), lost, overflows
    bool latency = false;     ///< value and limit in ns (shown in us)...
    bool probability = false; ///< ...or probabilities per sample, else counts
    bool refused = false;     ///< the tail fit's checks do not allow the claim (note says why)
    bool has_value = true;
    double value = 0; ///< ns or a count
    double limit = 0;
    bool pass = false;
    std::string note; ///< why the value is what it is, e.g. the bracket of a disturbed max
};

/** @brief The limits of one run, in the order given: max, percentiles, lost, overflows. */
struct gate_outcome final {
    std::vector<gate_line> lines;

    bool pass() const noexcept;
    std::size_t failed() const noexcept;
    /** @brief The first line whose claim the data do not allow, or null. */
    const gate_line* refused() const noexcept;
};

/**
 * @brief Throw the refusal of @p g's first refused line (exit_usage, 2): "gate P(>100us) on
 *        run 3: not claimed: the fit's independence check failed: ... (hint)". Nothing when
 *        no line was refused.
 */
void throw_if_refused(const gate_outcome& g, const std::string& run_name);

/**
 * @brief Check @p run against @p limits. Percentiles other than the five stored read the
 *        run's histogram through @p cat.
 */
gate_outcome evaluate_gates(db::catalog& cat, const db::run_record& run, const gate_limits& limits);

/**
 * @brief Check a run that has no store (run --no-db): only the stored percentiles are known.
 * @throws irqloop::error (exit_usage) for another percentile.
 */
gate_outcome evaluate_gates(const db::run_record& run, const gate_limits& limits);

/**
 * @brief Check a run on what it holds: its record and its run histogram (any percentile, by
 *        the same rule as from the stored histogram). No file is read.
 */
gate_outcome evaluate_gates(const db::run_record& run, const gate_limits& limits,
                            const histogram& run_histogram);

/**
 * @brief `run --fail-*` as a plug-in of the run (session.hpp): at its finish the limits are
 *        evaluated on the outcome and stored with the run as gate.* metadata, through the
 *        run's own store, before its final status. A failed run is not gated.
 */
class gate_plugin final : public run_plugin
{
public:
    /** @brief @p db_path: the run's store, read back for a P(latency > X) limit's tail fit. */
    explicit gate_plugin(gate_limits limits, std::string db_path = {})
        : limits_(std::move(limits)), db_path_(std::move(db_path))
    {
    }
    void on_start(session& s) override { session_ = &s; }
    void on_finish(run_outcome& out, const histogram& h) override;
    /** @brief The outcome, once the run has finished (not for a failed run). */
    const std::optional<gate_outcome>& outcome() const noexcept { return outcome_; }

private:
    gate_limits limits_;
    std::string db_path_;
    session* session_ = nullptr;
    std::optional<gate_outcome> outcome_;
};

/**
 * @brief Why @p run cannot pass, whatever its figures and limits: it did not end complete
 *        (interrupted, failed, or still `running`: not ended, or its logger died), or it ended
 *        without a sample in its statistics. Empty when it can pass. The CI exports (rt-tests
 *        JSON, JUnit, LAVA) report such a run as failed (docs/integration.md).
 */
std::string run_unfinished_reason(const db::run_record& run);

/**
 * @brief The exit status that stands for such a run in an export's return code
 *        (docs/commands/exit-status.md): 1 when it did not end complete (a failure; the
 *        128 + N of a signal is not stored with the run), 4 when it ended complete without a
 *        sample (no answer); 0 when it can pass.
 */
int run_unfinished_status(const db::run_record& run);

/** @brief One line per limit: "  gate max  120.000 us  limit 100.000 us  FAIL  (note)". */
std::string format_gate_lines(const gate_outcome& g);

/** @brief A line's value or limit as stored and exported: "120.000" (us), "0" (count), "n/a". */
std::string gate_value_text(const gate_line& l);
std::string gate_limit_text(const gate_line& l);

/**
 * @brief The outcome as run metadata: gate.result = pass|fail, and per limit
 *        gate.<key> = "<value> <limit> pass|fail[ <note>]" (latencies in us, 3 decimals;
 *        the value n/a without samples).
 */
std::vector<std::pair<std::string, std::string>> gate_metadata(const gate_outcome& g);

/** @brief The outcome stored with a run (gate_metadata()), or none when it has no gate.result. */
std::optional<gate_outcome> stored_gates(const db::run_record& run);

/** @brief Write gate_metadata(@p g) into run @p run_id of @p db_path (one transaction). */
void store_gate_outcome(const std::string& db_path, std::int64_t run_id, const gate_outcome& g);

/** @brief The limit options as text, before parsing (check's and export's spelling). */
struct gate_limit_args final {
    std::string max;
    std::vector<std::string> p;
    std::vector<std::string> p_exceed;
    std::string lost, overflows;
};

/** @brief Register --max, --p, --p-exceed (both repeatable), --lost, --overflows on @p desc. */
void add_gate_limit_options(boost::program_options::options_description& desc, gate_limit_args& t);

/** @brief Parse check's spelling of the limits; @p where names the source in messages. */
gate_limits parse_gate_limits(const gate_limit_args& t, const std::string& where = "");

/**
 * @brief Parse one percentile limit "99.99=50us" (p in (0, 100), a duration; a bare number is
 *        in us). @p what names the option in messages.
 */
std::pair<double, std::int64_t> parse_percentile_limit(const std::string& text,
                                                       const std::string& what);

/**
 * @brief Parse one exceedance limit "100us=1e-9": X a duration with its unit, P a probability
 *        per sample in (0, 1). @p what names the option in messages.
 */
std::pair<std::int64_t, double> parse_p_exceed_limit(const std::string& text,
                                                     const std::string& what);

/** @brief A duration limit: a unit is required ("100us"), except for "0". */
std::int64_t parse_gate_duration(const std::string& text, const std::string& what);

/** @brief One of the five percentiles every run stores (50, 99, 99.9, 99.99, 99.9999). */
bool is_stored_percentile(double p) noexcept;

/** @brief "p99.99" for 99.99: the shortest decimal text that reads back as @p p. */
std::string percentile_name(double p);

} // namespace irqloop::logger
