// SPDX-License-Identifier: MIT
// The userspace responder's own trace events: per answered edge, one line written to tracefs's
// trace_marker when the edge is seen and one after the answer is written, in the text that the
// kernel responder's tracepoints print (irqloop_edge / irqloop_response: seq=N level=L), so one
// parser reads both (docs/responder.md, "Tracing the responder").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace irqloop::responder
{

/**
 * @brief An open trace_marker (or a file standing in for it) and what was written to it.
 *
 * Opened before anything starts: the constructor throws irqloop::error (exit status 2) when the
 * file cannot be opened for writing. The per-edge calls neither allocate nor throw: each formats
 * into a fixed buffer and makes one write(2). A failed write is counted, its errno kept (the
 * first one), and the responder goes on answering; the caller reports it at exit.
 */
class trace_marker
{
public:
    /// tracefs's marker at its usual mount point.
    static constexpr const char* default_path = "/sys/kernel/tracing/trace_marker";
    /// Longest line format() writes: the prefix, 20 digits, " level=", a sign and 10 digits.
    static constexpr std::size_t max_line = 64;

    explicit trace_marker(std::string path);
    ~trace_marker();
    trace_marker(const trace_marker&) = delete;
    trace_marker& operator=(const trace_marker&) = delete;

    /** @brief `irqloop_edge: seq=N level=L`: the edge was seen (before the answer). */
    void edge(std::uint64_t seq, int level) noexcept { put(edge_prefix, seq, level); }
    /** @brief `irqloop_response: seq=N level=L`: the answer was written. */
    void response(std::uint64_t seq, int level) noexcept { put(response_prefix, seq, level); }

    const std::string& path() const noexcept { return path_; }
    std::uint64_t written() const noexcept { return written_; }
    std::uint64_t failed() const noexcept { return failed_; }
    /** @brief errno of the first failed write, 0 when none failed. */
    int first_errno() const noexcept { return first_errno_; }

    /**
     * @brief The line `PREFIX seq=N level=L\n` into @p buf (at least max_line bytes), without
     * a terminating NUL; returns its length. No allocation, no locale.
     */
    static std::size_t format(char* buf, std::string_view prefix, std::uint64_t seq,
                              int level) noexcept;

    static constexpr std::string_view edge_prefix = "irqloop_edge:";
    static constexpr std::string_view response_prefix = "irqloop_response:";

private:
    void put(std::string_view prefix, std::uint64_t seq, int level) noexcept;

    std::string path_;
    int fd_ = -1;
    std::uint64_t written_ = 0;
    std::uint64_t failed_ = 0;
    int first_errno_ = 0;
};

} // namespace irqloop::responder
