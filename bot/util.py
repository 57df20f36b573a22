"""Small helpers every layer uses: the clock the store records times in, and batching."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

# SQLite allows 32,766 bound parameters per statement; stay well below it.
CHUNK = 500


def utcnow() -> dt.datetime:
    """Now in UTC, naive: the form every timestamp column holds (SQLite keeps no zone)."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterable[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size``, e.g. for an ``IN (...)`` list."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
