// SPDX-License-Identifier: MIT
#include "output-file.hpp"

#include "error.hpp"

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace irqloop::logger
{

output_file::output_file(std::string path, std::string command)
    : path_(std::move(path)), command_(std::move(command))
{
    const std::string what = command_ + ": write '" + path_ + "'";
    struct stat st = {};
    if (::stat(path_.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            throw_file_error(EISDIR, what, path_, exit_usage);
        if (!S_ISREG(st.st_mode))
            throw error(what, "not a regular file (a device, a pipe or a socket)",
                        "-o names a file to write, e.g. out.json; for standard output leave "
                        "-o out",
                        exit_usage);
    }
    errno = 0;
    file_.open(path_, std::ios::out | std::ios::trunc | std::ios::binary);
    if (!file_) {
        const int err = errno ? errno : EIO;
        throw_file_error(err, what, path_,
                         err == ENOENT || err == ENOTDIR || err == EACCES || err == EISDIR
                             ? exit_usage
                             : exit_failure);
    }
}

output_file::~output_file()
{
    if (done_)
        return;
    file_.close();
    ::unlink(path_.c_str());
}

void output_file::fail(int errnum)
{
    file_.close();
    ::unlink(path_.c_str());
    done_ = true;
    throw_file_error(errnum ? errnum : EIO, command_ + ": write '" + path_ + "'", path_);
}

void output_file::write(const std::string& bytes)
{
    errno = 0;
    file_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!file_)
        fail(errno);
}

void output_file::commit()
{
    errno = 0;
    file_.flush();
    if (!file_)
        fail(errno);
    file_.close();
    if (!file_)
        fail(errno);
    done_ = true;
}

} // namespace irqloop::logger
