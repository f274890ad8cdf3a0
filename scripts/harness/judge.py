# SPDX-License-Identifier: GPL-2.0
"""Verdicts on what a guest printed, shared by make check and make stress.

A guest's kernel log comes back between two marker lines of its output;
it must hold no kernel report (kernel_log_bad). A guest's checks are
"WHAT: PASS ..." / "WHAT: FAIL ..." lines, counted against an expected
number or the guest's own "WHAT: plan N" line (Tally.count_checks).
KUnit's KTAP runs are parsed by the kernel's kunit.py, one module load at
a time (ktap_runs), and its summaries summed (kunit_sums).
"""

import re

# Kernel log lines that mean a kernel problem: warnings, BUGs, oopses,
# lockdep and context-checker reports, stack traces.
KERNEL_BAD_RE = re.compile(
    r"WARNING:|BUG:|BUG |Oops|kernel BUG|possible recursive locking"
    r"|possible circular locking|inconsistent lock state|lockdep"
    r"|sleeping function called from invalid context|Call Trace:|general protection fault")

# A report a KUnit case asks for (a KASAN or KFENCE report of a bad access
# made on purpose) is printed between these two lines (kunit/rslub_kunit.h,
# kt_expect_report()); a window the second line does not close (the
# access's kthread died) is read like the rest of the log.
KT_REPORT_BEGIN = "rslub_kunit: a report is expected {"
KT_REPORT_END = "rslub_kunit: } the report was expected"

# The guest scripts print the kernel log between these (--dmesg).
DMESG_BEGIN = "==RSLUB-DMESG-BEGIN=="
DMESG_END = "==RSLUB-DMESG-END=="


def kernel_log_bad(text, first=5):
    """The FIRST report lines of the kernel log TEXT, as "LINE:TEXT".

    The closed windows of expected reports are left out; an empty list
    means a clean log.
    """
    out, held, inside = [], [], False
    for n, line in enumerate(text.splitlines(), 1):
        if KT_REPORT_BEGIN in line:
            out += held
            held, inside = [], True
        elif KT_REPORT_END in line:
            if inside:
                held = []
            inside = False
        elif inside:
            held.append(f"{n}:{line}")
        else:
            out.append(f"{n}:{line}")
    out += held
    return [line for line in out if KERNEL_BAD_RE.search(line)][:first]


def dmesg_section(text):
    """The lines of TEXT from each DMESG_BEGIN line to its DMESG_END line."""
    out, inside = [], False
    for line in text.splitlines():
        if inside:
            out.append(line)
            inside = DMESG_END not in line
        elif DMESG_BEGIN in line:
            out.append(line)
            inside = True
    return "".join(line + "\n" for line in out)


def ktap_runs(dmesg):
    """The KTAP runs of a kernel log, one per module load that ran suites.

    Each run starts at a top-level header ("] KTAP version", not
    indented); kunit.py parses the first run of a log only.
    """
    runs = []
    for line in dmesg.splitlines():
        if re.search(r"\] (K)?TAP version", line):
            runs.append([])
        if runs:
            runs[-1].append(line)
    return ["".join(line + "\n" for line in run) for run in runs]


def ktap_from_first(dmesg):
    """The kernel log from its first (K)TAP header on."""
    lines = dmesg.splitlines()
    for i, line in enumerate(lines):
        if "KTAP version" in line or "TAP version" in line:
            return "".join(line + "\n" for line in lines[i:])
    return ""


def suite_ended(dmesg, suite):
    """Whether SUITE has a result line (a suite skipped whole ends " # SKIP")."""
    return re.search(rf"(ok|not ok) [0-9]+ {re.escape(suite)}( |$)", dmesg, re.M) is not None


def kunit_sums(parsed):
    """The "Ran N tests" summaries of kunit.py's output and their sums.

    Returns (summary lines, {"passed", "failed", "crashed", "skipped"});
    "crashed" counts kunit.py's errors too.
    """
    summaries = [line for line in parsed.splitlines() if re.search(r"Ran [0-9]+ tests", line)]
    sums = dict.fromkeys(("passed", "failed", "crashed", "skipped"), 0)
    for line in summaries:
        for word, n in re.findall(r"(passed|failed|crashed|errors|skipped): ([0-9]+)", line):
            sums["crashed" if word == "errors" else word] += int(n)
    return summaries, sums


def plan(log, what):
    """N of the first "WHAT: plan N" line of LOG, or None."""
    m = re.search(rf"^{re.escape(what)}: plan ([0-9]+)", log, re.M)
    return int(m.group(1)) if m else None


def lines_of(log, what, verdict):
    """The "WHAT: VERDICT..." lines of LOG (VERDICT: PASS or FAIL)."""
    prefix = f"{what}: {verdict}"
    return [line for line in log.splitlines() if line.startswith(prefix)]


class Tally:
    """A run's counts and problems, printed as the run goes.

    The last line is that of make check: "N passed, M failed, K skipped".
    """

    def __init__(self, out=print):
        self.passed = self.failed = self.skipped = 0
        self.problems = []
        self.out = out

    def problem(self, line):
        """Notes a problem (a line of the run's problem list)."""
        self.problems.append(line)

    def count_checks(self, name, log, what, expected=None):
        """Counts the WHAT: PASS|FAIL lines of the text LOG of guest NAME.

        Against EXPECTED or, without it, against the guest's "WHAT: plan
        N" line (the count lives beside the checks).
        """
        if expected is None:
            expected = plan(log, what)
            if expected is None:
                self.problem(f"  {name}: no '{what}: plan N' line: "
                             f"the guest never reached its {what} checks")
                expected = 0
        p = len(lines_of(log, what, "PASS"))
        fails = lines_of(log, what, "FAIL")
        self.out(f"  {name}: {what}: {p} passed, {len(fails)} failed")
        for line in fails:
            self.out(f"  {name}: {line}")
        if p + len(fails) != expected:
            self.problem(f"  {name}: {p + len(fails)} of {expected} {what} checks reported")
        self.passed += p
        self.failed += len(fails)

    def kernel_log(self, name, dmesg):
        """Notes the reports of guest NAME's kernel log DMESG, if any."""
        bad = kernel_log_bad(dmesg)
        if bad:
            self.problem(f"  {name}: kernel log reports:")
            self.problems += bad

    def summary(self, prefix, note=None):
        """The problems (if any), NOTE, the count line; whether all passed."""
        if self.problems:
            self.out(f"{prefix}: problems:\n" + "\n".join(self.problems))
            self.failed = max(self.failed, 1)
        if note:
            self.out(note)
        if self.skipped:
            self.out(f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped")
        else:
            self.out(f"{self.passed} passed, {self.failed} failed")
        return self.failed == 0
