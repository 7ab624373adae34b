#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The bare-metal responder (target-responder/baremetal) on QEMU's virt machine, TCG.

    run-virt.py --image IMG --results DIR CASE
    run-virt.py --list

One boot per CASE (see CASES). Edges come from outside: QMP system_powerdown presses
virt's gpio-key (only without ACPI), which drives PL061 line 3 high and, 100 ms later,
low again (QEMU's hw/gpio/gpio_key.c): two edges per press. After each press the
runner reads the PL061 data register from outside (HMP xp through QMP) until it has seen
the response line (line 4) go high and then low again, and the console's counters line
reach the edges sent; at the end it checks the last counters line: edges equal to the
edges sent, spurious 0, unexpected as the case expects. A case whose bootargs are refused
must print its error line, no start line, and leave the response line low through a press.
Counts only, no timing.

Exit status: 0 pass, 1 fail, 2 bad usage, 4 skipped (no image: the cross compiler was
not found; no qemu-system-aarch64), with the reason on stdout.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

PL061 = 0x09030000
IN_LINE, OUT_LINE = 3, 4
# GPIODATA is address-masked: this address reads lines 3 and 4 only.
DATA_IN_OUT = PL061 + (((1 << IN_LINE) | (1 << OUT_LINE)) << 2)

# name: machine options, bootargs, presses, SGIs expected as unexpected, banner to find
CASES = {
    "gicv2": ("gic-version=2", "", 3, 0, "started at EL1,"),
    "gicv3": ("gic-version=3", "", 3, 0, "started at EL1,"),
    "el2-gicv2": ("gic-version=2,virtualization=on", "", 2, 0, "started at EL2 (dropped to EL1)"),
    "el2-gicv3": ("gic-version=3,virtualization=on", "", 2, 0, "started at EL2 (dropped to EL1)"),
    "poll": ("gic-version=3", "poll=1", 2, 0, "mode=poll"),
    "sgi-gicv2": ("gic-version=2", "sgi=5", 1, 5, "sent 5 SGIs"),
    "sgi-gicv3": ("gic-version=3", "sgi=5", 1, 5, "sent 5 SGIs"),
    "defaults": ("gic-version=3", "nodt=1", 1, 0, "device tree ignored (nodt=1)"),
    # refused at start: one error line, then a press is not answered
    "bad-lines": ("gic-version=3", "in=9", 1, 0,
                  "irqloop-bm: error: pl061: lines in=9 out=4 refused"),
    # virt-bus.dts: every reg behind a bus's ranges, the UART by stdout-path through /aliases
    # and irq=1: the node's second interrupt (its first, SPI 8, never fires)
    "dt-bus": ("gic-version=3", "irq=1", 2, 0,
               "node=/bus@8000000/gpio@1030000 base=0x9030000 intid=39"),
    # no -kernel: QEMU's generic loader puts the image at an address no Image loader would
    # choose and passes no device tree: self-relocation and the build's defaults
    "moved-no-dtb": ("gic-version=2", "", 1, 0,
                     "at 0x40345000, started at EL1, device tree absent"),
}
# Cases that need more than the machine options
DTS = {"dt-bus": "virt-bus.dts"}
LOADER_ADDR = {"moved-no-dtb": 0x40345000}

COUNTERS = re.compile(
    r"irqloop-bm: edges=(\d+) spurious=(\d+) unexpected=(\d+) max_ns=(\d+) out=(\d+)")


class Fail(Exception):
    pass


class Qmp:
    def __init__(self, path, deadline):
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise Fail("QEMU's QMP socket did not open")
                time.sleep(0.05)
        self.file = self.sock.makefile("rw")
        json.loads(self.file.readline())  # the greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.file.write(json.dumps(msg) + "\n")
        self.file.flush()
        while True:
            line = self.file.readline()
            if not line:
                raise Fail("QEMU closed its QMP socket")
            reply = json.loads(line)
            if "error" in reply:
                raise Fail(f"QMP {name}: {reply['error']}")
            if "return" in reply:
                return reply["return"]

    def lines(self):
        """(in, out) levels of PL061 lines 3 and 4, read from outside the guest."""
        text = self.cmd("human-monitor-command", **{"command-line": f"xp /1wx {DATA_IN_OUT:#x}"})
        value = int(text.split(":")[1].strip(), 16)
        return (value >> IN_LINE) & 1, (value >> OUT_LINE) & 1


def console(path):
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def wait_for(path, what, deadline, proc):
    while True:
        text = console(path)
        if "irqloop-bm: error" in text:
            raise Fail("the responder stopped on an error")
        if what(text):
            return text
        if proc.poll() is not None:
            raise Fail(f"QEMU exited with status {proc.returncode}")
        if time.monotonic() > deadline:
            raise Fail("timed out")
        time.sleep(0.02)


def last_counters(text):
    found = COUNTERS.findall(text)
    return tuple(int(x) for x in found[-1]) if found else None


def watch_press(qmp, limit):
    """After a press: "answered" once the response line was seen high and then low with
    the stimulus low; "unseen" when it was never seen high within @limit seconds (not
    answered, or the observer ran too late to see the 100 ms the press lasts)."""
    seen_high = False
    end = time.monotonic() + limit
    while time.monotonic() < end:
        level_in, level_out = qmp.lines()
        if level_out:
            seen_high = True
        elif seen_high and not level_in:
            return "answered"
        time.sleep(0.002)
    return "late" if seen_high else "unseen"


def refused(name, con, banner, sock, presses, deadline, proc):
    """A start refused: its error line, no start line, and presses not answered."""
    text = console(con)
    while banner not in text:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise Fail(f"the console does not say '{banner}'")
        time.sleep(0.02)
        text = console(con)
    qmp = Qmp(sock, deadline)
    press = 0
    retries = 3
    while press < presses:
        qmp.cmd("system_powerdown")
        seen = set()
        end = time.monotonic() + 0.3  # the press and its release, 100 ms later
        while time.monotonic() < end:
            seen.add(qmp.lines())
            time.sleep(0.002)
        if any(level_out for _, level_out in seen):
            raise Fail(f"press {press + 1}: answered after the refusal")
        if (1, 0) in seen:
            press += 1
        elif retries:
            retries -= 1  # the observer missed the press: press again
        else:
            raise Fail(f"press {press + 1}: the stimulus line was not seen high")
    text = console(con)
    if "irqloop-bm: start " in text or COUNTERS.search(text):
        raise Fail("the responder started after its refusal")
    print(f"run-virt: {name}: refused at start, {presses} presses not answered")
    qmp.cmd("quit")
    proc.wait(timeout=10)


def run_case(name, image, results, timeout):
    machine, bootargs, presses, sgis, banner = CASES[name]
    con = os.path.join(results, f"{name}.console")
    sock = os.path.join(results, f"{name}.qmp")
    for p in (con, sock):
        if os.path.exists(p):
            os.unlink(p)
    # -icount: QEMU's virtual clock, which times the gpio-key's release, counts the guest's
    # instructions (128 ns each) instead of the host's time. Without it a vCPU thread the
    # loaded host stopped for 100 ms inside the handler (between pending() and ack()) saw the
    # release land there: the two edges merged into one latch, one answer, counted spurious
    # (1 run in 30 beside two CPU hogs). With it the release comes only after the guest ran
    # 780000 instructions or idled 100 ms. (1 ns each made the polling loop, slow MMIO reads
    # of few instructions, wait 10 s of the host's time for a release.)
    cmd = ["qemu-system-aarch64", "-machine", f"virt,{machine},acpi=off", "-cpu", "cortex-a57",
           "-icount", "shift=7",
           "-m", "128", "-nodefaults", "-display", "none", "-no-reboot",
           "-serial", f"file:{con}", "-qmp", f"unix:{sock},server=on,wait=off"]
    if name in LOADER_ADDR:
        cmd += ["-device", f"loader,file={image},addr={LOADER_ADDR[name]:#x},cpu-num=0"]
    else:
        cmd += ["-kernel", image]
    if name in DTS:
        dtb = os.path.join(results, f"{name}.dtb")
        subprocess.run(["dtc", "-I", "dts", "-O", "dtb", "-o", dtb,
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), DTS[name])],
                       check=True)
        cmd += ["-dtb", dtb]
    if bootargs:
        cmd += ["-append", bootargs]
    print("run-virt:", " ".join(cmd))
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    start = time.monotonic()
    deadline = start + timeout
    try:
        if banner.startswith("irqloop-bm: error"):
            refused(name, con, banner, sock, presses, deadline, proc)
            return
        try:
            wait_for(con, lambda t: "irqloop-bm: start " in t and banner in t,
                     min(deadline, time.monotonic() + 20), proc)
        except Fail as e:
            raise Fail(f"the console does not say 'irqloop-bm: start' and '{banner}': {e}")
        qmp = Qmp(sock, deadline)
        if sgis:
            text = wait_for(con, lambda t: (last_counters(t) or (0, 0, 0))[2] >= sgis, deadline,
                            proc)
            edges, spurious, unexpected, _, out = last_counters(text)
            level_in, level_out = qmp.lines()
            print(f"run-virt: after {sgis} SGIs: console edges={edges} unexpected={unexpected}"
                  f" out={out}; the response line read from outside: {level_out}")
            if edges or unexpected != sgis or out or level_out:
                raise Fail("an SGI was answered or not counted as unexpected")
        sent = 0
        press = 0
        retries = 3  # presses the observer saw none of (a loaded host), pressed again
        while press < presses:
            qmp.cmd("system_powerdown")
            sent += 2
            seen = watch_press(qmp, 5.0)
            if seen == "unseen" and retries:
                retries -= 1
                print(f"run-virt: press {press + 1}: the response line was not seen high: "
                      "pressing again")
            elif seen != "answered":
                raise Fail(f"press {press + 1}: the response line was not seen to rise and "
                           "fall (PL061 line 4, read through QMP xp)")
            else:
                press += 1
            wait_for(con, lambda t: (last_counters(t) or (0,))[0] >= sent, deadline, proc)
        time.sleep(0.3)  # anything late would show now
        text = console(con)
        counters = last_counters(text)
        if counters is None:
            raise Fail("no counters line on the console")
        edges, spurious, unexpected, max_ns, out = counters
        print(f"run-virt: {name}: {presses} presses, {sent} edges sent; the console's last "
              f"line: edges={edges} spurious={spurious} unexpected={unexpected} out={out}"
              f" ({time.monotonic() - start:.1f} s)")
        if (edges, spurious, unexpected, out) != (sent, 0, sgis, 0):
            raise Fail(f"expected edges={sent} spurious=0 unexpected={sgis} out=0")
        qmp.cmd("quit")
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        print(f"run-virt: console ({con}):")
        sys.stdout.write(console(con).replace("\r", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", default="", help="irqloop-bm.img (empty: not built, skip)")
    ap.add_argument("--results", help="where consoles and QMP sockets go")
    ap.add_argument("--timeout", type=float, default=60, help="seconds for the whole case")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("case", nargs="?", choices=sorted(CASES))
    a = ap.parse_args()
    if a.list:
        print("\n".join(sorted(CASES)))
        return 0
    if not a.case or not a.results:
        ap.error("a CASE and --results are needed")
    if not a.image:
        print("SKIPPED: the bare-metal responder was not built: no aarch64-linux-gnu-gcc "
              "(apt-get install gcc-aarch64-linux-gnu, then configure again)")
        return 4
    if not shutil.which("qemu-system-aarch64"):
        print("SKIPPED: no qemu-system-aarch64 (apt-get install qemu-system-arm)")
        return 4
    if a.case in DTS and not shutil.which("dtc"):
        print("SKIPPED: no dtc to compile the case's device tree (apt-get install "
              "device-tree-compiler)")
        return 4
    if not os.path.isfile(a.image):
        print(f"run-virt: {a.image} is missing (build the target irqloop-bm)")
        return 1
    os.makedirs(a.results, exist_ok=True)
    try:
        run_case(a.case, a.image, a.results, a.timeout)
    except Fail as e:
        print(f"run-virt: {a.case}: FAIL: {e}")
        return 1
    print(f"run-virt: {a.case}: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
