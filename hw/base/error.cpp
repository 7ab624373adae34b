// SPDX-License-Identifier: MIT
#include "error.hpp"

#include <cerrno>
#include <cstdint>
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

std::string message_text(std::string_view stored)
{
    std::string o;
    o.reserve(stored.size());
    auto hex = [&o](unsigned char c) {
        static const char digits[] = "0123456789abcdef";
        o += "\\x";
        o += digits[c >> 4];
        o += digits[c & 0xF];
    };
    std::size_t i = 0;
    while (i < stored.size()) {
        const auto c = static_cast<unsigned char>(stored[i]);
        if (c < 0x80) {
            if (c == '\\')
                o += "\\\\";
            else if (c == '\n')
                o += "\\n";
            else if (c == '\t')
                o += "\\t";
            else if (c == '\r')
                o += "\\r";
            else if (c < 0x20 || c == 0x7F || c == '<' || c == '>')
                hex(c);
            else
                o += char(c);
            ++i;
            continue;
        }
        // A multi-byte UTF-8 sequence passes whole when it is valid (no overlong form, no
        // surrogate, at most U+10FFFF); otherwise its first byte is escaped and the rest looked
        // at again.
        const std::size_t n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        std::uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
        bool ok = n != 0 && i + n <= stored.size();
        for (std::size_t k = 1; ok && k < n; ++k) {
            const auto cc = static_cast<unsigned char>(stored[i + k]);
            ok = (cc & 0xC0) == 0x80;
            cp = (cp << 6) | (cc & 0x3F);
        }
        ok = ok && !(n == 2 && cp < 0x80) && !(n == 3 && cp < 0x800) && !(n == 4 && cp < 0x10000) &&
             !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF &&
             !(cp >= 0x80 && cp < 0xA0); // C1 controls
        if (ok) {
            o.append(stored.substr(i, n));
            i += n;
        } else {
            hex(c);
            ++i;
        }
    }
    return o;
}

} // namespace irqloop
