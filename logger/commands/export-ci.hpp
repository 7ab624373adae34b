// SPDX-License-Identifier: MIT
#pragma once

#include "gates.hpp"
#include "read.hpp"

#include <ostream>
#include <vector>

/**
 * The CI formats of `irqloop export`: JUnit XML (written with pugixml) and LAVA test-case
 * signal lines (a line grammar no library writes). Both report a run's gates (gates.hpp):
 * the limits given to export, or else the outcome stored with the run (gate.*).
 * docs/integration.md shows them read by Jenkins, GitLab and LAVA.
 */
namespace irqloop::logger
{

/** @brief A run and the gates it is reported with. */
struct gated_run final {
    const db::run_record* run = nullptr;
    gate_outcome gates;
    std::string unfinished; ///< run_unfinished_reason(): why it fails whatever its gates

    /** @brief Every gate passed, and the run ended complete with samples. */
    bool pass() const noexcept { return unfinished.empty() && gates.pass(); }
};

/**
 * @brief Pair each run with @p limits evaluated on it, or when @p limits is empty with the
 *        outcome stored with it, and with why it cannot pass (run_unfinished_reason()).
 * @throws irqloop::error (exit_usage) when @p need_gates and a run that ended complete with
 *         samples has neither (JUnit has nothing to report for it).
 */
std::vector<gated_run> gate_runs(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                                 const gate_limits& limits, bool need_gates);

/**
 * @brief JUnit XML: <testsuites> with one <testsuite> per run (its figures as properties) and
 *        one <testcase> per limit; a failed limit has a <failure> with the value and the limit.
 *        A run that cannot pass (gated_run::unfinished) has one more testcase, "complete",
 *        failed with the reason.
 */
void write_junit(const std::vector<gated_run>& runs, std::ostream& out);

/**
 * @brief LAVA lines `<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=ID RESULT=pass|fail MEASUREMENT=N
 *        UNITS=us>`: per run, one line per figure (min, avg, max, percentiles: RESULT=pass,
 *        or skip for a run without samples), counts (UNITS=count), `complete` RESULT=fail for
 *        a run that cannot pass, one line per limit, and `gate` for the run as a whole (fail
 *        when a limit failed or the run cannot pass). IDs use only [-_.A-Za-z0-9] (LAVA's
 *        test names), e.g. rt-idle.run3.max_us.
 */
void write_lava(const std::vector<gated_run>& runs, std::ostream& out);

/** @brief @p s with invalid UTF-8 and characters XML 1.0 forbids replaced by U+FFFD. */
std::string xml_safe_text(std::string_view s);

} // namespace irqloop::logger
