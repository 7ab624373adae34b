// SPDX-License-Identifier: MIT
#include "error.hpp"
#include "gpiomem-regs.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace irqloop::hw
{

namespace
{

class mapped_regs final : public gpiomem_regs
{
public:
    mapped_regs(std::string device, std::uint64_t phys, void* base, std::size_t size)
        : device_(std::move(device)), phys_(phys),
          base_(static_cast<volatile std::uint32_t*>(base)), size_(size)
    {
    }
    ~mapped_regs() override { ::munmap(const_cast<std::uint32_t*>(base_), size_); }

    // volatile: one load or store per call, in program order; the Device mapping keeps the
    // CPU from merging or caching them.
    std::uint32_t read(std::uint32_t offset) noexcept override { return base_[offset / 4]; }
    void write(std::uint32_t offset, std::uint32_t value) noexcept override
    {
        base_[offset / 4] = value;
    }
    std::size_t size() const noexcept override { return size_; }
    const char* method() const noexcept override
    {
        return device_ == "/dev/mem" ? "devmem" : "gpiomem";
    }
    std::string where() const override { return "dev=" + device_; }

private:
    std::string device_;
    std::uint64_t phys_;
    volatile std::uint32_t* base_;
    std::size_t size_;
};

std::string group_hint(const std::string& device)
{
    if (device == "/dev/mem")
        return "run as root: /dev/mem is the testbed's access path, for root only";
    struct stat st {
    };
    if (::stat(device.c_str(), &st) == 0)
        if (const ::group* g = ::getgrgid(st.st_gid); g && std::string(g->gr_name) != "root")
            return "add your user to group '" + std::string(g->gr_name) + "', which owns " +
                   device + ", or run as root";
    return "run as root, or give your user access to " + device +
           " (Raspberry Pi OS: group 'gpio')";
}

} // namespace

std::unique_ptr<gpiomem_regs> open_gpiomem_map(const std::string& device, std::uint64_t phys,
                                               std::size_t size)
{
    const std::string what = "open gpiomem registers: " + device;
    int fd = ::open(device.c_str(), O_RDWR | O_SYNC | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            throw error(what, "no such device",
                        device == "/dev/mem"
                            ? "this kernel has no /dev/mem (CONFIG_DEVMEM)"
                            : "the gpiomem driver comes with Raspberry Pi OS kernels (Debian's "
                              "own kernel lacks it); use the gpiod backend there");
        if (err == EACCES || err == EPERM)
            throw_from_errno(err, what, group_hint(device));
        throw_from_errno(err, what);
    }
    void* p =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(phys));
    int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
        char at[32];
        std::snprintf(at, sizeof at, "0x%llx", static_cast<unsigned long long>(phys));
        if (device == "/dev/mem" && (err == EPERM || err == EACCES))
            throw_from_errno(err, what + ": map " + std::to_string(size) + " bytes at " + at,
                             "the kernel keeps driver-owned memory from /dev/mem: boot with "
                             "iomem=relaxed (testbed only)");
        throw_from_errno(err, what + ": map " + std::to_string(size) + " bytes at " + at);
    }
    return std::make_unique<mapped_regs>(device, phys, p, size);
}

} // namespace irqloop::hw
