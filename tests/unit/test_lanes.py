"""The suite's lanes (``tests/lanes.py``): every test runs, and in one lane only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.lanes import LANES, ROOT, SHARDS, parse_shard


def _collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_shards_together_are_the_whole_selection_each_test_once() -> None:
    selection = ["tests/unit/test_pacing.py", "tests/unit/test_tags.py", "-m", "not slow"]
    whole = _collected(*selection)
    shards = [
        _collected(*selection, "-p", "tests.lanes", "--shard", f"{n}/{SHARDS}")
        for n in range(1, SHARDS + 1)
    ]
    assert sorted(test for shard in shards for test in shard) == sorted(whole)
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    # Each file is spread over the shards, not given to one.
    assert all(any("test_pacing.py" in test for test in shard) for shard in shards)


def test_every_shard_is_a_lane_at_the_lowest_priority() -> None:
    shards = [lane for lane in LANES if "--shard" in lane.selection]
    numbers = [f"{n}/{SHARDS}" for n in range(1, SHARDS + 1)]
    assert [lane.selection[-1] for lane in shards] == numbers
    assert all(lane.niceness == 19 and "not slow" in lane.selection for lane in shards)


def test_the_end_to_end_tests_run_once_per_store_at_normal_priority() -> None:
    end_to_end = [lane for lane in LANES if "slow" in lane.selection]
    assert [lane.selection[-1] for lane in end_to_end] == ["not postgresql", "postgresql"]
    assert all(lane.niceness == 0 for lane in end_to_end)


@pytest.mark.parametrize("text", ["", "2", "0/4", "5/4", "a/b", "1/2/3"])
def test_a_malformed_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(pytest.UsageError):
        parse_shard(text)
