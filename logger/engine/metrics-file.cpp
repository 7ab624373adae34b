// SPDX-License-Identifier: MIT
#include "metrics-file.hpp"

#include "error.hpp"

#include <cerrno>
#include <cstdio>
#include <sstream>

namespace irqloop::logger
{

metrics_file::metrics_file(std::string path, metrics_run base)
    : path_(std::move(path)), base_(std::move(base))
{
}

void metrics_file::write(const db::summary_row& s, const histogram& h, std::uint64_t windows,
                         bool active)
{
    metrics_run r = base_;
    r.summary = s;
    r.has_stats = s.samples != 0;
    r.windows = windows;
    r.active = active;
    r.add_histogram(h, s.mean_ns);
    std::ostringstream text;
    write_prometheus(text, std::span<const metrics_run>(&r, 1));
    const std::string body = text.str();

    const std::string tmp = path_ + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f)
        throw_from_errno(errno, "write metrics file '" + tmp + "'",
                         "check that its folder exists and is writable", exit_failure);
    const bool wrote = std::fwrite(body.data(), 1, body.size(), f) == body.size();
    const int werr = errno;
    if (std::fclose(f) != 0 || !wrote) {
        const int e = wrote ? errno : werr;
        std::remove(tmp.c_str());
        throw_from_errno(e, "write metrics file '" + tmp + "'", "check free disk space",
                         exit_failure);
    }
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
        const int e = errno;
        std::remove(tmp.c_str());
        throw_from_errno(e, "rename '" + tmp + "' to '" + path_ + "'",
                         "the metrics file and its temporary file must be in one writable folder",
                         exit_failure);
    }
}

void metrics_file::write_noexcept(const db::summary_row& s, const histogram& h,
                                  std::uint64_t windows, bool active) noexcept
{
    try {
        write(s, h, windows, active);
    } catch (const std::exception& e) {
        if (first_error_.empty())
            first_error_ = e.what();
    } catch (...) {
        if (first_error_.empty())
            first_error_ = "write metrics file '" + path_ + "': unknown failure";
    }
}

} // namespace irqloop::logger
