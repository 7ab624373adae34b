#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The real consumers of irqloop's CI exports, for tests/logger/test-export-ci.cpp.
#
#   ci-consumers.py junit FILE                 junitparser: print "suites N tests N failures N"
#                                              and one "suite NAME tests N failures N" per suite
#   ci-consumers.py lava-grammar FILE          LAVA's documented grammar, strictly: print the
#                                              count of lines, or exit 1 naming the bad line
#   ci-consumers.py lava-dispatcher FILE DIR   lava-dispatcher's own signal code (unpacked in
#                                              DIR): print "results N fail N" as LAVA records
#   ci-consumers.py lava-testdef YAML DIR      validate a test definition with lava_common's
#                                              schema (unpacked in DIR)
#   ci-consumers.py lava-scan FILE DIR         search FILE (a console log) for LAVA signals as
#                                              the dispatcher does, anywhere in the stream:
#                                              print "signals N" and each one found
#   ci-consumers.py lava-testdef-run YAML DIR BIN WORK [NAME=VALUE...]
#                                              run a test definition's steps as LAVA does
#                                              (its run.sh, its lava-test-case) with irqloop
#                                              from BIN, in WORK, the job's parameters
#                                              NAME=VALUE; feed the console to the signal code
#                                              and print "exit N results N fail N" and each
# Exit 4 with "SKIPPED: why" when a consumer is not installed.
import re
import sys
from decimal import Decimal, InvalidOperation


def skip(why):
    print("SKIPPED: " + why)
    sys.exit(4)


def junit(path):
    try:
        from junitparser import JUnitXml, Failure
    except ImportError:
        skip("python3-junitparser is not installed (bash .ci/setup test)")
    xml = JUnitXml.fromfile(path)
    suites = list(xml) if hasattr(xml, "__iter__") else [xml]
    total_tests = total_failures = 0
    lines = []
    for suite in suites:
        tests = failures = 0
        for case in suite:
            tests += 1
            # Count the failure elements themselves, not the attributes we wrote.
            failures += sum(1 for r in case.result if isinstance(r, Failure))
        if tests != suite.tests or failures != suite.failures:
            print("suite %s: attributes say tests %s failures %s, elements %d %d"
                  % (suite.name, suite.tests, suite.failures, tests, failures))
            sys.exit(1)
        lines.append("suite %s tests %d failures %d" % (suite.name, tests, failures))
        total_tests += tests
        total_failures += failures
    print("suites %d tests %d failures %d" % (len(suites), total_tests, total_failures))
    for l in lines:
        print(l)


# The grammar of lava-test-case's signal (lava_test_shell/lava-test-case): TEST_CASE_ID, then
# RESULT, then optional UNITS and MEASUREMENT; LAVA's test names are [-_.a-zA-Z0-9]+; a result
# is pass, fail, skip or unknown; a measurement is a decimal.
LINE = re.compile(r"^<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=([-_.a-zA-Z0-9]+) "
                  r"RESULT=(pass|fail|skip|unknown)"
                  r"((?: (?:MEASUREMENT|UNITS)=[^ >=]+)*)>$")


def lava_grammar(path):
    n = 0
    seen = set()
    for no, line in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        m = LINE.match(line)
        if not m:
            print("line %d does not match the grammar: %r" % (no, line))
            sys.exit(1)
        extra = dict(kv.split("=", 1) for kv in m.group(3).split())
        if ("MEASUREMENT" in extra) != ("UNITS" in extra):
            print("line %d: MEASUREMENT and UNITS go together: %r" % (no, line))
            sys.exit(1)
        if "MEASUREMENT" in extra:
            v = extra["MEASUREMENT"]
            if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", v):
                print("line %d: measurement %r is not a decimal" % (no, v))
                sys.exit(1)
            try:
                Decimal(v)
            except InvalidOperation:
                print("line %d: measurement %r is not a decimal" % (no, v))
                sys.exit(1)
        if m.group(1) in seen:
            print("line %d: TEST_CASE_ID %s repeated" % (no, m.group(1)))
            sys.exit(1)
        seen.add(m.group(1))
        n += 1
    print("lines %d" % n)


def lava_path(d):
    sys.path.insert(0, d + "/usr/lib/python3/dist-packages")


def lava_dispatcher(path, d):
    action, pattern, rec = signal_action(d)
    lines = open(path, encoding="utf-8").read().splitlines()
    for line in lines:
        m = pattern.search(line)
        if not m:
            print("LAVA's signal pattern does not match %r" % line)
            sys.exit(1)
        name, params = m.groups()
        if name != "TESTCASE":
            print("not a TESTCASE signal: %r" % line)
            sys.exit(1)
        action.signal_test_case(params.split())
    if rec.errors:
        print("LAVA reported: %s" % rec.errors)
        sys.exit(1)
    if len(rec.res) != len(lines):
        print("LAVA recorded %d results of %d lines" % (len(rec.res), len(lines)))
        sys.exit(1)
    with_measure = sum(1 for r in rec.res if "measurement" in r)
    print("results %d fail %d measurements %d"
          % (len(rec.res), sum(1 for r in rec.res if r["result"] == "fail"), with_measure))
    for r in rec.res:
        print("%s %s %s %s" % (r["case"], r["result"], r.get("measurement", "-"),
                               r.get("units", "-")))


