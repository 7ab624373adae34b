// SPDX-License-Identifier: MIT
#pragma once
// `irqloop explain` as parse -> execute -> present (command.hpp): a run's worst samples beside
// the target's own kernel trace (logger/analysis/trace-explain.*, docs/commands/explain.md).
#include "command.hpp"
#include "selection.hpp"
#include "trace-explain.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace irqloop::logger
{

struct explain_request final {
    selection_options sel;
    std::string trace;                          ///< the target's trace: .dat or text
    std::string irq_name = "irqloop_responder"; ///< the responder's IRQ, as the kernel names it
    std::size_t worst = 5;                      ///< the run's worst K samples, unless seqs
    std::vector<std::uint64_t> seqs;            ///< --seq, in the order given
    bool lost = false;                          ///< --lost: the run's lost samples instead
    bool store = false;                         ///< --store: keep the breakdowns with the run
    bool json = false;
};

struct explain_outcome final {
    std::string db_path;
    std::int64_t run_id = 0;
    std::string run_uuid, run_name;
    std::size_t stimuli = 0;
    std::int64_t timeout_ns = 0; ///< the run's --timeout: where a lost answer was lost
    std::size_t lost = 0;        ///< the run's lost samples (--lost explains the first 1000)
    std::uint64_t first_seq = 0, last_seq = 0; ///< the first and last paired samples
    std::size_t trace_events = 0;              ///< event lines of the trace
    std::size_t lost_events = 0;               ///< the tracer's own lost-event notes
    std::size_t drops = 0;           ///< where the tracer dropped events (trace_text::gaps)
    std::size_t drops_uncounted = 0; ///< of them, those without a count
    std::size_t edges = 0;           ///< the responder's handler entries
    analysis::trace_alignment alignment;
    analysis::delay_floor floor;                  ///< delay_floor_of()
    std::vector<std::uint64_t> contradicted_seqs; ///< the seqs of floor.contradicted
    std::vector<std::uint64_t> piece_seqs;        ///< the seq each of alignment.pieces starts at
    bool threaded = false;                        ///< the responder's IRQ thread is in the trace
    std::vector<analysis::sample_breakdown> samples;
    std::size_t stored = 0; ///< breakdowns stored (--store): the samples in the trace
};

/** @brief Check `irqloop explain`'s arguments into a request (pure). */
parsed<explain_request> parse_explain(int argc, char** argv);
explain_outcome execute_explain(const explain_request& r);
int present_explain(const explain_outcome& o, const explain_request& r);

/** @brief `irqloop explain`: parse, execute, present; returns the exit status. */
int explain_command(int argc, char** argv);

} // namespace irqloop::logger
