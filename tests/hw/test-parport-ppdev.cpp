// SPDX-License-Identifier: MIT
// The parport backend against real kernel code: ppdev and raw port I/O on a port that exists.
// This machine has none, so these tests SKIP here; the QEMU testbed scenario parport-ppdev
// runs them in a guest with QEMU's emulated ISA parallel port and Debian's parport_pc and
// ppdev, setting the IRQLOOP_TEST_* variables below. They never touch a port nobody named.
//
//   IRQLOOP_TEST_PPDEV=/dev/parportN   a ppdev node whose port may be written freely
//   IRQLOOP_TEST_PARPORT_BASE=0x278    the same port for raw I/O (guest only)
//   IRQLOOP_TEST_NO_PORT_BASE=0x3bc    an I/O address where no port answers (guest only)
//   IRQLOOP_TEST_QEMU_LPT=1            the port is QEMU's emulated one (its printer model)
//   IRQLOOP_TEST_PPDEV_HELD=1          lp has been loaded and holds the port
#include "error.hpp"
#include "open-as.hpp"
#include "parport/parport-io.hpp"
#include "parport/parport-lines.hpp"
#include "registry.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <linux/capability.h>
#include <string>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace irqloop;
using namespace irqloop::hw;

namespace
{

std::string env(const char* name)
{
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::string ppdev_or_skip()
{
    std::string dev = env("IRQLOOP_TEST_PPDEV");
    if (dev.empty())
        SKIP("no parallel port to test on: set IRQLOOP_TEST_PPDEV=/dev/parportN (the QEMU "
             "testbed scenario parport-ppdev does)");
    return dev;
}

std::string metadata_value(const lines& l, const std::string& key)
{
    for (const auto& m : l.metadata())
        if (m.key == key)
            return m.value;
    return {};
}

// The IRQ line of port N as the parport layer sees it ("-1" or "none" without one).
bool port_has_irq(const std::string& dev)
{
    std::string n = dev.substr(dev.find_last_not_of("0123456789") + 1);
    std::ifstream f("/proc/sys/dev/parport/parport" + n + "/irq");
    int irq = -1;
    return (f >> irq) && irq >= 0;
}

// A STROBE pulse with SELECT and INIT high, as a printer driver sends a byte.
void strobe(parport_io& io)
{
    REQUIRE(io.write_control(0x0d) == 0); // nSTROBE low (bit 0 is inverted)
    REQUIRE(io.write_control(0x0c) == 0);
}

} // namespace

TEST_CASE("parport ppdev claims a real port, writes the data and control registers, reads "
          "status",
          "[parport][ppdev-hw]")
{
    const std::string dev = ppdev_or_skip();
    if (env("IRQLOOP_TEST_PPDEV_HELD") == "1")
        SKIP("lp holds the port in this run");
    auto io = open_parport_ppdev_io(dev, true);
    for (int v : {0x00, 0xff, 0x55, 0xaa, 0x08}) {
        REQUIRE(io->write_data(static_cast<std::uint8_t>(v)) == 0);
        CHECK(io->read_data() == v);
    }
    for (int v : {0x0c, 0x0e, 0x04, 0x0c}) {
        REQUIRE(io->write_control(static_cast<std::uint8_t>(v)) == 0);
        CHECK((io->read_control() & 0x0f) == v);
    }
    const int status = io->read_status();
    REQUIRE(status >= 0);
    std::printf("ppdev %s: status register 0x%02x, control 0x%02x\n", dev.c_str(), status,
                io->read_control());
    // parport_pc reports the four control lines only: bits 4-7 (IRQ enable, direction) of
    // the register stay hidden from PPRCONTROL.
    CHECK((io->read_control() & 0xf0) == 0);
    CHECK(io->has_irq());
}

TEST_CASE("parport lines open on ppdev and record the poll cost", "[parport][ppdev-hw]")
{
    const std::string dev = ppdev_or_skip();
    if (env("IRQLOOP_TEST_PPDEV_HELD") == "1")
        SKIP("lp holds the port in this run");
    auto l = test::open_as<parport_lines>("parport:dev=" + dev + ",out=D3,in=nACK", role::logger);
    CHECK(l->describe() == "parport:dev=" + dev + ",out=D3,in=nACK,edges=rising");
    CHECK(metadata_value(*l, "parport.method") == "ppdev");
    const double read_ns = std::stod(metadata_value(*l, "parport.status_read_ns"));
    const double write_ns = std::stod(metadata_value(*l, "parport.write_ns"));
    CHECK(read_ns > 0);
    CHECK(write_ns > 0);
    std::printf("ppdev %s: %.0f ns per status read (PPRSTATUS), %.0f ns per write (PPWDATA)\n",
                dev.c_str(), read_ns, write_ns);
    l->start();
    l->drive(true);
    CHECK(l->sense() >= 0);
    l->drive(false);
    l->stop();
    CHECK_FALSE(l->error());
}

TEST_CASE("parport ppdev on QEMU: strobed bytes reach the chardev, each pulse raises the IRQ, "
          "PPWCTLONIRQ runs in the handler",
          "[parport][ppdev-hw]")
{
    const std::string dev = ppdev_or_skip();
    if (env("IRQLOOP_TEST_QEMU_LPT") != "1")
        SKIP("QEMU's printer model is not on this port (IRQLOOP_TEST_QEMU_LPT=1)");
    if (env("IRQLOOP_TEST_PPDEV_HELD") == "1")
        SKIP("lp holds the port in this run");
    if (!port_has_irq(dev))
        SKIP("the port has no IRQ line (load parport_pc with irq=...)");
    auto io = open_parport_ppdev_io(dev, true);
    // QEMU's port raises its IRQ on any control write that leaves STROBE released with the
    // interrupt enabled, so claiming it (parport_pc rewrites the control register) raised
    // some already; they may arrive late from the other vCPU: drain them first.
    while (io->wait_irq(200'000'000) > 0) {
    }
    // QEMU copies the data latch to its chardev on each STROBE pulse; the host side of the
    // scenario finds the text in the chardev file. Its IRQ is a level the status read drops.
    const std::string text = "irqloop-ppdev\n";
    // One pulse at a time, waiting for its interrupt: pulses sent faster coalesce in the
    // (emulated) interrupt controller while the vCPU that takes them is not running.
    int irqs = 0, answered = 0;
    for (char c : text) {
        REQUIRE(io->write_data(static_cast<std::uint8_t>(c)) == 0);
        strobe(*io);
        REQUIRE(io->read_status() >= 0);
        const int n = io->wait_irq(2'000'000'000);
        REQUIRE(n >= 0);
        irqs += n;
        answered += n > 0;
    }
    for (int n; (n = io->wait_irq(200'000'000)) > 0;)
        irqs += n;
    std::printf("ppdev %s: %zu STROBE pulses, each followed by an interrupt: %d; %d interrupts "
                "counted by ppdev\n",
                dev.c_str(), text.size(), answered, irqs);
    CHECK(answered == static_cast<int>(text.size()));

    // PPWCTLONIRQ: the kernel's handler sets nAUTOFD (control bit 1), which we never write.
    // The response is one-shot: an interrupt of the pulses above that the other vCPU delivers
    // late (seen on a loaded host) can take it before our pulse, and the strobe's own control
    // write then clears the bit again. So each try drains first, and up to three tries are
    // made; a handler that never writes the control register fails all three.
    int tries = 0;
    bool set_by_handler = false;
    while (!set_by_handler && tries < 3) {
        ++tries;
        // No control write here: on QEMU's port it raises an interrupt of its own, which
        // would take the armed response.
        while (io->wait_irq(300'000'000) > 0) {
        }
        REQUIRE(io->arm_control_on_irq(0x0e) == 0);
        REQUIRE(io->write_data('!') == 0);
        strobe(*io);
        CHECK(io->wait_irq(1'000'000'000) >= 1);
        set_by_handler = (io->read_control() & 0x0f) == 0x0e;
    }
    std::printf("ppdev %s: PPWCTLONIRQ control 0x0e set by the handler: %s (try %d of 3)\n",
                dev.c_str(), set_by_handler ? "yes" : "no", tries);
    CHECK(set_by_handler);
    REQUIRE(io->write_control(0x0c) == 0);
    io.reset(); // the claim is exclusive: release it for the line pair below

    // QEMU's printer model after a STROBE pulse: nACK reads low for exactly one status read.
    auto l =
        test::open_as<parport_lines>("parport:dev=" + dev + ",out=nSTROBE,in=nACK", role::logger);
    l->drive(false); // STROBE asserted
    l->drive(true);  // released: the "printer" acknowledges
    std::string seen;
    for (int i = 0; i < 4; ++i)
        seen += static_cast<char>('0' + l->sense());
    std::printf("ppdev %s: nACK over four reads after a STROBE pulse: %s\n", dev.c_str(),
                seen.c_str());
    CHECK(seen == "1011");
}

TEST_CASE("parport ppdev refuses a port that lp holds, in one line, unless excl=no",
          "[parport][ppdev-hw]")
{
    const std::string dev = ppdev_or_skip();
    if (env("IRQLOOP_TEST_PPDEV_HELD") != "1")
        SKIP("lp does not hold the port in this run (IRQLOOP_TEST_PPDEV_HELD=1)");
    try {
        open_lines("parport:dev=" + dev + ",out=D3,in=nACK", role::logger);
        FAIL("claimed a port lp holds");
    } catch (const irqloop::error& e) {
        std::printf("%s\n", e.message().c_str());
        CHECK(e.status() == exit_usage);
        CHECK(e.message().find("port busy") != std::string::npos);
        CHECK(e.message().find("lp") != std::string::npos);
        CHECK(e.message().find('\n') == std::string::npos);
    }
    // lp registered but is not printing: a shared claim succeeds.
    CHECK_NOTHROW(open_lines("parport:dev=" + dev + ",out=D3,in=nACK,excl=no", role::logger));
}

TEST_CASE("parport raw port I/O on an emulated port: data reads back, poll cost recorded",
          "[parport][raw-hw]")
{
    const std::string base = env("IRQLOOP_TEST_PARPORT_BASE");
    if (base.empty())
        SKIP("raw port I/O is only tested on a port named in IRQLOOP_TEST_PARPORT_BASE "
             "(the QEMU testbed guest): never on this machine's real I/O space");
    auto l = test::open_as<parport_lines>("parport:base=" + base + ",out=D3,in=nACK", role::logger);
    CHECK(metadata_value(*l, "parport.method") == "raw");
    const double read_ns = std::stod(metadata_value(*l, "parport.status_read_ns"));
    std::printf("raw %s: %.0f ns per status read (inb), %s ns per write; %s\n", base.c_str(),
                read_ns, metadata_value(*l, "parport.write_ns").c_str(),
                metadata_value(*l, "parport.ioports").c_str());
    CHECK(read_ns > 0);
    l->start();
    l->drive(true);
    CHECK(l->sense() >= 0);
    l->stop();
    CHECK_FALSE(l->error());

    const std::string none = env("IRQLOOP_TEST_NO_PORT_BASE");
    if (none.empty())
        return;
    try {
        open_lines("parport:base=" + none, role::logger);
        FAIL("opened a port where none answers");
    } catch (const irqloop::error& e) {
        std::printf("%s\n", e.message().c_str());
        CHECK(e.message().find("no parallel port answers") != std::string::npos);
    }
}

TEST_CASE("parport raw port I/O without CAP_SYS_RAWIO fails with the hint to use ppdev",
          "[parport]")
{
    // In a child that drops CAP_SYS_RAWIO: ioperm() is refused before any port is touched.
    // (A kernel built without ioperm refuses it with ENOSYS: the same hint applies.)
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {};
        if (syscall(SYS_capget, &hdr, data) != 0)
            _exit(10);
        data[CAP_SYS_RAWIO / 32].effective &= ~(1u << (CAP_SYS_RAWIO % 32));
        data[CAP_SYS_RAWIO / 32].permitted &= ~(1u << (CAP_SYS_RAWIO % 32));
        if (syscall(SYS_capset, &hdr, data) != 0)
            _exit(11);
        try {
            open_parport_raw_io(0x378);
            _exit(12); // ioperm succeeded without the capability: unexpected
        } catch (const irqloop::error& e) {
            const std::string m = e.message();
            std::fprintf(stderr, "%s\n", m.c_str());
            const bool ok = e.status() == exit_usage && m.find("ioperm") != std::string::npos &&
                            m.find("parport:dev=/dev/parport0") != std::string::npos;
            _exit(ok ? 0 : 13);
        }
    }
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
}
