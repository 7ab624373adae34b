// SPDX-License-Identifier: MIT
// irqloop explain's breakdowns as stored with their run: tables breakdowns and breakdown_parts
// of schema version 8 (db/migrations/0008-breakdowns.sql; dropped_events since version 10,
// 0010-breakdown-drops.sql), read back by report, worst and export.
#pragma once

#include "store.hpp"
#include "trace-explain.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace irqloop::analysis
{

/** @brief The trace a breakdown came from: its name as given, size and content hash. */
struct trace_identity final {
    std::string path;
    std::uint64_t bytes = 0;
    std::string hash; ///< FNV-1a 64-bit of its bytes, 16 lowercase hex digits
};

/**
 * @brief The identity of the file @p path (read whole, streaming).
 * @throws irqloop::error (exit 2) when it cannot be read.
 */
trace_identity identify_trace(const std::string& path);

/** @brief One part of a stored breakdown. */
struct stored_part final {
    std::string part; ///< "before the handler", "handler to response", "handler ran"
    std::int64_t ns = 0;
    std::string clock;     ///< "logger" or "target"
    bool measured = false; ///< false: inferred
};

/** @brief One sample's breakdown as stored. */
struct stored_breakdown final {
    std::uint64_t seq = 0;
    std::int64_t unix_ns = 0; ///< when explain stored it
    trace_identity trace;
    std::uint64_t trace_events = 0;
    std::uint64_t paired = 0;
    double residual_ns = 0, drift_ppm = 0;
    std::int64_t latency_ns = 0; ///< -1: lost
    int cpu = 0;
    std::optional<blocker> largest; ///< the largest blocker in the window (none: nothing traced)
    std::optional<std::string> task;
    std::vector<stored_part> parts;
    /// The events the tracer dropped inside the window on the sample's CPU (schema version 10):
    /// 0 none, -1 some with no count given; nullopt for a breakdown stored before version 10,
    /// of which this is not known.
    std::optional<std::int64_t> dropped_events;
};

/** @brief The parts of @p b in the order explain prints them, with their clocks and marks. */
std::vector<stored_part> parts_of(const sample_breakdown& b);

/** @brief @p b as it is stored (the samples in the trace only). */
stored_breakdown to_stored(const sample_breakdown& b, const trace_identity& id,
                           std::uint64_t trace_events, const trace_alignment& a,
                           std::int64_t unix_ns);

/**
 * @brief Store @p rows with run @p run_id in one transaction, each replacing the sample's
 * earlier breakdown (its parts too); nothing else in the file changes.
 * @throws irqloop::error (exit 1) when the write fails.
 */
void store_breakdowns(db::store& s, std::int64_t run_id, const std::vector<stored_breakdown>& rows);

/**
 * @brief Every stored breakdown of run @p run_id in the file @p path, by seq; none for a file
 * before version 8. Opens the file read-only.
 */
std::map<std::uint64_t, stored_breakdown> read_breakdowns(const std::string& path,
                                                          std::int64_t run_id);

/**
 * @brief The short "why" of a breakdown for report and worst: its largest blocker, e.g.
 * "irq 45 eth0 31.2us (target clock)" (its whole duration; "cut by the trace" added when the
 * trace holds only part of it), or "nothing traced" when its window held none; either followed
 * by "; the tracer dropped K events in the window" when it did (blockers may be missing).
 */
std::string why_text(const stored_breakdown& b);

} // namespace irqloop::analysis
