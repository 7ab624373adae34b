// SPDX-License-Identifier: MIT
#pragma once
// `irqloop export --format vcd` (issue 29): chosen samples of one run as a value change dump
// for PulseView, GTKWave or sigrok-cli, drawn from the samples' stored times and brackets.
#include "capture.hpp"
#include "read.hpp"

#include <boost/program_options/options_description.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace irqloop::logger
{

/** @brief --seq, --worst and --around as given, checked by check_export_vcd(). */
struct export_vcd_args final {
    std::vector<std::string> seq;
    std::string worst, around;
};

/** @brief Which samples to draw. */
struct export_vcd_choice final {
    std::vector<std::uint64_t> seqs; ///< --seq (sorted, each once); empty with --worst
    std::int64_t worst = 0;          ///< --worst K: the K samples that rank highest
    std::int64_t around = 2;         ///< stimuli drawn on each side of a chosen one
};

/** @brief Register --seq, --worst and --around on export's option table. */
void add_export_vcd_options(boost::program_options::options_description& desc, export_vcd_args& a);

/**
 * @brief Check @p a; @p vcd: whether --format is vcd. Refuses (exit 2) these options with
 * another format, --format vcd with neither or both of --seq and --worst, K outside 1..1000, a
 * seq that is not a number, --around outside 0..100.
 */
export_vcd_choice check_export_vcd(const export_vcd_args& a, bool vcd);

/** @brief The drawing: four 1-bit signals on one time line, in ps from its origin. */
struct vcd_waveform final {
    analysis::capture wave;          ///< STIM, RESP, TRIG, BRACKET; 1 GHz (1 ns)
    std::int64_t origin_unix_ns = 0; ///< the logger's time of the drawing's time 0
    std::vector<std::uint64_t> chosen;
    std::size_t drawn = 0;      ///< samples drawn (the chosen ones and their neighbours)
    std::size_t unmeasured = 0; ///< STIM level changes no stored sample times (see below)
    std::string about;          ///< the run, for the file's $comment
};

/** @brief The run's settings the drawing needs. */
struct vcd_drawing_settings final {
    std::int64_t trigger_above_ns = -1; ///< the run's --trigger-above; -1: no trigger line
    std::int64_t pad_ns = 50'000;       ///< drawn before a window's first stimulus and after it
};

/**
 * @brief Pure: draw @p rows (seq order) as irqloop's wire saw them. STIM changes at each
 * stimulus's stored time to its edge's level; RESP follows at the bracket's upper bound (when
 * the sampler saw the answer; nothing for a lost sample); BRACKET is high over [upper bound -
 * bracket, upper bound]; TRIG rises at the upper bound of a sample whose proven latency (the
 * lower bound) exceeds --trigger-above, when the run had a trigger line, and falls halfway to
 * the next stimulus (its true end is not stored). Rows are grouped into windows of
 * @p around stimuli each side of each chosen seq (overlapping windows merge). Between windows,
 * and after a lost sample or a re-arm, the wire changed without a stored time: when a window's
 * first edge would not change STIM, it starts one stimulus earlier if that one is stored, and
 * otherwise STIM is brought to the level before the edge (RESP 1 ns later) halfway from the
 * previous change, at most @p pad_ns before; each such change is counted in unmeasured.
 */
vcd_waveform draw_vcd_waveform(const std::vector<db::sample_row>& rows,
                               const std::vector<std::uint64_t>& chosen, std::int64_t around,
                               const vcd_drawing_settings& settings);

/**
 * @brief Reads exactly one selected run's raw samples and draws the chosen ones. Every
 * refusal comes before anything is written: not one run selected, no raw samples or no
 * stimulus times (recorded before schema version 7), a --seq the run has not stored, fewer
 * answered samples than --worst asks for (exit 2).
 */
vcd_waveform prepare_vcd_export(db::catalog& cat, const std::vector<const db::run_record*>& runs,
                                const export_vcd_choice& choice);

/** @brief The drawing as a VCD (1 ns timescale), its $comment naming the run and the choice. */
void write_vcd_export(const vcd_waveform& w, std::ostream& out);

} // namespace irqloop::logger
