#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the irqloop wiring schematics (parport/, gpiod/, ftdi/, analyzer/) as KiCad 9 .kicad_sch
files.

The sheets are plain KiCad sources: open and edit them in KiCad like any other. This script
only exists so that they can be rebuilt reproducibly (stable UUIDs, every pin on the 1.27 mm
grid) from KiCad's standard symbol library; it needs python3 and the kicad-symbols package.
After editing either a sheet or this script, run ./render.sh and the schematics test
(tests/schematics/test-pin-tables.cpp), which holds the sheets and pins.csv against the code.

    ./generate.py [--symbols /usr/share/kicad/symbols]
"""

import argparse
import json
import re
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMESPACE = uuid.UUID("5c1d6f0e-8d7a-4f4e-9a57-6972716c6f6f")
REVISION = "1"
COMPANY = "irqloop"


def sexpr_block(text, start):
    """Returns the balanced (...) block of text that opens at index start."""
    depth = 0
    in_string = False
    i = start
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    raise ValueError("unbalanced s-expression")


def fmt(v):
    """KiCad writes coordinates without trailing zeros."""
    s = f"{v:.4f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


class library:
    """Symbols taken from KiCad's installed .kicad_sym files, embedded into each sheet."""

    def __init__(self, root):
        self.root = Path(root)
        self.cache = {}

    def get(self, lib_id):
        if lib_id not in self.cache:
            lib, name = lib_id.split(":")
            text = (self.root / f"{lib}.kicad_sym").read_text()
            start = text.index(f'(symbol "{name}"')
            block = sexpr_block(text, start)
            if "(extends " in block:
                raise ValueError(f"{lib_id}: derived symbols are not supported")
            block = block.replace(f'(symbol "{name}"', f'(symbol "{lib_id}"', 1)
            pins = {}
            for m in re.finditer(
                r'\(pin \w+ \w+\s*\(at ([-\d.]+) ([-\d.]+) (\d+)\).*?\(number "([^"]*)"', block, re.S
            ):
                pins.setdefault(m.group(4), (float(m.group(1)), float(m.group(2))))
            self.cache[lib_id] = (block, pins)
        return self.cache[lib_id]