class Recorder:
    """lava-dispatcher's logger, as the signal code calls it: results and errors kept."""

    def __init__(self):
        self.res, self.errors = [], []

    def results(self, d):
        self.res.append(d)

    def error(self, m, *a):
        self.errors.append(m % a if a else m)

    def debug(self, *a):
        pass

    def info(self, *a):
        pass

    def warning(self, *a):
        pass

    def marker(self, *a):
        pass


def signal_action(d):
    """lava-dispatcher's TestShellAction with its signal pattern, and a recorder."""
    lava_path(d)
    try:
        from lava_dispatcher.actions.test.shell import TestShellAction
    except ImportError as e:
        skip("lava-dispatcher's python code cannot be imported (%s)" % e)
    action = TestShellAction()
    action._reset_patterns()
    rec = Recorder()
    action.logger = rec
    action.signal_director.test_uuid = "irqloop-test"
    action.definition = "irqloop"
    return action, re.compile(action.patterns["signal"]), rec


def lava_scan(path, d):
    # pexpect matches the pattern on the console stream, not line by line: search it whole.
    _, pattern, _ = signal_action(d)
    text = open(path, encoding="utf-8", errors="replace").read()
    found = pattern.findall(text)
    print("signals %d" % len(found))
    for name, params in found:
        print("%s %s" % (name, " ".join(params.split())))


def lava_testdef_run(yaml_path, d, bindir, work, assignments):
    import os
    import shutil
    import subprocess
    try:
        import yaml
    except ImportError as e:
        skip("python3-yaml cannot be imported (%s)" % e)
    action, pattern, rec = signal_action(d)
    from lava_dispatcher.actions.deploy.testdef import TestOverlayAction
    testdef = yaml.safe_load(open(yaml_path, encoding="utf-8"))
    # The parameters as lava-dispatcher writes them at the top of run.sh: the test
    # definition's defaults, then the job's.
    overlay = TestOverlayAction()
    overlay.logger = rec
    overlay.parameters = {"parameters": dict(a.split("=", 1) for a in assignments)}
    script = "".join(overlay.handle_parameters(testdef))
    # Then what TestRunnerAction.run writes around the steps (lava_dispatcher/actions/deploy/
    # testdef.py): set -e, the run's start and end signals, one line per step.
    script += "set -e\nset -x\nexport TESTRUN_ID=0_%s\ncd '%s'\nUUID=irqloop-test\nset +x\n" % (
        testdef["metadata"]["name"], work)
    script += 'echo "<LAVA_SIGNAL_STARTRUN $TESTRUN_ID $UUID>"\nset -x\n'
    for step in testdef["run"]["steps"]:
        if step is not None:
            script += step + "\n"
    script += 'set +x\necho "<LAVA_SIGNAL_ENDRUN $TESTRUN_ID $UUID>"\n'
    open(os.path.join(work, "run.sh"), "w").write(script)
    # The helpers from the package, with the interpreter line LAVA's overlay puts on them.
    lbin = os.path.join(work, "lava-bin")
    os.makedirs(lbin, exist_ok=True)
    shell = os.path.join(d, "usr/lib/python3/dist-packages/lava_dispatcher/lava_test_shell")
    for name in ("lava-test-case", "lava-common-functions"):
        with open(os.path.join(shell, name)) as src, open(os.path.join(lbin, name), "w") as dst:
            dst.write("#!/bin/sh\n" + src.read())
        os.chmod(os.path.join(lbin, name), 0o755)
    env = dict(os.environ)
    env["PATH"] = lbin + ":" + bindir + ":" + env.get("PATH", "/usr/bin:/bin")
    env["LAVA_RESULT_DIR"] = os.path.join(work, "lava-results")
    # As lava-test-runner starts it: the shell with -e; stdout and stderr both on the console.
    p = subprocess.run([shutil.which("sh") or "/bin/sh", "-e", os.path.join(work, "run.sh")],
                       cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    console = p.stdout.decode("utf-8", "replace")
    open(os.path.join(work, "console.txt"), "w").write(console)
    for name, params in pattern.findall(console):
        if name == "TESTCASE":
            action.signal_test_case(params.split())
    if rec.errors:
        print("LAVA reported: %s" % rec.errors)
        sys.exit(1)
    print("exit %d results %d fail %d" % (p.returncode, len(rec.res),
                                          sum(1 for r in rec.res if r["result"] == "fail")))
    for r in rec.res:
        print("%s %s %s %s" % (r["case"], r["result"], r.get("measurement", "-"),
                               r.get("units", "-")))


def lava_testdef(path, d):
    lava_path(d)
    try:
        import yaml
        from lava_common.schemas.test import testdef
    except ImportError as e:
        skip("lava_common's schema cannot be imported (%s)" % e)
    data = yaml.safe_load(open(path, encoding="utf-8"))
    testdef.validate(data)
    print("testdef %s valid, %d steps" % (data["metadata"]["name"], len(data["run"]["steps"])))


def main():
    if len(sys.argv) < 3:
        print(__doc__ or "usage: see the header")
        sys.exit(2)
    cmd = sys.argv[1]
    if cmd == "junit":
        junit(sys.argv[2])
    elif cmd == "lava-grammar":
        lava_grammar(sys.argv[2])
    elif cmd == "lava-dispatcher":
        lava_dispatcher(sys.argv[2], sys.argv[3])
    elif cmd == "lava-testdef":
        lava_testdef(sys.argv[2], sys.argv[3])
    elif cmd == "lava-scan":
        lava_scan(sys.argv[2], sys.argv[3])
    elif cmd == "lava-testdef-run":
        lava_testdef_run(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:])
    else:
        sys.exit(2)


main()
