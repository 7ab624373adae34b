#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run the shell examples of README.md and docs/ against the tools just built.

The rules, for whoever writes docs:
  * An example is a fenced block (``` or ```sh/```console/```bash). In a block, a line that
    starts with "$ " is a command (a trailing backslash continues it); the lines after it, up
    to the next "$ " line, are its pasted output. A ```sh block with no "$ " is one command
    with no pasted output (it must exit 0).
  * A ```sh block without a prompt is set-up: it runs before the document's other examples.
  * The examples of a document run in its order, in one shell and a scratch directory of its
    own (docs/commands/report.md first: it makes demo.db, copied to the others), with the
    build's irqloop and irqloop-responder first on PATH. Blocks marked
    <!-- doc-test: setup --> on the line above the fence run before the others.
    A run longer than about 3 s (samples x --interval, or --duration) is cut to about 3 s; a
    shorter one runs as written, so its output keeps the documented shape.
  * The pasted output is checked for structure, not noise: every pasted line, with numbers,
    times, uuids and column padding normalised, must appear in what the command printed
    (stdout and stderr together). A row of three or more figures depends on the data: it passes
    when the command printed a row of figures with the same columns.
  * A line about the machine the tools ran on is checked by its shape: its key must have been
    printed, in the same form, with any value (the docs were pasted on another machine than
    the one that checks them). Those lines are the preflight results in every form they are
    printed (report's `preflight.X   LEVEL text`, markdown `| preflight.X | LEVEL text |`,
    CSV `preflight.X,LEVEL text`, JSON `"preflight.X": "LEVEL text"`, doctor's `LEVEL  X  text`
    row with the `hint:` lines under it, run's `irqloop: preflight: LEVEL X: text`), and, in
    the table, markdown, CSV and JSON forms, the keys uname, host, hostname, clock (report's
    "tsc at ... MHz"), clock_source, logger.smi_counter and logger.clock_invariant (what the
    MSR device and the TSC allow), and the uname fields of rt-tests-json's sysinfo (sysname,
    nodename, release, machine, and version when it reads "#..."); also a hostname="..."
    attribute (JUnit's testsuite), the rest of its line checked as usual. Every other line,
    figures and wording, is checked as above. An example that reads a fake tree (doctor
    --root, run --preflight-root) has its preflight lines checked in full: the tree, not the
    machine, decides them. run prints only its WARN and FAIL checks: paste there only what
    fails on every machine of the documented kind (a stock Debian 12 as root), or leave the
    lines out.
  * Examples that need hardware are recognised by their --hw spec (gpiod, gpiomem, parport or
    ftdi without sim=) or by their tool (insmod, dkms, dtc, su, gpioset, chmod, ctest, cmake,
    bench programs); mark others on the line above the fence with
        <!-- doc-test: hardware -->   only parsed: irqloop's option names are checked (--help)
        <!-- doc-test: parse REASON --> the same, for what cannot end here (a responder that
                                        runs until stopped)
        <!-- doc-test: skip REASON --> not executed at all (say why)
    A hardware example whose pasted output is a spec refusal (unknown key, bad value) runs for
    real: the refusal comes before any hardware is touched.
  * Synopses (lines with [--option] or <placeholder>) are parsed, never run.
  * What a background job (a responder started with &) prints between two examples counts as
    the next example's output. A document gets --doc-timeout seconds (240); what still runs
    then is ended with the document's process group, as are its jobs when it ends.
--update rewrites the pasted output of every executed example that fails its check with what
the tools print now (tests/docs/regenerate-doc-outputs.sh: at the documented size, --full, up
to 120 s a run; the sim board's models and --jitter are seeded, so only the machine's timing
differs). A run cut shorter than documented, and a pasted output cut on purpose ('...'), are
left to a human: the runner says which.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HW_TOOLS = ("insmod", "rmmod", "modprobe", "dkms", "dtc", "su ", "sudo", "gpioset", "gpioget",
            "chmod", "ctest", "cmake", "apt", "dpkg", "/usr/bin/time", "build/", "irqloop-bench",
            "ssh", "scp", "make", "git ", "lsmod", "cat /sys", "echo 1 >", "ls -l /dev/gpio",
            "bash .ci/", ".ci/", "tests/testbed/", "udevadm", "adduser", "mount", "dmesg",
            "echo dtoverlay", "irqloop-rt-access", "cd build")
SPEC_REFUSAL = re.compile(r"unknown key|bad value|unknown backend|key '")


class Example:
    def __init__(self, doc, line, command, output, fence_marker):
        self.doc, self.line, self.command, self.output = doc, line, command, output
        self.marker = fence_marker
        self.kind = None  # run | hardware | skip | synopsis
        self.actual = ""
        self.status = None
        self.timed_out = None
        self.cut = False  # run shorter than documented


def incomplete(cmd):
    """True while @p cmd continues on the next line: a trailing backslash, or what bash itself
    calls unfinished (an open quote, also one inside $( ), an open case/if/loop/function)."""
    if cmd.endswith("\\"):
        return True
    p = subprocess.run(["bash", "-n", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return re.search(rb"unexpected (EOF|end of file)|here-document .* delimited by end-of-file",
                     p.stderr) is not None


def logical(body):
    """The lines of @p body joined into whole commands (continuations, open quotes, compounds)."""
    out, k = [], 0
    while k < len(body):
        cmd = body[k]
        while incomplete(cmd) and k + 1 < len(body):
            k += 1
            cmd += "\n" + body[k]
        k += 1
        out.append(cmd)
    return out


COMPOUND = re.compile(r"^\s*(case|if|for|while|until|function)\b|\{\s*(#.*)?$|^\s*\}")


def parse(doc_path, rel):
    lines = open(doc_path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang = m.group(2)
        marker = ""
        if i > 0:
            mm = re.match(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$", lines[i - 1])
            if mm:
                marker = mm.group(1)
        start = i + 1
        j = start
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        body = lines[start:j]
        i = j + 1
        if lang not in ("", "sh", "console", "bash", "shell"):
            continue
        prompts = [k for k, l in enumerate(body) if l.startswith("$ ")]
        if not prompts:
            if lang not in ("sh", "bash", "shell") or not any(l.strip() for l in body):
                continue
            if any(COMPOUND.search(l) for l in body):  # a function, case, loop: one example
                out.append(Example(rel, start + 1, "\n".join(body), None, marker))
                continue
            k = 0
            while k < len(body):  # one example a command, continuation lines joined
                first, cmd = k, body[k]
                while incomplete(cmd) and k + 1 < len(body):
                    k += 1
                    cmd += "\n" + body[k]
                k += 1
                if cmd.strip() and not cmd.lstrip().startswith("#"):
                    out.append(Example(rel, start + first + 1, cmd, None, marker))
            continue
        k = prompts[0]
        while k < len(body):
            cmd = body[k][2:]
            first = k
            while incomplete(cmd) and k + 1 < len(body):
                k += 1
                cmd = cmd + "\n" + body[k]
            k += 1
            o = []
            while k < len(body) and not body[k].startswith("$ "):
                o.append(body[k])
                k += 1
            out.append(Example(rel, start + first + 1, cmd, o, marker))
    return out


HW_PATHS = re.compile(r"/sys/|/proc/(ioports|sys/dev)|/dev/(gpio|parport|mem|cpu/)|"
                      r"\blspci\b|\bcd target-responder|\bpinctrl\b|\braspi-gpio\b|\bpinctrl\b")


def needs_hardware(cmd):
    for m in re.finditer(r"--hw[ =]['\"]?([a-z]+):?([^ '\"]*)", cmd):
        backend, keys = m.group(1), m.group(2)
        if backend in ("gpiod", "gpiomem") and "sim=" not in keys:
            return True
        if backend in ("parport", "ftdi") and "sim=" not in keys:
            return True
    if re.search(r"(^|[;&|]\s*|\n)\s*(" + "|".join(re.escape(t) for t in HW_TOOLS) + ")", cmd):
        return True
    return bool(HW_PATHS.search(cmd))


def files_written(cmd):
    """The files a command writes that later examples read (--db, -o, > redirections)."""
    return set(re.findall(r"(?:--db|-o|--output|>)[ =]?['\"]?([\w./-]+\.(?:db|csv|json|xml|prom|log|svg|png))",
                          cmd))


def classify(e, hw_files):
    mentions_hw_file = any(re.search(r"(^|[\s'\"=/])" + re.escape(f) + r"\b", e.command)
                           for f in hw_files)
    if e.marker.startswith("skip"):
        e.kind = "skip"
    elif re.search(r"\[--|<[A-Za-z][^>]*>|\.\.\.", e.command):
        e.kind = "synopsis"
    elif (e.marker.startswith("hardware") or e.marker.startswith("parse") or
          needs_hardware(e.command) or mentions_hw_file):
        refusal = e.output and any(SPEC_REFUSAL.search(l) for l in e.output)
        e.kind = "refusal" if refusal else "hardware"
        if e.kind == "hardware":
            hw_files |= files_written(e.command)  # what reads them needs the hardware too
    else:
        e.kind = "run"


IRQLOOP_CMD = re.compile(r"\s*irqloop(-responder)?\s")


def parsed_only(e):
    """A hardware example with an irqloop command in it: those commands' options are parsed."""
    return any(IRQLOOP_CMD.match(c) for c in logical(e.command.split("\n")))


MAX_RUN_S = 3.0  # a run example is cut to about this long (samples x interval, or duration)
FULL_MAX_RUN_S = 120.0  # --full: the documented size, up to this (README's 8 h soak is cut)


def seconds(text):
    m = re.match(r"^(\d+(?:\.\d+)?)(ns|us|ms|s|m|h|d)?$", text)
    if not m:
        return None
    mult = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1e-9}
    return float(m.group(1)) * mult[m.group(2)]


def shorten(cmd, max_s=MAX_RUN_S):
    """Cut long runs to about MAX_RUN_S: a sample count to what fits at the example's own
    --interval (100us when not given), a duration to MAX_RUN_S. Shorter runs are left alone,
    so that their output keeps the documented shape (windows, timeline rows)."""
    out = []
    for line in cmd.split("\n"):
        iv = re.search(r"(?:--interval|-i)[ =](\S+)", line)
        interval = seconds(iv.group(1)) if iv else 100e-6
        interval = max(interval or 100e-6, 1e-6)

        def cap_count(m):
            n = m.group(2)
            mult = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}.get(n[-1:], 1)
            v = float(n.rstrip("kKMG")) * mult
            most = max(1000, int(max_s / interval))
            return m.group(1) + (n if v <= most else str(most))

        line = re.sub(r"((?:--samples|-n)[ =])(\d+(?:\.\d+)?[kKMG]?)(?=\s|$|[;'\"])", cap_count, line)

        def cap_dur(m):
            secs = seconds(m.group(2))
            return m.group(1) + (m.group(2) if secs is None or secs <= max_s else "%gs" % max_s)

        line = re.sub(r"((?:--duration|-D)[ =])(\d+(?:\.\d+)?(?:ns|us|ms|s|m|h|d)?)(?=\s|$|[;'\"])", cap_dur, line)
        out.append(line)
    return "\n".join(out)


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\d([ T]\d\d:\d\d(:\d\d(\.\d+)?)?Z?)?|\d\d:\d\d:\d\d(\.\d+)?")
NUM = re.compile(r"[-+]?(0x[0-9a-fA-F]+|\d+(\.\d+)?([eE][-+]?\d+)?)")


# Lines about the machine the tools ran on (the rules above): their value is replaced by
# <host>, so that only the key and the form of the line are compared.
HOST_KEY = (r"uname|host|hostname|clock|clock_source|logger\.smi_counter|logger\.clock_invariant|"
            r"sysname|nodename|release|machine")
PREFLIGHT_KEY = r"preflight\.[\w.]+"
LEVEL = r"(?:OK|WARN|FAIL|SKIP)"
CHECK = r"[\w]+\.[\w.]+"  # a preflight check's name: clock.source, sched.rt_throttling


def host_shape(line, fake_root=False):
    """@p line with the value of a line about the host replaced by <host>, or None when it is
    not one. With @p fake_root (the example reads a fake tree) the preflight forms are not
    host lines: the tree decides them."""
    s = line.replace("\r", "").rstrip()
    keys = HOST_KEY if fake_root else HOST_KEY + "|" + PREFLIGHT_KEY
    m = re.match(r"^(\s*(?:%s)\s{2,})\S.*$" % keys, s)  # a text table's row
    if m:
        return m.group(1) + "<host>"
    m = re.match(r"^(\s*\|\s*(?:%s)\s*\|)[^|]*\|$" % keys, s)  # a markdown row
    if m:
        return m.group(1) + " <host> |"
    m = re.match(r"^(\s*(?:%s),)\S.*$" % keys, s)  # a CSV row
    if m:
        return m.group(1) + "<host>"
    m = (re.match(r'^(\s*"(?:%s)":\s*)"(?:[^"\\]|\\.)*"(,?)$' % keys, s) or  # a JSON member
         re.match(r'^(\s*"version":\s*)"#(?:[^"\\]|\\.)*"(,?)$', s))  # sysinfo's uname -v
    if m:
        return m.group(1) + '"<host>"' + m.group(2)
    if not fake_root:
        m = re.match(r"^%s\s{2,}(%s)\s{2,}\S.*$" % (LEVEL, CHECK), s)  # doctor's row
        if m:
            return "<level>  %s  <host>" % m.group(1)
        m = re.match(r"^(\S+: preflight: )%s (%s): .*$" % (LEVEL, CHECK), s)  # run's stderr
        if m:
            return "%s<level> %s: <host>" % (m.group(1), m.group(2))
    if re.search(r'\bhostname="[^"]*"', s):  # JUnit's testsuite: the rest is checked
        return re.sub(r'\bhostname="[^"]*"', 'hostname="<host>"', s)
    return None


DOCTOR_HINT = re.compile(r"^\s+hint: ")


def reads_fake_tree(cmd):
    return re.search(r"--(?:preflight-)?root[ =]", cmd) is not None


def normalise(line, fake_root=False):
    s = host_shape(line, fake_root) or line
    s = s.replace("\r", "").rstrip()
    s = re.sub(r"/tmp/[^\s'\"]*", "<path>", s)
    # " (bracket 47.129)" follows a max that a disturbed sample holds: the data's, not the format's
    s = re.sub(r" \(bracket [^()]*\)", "", s)
    s = UUID.sub("<uuid>", s)
    s = TIME.sub("<time>", s)
    s = NUM.sub("N", s)
    s = re.sub(r"N[kMG]?(?=\b|/)", "N", s)  # 195.2k samples
    s = re.sub(r"([#*=█▏▎▍▌▋▊▉])\1+", r"\1", s)  # histogram bars
    s = re.sub(r"-{2,}", "--", s)  # table rules
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"N( N)+", "N", s)
    return s


def run_doc(examples, work, env, timeout, full=False):
    # One shell per document, so that cd, files and background jobs carry from one example to
    # the next. Each example is a function defined through eval: a syntax error in one is that
    # example's failure, and `exit` in an example ends the example, not the document.
    script = ["exec 2>&1", "cd " + shlex.quote(work), "exit() { return \"${1:-0}\"; }"]
    # Blocks marked <!-- doc-test: setup --> run first (they make the files the others read);
    # the rest in the document's order.
    order = [n for n, e in enumerate(examples) if e.marker.startswith("setup")]
    order += [n for n, e in enumerate(examples) if not e.marker.startswith("setup")]
    for n in order:
        e = examples[n]
        if e.kind == "run" or e.kind == "refusal":
            body = shorten(e.command, FULL_MAX_RUN_S if full else MAX_RUN_S)
            e.cut = body != e.command
        elif e.kind == "hardware" and parsed_only(e):
            # Parsed only: the option names, through the program's own parser.
            cmds = [re.sub(r"\s*&\s*$", "", re.sub(r"\s+#.*$", "", c, flags=re.M))
                    for c in logical(e.command.split("\n")) if IRQLOOP_CMD.match(c)]
            body = "\n".join(c + " --help >/dev/null || return" for c in cmds)
        else:
            continue
        script.append("printf '\\n@@DOCTEST BEGIN %d@@\\n'" % n)
        script.append("__body=$(cat <<'@@DOCTEST_EOF@@'\n%s\n@@DOCTEST_EOF@@\n)" % body)
        script.append('if eval "__ex() {\n$__body\n}"; then __ex </dev/null; __s=$?; else __s=2; fi')
        script.append("printf '\\n@@DOCTEST END %d %%d@@\\n' $__s" % n)
        if body.rstrip().endswith("&"):
            script.append("sleep 0.5")  # a background responder: let it map the segment
    # Background jobs (a responder) end with the document.
    script.append("kill $(jobs -p) 2>/dev/null; wait")
    # The document's shell leads a process group of its own: whatever it leaves behind (a
    # responder that never ends, a job started in a subshell) ends with it, also on a timeout.
    p = subprocess.Popen(["bash", "-c", "\n".join(script)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = False
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        end_group(p.pid, signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            end_group(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
    end_group(p.pid, signal.SIGKILL)
    text = out.decode("utf-8", "replace")
    cur = None
    buf = {}
    between = []  # printed between two examples: a background job's (a responder's banner)
    for line in text.split("\n"):
        m = re.match(r"^@@DOCTEST (BEGIN|END) (\d+)(?: (\d+))?@@$", line)
        if m:
            n = int(m.group(2))
            if m.group(1) == "BEGIN":
                cur = n
                buf[n] = [l for l in between if l.strip()]  # the next example's, as a reader sees it
                between = []
            else:
                examples[n].status = int(m.group(3))
                cur = None
            continue
        if cur is not None:
            buf[cur].append(line)
        else:
            between.append(line)
    for n, b in buf.items():
        examples[n].actual = "\n".join(b).strip("\n")
    if timed_out and cur is not None:
        examples[cur].status = None
        examples[cur].timed_out = timeout
    return text


def remove(paths):
    for f in paths:
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass


def end_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def is_data_row(line):
    """At least three figures: numbers, and the times a row of the data carries (an events
    row 'lost  1  1  FIRST  LAST' is there only when the run had a lost answer)."""
    if line.lstrip().startswith("irqloop: "):
        return False  # a message, not a row: its words are checked, whatever its figures
    figures = len(TIME.findall(line)) + len(NUM.findall(UUID.sub("", TIME.sub("", line))))
    return figures >= 3


def columns(line):
    """The shape of a table row: its separator and number of cells."""
    t = line.strip()
    if t.startswith("|"):
        return ("|", t.count("|"))
    if "," in t and "  " not in t:
        return (",", len(t.split(",")))
    cells = re.split(r"\s{2,}", t)
    while len(cells) > 1 and not re.search(r"\d", cells[-1]):
        cells.pop()  # trailing words (a sample's flags, a row's marks) are data too, or absent
    return (" ", len(cells))


def gate_line(n):
    """A normalised gate line without its note: check's "gate max N us limit N us FAIL (note)",
    or the stored "gate.max_us|N N fail note" (run_metadata)."""
    m = re.match(r"^(gate .*\b(?:PASS|FAIL))(?:\s*\(.*\))?$", n) or \
        re.match(r"^(gate\.\S*\|N (?:pass|fail))(?:\s.*)?$", n)
    return m.group(1) if m else None


def check(e, doc_text):
    problems = []
    if e.timed_out:
        return ["still running after the document's %d s: ended (a command that runs until "
                "stopped? mark it <!-- doc-test: parse REASON -->)" % e.timed_out]
    if e.status is None:
        return ["did not run (the document timed out, or its shell exited, before it)"]
    if e.kind == "hardware":
        return [] if e.status == 0 else ["options refused: " + e.actual[-300:]]
    fake_root = reads_fake_tree(e.command)
    actual = {normalise(l, fake_root) for l in e.actual.split("\n")}
    everywhere = {normalise(l, fake_root) for l in doc_text.split("\n")}
    if e.output is None or not any(l.strip() for l in e.output):
        if e.status != 0 and not e.command.rstrip().endswith("&"):
            problems.append("exit status %d with no refusal documented: %s" % (e.status,
                                                                                e.actual[-300:]))
        return problems
    printed_rows = {columns(l) for l in e.actual.split("\n") if is_data_row(l)}
    under_host_row = False  # the pasted line before was a doctor row about the host
    for l in e.output:
        st = re.match(r"^\s*\(exit status (\d+)\)\s*$", l)
        if st:  # "(exit status 2)" under a refusal: the status is checked
            if int(st.group(1)) != e.status:
                problems.append("exit status %d, the doc says %s" % (e.status, st.group(1)))
            continue
        # A doctor row's hint lines are printed only for its level on that machine: part of
        # the row's value.
        if under_host_row and DOCTOR_HINT.match(l):
            continue
        shape = host_shape(l, fake_root)
        under_host_row = shape is not None and shape.startswith("<level>")
        n = normalise(l, fake_root)
        if not n or n in ("...", "…"):
            continue
        if n in actual or n in everywhere:
            continue
        if shape is not None:  # a line about the host: its key, not its value
            problems.append("pasted line about the host, its key not printed in that form: %r"
                            % l.strip())
            continue
        # A gate line's trailing note depends on the data (a disturbed sample's bracket, the
        # count of disturbed samples left out): the line passes when the rest was printed.
        bare = gate_line(n)
        if bare and bare in {gate_line(x) for x in actual}:
            continue
        part = re.match(r"^(\.\.\.|…)\s*(.*?)\s*(\.\.\.|…)?$", n)
        if part and any(part.group(2) in a for a in actual):  # "... lost 4 late 0": a part
            continue
        # A row of figures (a histogram bucket, a worst sample) depends on the data: it passes
        # when the command printed a row of figures with the same columns.
        if is_data_row(l) and columns(l) in printed_rows:
            continue
        problems.append("pasted line not printed: %r" % l.strip())
    return problems


def update(e, root):
    """Replace the pasted output of @p e with what was printed; False when it is left to a
    human: a pasted output cut on purpose ('...' lines) is not replaced by the whole, nor the
    output of a run cut shorter than documented."""
    if e.cut or any(re.match(r"^\s*(\.\.\.|…)", l) for l in e.output):
        return False
    path = os.path.join(root, e.doc)
    lines = open(path, encoding="utf-8").read().split("\n")
    start = e.line - 1 + e.command.count("\n") + 1
    end = start + len(e.output)
    indent = re.match(r"^\s*", lines[e.line - 1]).group(0)
    new = [indent + l if l else l for l in e.actual.split("\n")] if e.actual else []
    # The documented exit status stays, with the status the command exited with now.
    if any(re.match(r"^\s*\(exit status \d+\)\s*$", l) for l in e.output):
        new.append("%s(exit status %d)" % (indent, e.status))
    lines[start:end] = new
    open(path, "w", encoding="utf-8").write("\n".join(lines))
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--bin", action="append", required=True, help="directory put first on PATH")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the pasted output of every executed example that fails its check")
    ap.add_argument("--full", action="store_true",
                    help="run every example at its documented size (no cut to about 3 s)")
    ap.add_argument("--only", action="append",
                    help="a document to run (repeat for more), e.g. docs/commands/run.md; "
                         "docs/commands/report.md runs too, first, when another reads demo.db")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--doc-timeout", type=int, default=240,
                    help="seconds one document may take (without --full); what still runs then is ended")
    ap.add_argument("--classify", action="store_true",
                    help="print each example's class (run, refusal, hardware, synopsis, skip); run nothing")
    a = ap.parse_args()

    docs = ["docs/commands/report.md", "README.md"]
    for d, _, files in sorted(os.walk(os.path.join(a.source, "docs"))):
        for f in sorted(files):
            if f.endswith(".md"):
                rel = os.path.relpath(os.path.join(d, f), a.source)
                if rel not in docs:
                    docs.append(rel)
    if a.only:
        unknown = [d for d in a.only if d not in docs]
        if unknown:
            print("run-doc-examples: no such document: %s" % ", ".join(unknown))
            return 2
        wanted = set(a.only)
        if any("demo.db" in open(os.path.join(a.source, d), encoding="utf-8").read() for d in wanted):
            wanted.add("docs/commands/report.md")  # it makes demo.db
        docs = [d for d in docs if d in wanted]
    env = dict(os.environ)
    env["PATH"] = ":".join(os.path.abspath(b) for b in a.bin) + ":" + env.get("PATH", "")
    env["LC_ALL"] = "C.UTF-8"
    counts = {"run": 0, "refusal": 0, "hardware": 0, "skip": 0, "synopsis": 0}
    failures = 0
    with tempfile.TemporaryDirectory(prefix="irqloop-docs-") as work:
        for rel in docs:
            examples = parse(os.path.join(a.source, rel), rel)
            hw_files = set()
            for e in examples:
                classify(e, hw_files)
                counts[e.kind] += 1
            if a.classify:
                for e in examples:
                    print("%-8s %s:%d: %s" % (e.kind, e.doc, e.line, e.command.split("\n")[0][:90]))
                continue
            if not examples:
                continue
            # A scratch directory per document (a run without --db writes irqloop.db there), with
            # report.md's demo.db, which the other command pages read.
            here = os.path.join(work, re.sub(r"[^\w.-]", "_", rel))
            os.makedirs(here)
            # Examples name files of the source tree by relative path (tests/logger/doctor-trees,
            # tests/db/fixtures, docs/examples), as a reader in a checkout would.
            for sub in ("tests", "docs"):
                os.symlink(os.path.abspath(os.path.join(a.source, sub)), os.path.join(here, sub))
            demo = os.path.join(work, "docs_commands_report.md", "demo.db")
            if os.path.exists(demo):
                shutil.copy(demo, here)
            # The shared-memory wires a document names live in /dev/shm, not in its scratch
            # directory: it starts without them (as its examples expect) and leaves none.
            segments = {"/dev/shm/irqloop-" + n for e in examples
                        for n in re.findall(r"shm:name=([\w.-]+)", e.command)}
            remove(segments)
            t0 = time.monotonic()
            text = run_doc(examples, here, env, 3600 if a.full else a.doc_timeout, a.full)
            print("%s: %.1f s" % (rel, time.monotonic() - t0), flush=True)
            remove(segments)
            to_update = []
            for e in examples:
                if e.kind not in ("run", "refusal", "hardware"):
                    continue
                if e.kind == "hardware" and not parsed_only(e):
                    continue
                problems = check(e, text if e.command.rstrip().endswith("&") else "")
                if a.verbose or problems:
                    print("%s %s:%d: %s" % ("FAIL" if problems else "ok", e.doc, e.line,
                                            e.command.split("\n")[0][:100]))
                for p in problems:
                    print("    " + p)
                if problems:  # what it printed instead, so that a failure in CI can be read
                    print("    printed:\n      " + "\n      ".join(e.actual.split("\n")[:15]))
                if problems:
                    failures += 1
                    if a.update and e.kind == "run" and e.output is not None:
                        to_update.append(e)
            for e in sorted(to_update, key=lambda x: -x.line):  # bottom up: lines stay put
                print("%s %s:%d" % ("updated" if update(e, a.source) else
                                    "NOT updated (the run was cut, or its pasted output is: edit by hand)",
                                    e.doc, e.line))
    print("doc examples: %d executed (%d of them refusals of a hardware spec), %d hardware "
          "examples parsed only, %d synopses parsed, %d skipped by a marker; %d failed" %
          (counts["run"] + counts["refusal"], counts["refusal"], counts["hardware"],
           counts["synopsis"], counts["skip"], failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
