// SPDX-License-Identifier: MIT
#include "trace-marker.hpp"

#include "error.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace irqloop::responder
{

namespace
{

// The hint for a marker that cannot be opened: tracefs missing, or not ours to write.
std::string marker_open_hint(int errnum, const std::string& path)
{
    switch (errnum) {
    case ENOENT:
    case ENOTDIR:
        return path == trace_marker::default_path
                   ? "mount tracefs (mount -t tracefs nodev /sys/kernel/tracing), or name the "
                     "marker of another mount with --trace-marker PATH"
                   : "check the path: tracefs's trace_marker, or an existing file";
    case EACCES:
    case EPERM:
        return "run as root, or give this user write access to tracefs (its trace_marker)";
    case EISDIR:
        return "give the trace_marker file, not its directory";
    default:
        return "check tracefs (/sys/kernel/tracing)";
    }
}

} // namespace

trace_marker::trace_marker(std::string path) : path_(std::move(path))
{
    // Not created when missing: a mistyped path is refused, never written as a new file. O_APPEND
    // keeps a plain file's earlier lines; tracefs ignores the offset.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) {
        const int err = errno;
        throw_from_errno(err, "open the trace marker '" + path_ + "'", marker_open_hint(err, path_),
                         exit_usage);
    }
}

trace_marker::~trace_marker()
{
    if (fd_ >= 0)
        ::close(fd_);
}

std::size_t trace_marker::format(char* buf, std::string_view prefix, std::uint64_t seq,
                                 int level) noexcept
{
    char* p = buf;
    std::memcpy(p, prefix.data(), prefix.size());
    p += prefix.size();
    std::memcpy(p, " seq=", 5);
    // std::to_chars: no locale, no allocation; max_line holds the longest line.
    p = std::to_chars(p + 5, buf + max_line, seq).ptr;
    std::memcpy(p, " level=", 7);
    p = std::to_chars(p + 7, buf + max_line, level).ptr;
    *p++ = '\n';
    return static_cast<std::size_t>(p - buf);
}

void trace_marker::put(std::string_view prefix, std::uint64_t seq, int level) noexcept
{
    char buf[max_line];
    const std::size_t n = format(buf, prefix, seq, level);
    // One write(2): tracefs takes each write as one entry. A short write (a full plain file)
    // counts as failed; EINTR (the wake signal) is not retried, the line is counted lost.
    const ssize_t w = ::write(fd_, buf, n);
    if (w == static_cast<ssize_t>(n)) {
        ++written_;
        return;
    }
    if (failed_++ == 0)
        first_errno_ = w < 0 ? errno : ENOSPC;
}

} // namespace irqloop::responder
