"""Per-key helpers the platform packages share: a lock per key while it is in use
(:class:`KeyedLocks`), and the keys seen lately (:class:`SeenKeys`, to act on a repeated
update or request once)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class KeyedLocks(Generic[K]):
    """One lock per key while someone holds or waits for it: the work of one key (a chat,
    an installation) runs in order, that of different keys at once.

    A key's lock is dropped once no one holds or waits for it, so the keys of the past
    cost no memory.
    """

    def __init__(self) -> None:
        self._locks: dict[K, asyncio.Lock] = {}
        self._users: Counter[K] = Counter()

    @contextlib.asynccontextmanager
    async def hold(self, key: K) -> AsyncIterator[None]:
        """Hold the lock of ``key`` for the ``async with`` block."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] += 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] <= 0:
                del self._users[key]
                self._locks.pop(key, None)

    def __len__(self) -> int:
        """How many keys have a lock now."""
        return len(self._locks)


class SeenKeys(Generic[K]):
    """Keys seen within ``ttl`` seconds (None: however long ago), at most ``limit`` of them,
    the oldest forgotten first. Times are the caller's (``now``), so tests use a fake clock.
    """

    def __init__(self, *, ttl: float | None, limit: int) -> None:
        self._ttl = ttl
        self._limit = limit
        self._seen: OrderedDict[K, float] = OrderedDict()

    def add(self, key: K, *, now: float) -> bool:
        """Remember ``key``; False when it was already seen within the window (it is then
        kept from when it was first seen)."""
        if self._ttl is not None:
            while self._seen and now - next(iter(self._seen.values())) > self._ttl:
                self._seen.popitem(last=False)
        if key in self._seen:
            return False
        self._seen[key] = now
        while len(self._seen) > self._limit:
            self._seen.popitem(last=False)
        return True

    def __len__(self) -> int:
        return len(self._seen)
