// SPDX-License-Identifier: MIT
#include "parport-io.hpp"

#include "error.hpp"

#include <cerrno>
#include <climits>
#include <dirent.h>
#include <fcntl.h>
#include <linux/ppdev.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace irqloop::hw
{

namespace
{

// The devices the parport layer has registered on port N (lp, another ppdev...), from
// /proc/sys/dev/parport/parportN/devices: names the culprit when PPEXCL is refused.
std::string registered_devices(unsigned port)
{
    std::string path = "/proc/sys/dev/parport/parport" + std::to_string(port) + "/devices";
    std::string names;
    if (DIR* d = opendir(path.c_str())) {
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n == "." || n == ".." || n == "active")
                continue;
            names += (names.empty() ? "" : ", ") + n;
        }
        closedir(d);
    }
    return names;
}

class ppdev_io final : public parport_io
{
public:
    ppdev_io(const std::string& device, bool exclusive) : device_(device), exclusive_(exclusive)
    {
        const std::string what = "open parallel port " + device;
        fd_ = ::open(device.c_str(), O_RDWR | O_CLOEXEC);
        if (fd_ < 0) {
            int err = errno;
            if (err == ENOENT || err == ENODEV || err == ENXIO)
                throw_from_errno(err, what,
                                 "load the drivers: modprobe ppdev parport_pc; then check "
                                 "ls /dev/parport*");
            if (err == EACCES || err == EPERM)
                throw_from_errno(err, what,
                                 "add your user to the group of " + device +
                                     " (usually lp), or run as root");
            throw_from_errno(err, what, "check the path: a ppdev device such as /dev/parport0");
        }
        struct stat st = {};
        unsigned port = fstat(fd_, &st) == 0 ? minor(st.st_rdev) : 0;
        const std::string not_ppdev_hint = "give a ppdev device such as /dev/parport0; modprobe "
                                           "ppdev parport_pc, then ls /dev/parport*";
        try {
            // A file, /dev/null or a tty answers the ppdev ioctls with ENOTTY or EINVAL.
            if (!S_ISCHR(st.st_mode))
                throw error(what, "not a character device", not_ppdev_hint);
            if (exclusive && ioctl(fd_, PPEXCL) < 0) {
                const int err = errno;
                throw_from_errno(err, what + ": PPEXCL",
                                 err == ENOTTY || err == EINVAL
                                     ? "'" + device + "' is not a parallel port: " + not_ppdev_hint
                                     : std::string());
            }
            if (ioctl(fd_, PPCLAIM) < 0) {
                int err = errno;
                if (err == ENOTTY || err == EINVAL)
                    throw_from_errno(err, what + ": PPCLAIM",
                                     "'" + device + "' is not a parallel port: " + not_ppdev_hint);
                if (err != ENXIO)
                    throw_from_errno(err, what + ": PPCLAIM",
                                     "check dmesg for the parport driver; " + not_ppdev_hint);
                std::string holders = registered_devices(port);
                if (holders.empty())
                    throw error(what + ": PPCLAIM", "no parallel port behind this device",
                                "modprobe parport_pc, and check dmesg for parport0");
                // ENXIO here means the parport layer refused the exclusive registration.
                throw error(what + ": PPCLAIM",
                            "port busy: another driver holds it (" + holders + ")",
                            "unload it (e.g. rmmod lp), or share the port with excl=no");
            }
            claimed_ = true;
            int forward = 0;
            if (ioctl(fd_, PPDATADIR, &forward) < 0)
                throw_from_errno(errno, what + ": PPDATADIR",
                                 "the port may not be bidirectional: set it to EPP/ECP/PS2 in "
                                 "the BIOS");
        } catch (...) {
            close_port();
            throw;
        }
    }

    ~ppdev_io() override { close_port(); }

    int read_data() noexcept override { return read_reg(PPRDATA); }
    int write_data(std::uint8_t v) noexcept override { return write_reg(PPWDATA, v); }
    int read_status() noexcept override { return read_reg(PPRSTATUS); }
    int read_control() noexcept override { return read_reg(PPRCONTROL); }
    int write_control(std::uint8_t v) noexcept override { return write_reg(PPWCONTROL, v); }

    bool has_irq() const noexcept override { return true; }

    int wait_irq(std::int64_t timeout_ns) noexcept override
    {
        pollfd p = {fd_, POLLIN, 0};
        timespec ts = {static_cast<time_t>(timeout_ns / 1'000'000'000),
                       static_cast<long>(timeout_ns % 1'000'000'000)};
        int rc = ppoll(&p, 1, timeout_ns < 0 ? nullptr : &ts, nullptr);
        if (rc < 0)
            return errno == EINTR ? 0 : -errno;
        if (rc == 0)
            return 0;
        int count = 0;
        if (ioctl(fd_, PPCLRIRQ, &count) < 0)
            return -errno;
        return count;
    }

    int arm_control_on_irq(std::uint8_t control) noexcept override
    {
        return write_reg(PPWCTLONIRQ, control);
    }

    void clear_irq() noexcept override
    {
        int count = 0;
        (void)ioctl(fd_, PPCLRIRQ, &count);
    }

    const char* method() const noexcept override { return "ppdev"; }
    std::string where() const override { return "dev=" + device_ + (exclusive_ ? "" : ",excl=no"); }

private:
    int read_reg(unsigned long req) noexcept
    {
        unsigned char v = 0;
        return ioctl(fd_, req, &v) < 0 ? -errno : v;
    }
    int write_reg(unsigned long req, std::uint8_t v) noexcept
    {
        unsigned char b = v;
        return ioctl(fd_, req, &b) < 0 ? -errno : 0;
    }
    void close_port() noexcept
    {
        if (fd_ < 0)
            return;
        if (claimed_)
            (void)ioctl(fd_, PPRELEASE);
        ::close(fd_);
        fd_ = -1;
    }

    std::string device_;
    bool exclusive_;
    int fd_ = -1;
    bool claimed_ = false;
};

} // namespace

std::unique_ptr<parport_io> open_parport_ppdev_io(const std::string& device, bool exclusive)
{
    return std::make_unique<ppdev_io>(device, exclusive);
}

} // namespace irqloop::hw
