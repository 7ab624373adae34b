// SPDX-License-Identifier: MIT
#include "parport-gate.hpp"

#include "error.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <linux/capability.h>
#include <string>
#include <string_view>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace irqloop::hw
{

namespace parport_gate_detail
{

std::string hex_base(unsigned v)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%x", v);
    return buf;
}

constexpr const char* ppdev_hint = "use dev=/dev/parportN, ppdev, group lp, needs no capability";

/** "parport" followed by one or more digits, and nothing else. */
bool is_parport_name(const std::string& name)
{
    constexpr std::string_view prefix = "parport";
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
        return false;
    for (std::size_t i = prefix.size(); i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

std::string join_path(const std::string& root, const char* rel)
{
    if (root.empty() || root == "/")
        return std::string("/") + rel;
    return root + (root.back() == '/' ? "" : "/") + rel;
}

/** The first number of PROC/sys/dev/parport/NAME/base-addr (decimal), or -1. */
long sysctl_base(const std::string& root, const std::string& name)
{
    std::ifstream f(join_path(root, ("proc/sys/dev/parport/" + name + "/base-addr").c_str()));
    long v = -1;
    if (!(f >> v))
        return -1;
    return v;
}

} // namespace parport_gate_detail

raw_privilege detect_raw_privilege()
{
    raw_privilege p;
    uid_t ruid = 0, euid = 0, suid = 0;
    if (getresuid(&ruid, &euid, &suid) != 0)
        ruid = getuid(), euid = geteuid();
    if (ruid == 0)
        return p; // full root: nothing in play the user does not already have
    if (getauxval(AT_SECURE) != 0) {
        p.raised = true;
        p.why = "secure mode, AT_SECURE: setuid, setgid or file capabilities";
        return p;
    }
    if (euid == 0) {
        p.raised = true;
        p.why = "effective uid 0 for real uid " + std::to_string(ruid);
        return p;
    }
    __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capget, &hdr, data) != 0) {
        p.raised = true; // cannot tell: assume the worst
        p.why = "capget failed: its capabilities cannot be read";
        return p;
    }
    const std::uint64_t prm =
        (static_cast<std::uint64_t>(data[1].permitted) << 32) | data[0].permitted;
    if (prm != 0) {
        char buf[96];
        std::snprintf(buf, sizeof buf,
                      "CapPrm %016llx for real uid %u: file capabilities or an ambient set",
                      static_cast<unsigned long long>(prm), static_cast<unsigned>(ruid));
        p.raised = true;
        p.why = buf;
    }
    return p;
}

bool parse_ioports_line(const std::string& line, ioports_line& out)
{
    unsigned lo = 0, hi = 0;
    char name[128] = {};
    if (std::sscanf(line.c_str(), " %x-%x : %127[^\n]", &lo, &hi, name) != 3)
        return false;
    out.lo = lo;
    out.hi = hi;
    out.name = name;
    while (!out.name.empty() && (out.name.back() == ' ' || out.name.back() == '\t'))
        out.name.pop_back();
    out.text = line.substr(line.find_first_not_of(" \t"));
    return true;
}

raw_port_seams& raw_port_test_seams()
{
    static raw_port_seams s;
    return s;
}

raw_port_range gate_raw_port(unsigned base, bool check)
{
    using namespace parport_gate_detail;
    const std::string what = "raw port I/O at " + hex_base(base);
    if (base == 0 || base > 0xfffd)
        throw error(what, "not an I/O port base",
                    "use the base of your port, 0x378, 0x278, 0x3bc or a PCIe card's from "
                    "/proc/ioports or lspci -v");
    raw_port_range r{base, 3, {}};
    const raw_port_seams& seams = raw_port_test_seams();
    const raw_privilege priv = seams.privilege ? seams.privilege() : detect_raw_privilege();
    if (!priv.raised)
        return r;

    const std::string raised = "this process has raised privileges (" + priv.why + ")";
    if (!check)
        throw error(what, raised + ", so check=no is refused", ppdev_hint);

    const std::string ioports = join_path(seams.proc_root, "proc/ioports");
    std::ifstream f(ioports);
    if (!f)
        throw error(what,
                    raised + " and " + ioports + " cannot be read to see a parallel port there",
                    ppdev_hint);
    std::string line, elsewhere;
    ioports_line range;
    while (std::getline(f, line)) {
        if (!parse_ioports_line(line, range))
            continue;
        const unsigned lo = range.lo, hi = range.hi;
        const std::string& name = range.name;
        const std::string& entry = range.text;
        if (!is_parport_name(name)) {
            if (lo <= base && base <= hi && hi != 0)
                elsewhere = entry; // innermost range holding the base
            continue;
        }
        if (lo == 0 && hi == 0) {
            // The view of a reader without CAP_SYS_ADMIN: the port's own sysctl gives its base.
            if (sysctl_base(seams.proc_root, name) == static_cast<long>(base)) {
                r.listing = entry + " (base " + hex_base(base) + " from /proc/sys/dev/parport/" +
                            name + "/base-addr)";
                return r;
            }
            continue;
        }
        if (lo == base && hi >= base + 2) {
            r.listing = entry;
            return r;
        }
        if (lo == base)
            elsewhere = entry + " (too small for the three registers)";
        else if (lo <= base && base <= hi)
            elsewhere = entry + " (the base is inside it, not its start)";
    }
    throw error(what,
                raised + " and " + ioports + " lists no parallel port (parportN) starting at " +
                    hex_base(base) + (elsewhere.empty() ? "" : "; it lists: " + elsewhere),
                ppdev_hint);
}

} // namespace irqloop::hw
