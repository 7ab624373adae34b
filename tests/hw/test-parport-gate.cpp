// SPDX-License-Identifier: MIT
// The gate of raw port I/O (issue 32): with raised privileges (irqloop-rt with cap_sys_rawio)
// only a base that /proc/ioports lists as a parallel port reaches ioperm, and check=no is
// refused. Fake /proc trees written here, a privilege seam and an ioperm seam that counts the
// calls: no capability and no port needed. One case drives the real detection in a child
// that gives up root but keeps CAP_SYS_RAWIO (as root only).
#include "error.hpp"
#include "parport/parport-gate.hpp"
#include "parport/parport-io.hpp"
#include "registry.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <linux/capability.h>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace irqloop;
using namespace irqloop::hw;
using irqloop::test::temp_dir;

namespace gate_test
{

struct ioperm_call {
    unsigned long from, num;
    int on;
};
int ioperm_calls = 0;
ioperm_call last_call{};

int counting_ioperm(unsigned long from, unsigned long num, int on)
{
    ++ioperm_calls;
    last_call = {from, num, on};
    return 0;
}

raw_privilege raised_privilege()
{
    return {true, "test seam: file capability cap_sys_rawio"};
}
raw_privilege plain_privilege()
{
    return {};
}

/** Installs the seams for one test case and puts the defaults back. */
struct seams_scope final {
    explicit seams_scope(const std::string& root, raw_privilege (*priv)() = raised_privilege)
    {
        raw_port_test_seams() = {root, priv, counting_ioperm};
        ioperm_calls = 0;
    }
    ~seams_scope() { raw_port_test_seams() = raw_port_seams{}; }
    seams_scope(const seams_scope&) = delete;
    seams_scope& operator=(const seams_scope&) = delete;
};

void write_file(const std::string& path, const std::string& text)
{
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
}

/** A /proc/ioports as a PC with an on-board parallel port shows it to root. */
const char* const pc_ioports = "0000-0cf7 : PCI Bus 0000:00\n"
                               "  0000-001f : dma1\n"
                               "  0060-0060 : keyboard\n"
                               "  0070-0077 : rtc0\n"
                               "  0378-037a : parport0\n"
                               "  03c0-03df : vga+\n"
                               "  0778-077a : parport0\n"
                               "0cf8-0cff : PCI conf1\n"
                               "0d00-ffff : PCI Bus 0000:00\n"
                               "  d010-d017 : parport1\n";

/** The message of the irqloop::error @p f throws (exit status 2), or "" when none. */
template <class F> std::string refusal(F f)
{
    try {
        f();
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_usage);
        return e.message();
    }
    return "";
}

bool has(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

} // namespace gate_test

using namespace gate_test;

TEST_CASE("parport gate: a listed parallel port passes, with exactly its three registers",
          "[parport]")
{
    temp_dir d;
    write_file(d / "proc/ioports", pc_ioports);
    seams_scope seams(d.path());
    const raw_port_range r = gate_raw_port(0x378, true);
    CHECK(r.base == 0x378);
    CHECK(r.count == 3);
    CHECK(r.listing == "0378-037a : parport0");
    CHECK(gate_raw_port(0xd010, true).listing == "d010-d017 : parport1");
    CHECK(ioperm_calls == 0);

    {
        auto io = open_parport_raw_io(0x378, true); // registers never touched: the seam
        REQUIRE(ioperm_calls == 1);
        CHECK(last_call.from == 0x378);
        CHECK(last_call.num == 3);
        CHECK(last_call.on == 1);
    }
    CHECK(ioperm_calls == 2); // released at close, the same range
    CHECK(last_call.from == 0x378);
    CHECK(last_call.num == 3);
    CHECK(last_call.on == 0);
}

