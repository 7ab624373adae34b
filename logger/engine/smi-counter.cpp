// SPDX-License-Identifier: MIT
#include "smi-counter.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace irqloop::logger
{

namespace
{
constexpr off_t msr_smi_count = 0x34;
}

smi_counter::smi_counter(const std::string& root, int cpu)
    : device_("/dev/cpu/" + std::to_string(cpu < 0 ? 0 : cpu) + "/msr")
{
    std::string path = root.empty() || root == "/" ? device_ : root + device_;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
        why_ = device_ + ": " + std::strerror(errno);
        return;
    }
    std::uint64_t v = 0;
    const ssize_t n = ::pread(fd_, &v, sizeof v, msr_smi_count);
    if (n != static_cast<ssize_t>(sizeof v)) {
        why_ = "MSR 0x34 unreadable (" + std::string(n < 0 ? std::strerror(errno) : "short read") +
               ")";
        return;
    }
    available_ = true;
}

smi_counter::~smi_counter()
{
    if (fd_ >= 0)
        ::close(fd_);
}

std::optional<std::uint32_t> smi_counter::read() const noexcept
{
    if (!available_)
        return std::nullopt;
    std::uint64_t v = 0;
    if (::pread(fd_, &v, sizeof v, msr_smi_count) != static_cast<ssize_t>(sizeof v))
        return std::nullopt;
    return static_cast<std::uint32_t>(v & 0xffffffffu);
}

} // namespace irqloop::logger
