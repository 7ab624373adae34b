// SPDX-License-Identifier: MIT
#pragma once
// `irqloop verify` as parse -> execute -> present (command.hpp): a run beside a logic
// analyzer's capture of the same wire (docs/commands/verify.md).
#include "command.hpp"
#include "selection.hpp"
#include "verify-store.hpp"

#include <string>

namespace irqloop::logger
{

struct verify_request final {
    selection_options sel;  ///< exactly one run of one file
    std::string capture;    ///< a VCD or a sigrok session (.sr)
    std::string stim, resp; ///< channel names; empty: the capture's STIM and RESP
    bool store = true;      ///< --no-store: compare only
};

struct verify_outcome final {
    analysis::verification v; ///< stored (v.idx set) unless --no-store
    std::string db_path;
    bool stored = false;
};

/** @brief Check `irqloop verify`'s arguments into a request (pure). */
parsed<verify_request> parse_verify(int argc, char** argv);
/**
 * @brief Read the run and the capture, align and compare, then store the result. Every
 * refusal (no such run, no stored stimulus times, no such channel, a damaged capture, nothing
 * aligns) comes before the file is opened for writing: it is left as it was.
 */
verify_outcome execute_verify(const verify_request& r);
/** @brief The figures as text (format_verification); 0. */
int present_verify(const verify_outcome& o, const verify_request& r);

/** @brief The report of one verification, as verify and report print it. */
std::string format_verification(const analysis::verification& v);

/** @brief `irqloop verify`: parse, execute, present; returns the exit status. */
int verify_command(int argc, char** argv);

} // namespace irqloop::logger
