// SPDX-License-Identifier: MIT
#include "plot.hpp"

#include "child-caps.hpp"
#include "error.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace irqloop::logger
{

std::int64_t nice_bin_width(std::int64_t lo_ns, std::int64_t hi_ns, std::size_t max_bins)
{
    // In unsigned arithmetic: the difference of any two int64 values fits, where a signed one
    // overflows for a damaged file's extremes.
    const std::uint64_t span =
        hi_ns > lo_ns ? std::uint64_t(hi_ns) - std::uint64_t(lo_ns) : std::uint64_t{1};
    max_bins = std::max<std::size_t>(max_bins, 1);
    for (std::int64_t decade = 1;; decade *= 10)
        for (std::int64_t m : {1, 2, 5}) {
            const std::int64_t w = m * decade;
            // +1 bin: the first bin starts at or below lo, so the range may straddle one more.
            if (span / std::uint64_t(w) + 1 <= max_bins || decade > (std::int64_t{1} << 58))
                return w;
        }
}

std::vector<bin> rebin_linear(const std::vector<db::bucket_row>& buckets, std::int64_t width_ns)
{
    std::vector<bin> out;
    if (buckets.empty() || width_ns <= 0)
        return out;
    // Floor division: a bucket below 0 (a damaged or hand-made file) lands in the bin below,
    // not in bin 0. The range is the buckets' own, whatever their order in the file.
    const auto bin_of = [width_ns](std::int64_t ns) {
        return ns / width_ns - (ns % width_ns < 0 ? 1 : 0);
    };
    std::int64_t first = bin_of(buckets.front().lo_ns), last = first;
    for (const auto& b : buckets) {
        first = std::min(first, bin_of(b.lo_ns));
        last = std::max(last, bin_of(b.lo_ns));
    }
    out.resize(std::size_t(last - first + 1));
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i].lo_ns = (first + std::int64_t(i)) * width_ns;
        // The last bin of a damaged file's range may end past INT64_MAX: it ends there.
        out[i].hi_ns = out[i].lo_ns > std::numeric_limits<std::int64_t>::max() - width_ns
                           ? std::numeric_limits<std::int64_t>::max()
                           : out[i].lo_ns + width_ns;
    }
    for (const auto& b : buckets)
        out[std::size_t(bin_of(b.lo_ns) - first)].count += b.count;
    return out;
}

std::vector<bin> rebin_report(const std::vector<db::bucket_row>& stored, std::size_t body_bins)
{
    std::vector<bin> out;
    if (stored.empty())
        return out;
    // In order of their lower ends, whatever order a damaged file holds them in: the body's
    // width is chosen from the first and the p99 bucket.
    std::vector<db::bucket_row> buckets = stored;
    std::stable_sort(
        buckets.begin(), buckets.end(),
        [](const db::bucket_row& a, const db::bucket_row& b) { return a.lo_ns < b.lo_ns; });
    std::uint64_t total = 0;
    for (const auto& b : buckets)
        total += b.count;
    // The body ends at the bucket holding the p99 sample (rank ceil(0.99 n)).
    const auto rank = std::uint64_t(std::ceil(0.99 * double(total)));
    std::uint64_t seen = 0;
    std::int64_t body_end = buckets.back().hi_ns;
    for (const auto& b : buckets) {
        seen += b.count;
        if (seen >= rank) {
            body_end = b.hi_ns;
            break;
        }
    }
    // A damaged file's bucket may end at or before its start: the body spans at least 1 ns.
    const std::int64_t first_lo = buckets.front().lo_ns;
    if (body_end <= first_lo)
        body_end = first_lo == std::numeric_limits<std::int64_t>::max() ? first_lo : first_lo + 1;
    const std::int64_t w = nice_bin_width(first_lo, body_end - 1, body_bins);
    std::vector<db::bucket_row> body, tail;
    // The body's end rounded up to a bin, or INT64_MAX where that does not fit.
    const std::int64_t body_bins_n = (body_end - 1) / w + 1;
    const std::int64_t body_hi = body_bins_n > std::numeric_limits<std::int64_t>::max() / w
                                     ? std::numeric_limits<std::int64_t>::max()
                                     : body_bins_n * w;
    for (const auto& b : buckets)
        (b.lo_ns < body_hi ? body : tail).push_back(b);
    out = rebin_linear(body, w);
    // The tail in doubling bins from the body's end (from 1 ns when a damaged file puts that at
    // or below 0, so that the bins grow); the last bin takes whatever is left near INT64_MAX.
    std::int64_t lo = std::max<std::int64_t>(body_hi, 1);
    std::size_t t = 0;
    while (t < tail.size()) {
        const bool last = lo > std::numeric_limits<std::int64_t>::max() / 2;
        bin b{lo, last ? std::numeric_limits<std::int64_t>::max() : lo * 2, 0};
        while (t < tail.size() && (last || tail[t].lo_ns < b.hi_ns))
            b.count += tail[t++].count;
        if (b.count)
            out.push_back(b);
        if (!last)
            lo *= 2;
    }
    return out;
}

