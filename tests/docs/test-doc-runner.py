#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The docs test's comparison rule (run-doc-examples.py's check()), on constructed examples:
a pasted line about another machine (its clock source, its preflight, its uname) is not a
failure when the same key was printed; a changed figure or a changed line of any other kind
still is.

    python3 tests/docs/test-doc-runner.py [-v]
"""
import importlib.util
import os
import unittest

_spec = importlib.util.spec_from_file_location(
    "run_doc_examples", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "run-doc-examples.py"))
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)


def example(command, pasted, printed, status=0):
    """A run example as the runner has it after running: @p pasted is the doc's output,
    @p printed what the command printed."""
    e = runner.Example("docs/test.md", 1, command, pasted.split("\n"), "")
    e.kind = "run"
    e.status = status
    e.actual = printed
    return e


def problems(command, pasted, printed, status=0):
    return runner.check(example(command, pasted, printed, status), "")


# report's run table, pasted on a KVM guest without cpuidle states ...
REPORT_PASTED = """\
host                           vm
uname                          Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 x86_64
clock                          tsc at 2096.011134 MHz, read cost 16.3 ns
threshold                      30.000us
logger.smi_counter             n/a: /dev/cpu/0/msr: No such file or directory
preflight.clock.source         WARN kvm-clock (not the CPU's counter)
preflight.cpu.idle             OK no cpuidle states
sim.model                      model=fixed,value=5000ns"""
# ... and printed on a machine with the TSC as clocksource and haltpoll.
REPORT_PRINTED = """\
host                                   build-7
uname                                  Linux 6.1.0-28-amd64 #1 SMP Debian 6.1.119-1 x86_64
clock                                  cntvct at 54.000000 MHz, read cost 30.1 ns
threshold                              30.000us
logger.smi_counter                     /dev/cpu/0/msr MSR 0x34
preflight.clock.source                 OK tsc
preflight.cpu.idle                     OK no state deeper than C1 enabled on cpu 0-1
sim.model                              model=fixed,value=5000ns"""


class HostLines(unittest.TestCase):
    def test_another_hosts_lines_pass_in_every_form(self):
        self.assertEqual(problems("irqloop report --db demo.db", REPORT_PASTED, REPORT_PRINTED),
                         [])
        md = ("| preflight.clock.source | WARN kvm-clock (not the CPU's counter) |\n"
              "| uname | Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0 x86_64 |")
        self.assertEqual(problems("irqloop report --format markdown", md,
                                  "| uname | Linux 6.1.0-28-amd64 #1 SMP x86_64 |\n"
                                  "| preflight.clock.source | OK tsc |"), [])
        csv = "preflight.clock.source,WARN kvm-clock (not the CPU's counter)\nhost,vm"
        self.assertEqual(problems("irqloop report --format csv", csv,
                                  "host,build-7\npreflight.clock.source,OK tsc"), [])
        js = ('        "hostname": "vm",\n'
              '        "clock_source": "tsc",\n'
              '          "preflight.clock.source": "WARN kvm-clock (not the CPU\'s counter)",\n'
              '    "release": "6.18.44-fc-v1045",\n'
              '    "version": "#1 SMP PREEMPT_DYNAMIC @0",')
        self.assertEqual(problems("irqloop export --db demo.db", js,
                                  '  "hostname": "build-7",\n'
                                  '  "clock_source": "cntvct",\n'
                                  '  "preflight.clock.source": "OK tsc",\n'
                                  '  "release": "6.1.0-28-amd64",\n'
                                  '  "version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1",'), [])

    def test_doctor_row_and_its_hint(self):
        pasted = ("WARN  clock.source         kvm-clock (not the CPU's counter)\n"
                  "      hint: the kernel distrusts the TSC or runs virtualised\n"
                  "14 checks: 8 OK, 6 WARN, 0 FAIL, 0 SKIP")
        printed = ("OK    clock.source         tsc\n"
                   "14 checks: 9 OK, 5 WARN, 0 FAIL, 0 SKIP")
        self.assertEqual(problems("irqloop doctor --cpu 1", pasted, printed), [])

    def test_run_stderr_form(self):
        self.assertEqual(problems("irqloop run -n 2000",
                                  "irqloop: preflight: WARN clock.source: kvm-clock (hint)",
                                  "irqloop: preflight: FAIL clock.source: hpet (hint)"), [])

    def test_junit_hostname_attribute_rest_checked(self):
        line = '<testsuite name="run 1" tests="3" failures="2" hostname="vm">'
        self.assertEqual(problems("irqloop export --format junit", line,
                                  line.replace('"vm"', '"build-7"')), [])
        self.assertNotEqual(problems("irqloop export --format junit", line,
                                     '<testsuite name="run 1" tests="3" errors="2" '
                                     'hostname="build-7">'), [])


class StillFailures(unittest.TestCase):
    def one_problem_naming(self, old, new, named):
        """The pasted report against a printed one with @old replaced: one problem, naming it."""
        p = problems("irqloop report --db demo.db", REPORT_PASTED, REPORT_PRINTED.replace(old, new))
        self.assertEqual(len(p), 1)
        self.assertIn(named, p[0])

    def test_host_key_not_printed(self):
        self.one_problem_naming("preflight.clock.source", "preflight.clock.src",
                                "preflight.clock.source")

    def test_host_key_in_another_form(self):
        # the markdown row is not the text table's row
        self.assertNotEqual(problems("irqloop report --format markdown",
                                     "| preflight.clock.source | WARN kvm-clock |",
                                     "preflight.clock.source   OK tsc"), [])

    def test_changed_figure(self):
        # Numbers are normalised (the data differs from run to run); a figure's unit is not,
        self.one_problem_naming("threshold                              30.000us",
                                "threshold                              30.000ms", "threshold")
        # nor the columns of a row of figures (a histogram bucket that gained one)
        self.assertNotEqual(problems("irqloop report --db demo.db",
                                     "   2.50    3.00  ###   120   0.24 %",
                                     "   2.50    3.00  ###   120   0.24 %   99.1 %\n"), [])
        self.assertEqual(problems("irqloop report --db demo.db",
                                  "   2.50    3.00  ###   120   0.24 %",
                                  "   2.75    3.25  #####   1042   2.08 %\n"), [])

    def test_changed_wording(self):
        self.one_problem_naming("sim.model ", "sim.models", "sim.model")

    def test_changed_refusal_with_figures(self):
        # An irqloop message with three figures in it is a message, not a row of figures: a
        # changed word fails, even though the line has the shape of a one-cell row.
        pasted = ("irqloop: read histogram of run 1 from 'd.db': damaged file (histogram "
                  "buckets out of order or overlapping, at [1, 1631232) ns) (keep a copy)")
        printed = pasted.replace("out of order or overlapping", "out of place")
        self.assertNotEqual(problems("irqloop report --db d.db", pasted, printed, 2), [])
        self.assertEqual(problems("irqloop report --db d.db", pasted, pasted, 2), [])

    def test_changed_json_member_that_is_not_about_the_host(self):
        self.assertNotEqual(problems("irqloop export --db demo.db",
                                     '        "backend": "sim:model=fixed",',
                                     '  "backend": "sim:model=normal",'), [])
        # "version" is the host's only as uname -v ("#1 SMP ..."); irqloop's own is checked
        self.assertNotEqual(problems("irqloop export --db demo.db",
                                     '  "version": "0.1.0",',
                                     '  "version": "0.1.0-dirty",'), [])

    def test_hint_not_under_a_host_row(self):
        # a hint line is the host's only under a doctor row about the host
        self.assertNotEqual(problems("irqloop doctor --cpu 1",
                                     "      hint: boot with isolcpus=1",
                                     "      hint: boot with isolcpus=2,3"), [])

    def test_fake_tree_checked_in_full(self):
        # doctor --root reads a fake tree: the tree, not the machine, decides the rows
        pasted = ("WARN  clock.source         kvm-clock (not the CPU's counter)\n"
                  "      hint: the kernel distrusts the TSC or runs virtualised")
        printed = "OK    clock.source         tsc"
        p = problems("irqloop doctor --root tests/logger/doctor-trees/vm --cpu 1", pasted,
                     printed)
        self.assertEqual(len(p), 2)
        self.assertEqual(problems("irqloop doctor --cpu 1", pasted, printed), [])


if __name__ == "__main__":
    unittest.main()
