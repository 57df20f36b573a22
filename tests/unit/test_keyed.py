"""The per-key helpers: a lock per key in use, and the keys seen lately (on a fake clock)."""

from __future__ import annotations

import asyncio

import pytest

from bot.keyed import KeyedLocks, SeenKeys


async def test_one_key_runs_in_order_other_keys_at_once() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    events: list[str] = []
    first_in = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with locks.hold("a"):
            events.append("a1 in")
            first_in.set()
            await release.wait()
            events.append("a1 out")

    async def second() -> None:
        async with locks.hold("a"):
            events.append("a2 in")

    async def other() -> None:
        async with locks.hold("b"):
            events.append("b in")

    task_first = asyncio.create_task(first())
    await first_in.wait()
    task_second = asyncio.create_task(second())
    await other()  # another key does not wait for "a"
    await asyncio.sleep(0)
    assert events == ["a1 in", "b in"]  # the second holder of "a" waits
    release.set()
    await asyncio.gather(task_first, task_second)
    assert events == ["a1 in", "b in", "a1 out", "a2 in"]


async def test_a_lock_is_dropped_when_no_one_holds_or_waits() -> None:
    locks: KeyedLocks[int] = KeyedLocks()
    async with locks.hold(1):
        assert len(locks) == 1
    assert len(locks) == 0
    with pytest.raises(RuntimeError):
        async with locks.hold(2):
            raise RuntimeError("fails inside")
    assert len(locks) == 0


@pytest.mark.parametrize(
    ("ttl", "adds", "expected"),
    [
        # (key, now) in order -> what add answered
        (10.0, [("a", 0.0), ("a", 5.0)], [True, False]),
        (10.0, [("a", 0.0), ("a", 10.0)], [True, False]),  # the window's edge is inside
        (10.0, [("a", 0.0), ("a", 10.5)], [True, True]),  # past it: new again
        (10.0, [("a", 0.0), ("a", 5.0), ("a", 12.0)], [True, False, True]),  # kept from 0
        (None, [("a", 0.0), ("a", 1e9)], [True, False]),  # no ttl: however long ago
        (10.0, [("a", 0.0), ("b", 1.0), ("a", 2.0), ("b", 10.5)], [True, True, False, False]),
    ],
)
def test_seen_within_the_window(
    ttl: float | None, adds: list[tuple[str, float]], expected: list[bool]
) -> None:
    seen: SeenKeys[str] = SeenKeys(ttl=ttl, limit=100)
    assert [seen.add(key, now=now) for key, now in adds] == expected


def test_the_oldest_are_forgotten_beyond_the_limit() -> None:
    seen: SeenKeys[int] = SeenKeys(ttl=None, limit=3)
    assert [seen.add(k, now=float(k)) for k in (1, 2, 3, 4)] == [True] * 4
    assert len(seen) == 3
    assert seen.add(1, now=5.0)  # forgotten: new again (and 2 forgotten for it)
    assert not seen.add(3, now=6.0)
    assert not seen.add(4, now=6.0)
    assert seen.add(2, now=6.0)


def test_expired_keys_are_dropped_as_time_passes() -> None:
    seen: SeenKeys[str] = SeenKeys(ttl=1.0, limit=100)
    for i in range(50):
        seen.add(str(i), now=0.0)
    seen.add("late", now=2.0)
    assert len(seen) == 1