class sheet:
    """One schematic sheet. Coordinates are millimetres, y down, like KiCad's editor."""

    def __init__(self, name, title, lib, paper="A4", notes=(), backend=None):
        """notes: the title block's comment lines; backend (a folder of hw/ and schematics/):
        a last line naming its defaults header and its pin table."""
        self.name = name
        self.title = title
        self.lib = lib
        self.paper = paper
        self.items = []
        self.used = []
        self.counter = 0
        self.root_uuid = self.uuid("root")
        self.comments = list(notes)
        if backend:
            self.comments.append(f"Defaults: hw/{backend}/{backend}-defaults.hpp; "
                                 f"pin table: schematics/{backend}/pins.csv")

    def uuid(self, key=None):
        self.counter += 1
        return str(uuid.uuid5(NAMESPACE, f"{self.name}/{key or self.counter}"))

    def pin(self, part, number):
        """Absolute position of a pin: KiCad's transform, lib y up, then rotation, then mirror."""
        _, pins = self.lib.get(part["lib_id"])
        lx, ly = pins[str(number)]
        x, y = lx, -ly
        for _ in range(part["rot"] // 90):
            x, y = y, -x
        if part["mirror"] == "y":
            x = -x
        elif part["mirror"] == "x":
            y = -y
        return (round(part["x"] + x, 4), round(part["y"] + y, 4))

    def symbol(self, lib_id, ref, value, x, y, rot=0, mirror=None, fields=None, footprint=""):
        """fields: {"Reference": (dx, dy, angle, justify), "Value": ...} relative to (x, y)."""
        if lib_id not in self.used:
            self.used.append(lib_id)
        part = {"lib_id": lib_id, "ref": ref, "value": value, "x": x, "y": y, "rot": rot, "mirror": mirror}
        fields = fields or {}
        hidden_ref = ref.startswith("#")

        def prop(key, val, where, hide=False):
            dx, dy, angle, justify = where
            just = f"\n\t\t\t\t(justify {justify})" if justify else ""
            hid = "\n\t\t\t\t(hide yes)" if hide else ""
            return (
                f'\t\t(property "{key}" "{val}"\n\t\t\t(at {fmt(x + dx)} {fmt(y + dy)} {angle})\n'
                f"\t\t\t(effects\n\t\t\t\t(font\n\t\t\t\t\t(size 1.27 1.27)\n\t\t\t\t){just}{hid}\n\t\t\t)\n\t\t)\n"
            )

        _, pins = self.lib.get(lib_id)
        out = f'\t(symbol\n\t\t(lib_id "{lib_id}")\n\t\t(at {fmt(x)} {fmt(y)} {rot})\n'
        if mirror:
            out += f"\t\t(mirror {mirror})\n"
        out += (
            "\t\t(unit 1)\n\t\t(exclude_from_sim no)\n\t\t(in_bom yes)\n\t\t(on_board yes)\n"
            f'\t\t(dnp no)\n\t\t(uuid "{self.uuid(ref)}")\n'
        )
        out += prop("Reference", ref, fields.get("Reference", (0, -2.54, 0, None)), hide=hidden_ref)
        out += prop("Value", value, fields.get("Value", (0, 2.54, 0, None)))
        out += prop("Footprint", footprint, (0, 0, 0, None), hide=True)
        out += prop("Datasheet", "", (0, 0, 0, None), hide=True)
        out += prop("Description", "", (0, 0, 0, None), hide=True)
        for number in sorted(pins, key=lambda n: (len(n), n)):
            out += f'\t\t(pin "{number}"\n\t\t\t(uuid "{self.uuid(ref + "/" + number)}")\n\t\t)\n'
        out += (
            f'\t\t(instances\n\t\t\t(project "{self.name}"\n\t\t\t\t(path "/{self.root_uuid}"\n'
            f'\t\t\t\t\t(reference "{ref}")\n\t\t\t\t\t(unit 1)\n\t\t\t\t)\n\t\t\t)\n\t\t)\n\t)\n'
        )
        self.items.append(out)
        return part

    def wire(self, *points):
        for a, b in zip(points, points[1:]):
            self.items.append(
                f"\t(wire\n\t\t(pts\n\t\t\t(xy {fmt(a[0])} {fmt(a[1])}) (xy {fmt(b[0])} {fmt(b[1])})\n\t\t)\n"
                f'\t\t(stroke\n\t\t\t(width 0)\n\t\t\t(type default)\n\t\t)\n\t\t(uuid "{self.uuid()}")\n\t)\n'
            )

    def label(self, text, at, angle=0, size=1.27):
        """angle 0: the text runs right of at; 180: left of it; 90: up."""
        justify = "right bottom" if angle in (180, 270) else "left bottom"
        shown = angle
        self.items.append(
            f'\t(label "{text}"\n\t\t(at {fmt(at[0])} {fmt(at[1])} {shown})\n\t\t(effects\n\t\t\t(font\n'
            f"\t\t\t\t(size {size} {size})\n\t\t\t)\n\t\t\t(justify {justify})\n\t\t)\n"
            f'\t\t(uuid "{self.uuid()}")\n\t)\n'
        )

    def no_connect(self, at):
        self.items.append(
            f'\t(no_connect\n\t\t(at {fmt(at[0])} {fmt(at[1])})\n\t\t(uuid "{self.uuid()}")\n\t)\n'
        )

    def junction(self, at):
        self.items.append(
            f"\t(junction\n\t\t(at {fmt(at[0])} {fmt(at[1])})\n\t\t(diameter 0)\n\t\t(color 0 0 0 0)\n"
            f'\t\t(uuid "{self.uuid()}")\n\t)\n'
        )

    def text(self, body, at, size=1.27, bold=False):
        body = body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        b = "\n\t\t\t\t(bold yes)" if bold else ""
        self.items.append(
            f'\t(text "{body}"\n\t\t(exclude_from_sim no)\n\t\t(at {fmt(at[0])} {fmt(at[1])} 0)\n'
            f"\t\t(effects\n\t\t\t(font\n\t\t\t\t(size {size} {size}){b}\n\t\t\t)\n"
            f'\t\t\t(justify left top)\n\t\t)\n\t\t(uuid "{self.uuid()}")\n\t)\n'
        )

    def write(self, folder):
        folder.mkdir(parents=True, exist_ok=True)
        libs = ""
        for lib_id in self.used:
            block, _ = self.lib.get(lib_id)
            libs += "\t\t" + block.replace("\n", "\n\t") + "\n"
        comments = "".join(f'\t\t(comment {i + 1} "{c}")\n' for i, c in enumerate(self.comments))
        text = (
            f'(kicad_sch\n\t(version 20250114)\n\t(generator "eeschema")\n\t(generator_version "9.0")\n'
            f'\t(uuid "{self.root_uuid}")\n\t(paper "{self.paper}")\n'
            f'\t(title_block\n\t\t(title "{self.title}")\n\t\t(rev "{REVISION}")\n'
            f'\t\t(company "{COMPANY}")\n{comments}\t)\n'
            f"\t(lib_symbols\n{libs}\t)\n" + "".join(self.items) +
            '\t(sheet_instances\n\t\t(path "/"\n\t\t\t(page "1")\n\t\t)\n\t)\n\t(embedded_fonts no)\n)\n'
        )
        (folder / f"{self.name}.kicad_sch").write_text(text)
        project = {
            "meta": {"filename": f"{self.name}.kicad_pro", "version": 3},
            "schematic": {"drawing": {"default_line_thickness": 6.0}, "legacy_lib_dir": "", "legacy_lib_list": []},
            "sheets": [[self.root_uuid, "Root"]],
            "text_variables": {},
        }
        (folder / f"{self.name}.kicad_pro").write_text(json.dumps(project, indent=2) + "\n")


RFIELDS = {"Reference": (0, -2.54, 90, None), "Value": (0, 2.54, 90, None)}
FLAG_FIELDS = {"Reference": (0, 2.54, 0, None), "Value": (0, -3.81, 0, None)}


def flagged(s, flags, p, end, branch):
    """The supplies come from connectors, so a PWR_FLAG tells ERC who drives each."""
    mid = ((p[0] + end[0]) / 2, (p[1] + end[1]) / 2)
    s.wire(p, mid)
    s.wire(mid, end)
    s.wire(mid, branch)
    s.junction(mid)
    s.symbol("power:PWR_FLAG", f"#FLG0{len(flags) + 1}", "PWR_FLAG", branch[0], branch[1],
             fields=FLAG_FIELDS)
    flags.append(branch)


def series(s, ref, at):
    """A 330 ohm series resistor, horizontal; its two ends, left first."""
    part = s.symbol("Device:R", ref, "330", at[0], at[1], rot=90, fields=RFIELDS)
    a, b = sorted([s.pin(part, 1), s.pin(part, 2)])
    return a, b


def series_resistors(s, out, inp, trig, rx):
    """R1, R2 and R3 in series with STIM, RESP and TRIG (a 3.3 V board, no translator), each
    wired from its pin; returns the resistors' two ends each, in the order R1, R2, R3."""
    r1 = series(s, "R1", (rx, out[1]))
    r3 = series(s, "R3", (rx, trig[1]))
    r2 = series(s, "R2", (rx, inp[1]))
    s.wire(out, r1[0])
    s.wire(inp, r2[0])
    s.wire(trig, r3[0])
    return r1, r2, r3


def translators(s, out, inp, trig, rx):
    """U1-U3 (SN74LVC1T45) between the logger's 3.3 V lines and R1-R3, with their supplies and
    decoupling. U1 and U3 send stimulus and trigger A -> B (DIR high); U2 brings the response
    back B -> A (DIR low). Returns R1's, R2's and R3's ends."""
    sym = "Logic_LevelTranslator:SN74LVC1T45DBV"
    ufields = {"Reference": (5.08, -11.43, 0, "left"), "Value": (3.81, 10.16, 0, "left")}
    u1 = s.symbol(sym, "U1", "SN74LVC1T45", 116.84, 50.8, fields=ufields)
    u3 = s.symbol(sym, "U3", "SN74LVC1T45", 116.84, trig[1], fields=ufields)
    u2 = s.symbol(sym, "U2", "SN74LVC1T45", 116.84, 142.24, fields=ufields)
    r1 = series(s, "R1", (rx, 50.8))
    r3 = series(s, "R3", (rx, trig[1]))
    r2 = series(s, "R2", (rx, 142.24))
    s.wire(out, (93.98, out[1]), (93.98, s.pin(u1, 3)[1]), s.pin(u1, 3))
    u2a = s.pin(u2, 3)
    s.wire(inp, (99.06, inp[1]), (99.06, u2a[1]), u2a)
    s.wire(trig, s.pin(u3, 3))
    for u, r_end, net in ((u1, r1[0], "STIM_VIO"), (u3, r3[0], "TRIG_VIO")):
        s.wire(s.pin(u, 4), r_end)
        s.label(net, s.pin(u, 4))
    s.wire(r2[0], s.pin(u2, 4))
    s.label("RESP_VIO", r2[0], 180)

    def supply(u, dir_net, note):
        vcca, vccb, gnd, direction = s.pin(u, 1), s.pin(u, 6), s.pin(u, 2), s.pin(u, 5)
        for p, net in ((vcca, "+3V3"), (vccb, "VIO")):
            s.wire(p, (p[0], p[1] - 5.08))
            s.label(net, (p[0], p[1] - 5.08), 90)
        s.wire(gnd, (gnd[0], gnd[1] + 2.54))
        s.label("GND", (gnd[0], gnd[1] + 2.54), 180)
        s.wire(direction, (direction[0] - 5.08, direction[1]))
        s.label(dir_net, (direction[0] - 5.08, direction[1]), 180)
        s.text(note, (u["x"] + 3.81, u["y"] + 13.97))

    supply(u1, "+3V3", "DIR high: A -> B")
    supply(u3, "+3V3", "DIR high: A -> B")
    supply(u2, "GND", "DIR low: B -> A")

    # One 100 nF per supply pin, placed at the pins on a board; drawn here in a row.
    s.text("Decoupling: one 100 nF per translator supply pin, close to the pin", (22.86, 160.02))
    cfields = {"Reference": (2.54, -1.27, 0, "left"), "Value": (2.54, 1.27, 0, "left")}
    for i, net in enumerate(("+3V3", "VIO") * 3):
        cap = s.symbol("Device:C", f"C{i + 1}", "100n", 27.94 + 15.24 * i, 175.26, fields=cfields)
        a, b = s.pin(cap, 1), s.pin(cap, 2)
        s.wire(a, (a[0], a[1] - 2.54))
        s.label(net, (a[0], a[1] - 2.54), 180)
        s.wire(b, (b[0], b[1] + 2.54))
        s.label("GND", (b[0], b[1] + 2.54), 180)
    return r1, r2, r3


def logger_side_labels(s, out, inp, trig, r1b, r2b, r3b):
    """The 3.3 V nets at the logger's pins, and STIM/RESP/TRIG past the series resistors."""
    s.label("STIM_3V3", out)
    s.label("RESP_3V3", inp)
    s.label("TRIG_3V3", trig)
    for end, net in ((r1b, "STIM"), (r2b, "RESP"), (r3b, "TRIG")):
        s.wire(end, (end[0] + 12.7, end[1]))
        s.label(net, (end[0] + 12.7, end[1]), 180)


def pi_ground_and_unused(s, flags, lib, pi):
    """The Pi's GND (pin 9, stacked with the other grounds) and a no-connect on every pin
    the sheet does not wire (5V on pin 2 included)."""
    g = s.pin(pi, 9)
    flagged(s, flags, g, (g[0], g[1] + 5.08), (g[0] + 5.08, g[1] + 2.54))
    s.label("GND", (g[0], g[1] + 5.08), 180)
    s.no_connect(s.pin(pi, 2))
    wired = {"1", "17", "2", "4", "11", "13", "15"} | {str(n) for n in (6, 9, 14, 20, 25, 30, 34, 39)}
    for number in lib.get("Connector:Raspberry_Pi_2_3")[1]:
        if number not in wired:
            s.no_connect(s.pin(pi, number))


def target_header(s, flags, shifted):
    """The target's GPIO header J2 (VIO, STIM, RESP, TRIG, GND), each pin to its net label; VIO
    is flagged where level shifters take it (@p shifted), otherwise left open."""
    # TRIG is an input there too (the kernel responder's trigger=, which calls tracing_off());
    # a scope may clip onto it as well.
    tgt = s.symbol("Connector_Generic:Conn_01x05", "J2", "TARGET GPIO", 226.06, 91.44,
                   fields={"Reference": (1.27, -7.62, 0, None), "Value": (1.27, 10.16, 0, None)})
    for n, net in {1: "VIO", 2: "STIM", 3: "RESP", 4: "TRIG", 5: "GND"}.items():
        p = s.pin(tgt, n)
        if net == "VIO" and not shifted:
            s.no_connect(p)
            continue
        if net == "VIO":
            flagged(s, flags, p, (p[0] - 7.62, p[1]), (p[0] - 3.81, p[1] - 5.08))
        else:
            s.wire(p, (p[0] - 7.62, p[1]))
        s.label(net, (p[0] - 7.62, p[1]), 0)


def target_header_text(s, shifted):
    """The note naming J2's pins, under it."""
    vio = ("1 VIO: the target's GPIO supply (1.8, 3.3 or 5 V), feeds U1-U3's B side\n" if shifted
           else "1 VIO: not used (the target's GPIO runs at 3.3 V)\n")
    s.text("TARGET header J2\n" + vio +
           "2 STIM: a GPIO input with an edge IRQ (the responder waits on it)\n"
           "3 RESP: a GPIO output (the responder toggles it)\n"
           "4 TRIG: optional GPIO input (kernel responder trigger=: tracing_off())\n5 GND",
           (177.8, 124.46), 1.524)


def parport(lib):
    s = sheet("parport", "irqloop parport: lpptest crossed cable", lib, backend="parport", notes=(
        "Logger D3 (pin 5) -> target nACK (pin 10); target D3 (pin 5) -> logger nACK (pin 10)",
        "Grounds: pins 18-25 to 18-25. The cable is symmetric: either plug may go to either PC."))
    db25 = "Connector:DB25_Pins"
    logger = s.symbol(db25, "J1", "DB25 plug: LOGGER LPT", 76.2, 93.98, mirror="y",
                      fields={"Reference": (0, -35.56, 0, None), "Value": (0, 35.56, 0, None)})
    target = s.symbol(db25, "J2", "DB25 plug: TARGET LPT", 210.82, 93.98,
                      fields={"Reference": (0, -35.56, 0, None), "Value": (0, 35.56, 0, None)})
    grounds = range(18, 26)
    used = {5, 10, *grounds}

    # The crossing itself: each D3 goes to the far nACK. Diagonals cross without joining.
    l5, l10 = s.pin(logger, 5), s.pin(logger, 10)
    t5, t10 = s.pin(target, 5), s.pin(target, 10)
    left, right = l5[0] + 25.4, t5[0] - 25.4
    s.wire(l5, (left, l5[1]), (right, t10[1]), t10)
    s.wire(t5, (right, t5[1]), (left, l10[1]), l10)
    s.label("STIM", l5)
    s.label("STIM", t10, 180)
    s.label("RESP", t5, 180)
    s.label("RESP", l10)
    for n in grounds:
        a, b = s.pin(logger, n), s.pin(target, n)
        s.wire(a, (a[0] + 7.62, a[1]))
        s.label("GND", (a[0] + 7.62, a[1]))
        s.wire(b, (b[0] - 7.62, b[1]))
        s.label("GND", (b[0] - 7.62, b[1]), 180)
    for n in range(1, 26):
        if n not in used:
            s.no_connect(s.pin(logger, n))
            s.no_connect(s.pin(target, n))

    s.text("LOGGER\nD3 (pin 5): stimulus out\nnACK (pin 10): response in\n"
           "irqloop run --hw parport:base=0x378,out=D3,in=nACK", (22.86, 33.02), 1.524)
    s.text("TARGET\nnACK (pin 10): stimulus in, the port's IRQ\nD3 (pin 5): response out\n"
           "the responder toggles D3 on each nACK interrupt\n(the kernel responder: the whole data byte)", (177.8, 33.02), 1.524)
    s.text("STIM: logger D3 -> target nACK\nRESP: target D3 -> logger nACK", (121.92, 110.49), 1.524)
    s.text("Notes\n"
           "1. nACK is status bit 6 (0x40) and is not inverted; the port raises its IRQ on nACK\n"
           "   only while control bit 4 (IRQ enable) is set on the receiving port.\n"
           "2. Pins 18-25 are all ground: wire all eight, ideally twisted with pins 5 and 10.\n"
           "3. Keep the cable under about 2 m: the port's TTL drivers are weak and edges slow down.\n"
           "4. Unused pins (1-4, 6-9, 11-17) stay unconnected.",
           (22.86, 140.97), 1.524)
    s.write(HERE / "parport")


def gpiod(lib, shifted):
    """shifted: the target's GPIO runs at its own VIO, so U1-U3 translate; else a 3.3 V target."""
    name = "gpiod" if shifted else "gpiod-3v3"
    what = "level-shifted target (1.8 V / 5 V)" if shifted else "3.3 V target"
    s = sheet(name, f"irqloop gpiod: Pi logger, {what}", lib, backend="gpiod", notes=(
        "GPIO17 (pin 11) stimulus out, GPIO27 (13) response in, GPIO22 (15) trace trigger, GND 9",
        ("U1-U3: 3.3 V <-> the target's VIO (1.65-5.5 V); 3.3 V targets: gpiod-3v3.kicad_sch"
         if shifted else "For a 1.8 V or 5 V target use gpiod.kicad_sch (level shifters U1-U3)")))
    pi = s.symbol("Connector:Raspberry_Pi_2_3", "J1", "Raspberry Pi 40-pin header: LOGGER", 55.88, 91.44,
                  mirror="y", fields={"Reference": (12.7, -34.29, 0, "left"), "Value": (0, 41.91, 0, None)})
    out, trig, inp = s.pin(pi, 11), s.pin(pi, 15), s.pin(pi, 13)
    flags = []

    rx = 149.86
    if shifted:
        (r1a, r1b), (r2a, r2b), (r3a, r3b) = translators(s, out, inp, trig, rx)
    else:
        (r1a, r1b), (r2a, r2b), (r3a, r3b) = series_resistors(s, out, inp, trig, rx)
    logger_side_labels(s, out, inp, trig, r1b, r2b, r3b)

    # Pi power: 3V3 (pins 1, 17) feeds VCCA; GND (pin 9, stacked with the other grounds).
    v3 = s.pin(pi, 1)
    if shifted:
        flagged(s, flags, v3, (v3[0], v3[1] - 7.62), (v3[0] - 7.62, v3[1] - 3.81))
        s.label("+3V3", (v3[0], v3[1] - 7.62), 90)
    else:
        s.no_connect(v3)
    pi_ground_and_unused(s, flags, lib, pi)

    # The far end: the target's header.
    target_header(s, flags, shifted)

    big = 1.524
    s.text("LOGGER: irqloop run --hw gpiod:chip=gpiochip0,out=17,in=27", (22.86, 25.4), big)
    target_header_text(s, shifted)
    s.text("R1-R3 (330): limit the current when both ends drive a line or one\n"
           "board is unpowered, and damp ringing. R1 and R3 sit at their driving\n"
           "end; on a long cable, move R2 to the target's end.", (177.8, 149.86), big)
    s.write(HERE / "gpiod")


def ftdi(lib):
    """An FT232H breakout (MPSSE) to a target at any GPIO voltage, through U1-U3."""
    s = sheet("ftdi", "irqloop ftdi: FT232H breakout logger, level-shifted target", lib,
              backend="ftdi", notes=(
        "ADBUS4 (J1.5) stimulus out, ADBUS2 (J1.3, MPSSE data in) response in, ADBUS5 (J1.6) trigger",
        "U1-U3: 3.3 V <-> the target's VIO (1.65-5.5 V); 3.3 V targets may skip them"))
    ft = s.symbol("Connector_Generic:Conn_01x10", "J1", "FT232H breakout: LOGGER (ADBUS0-7, GND, 3V3)",
                  55.88, 91.44, mirror="y",
                  fields={"Reference": (0, -13.97, 0, None), "Value": (0, 16.51, 0, None)})
    out, trig, inp = s.pin(ft, 5), s.pin(ft, 6), s.pin(ft, 3)
    flags = []

    rx = 149.86
    (r1a, r1b), (r2a, r2b), (r3a, r3b) = translators(s, out, inp, trig, rx)
    logger_side_labels(s, out, inp, trig, r1b, r2b, r3b)

    # Breakout power: 3V3 (J1.10, from the board's regulator) feeds VCCA; GND (J1.9).
    v3 = s.pin(ft, 10)
    flagged(s, flags, v3, (v3[0] + 7.62, v3[1]), (v3[0] + 3.81, v3[1] + 5.08))
    s.label("+3V3", (v3[0] + 7.62, v3[1]), 0)
    g = s.pin(ft, 9)
    s.wire(g, (g[0] + 12.7, g[1]))
    s.label("GND", (g[0] + 12.7, g[1]), 0)
    g_end = (g[0] + 12.7, g[1])
    s.symbol("power:PWR_FLAG", "#FLG02", "PWR_FLAG", g_end[0], g_end[1] - 0.0,
             fields={"Reference": (0, 2.54, 0, None), "Value": (0, -3.81, 0, None)})
    flags.append(g_end)
    for n in (1, 2, 4, 7, 8):
        s.no_connect(s.pin(ft, n))

    target_header(s, flags, True)

    big = 1.524
    s.text("LOGGER: irqloop run --hw ftdi:desc=i:0x0403:0x6014,out=ADBUS4,in=ADBUS2,trigger=ADBUS5",
           (22.86, 25.4), big)
    s.text("J1: the breakout's ADBUS header (labels vary: D0-D7 on Adafruit's, AD0-AD7 on others)\n"
           "1 ADBUS0 TCK: leave open (clocked in every window)  2 ADBUS1: open\n"
           "3 ADBUS2 DI: RESP (the only pin the MPSSE samples)  4 ADBUS3: open\n"
           "5 ADBUS4 GPIOL0: STIM  6 ADBUS5 GPIOL1: TRIG  7-8 ADBUS6-7: open  9 GND  10 3V3",
           (22.86, 124.46), 1.27)
    target_header_text(s, True)
    s.text("3.3 V target: U1-U3 may be left out (A straight to B); keep R1-R3.\n"
           "R1-R3 (330): limit the current when both ends drive a line or one\n"
           "board is unpowered, and damp ringing.", (177.8, 149.86), big)
    s.write(HERE / "ftdi")


def analyzer(lib):
    """The gpiod 3.3 V wiring with a logic analyzer clipped on beside it (irqloop verify): D0 on
    STIM at the target's input, D1 on RESP at the logger's input, its ground on the logger's."""
    s = sheet("analyzer", "irqloop verify: a logic analyzer clipped onto the logger's wiring", lib,
              notes=(
        "Analyzer J3: D0 on STIM at the target's input, D1 on RESP at the logger's input",
        "GND (J3.9) on the logger's ground; the logger's wiring as gpiod-3v3.kicad_sch",
        "Defaults: hw/gpiod/gpiod-defaults.hpp; pin table: schematics/analyzer/pins.csv"))
    pi = s.symbol("Connector:Raspberry_Pi_2_3", "J1", "Raspberry Pi 40-pin header: LOGGER", 55.88, 91.44,
                  mirror="y", fields={"Reference": (12.7, -34.29, 0, "left"), "Value": (0, 41.91, 0, None)})
    out, trig, inp = s.pin(pi, 11), s.pin(pi, 15), s.pin(pi, 13)
    flags = []
    rx = 149.86
    (r1a, r1b), (r2a, r2b), (r3a, r3b) = series_resistors(s, out, inp, trig, rx)
    logger_side_labels(s, out, inp, trig, r1b, r2b, r3b)
    s.no_connect(s.pin(pi, 1))
    pi_ground_and_unused(s, flags, lib, pi)
    target_header(s, flags, False)

    # The analyzer's header: D0-D7 on pins 1-8, GND on 9, pin 10 unused; each clip to its net.
    la = s.symbol("Connector_Generic:Conn_01x10", "J3", "LOGIC ANALYZER (fx2lafw)", 129.54, 152.4,
                  fields={"Reference": (1.27, -13.97, 0, None), "Value": (1.27, 15.24, 0, None)})
    for n, net in {1: "STIM", 2: "RESP_3V3", 9: "GND"}.items():
        p = s.pin(la, n)
        s.wire(p, (p[0] - 7.62, p[1]))
        s.label(net, (p[0] - 7.62, p[1]), 180)
    for n in (3, 4, 5, 6, 7, 8, 10):
        s.no_connect(s.pin(la, n))

    big = 1.524
    s.text("LOGGER: irqloop run --hw gpiod:chip=gpiochip0,out=17,in=27 --raw", (22.86, 25.4), big)
    target_header_text(s, False)
    s.text("LOGIC ANALYZER J3 (sheet numbering; clones label D0-D7 CH0-CH7 or CH1-CH8)\n"
           "1 D0: STIM, clipped at the target's input pin (J2.2)\n"
           "2 D1: RESP, clipped at the logger's input pin (J1.13)\n"
           "9 GND: the logger's ground (J1.9); 3-8 D2-D7 and 10: open\n"
           "sigrok-cli --driver fx2lafw --config samplerate=24m\n"
           "  --channels D0=STIM,D1=RESP --time 30s -o capture.sr\n"
           "irqloop verify --db lab.db --last --capture capture.sr",
           (22.86, 142.24), 1.27)
    s.text("R1-R3 (330): limit the current when both ends drive a line or one\n"
           "board is unpowered, and damp ringing. R1 and R3 sit at their driving\n"
           "end; on a long cable, move R2 to the target's end.", (177.8, 149.86), big)
    s.write(HERE / "analyzer")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--symbols", default="/usr/share/kicad/symbols", help="KiCad symbol library folder")
    args = ap.parse_args()
    lib = library(args.symbols)
    parport(lib)
    gpiod(lib, shifted=True)
    gpiod(lib, shifted=False)
    ftdi(lib)
    analyzer(lib)


if __name__ == "__main__":
    main()