std::string log_bar(std::uint64_t count, std::uint64_t max_count, std::size_t width)
{
    if (count == 0 || max_count == 0)
        return {};
    const double top = std::log10(double(max_count)) + 1;
    const double len = (std::log10(double(count)) + 1) / top * double(width);
    return std::string(std::clamp<std::size_t>(std::size_t(std::lround(len)), 1, width), '#');
}

std::vector<tail_point> tail_curve(const std::vector<db::bucket_row>& buckets, std::uint64_t lost,
                                   std::int64_t timeout_ns)
{
    std::uint64_t answered = 0;
    for (const auto& b : buckets)
        answered += b.count;
    const std::uint64_t total = answered + lost;
    std::vector<tail_point> out;
    if (answered == 0)
        return out;
    std::uint64_t above = total;
    // The first point sits at the lowest bucket's start with everything above it: the curve
    // then starts at 1 and steps down at each bucket's upper bound. The lost answers lie above
    // every bucket: the curve ends on their share, flat up to the timeout.
    out.push_back({double(buckets.front().lo_ns), 1.0});
    for (const auto& b : buckets) {
        above -= b.count;
        if (above == 0)
            break;
        out.push_back({double(b.hi_ns), double(above) / double(total)});
    }
    if (lost)
        out.push_back({double(timeout_ns), double(lost) / double(total)});
    return out;
}

plot_format plot_format_of(std::string_view path)
{
    auto ends = [&](std::string_view s) {
        return path.size() >= s.size() && path.substr(path.size() - s.size()) == s;
    };
    if (ends(".svg"))
        return plot_format::svg;
    if (ends(".png"))
        return plot_format::png;
    throw error("plot to '" + std::string(path) + "'", "unknown output type",
                "name the output file *.svg or *.png");
}

std::string find_gnuplot()
{
    // secure_getenv: an irqloop-rt with file capabilities (secure mode) starts no program the
    // environment names, and looks for gnuplot in /usr/bin and /bin only. Its child would hold
    // no capability (drop_inheritable_capabilities), but a process with raised privileges
    // runs only what the administrator installed; /usr/bin/irqloop honours both variables.
    if (const char* env = secure_getenv("IRQLOOP_GNUPLOT"))
        return env;
    return base::find_program("gnuplot");
}

std::string gnuplot_quote(std::string_view s)
{
    std::string o = "'";
    for (char c : s) {
        if (c == '\'')
            o += '\'';
        if (c == '\n')
            c = ' ';
        o += c;
    }
    return o + "'";
}

void run_gnuplot(const std::string& script, const std::string& output_path)
{
    const std::string exe = find_gnuplot();
    if (exe.empty() || ::access(exe.c_str(), X_OK) != 0)
        throw error("plot", exe.empty() ? "gnuplot not found on PATH" : "cannot run '" + exe + "'",
                    "apt-get install gnuplot-nox", exit_failure);
    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0)
        throw_from_errno(errno, "plot: create a pipe to gnuplot", {}, exit_failure);
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        ::close(in[0]);
        ::close(in[1]);
        throw_from_errno(e, "plot: start gnuplot", {}, exit_failure);
    }
    if (pid == 0) {
        // gnuplot holds no capability of an irqloop-rt (async-signal-safe: prctl, capset).
        if (base::drop_inheritable_capabilities() != 0)
            ::_exit(127);
        ::dup2(in[0], STDIN_FILENO);
        ::execl(exe.c_str(), "gnuplot", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(in[0]);
    // A gnuplot that dies early must not kill us with SIGPIPE; its exit status tells.
    auto old = std::signal(SIGPIPE, SIG_IGN);
    std::size_t off = 0;
    while (off < script.size()) {
        const ssize_t n = ::write(in[1], script.data() + off, script.size() - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += std::size_t(n);
    }
    ::close(in[1]);
    std::signal(SIGPIPE, old);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::error_code ec;
        std::filesystem::remove(output_path, ec);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            throw error("plot", "cannot run '" + exe + "'", "apt-get install gnuplot-nox",
                        exit_failure);
        throw error(
            "plot to '" + output_path + "'",
            "gnuplot failed (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
                ", its message is above)",
            "check that the output directory exists and is writable", exit_failure);
    }
}

} // namespace irqloop::logger