TEST_CASE("parport gate: raised privileges refuse unlisted bases and check=no before ioperm",
          "[parport]")
{
    temp_dir d;
    write_file(d / "proc/ioports", pc_ioports);
    seams_scope seams(d.path());

    // The PCI configuration address port: listed, but not as a parallel port.
    std::string m = refusal([] { open_parport_raw_io(0xcf8, true); });
    std::printf("%s\n", m.c_str());
    CHECK(has(m, "raw port I/O at 0xcf8: this process has raised privileges (test seam"));
    CHECK(has(m, "lists no parallel port (parportN) starting at 0xcf8"));
    CHECK(has(m, "it lists: 0cf8-0cff : PCI conf1"));
    CHECK(has(m, "(use dev=/dev/parportN, ppdev, group lp, needs no capability)"));

    // The same through the backend spec: refused while the keys are read, before any open.
    m = refusal([] { check_lines_spec("parport:base=0xcf8", role::logger); });
    CHECK(has(m, "starting at 0xcf8"));
    m = refusal([] { open_lines("parport:base=0xcf8", role::logger); });
    CHECK(has(m, "starting at 0xcf8"));

    // check=no, even on the listed port.
    m = refusal([] { open_lines("parport:base=0x378,check=no", role::logger); });
    std::printf("%s\n", m.c_str());
    CHECK(has(m, "raised privileges"));
    CHECK(has(m, "check=no is refused"));
    CHECK(has(m, "(use dev=/dev/parportN"));
    CHECK(has(refusal([] { open_parport_raw_io(0x378, false); }), "check=no is refused"));

    // Hostile bases: inside the port but not its start, the keyboard, the CMOS, the ECP
    // registers' neighbour, the top of the space, beyond it.
    CHECK(has(refusal([] { open_parport_raw_io(0x379, true); }), "not its start"));
    CHECK(has(refusal([] { open_parport_raw_io(0x37a, true); }), "not its start"));
    CHECK(has(refusal([] { open_parport_raw_io(0x60, true); }), "it lists: 0060-0060 : keyboard"));
    CHECK(has(refusal([] { open_parport_raw_io(0x70, true); }), "rtc0"));
    CHECK(has(refusal([] { open_parport_raw_io(0x377, true); }), "starting at 0x377"));
    CHECK(has(refusal([] { open_parport_raw_io(0xfffd, true); }), "starting at 0xfffd"));
    CHECK(has(refusal([] { open_parport_raw_io(0x10378, true); }), "not an I/O port base"));
    CHECK(has(refusal([] { open_lines("parport:base=0xffffffffffffffffff", role::logger); }),
              "not an I/O port base"));
    CHECK(
        has(refusal([] { open_lines("parport:base=-1", role::logger); }), "not an I/O port base"));
    CHECK(has(refusal([] { open_lines("parport:base=0", role::logger); }), "not an I/O port base"));
    CHECK(ioperm_calls == 0);
}

TEST_CASE("parport gate: 0x378 under another name, too small, or no /proc/ioports is refused",
          "[parport]")
{
    temp_dir d;
    seams_scope seams(d.path());
    const auto refused_with = [&](const std::string& ioports) {
        write_file(d / "proc/ioports", ioports);
        return refusal([] { open_parport_raw_io(0x378, true); });
    };
    CHECK(has(refused_with("  0378-037a : lp0\n"), "it lists: 0378-037a : lp0"));
    CHECK(has(refused_with("  0378-037a : parport\n"), "lists no parallel port"));
    CHECK(has(refused_with("  0378-037a : parport0x\n"), "lists no parallel port"));
    CHECK(has(refused_with("  0378-037a : xparport0\n"), "lists no parallel port"));
    CHECK(has(refused_with("  0378-037a : parport_pc\n"), "lists no parallel port"));
    CHECK(has(refused_with("  0378-0379 : parport0\n"), "lists no parallel port"));
    CHECK(has(refused_with("  0370-037f : parport0\n"), "not its start"));
    CHECK(has(refused_with(""), "lists no parallel port"));
    CHECK(has(refused_with("garbage\n0378 parport0\n"), "lists no parallel port"));
    // The restricted view (no CAP_SYS_ADMIN: every range 0000-0000) without the port's sysctl,
    // or with a sysctl that names another base.
    CHECK(has(refused_with("  0000-0000 : parport0\n"), "lists no parallel port"));
    write_file(d / "proc/sys/dev/parport/parport0/base-addr", "632\t1656\n");
    CHECK(has(refused_with("  0000-0000 : parport0\n"), "lists no parallel port"));
    std::filesystem::remove(d / "proc/ioports");
    const std::string m = refusal([] { open_parport_raw_io(0x378, true); });
    CHECK(has(m, "/proc/ioports cannot be read"));
    CHECK(has(m, "(use dev=/dev/parportN"));
    CHECK(ioperm_calls == 0);
}

