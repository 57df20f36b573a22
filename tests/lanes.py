"""The whole suite in lanes at once: ``python -m tests.lanes [PYTEST OPTIONS]``.

Most of the suite's time is spent waiting, not computing: the end-to-end tests (marked
``slow``) run real ``trendbot`` processes against the local platform servers, paced by the
platforms' caps and bounded by leases and grace periods, and leave the machine's cores
mostly idle. So they run in two lanes of their own, one per store, at normal priority,
while everything else runs beside them at the lowest CPU priority (``nice 19``): it gets
the time the end-to-end lanes leave, and never delays the processes whose timing they
check. Everything else waits too (local servers, scratch databases, clocks), a quarter of
a core on average in one process: so it runs as ``SHARDS`` lanes, its tests dealt out
among them one by one in the order pytest collects them (``--shard K/N``, this module
loaded as a plugin), so each lane gets its share of every file, the slow files and the
quick ones alike. The options (``-x``, ``-k EXPR``...) go to every lane.

Each lane's output is printed whole once it ends, then one line with the totals of all
of them. The exit code is the first failing lane's (a lane that selected no test counts
as passing).
"""

# Why not pytest-xdist (measured 2026-12, on 2 shared cores): tests/unit and 12 integration
# files (3,562 tests, 4 of them end-to-end), with TEST_DATABASE_URL set, run alternately
# as `python -m tests.lanes FILES` and `pytest -n 4 --dist loadgroup FILES` (the end-to-end
# tests in one xdist_group per store, as the lanes have them): 296 s, 287 s, 263 s, 277 s;
# xdist at 0.97 and 1.05 of the lanes beside it, the same within the machine's noise.
# xdist can put the end-to-end tests in a worker per store (xdist_group), but not run the
# rest at a lower priority than them (a worker takes any test), and it needs the same
# collection in every worker, which a test id made from a random key breaks
# (tests/unit/test_settings_slack_oauth.py). Not faster, and it loses the priority: kept.

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NO_TESTS_COLLECTED = 5  # pytest's exit code when a lane's selection is empty


@dataclass(frozen=True)
class Lane:
    name: str
    selection: tuple[str, ...]
    niceness: int


# Lanes the tests that are not end-to-end are dealt out among.
SHARDS = 4


# The end-to-end lanes, then the shards of everything else.
LANES = (
    Lane("end-to-end, SQLite", ("-m", "slow", "-k", "not postgresql"), 0),
    Lane("end-to-end, PostgreSQL", ("-m", "slow", "-k", "postgresql"), 0),
    *(
        Lane(
            f"everything else, {number} of {SHARDS} (nice 19)",
            ("-m", "not slow", "-p", "tests.lanes", "--shard", f"{number}/{SHARDS}"),
            19,
        )
        for number in range(1, SHARDS + 1)
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shard",
        metavar="K/N",
        help="of the tests selected, run the K-th of every N, in the order collected",
    )


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected theirs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    shard = config.getoption("--shard")
    if not shard:
        return
    number, count = parse_shard(shard)
    dropped = [item for n, item in enumerate(items) if n % count != number - 1]
    items[:] = items[number - 1 :: count]
    if dropped:
        config.hook.pytest_deselected(items=dropped)


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` as (K, N), 1 <= K <= N."""
    try:
        number, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard takes K/N, such as 2/4, not {text!r}") from None
    if not 1 <= number <= count:
        raise pytest.UsageError(f"--shard {text}: K must be from 1 to N")
    return number, count


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
        for number, lane in enumerate(LANES):
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
