// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace irqloop::hw
{

/**
 * @brief Whether this process holds more privilege than the user who started it.
 *
 * Raised: the kernel started it in secure mode (getauxval(AT_SECURE): setuid, setgid, or file
 * capabilities that grew its set), or its real uid is not 0 while its effective uid is 0 or
 * its permitted capability set is not empty (irqloop-rt with `irqloop-rt-access enable
 * --rawio`). A process whose real uid is 0 is full root, with nothing in play that the user
 * does not already have: not raised. An ordinary user's process has no capabilities: not
 * raised (the kernel refuses its ioperm anyway).
 */
struct raw_privilege final {
    bool raised = false;
    std::string why; ///< when raised: what raised it, for the refusal's message
};

/** @brief The real detection: getauxval(AT_SECURE), getresuid(), capget(). */
raw_privilege detect_raw_privilege();

/**
 * @brief The test seams of raw port I/O: where /proc is, how privilege is detected, and the
 * ioperm call itself. The programs never change them (no option or variable reaches them:
 * an elevated process must read the kernel's own /proc/ioports); tests set them and put the
 * defaults back.
 */
struct raw_port_seams final {
    std::string proc_root = "/";
    raw_privilege (*privilege)() = detect_raw_privilege;
    /** Replaces ioperm(2) when set (tests count the calls); nullptr: the real ioperm. */
    int (*ioperm)(unsigned long from, unsigned long num, int turn_on) = nullptr;
};

/** @brief The process's seams (defaults unless a test changed them). */
raw_port_seams& raw_port_test_seams();

/** @brief One range of /proc/ioports, as `  0378-037a : parport0` lists it. */
struct ioports_line final {
    unsigned lo = 0, hi = 0;
    std::string name; ///< the range's owner, without trailing blanks
    std::string text; ///< the whole line without its indentation, for messages
};

/** @brief Parses one line of /proc/ioports; false for a line that lists no range. */
bool parse_ioports_line(const std::string& line, ioports_line& out);

/** @brief The I/O ports raw port I/O may ask ioperm for: base .. base + count - 1. */
struct raw_port_range final {
    unsigned base = 0;
    unsigned count = 0;
    std::string listing; ///< the /proc/ioports line that allowed it (raised only), or empty
};

/**
 * @brief The gate of raw port I/O, run before any ioperm (and, through take_parport_spec(),
 * before any stimulus or file).
 *
 * Always: the base is an I/O port base (1 .. 0xfffd). The range is the three SPP registers
 * (data, status, control), all the backend touches. When privileges are raised
 * (raw_privilege), also: `check=no` is refused, and the base must be the start of a range
 * that `PROC/ioports` names `parportN` (N digits, nothing else) and that holds the three
 * registers. A reader without CAP_SYS_ADMIN sees every range in /proc/ioports as 0000-0000:
 * then the port's `PROC/sys/dev/parport/parportN/base-addr` (world-readable) gives its base.
 * @throws irqloop::error (exit status 2) with the hint to use ppdev, which needs no
 *         capability.
 */
raw_port_range gate_raw_port(unsigned base, bool check);

} // namespace irqloop::hw