TEST_CASE("parport gate: the restricted view of /proc/ioports takes the port's base-addr",
          "[parport]")
{
    // What irqloop-rt with cap_sys_rawio but not cap_sys_admin reads: every range 0000-0000.
    temp_dir d;
    write_file(d / "proc/ioports", "0000-0000 : PCI Bus 0000:00\n  0000-0000 : parport0\n"
                                   "  0000-0000 : parport0\n0000-0000 : PCI conf1\n");
    write_file(d / "proc/sys/dev/parport/parport0/base-addr", "888\t1912\n");
    seams_scope seams(d.path());
    const raw_port_range r = gate_raw_port(0x378, true);
    CHECK(r.count == 3);
    CHECK(has(r.listing, "parport0 (base 0x378 from /proc/sys/dev/parport/parport0/base-addr)"));
    CHECK(has(refusal([] { gate_raw_port(0xcf8, true); }), "starting at 0xcf8"));
    CHECK(ioperm_calls == 0);
}

TEST_CASE("parport gate: without raised privileges any base and check=no reach ioperm", "[parport]")
{
    // Full root (or an ordinary user, whom the kernel refuses): the gate is not in play.
    temp_dir d; // no /proc/ioports at all: not read
    seams_scope seams(d.path(), plain_privilege);
    CHECK(gate_raw_port(0xcf8, false).count == 3);
    {
        auto io = open_parport_raw_io(0xcf8, false);
        CHECK(ioperm_calls == 1);
        CHECK(last_call.from == 0xcf8);
    }
    CHECK(has(refusal([] { gate_raw_port(0x10000, true); }), "not an I/O port base"));
}

TEST_CASE("parport gate: the real privilege detection of this test process", "[parport]")
{
    const raw_privilege p = detect_raw_privilege();
    if (getuid() == 0) {
        std::printf("real detection: real uid 0, full root: not raised (the gate is off)\n");
        CHECK_FALSE(p.raised);
    } else {
        std::printf("real detection: uid %u, %s\n", static_cast<unsigned>(getuid()),
                    p.raised ? ("raised: " + p.why).c_str() : "not raised");
        // An ordinary test process holds no capability; one that does is raised.
        std::ifstream status("/proc/self/status");
        std::string line, prm;
        while (std::getline(status, line))
            if (line.rfind("CapPrm:", 0) == 0)
                prm = line.substr(7);
        CHECK(p.raised == (prm.find_first_not_of("\t 0") != std::string::npos));
    }
}

TEST_CASE("parport gate: a real process that keeps CAP_SYS_RAWIO as another user is raised",
          "[parport]")
{
    if (getuid() != 0)
        SKIP("SKIPPED: needs root to give up its uid while keeping CAP_SYS_RAWIO");
    // Fake proc tree for the listing, the real detection, and the counting ioperm.
    temp_dir d;
    write_file(d / "proc/ioports", pc_ioports);
    // The child reads the tree as uid 65534.
    std::filesystem::permissions(
        d.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                      std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                      std::filesystem::perms::others_exec);
    raw_port_test_seams() = {d.path(), detect_raw_privilege, counting_ioperm};
    ioperm_calls = 0;
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // The state of irqloop-rt after `irqloop-rt-access enable --rawio`, for a user in the
        // group: a uid that is not 0 and cap_sys_rawio permitted and effective.
        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
            _exit(10);
        if (syscall(SYS_setresuid, 65534, 65534, 65534) != 0)
            _exit(11);
        __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {};
        data[CAP_SYS_RAWIO / 32].permitted = 1u << (CAP_SYS_RAWIO % 32);
        data[CAP_SYS_RAWIO / 32].effective = 1u << (CAP_SYS_RAWIO % 32);
        if (syscall(SYS_capset, &hdr, data) != 0)
            _exit(12);
        const raw_privilege p = detect_raw_privilege();
        std::fprintf(stderr, "child uid 65534 with cap_sys_rawio: %s\n",
                     p.raised ? ("raised: " + p.why).c_str() : "NOT raised");
        if (!p.raised)
            _exit(13);
        const std::string m = refusal([] { open_parport_raw_io(0xcf8, true); });
        std::fprintf(stderr, "%s\n", m.c_str());
        if (!has(m, "starting at 0xcf8") || ioperm_calls != 0)
            _exit(14);
        if (!has(refusal([] { open_lines("parport:base=0x378,check=no", role::logger); }),
                 "check=no is refused") ||
            ioperm_calls != 0)
            _exit(15);
        try {
            auto io = open_parport_raw_io(0x378, true);
        } catch (...) {
            _exit(16);
        }
        _exit(ioperm_calls == 2 ? 0 : 17);
    }
    raw_port_test_seams() = raw_port_seams{};
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
}
