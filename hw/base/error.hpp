// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace irqloop
{

/**
 * @brief Exit statuses shared by every irqloop program: the one table, documented in
 * docs/commands/exit-status.md (keep the two together).
 *
 * ok (0): done; a run that measured and passed its gates.
 * failure (1): something broke at run time (disk full, a line failure, a lost write).
 * usage (2): bad input or a refused file: a bad option, value or spec, a file the store
 * refuses (missing, empty, foreign, damaged, newer), hardware that cannot be opened. The user
 * must change something before retrying.
 * limit (3): a limit failed: `run --fail-*`, `check`, `campaign` gates, a doctor FAIL.
 * no_answer (4): no answer came: the first stimuli were all lost, or a run ended with 0
 * samples (a dead wire).
 * 128 + N: a run ended by signal N (SIGHUP 129, SIGINT 130, SIGTERM 143) after a clean stop.
 */
enum exit_status : int {
    exit_ok = 0,
    exit_failure = 1,
    exit_usage = 2,
    exit_limit = 3,
    exit_no_answer = 4,
    exit_interrupted = 130
};

/**
 * @brief The one exception type of the project.
 *
 * Every message the user sees has the form `NAME: what failed: why (hint)`, where NAME is
 * program_name(). The three parts are kept apart so that callers can add context to @p what
 * without re-parsing.
 */
class error final : public std::runtime_error
{
public:
    /**
     * @param what What failed, e.g. "open backend 'gpiod'".
     * @param why Why it failed, e.g. "no such chip 'gpiochip9'".
     * @param hint What the user can do, may be empty.
     * @param status Exit status the program should end with.
     */
    error(std::string what, std::string why, std::string hint = {}, int status = exit_usage);

    const std::string& what_failed() const noexcept { return what_; }
    const std::string& why() const noexcept { return why_; }
    const std::string& hint() const noexcept { return hint_; }
    int status() const noexcept { return status_; }

    /** @brief The full line, without the trailing newline: `NAME: what: why (hint)`. */
    std::string message() const;

private:
    std::string what_;
    std::string why_;
    std::string hint_;
    int status_;
};

/**
 * @brief Turn an errno value into an irqloop::error; the only place this happens.
 * @param errnum The errno value.
 * @param what What failed.
 * @param hint A hint; when empty, a default hint for common errno values is used
 *             (EACCES/EPERM: permissions, ENOENT: missing device, EBUSY: in use, ENOSPC: disk).
 */
[[noreturn]] void throw_from_errno(int errnum, const std::string& what, std::string hint = {},
                                   int status = exit_usage);

/**
 * @brief throw_from_errno() for a plain file at @p path (an output, a results file): the
 * default hints speak of files and directories, not devices. EISDIR, ENOENT, ENOTDIR and
 * EACCES are the user's to fix and keep @p status; the rest too.
 */
[[noreturn]] void throw_file_error(int errnum, const std::string& what, const std::string& path,
                                   int status = exit_failure);

/** @brief Print `NAME: what: why (hint)` to stderr. */
void print_error(const error& e);

/**
 * @brief Set the name error text starts with: "irqloop" or "irqloop-responder". Called once
 * by each program's main, before any thread starts; "irqloop" until then.
 */
void set_program_name(std::string_view name);

/** @brief The name set by set_program_name(). */
const std::string& program_name() noexcept;

/**
 * @brief Stored text (a run's label, target, backend, an event's detail), made safe to print
 * in a message: a backslash, every control character, DEL, '<' and '>' come out as C escapes
 * (\\, \n, \t, \r, else \xNN), and so does each byte that is not part of valid UTF-8.
 * Printable text, UTF-8 included, is unchanged. A label holding a newline cannot start a line of
 * its own, and none can hold LAVA's "<LAVA_SIGNAL_...>" (its markers are found anywhere in
 * the console stream, not only at a line's start).
 */
std::string message_text(std::string_view stored);

} // namespace irqloop
