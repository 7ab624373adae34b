// SPDX-License-Identifier: MIT
// trace-cmd's binary .dat file (`trace-cmd record`), read into the same trace_text as the text
// form (trace-text.hpp), so that explain's pairing and breakdown do not know which they got.
// The file is read with Debian's libtracecmd (libtraceevent for the fields), an optional
// dependency: IRQLOOP_HAVE_TRACECMD. Without it, a .dat is refused with a hint.
#pragma once

#include "trace-text.hpp"

#include <string>

namespace irqloop::analysis
{

/** @brief Whether this build reads .dat files (libtracecmd was found at configure time). */
bool trace_dat_supported() noexcept;

/** @brief Whether the file at @p path starts with trace-cmd's magic ("\x17\x08\x44tracing"). */
bool is_trace_dat(const std::string& path);

/**
 * @brief Read trace-cmd's .dat file at @p path: every record of the top buffer, in time order,
 * each event of trace_kind with the same fields as its line in `trace-cmd report -N -t`
 * (the task as "comm-pid" from the file's saved command lines, the softirq's action, the
 * IRQs-off section's caller and the NMI handler's name as the kernel's print format writes
 * them); event_lines counts every record, lost_events the drops the file notes per CPU page;
 * line is the record's 1-based index. tracer is "nop".
 * @throws irqloop::error (exit 2) "explain: read trace 'F'": not a trace-cmd file; a file the
 *         library cannot open (cut in its headers); a file cut in its event data (its size
 *         below what its CPU sections need, or a record the library cannot read); a build
 *         without libtracecmd (hint: `trace-cmd report -N -t`).
 */
trace_text read_trace_dat(const std::string& path);

/** @brief read_trace_dat() for a .dat file, else read_trace_text(): by the file's magic. */
trace_text read_trace_file(const std::string& path);

} // namespace irqloop::analysis
