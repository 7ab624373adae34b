// SPDX-License-Identifier: MIT
#include "parport-io.hpp"

#include "error.hpp"
#include "parport-gate.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <sys/io.h>
#define IRQLOOP_HAVE_PORT_IO 1
#else
#define IRQLOOP_HAVE_PORT_IO 0
#endif

namespace irqloop::hw
{

namespace
{

std::string hex(unsigned v)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%x", v);
    return buf;
}

// The kernel's lockdown (integrity or confidentiality) refuses ioperm even to root.
bool locked_down()
{
    std::ifstream f("/sys/kernel/security/lockdown");
    std::string line;
    if (!std::getline(f, line))
        return false;
    return line.find("[none]") == std::string::npos;
}

// Which driver, if any, registered this I/O range: tells the user whether a port lives there.
std::string ioports_owner(unsigned base)
{
    std::ifstream f("/proc/ioports");
    std::string line, found;
    ioports_line range;
    while (std::getline(f, line)) {
        // Keep the innermost (last listed) range holding the base: that is the device.
        if (parse_ioports_line(line, range) && range.lo <= base && base <= range.hi)
            found = range.text;
    }
    return found.empty() ? "not listed in /proc/ioports" : found;
}

#if IRQLOOP_HAVE_PORT_IO
int port_permission(unsigned base, unsigned count, int on)
{
    if (auto seam = raw_port_test_seams().ioperm)
        return seam(base, count, on);
    return ioperm(base, count, on);
}

void request_ports(unsigned base, unsigned count)
{
    if (port_permission(base, count, 1) == 0)
        return;
    int err = errno;
    std::string what = "raw port I/O at " + hex(base) + " (ioperm)";
    if (err == EPERM && locked_down())
        throw error(what, "the kernel is in lockdown mode, which forbids port I/O even to root",
                    "use ppdev instead: parport:dev=/dev/parport0,...");
    if (err == ENOSYS)
        throw error(what, "this kernel has no ioperm() (built without CONFIG_X86_IOPL_IOPERM)",
                    "use ppdev instead: parport:dev=/dev/parport0,...");
    if (err == EPERM || err == EACCES)
        throw_from_errno(err, what,
                         "run as root (CAP_SYS_RAWIO), or use ppdev, which needs only access to "
                         "/dev/parport0: parport:dev=/dev/parport0,...");
    throw_from_errno(err, what);
}

class raw_io final : public parport_io
{
public:
    raw_io(unsigned base, unsigned count) : base_(static_cast<unsigned short>(base)), count_(count)
    {
        request_ports(base, count_);
    }
    ~raw_io() override { port_permission(base_, count_, 0); }

    int read_data() noexcept override { return inb(base_); }
    int write_data(std::uint8_t v) noexcept override
    {
        outb(v, base_);
        return 0;
    }
    int read_status() noexcept override { return inb(base_ + 1); }
    int read_control() noexcept override { return inb(base_ + 2); }
    int write_control(std::uint8_t v) noexcept override
    {
        outb(v, base_ + 2);
        return 0;
    }
    const char* method() const noexcept override { return "raw"; }
    std::string where() const override { return "base=" + hex(base_); }
    std::string note() const override { return ioports_owner(base_); }

    void reacquire() { request_ports(base_, count_); }

private:
    unsigned short base_;
    unsigned count_;
};
#endif

} // namespace

std::unique_ptr<parport_io> open_parport_raw_io(unsigned base, bool check)
{
    const raw_port_range range = gate_raw_port(base, check); // before any ioperm
#if IRQLOOP_HAVE_PORT_IO
    return std::make_unique<raw_io>(range.base, range.count);
#else
    (void)range;
    throw error("raw port I/O at " + hex(base), "this processor has no I/O port instructions",
                "use ppdev: parport:dev=/dev/parport0,...");
#endif
}

void parport_io_reacquire(parport_io& io)
{
#if IRQLOOP_HAVE_PORT_IO
    if (auto* raw = dynamic_cast<raw_io*>(&io))
        raw->reacquire();
#else
    (void)io;
#endif
}

} // namespace irqloop::hw
