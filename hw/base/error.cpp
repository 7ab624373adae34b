// SPDX-License-Identifier: MIT
#include "error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace irqloop
{

error::error(std::string what, std::string why, std::string hint, int status)
    : std::runtime_error(what + ": " + why), what_(std::move(what)), why_(std::move(why)),
      hint_(std::move(hint)), status_(status)
{
}

namespace
{

std::string& name_slot()
{
    static std::string name = "irqloop";
    return name;
}

} // namespace

void set_program_name(std::string_view name)
{
    name_slot() = name;
}

const std::string& program_name() noexcept
{
    return name_slot();
}

std::string error::message() const
{
    std::string m = program_name() + ": " + what_ + ": " + why_;
    if (!hint_.empty())
        m += " (" + hint_ + ")";
    return m;
}

namespace
{

std::string default_hint(int errnum)
{
    switch (errnum) {
    case EACCES:
    case EPERM:
        return "run as root, or give your user access to the device";
    case ENOENT:
    case ENODEV:
    case ENXIO:
        return "check that the device exists and its driver is loaded";
    case EBUSY:
        return "another program or driver holds it; stop that first";
    case ENOSPC:
    case EDQUOT:
        return "free some disk space; results committed so far are kept";
    case EROFS:
        return "the file system is read-only; choose another path";
    default:
        return {};
    }
}

} // namespace

void throw_from_errno(int errnum, const std::string& what, std::string hint, int status)
{
    if (hint.empty())
        hint = default_hint(errnum);
    throw error(what, std::strerror(errnum), std::move(hint), status);
}

void throw_file_error(int errnum, const std::string& what, const std::string& path, int status)
{
    std::string hint;
    switch (errnum) {
    case EACCES:
    case EPERM:
        hint = "check the permissions of '" + path + "' and of its directory";
        break;
    case ENOENT:
    case ENOTDIR:
        hint = "check the path: its directory must exist";
        break;
    case EISDIR:
        hint = "'" + path + "' is a directory; give a file path, e.g. " + path + "/out";
        break;
    case ENOSPC:
    case EDQUOT:
        hint = "free some disk space, or write elsewhere";
        break;
    case EROFS:
        hint = "the file system is read-only; choose another path";
        break;
    default:
        hint = "check the path and the disk";
    }
    throw error(what, std::strerror(errnum), hint, status);
}

void print_error(const error& e)
{
    std::fprintf(stderr, "%s\n", e.message().c_str());
}

} // namespace irqloop
