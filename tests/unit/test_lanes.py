"""The suite's lanes (``tests/lanes.py``): every test file is run, and by one lane only."""

from __future__ import annotations

from collections import Counter

from tests.lanes import ROOT, SHARDS, lanes


def test_every_test_file_is_dealt_to_exactly_one_shard() -> None:
    shards = [lane for lane in lanes() if "not slow" in lane.selection]
    assert len(shards) == SHARDS
    dealt = Counter(arg for lane in shards for arg in lane.selection if arg.endswith(".py"))
    files = {str(path.relative_to(ROOT)) for path in ROOT.glob("tests/**/test_*.py")}
    assert set(dealt) == files
    assert set(dealt.values()) == {1}
    assert all(lane.niceness == 19 for lane in shards)


def test_the_end_to_end_tests_run_once_per_store_at_normal_priority() -> None:
    end_to_end = [lane for lane in lanes() if "slow" in lane.selection]
    assert [lane.selection[-1] for lane in end_to_end] == ["not postgresql", "postgresql"]
    assert all(lane.niceness == 0 for lane in end_to_end)
