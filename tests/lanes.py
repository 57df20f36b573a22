"""The whole suite in lanes at once: ``python -m tests.lanes [PYTEST OPTIONS]``.

Most of the suite's time is spent waiting, not computing: the end-to-end tests (marked
``slow``) run real ``trendbot`` processes against the local platform servers, paced by the
platforms' caps and bounded by leases and grace periods, and leave the machine's cores
mostly idle. So they run in two lanes of their own, one per store, at normal priority,
while everything else runs beside them at the lowest CPU priority (``nice 19``): it gets
the time the end-to-end lanes leave, and never delays the processes whose timing they
check. Everything else waits too (local servers, scratch databases, clocks), a quarter of
a core on average in one process: so it runs as ``SHARDS`` lanes, its test files dealt
out among them, largest first, each to the lane with the fewest bytes of tests so far.
The options (``-x``, ``-k EXPR``...) go to every lane; each lane chooses its own files.

Each lane's output is printed whole once it ends, then one line with the totals of all
of them. The exit code is the first failing lane's (a lane that selected no test counts
as passing).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NO_TESTS_COLLECTED = 5  # pytest's exit code when a lane's selection is empty


@dataclass(frozen=True)
class Lane:
    name: str
    selection: tuple[str, ...]
    niceness: int


# Lanes the tests that are not end-to-end are dealt out among.
SHARDS = 4


def lanes() -> list[Lane]:
    """The end-to-end lanes, then the shards of everything else."""
    shards: list[list[Path]] = [[] for _ in range(SHARDS)]
    sizes = [0] * SHARDS
    files = sorted(ROOT.glob("tests/**/test_*.py"), key=lambda f: (-f.stat().st_size, f))
    for path in files:
        lightest = sizes.index(min(sizes))
        shards[lightest].append(path)
        sizes[lightest] += path.stat().st_size
    return [
        Lane("end-to-end, SQLite", ("-m", "slow", "-k", "not postgresql"), 0),
        Lane("end-to-end, PostgreSQL", ("-m", "slow", "-k", "postgresql"), 0),
        *(
            Lane(
                f"everything else, {number} of {SHARDS} (nice 19)",
                ("-m", "not slow", *(str(f.relative_to(ROOT)) for f in sorted(chosen))),
                19,
            )
            for number, chosen in enumerate(shards, start=1)
        ),
    ]


@dataclass
class Totals:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def add(self, report: Path) -> None:
        """Add a lane's JUnit XML report (``tests``, ``failures``, ``errors``, ``skipped``)."""
        root = ElementTree.parse(report).getroot()
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        for suite in suites:
            tests, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
            failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            self.passed += tests - skipped - failed
            self.failed += failed
            self.skipped += skipped


def main(extra: list[str]) -> int:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="trendbot-lanes-") as tmp:
        running = []
        for number, lane in enumerate(lanes()):
            log = Path(tmp, f"lane{number}.log")
            report = Path(tmp, f"lane{number}.xml")
            command = [
                sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                f"--junitxml={report}", *lane.selection, *extra,
            ]  # fmt: skip
            with log.open("wb") as out:
                process = subprocess.Popen(
                    command,
                    cwd=ROOT,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    preexec_fn=(lambda n=lane.niceness: os.nice(n)) if lane.niceness else None,
                )
            running.append((lane, process, log, report))
        totals = Totals()
        code = 0
        for lane, process, log, report in running:
            returned = process.wait()
            print(f"\n===== lane: {lane.name} (exit {returned}) =====", flush=True)
            sys.stdout.write(log.read_text(errors="replace"))
            if report.exists():
                totals.add(report)
            if returned not in (0, NO_TESTS_COLLECTED) and code == 0:
                code = returned
    print(f"\nall lanes in {time.monotonic() - started:.0f} s")
    print(f"tests: {totals.passed} passed, {totals.failed} failed, {totals.skipped} skipped")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
