"""A starved CPU beside a benchmark run, and the run's own send stamps against the server's.

``hogs(n)``: ``n`` processes that spin on a core each while the block runs (``--hog`` of
``bench/fanout.py``): the bot then gets the CPU late, as beside another busy process on a
shared machine.

``compare(sends, arrivals, cap=...)``: the sends as the bot stamped them (when the pace let
each go, and when the transport wrote its request: the stamp the pace counts) against the
same sends as the server stamped them (the kernel's receive time of each request), both on
``time.monotonic()``'s clock, matched per chat in order. It says where a window over the
cap comes from: the densest second by each stamp, and how much later than its write stamp
each send arrived.
"""

from __future__ import annotations

import asyncio
import bisect
import statistics
import sys
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

# A send that arrives this much later than its write stamp can land in a window the pace did
# not count it in (the pace's margin, bot.delivery.pacing.PACE_WINDOW_MARGIN_SECONDS).
LATE_SECONDS = 0.03


@asynccontextmanager
async def hogs(count: int) -> AsyncIterator[None]:
    """``count`` processes spinning on a core each while the block runs."""
    spinners = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            await spinner.wait()


def densest(stamps: Sequence[float], *, window: float = 1.0) -> tuple[int, float]:
    """The most stamps in any half-open window of ``window`` seconds, and where it starts."""
    ordered = sorted(stamps)
    most, start, at = 0, 0, ordered[0] if ordered else 0.0
    for end, stamp in enumerate(ordered):
        while stamp - ordered[start] >= window:
            start += 1
        if end - start + 1 > most:
            most, at = end - start + 1, ordered[start]
    return most, at


def compare(
    sends: Sequence[Sequence[Any]], arrivals: Sequence[Sequence[Any]], *, cap: int
) -> dict[str, Any]:
    """``sends``: ``[chat_id, let_go, written]`` of each send the bot made; ``arrivals``:
    ``[chat_id, arrived, status]`` of each the server counted. Matched per chat in order."""
    by_chat: dict[str, list[float]] = defaultdict(list)
    for chat, arrived, _status in arrivals:
        by_chat[str(chat)].append(float(arrived))
    for stamps in by_chat.values():
        stamps.sort()
    taken: dict[str, int] = defaultdict(int)
    pairs: list[tuple[float, float, float]] = []  # let go, written, arrived
    for chat, let_go, written in sorted(sends, key=lambda s: float(s[2])):
        chat = str(chat)
        index = taken[chat]
        if index < len(by_chat[chat]):
            pairs.append((float(let_go), float(written), by_chat[chat][index]))
            taken[chat] += 1
    if not pairs:
        return {"matched": 0}
    lags = sorted(arrived - written for _, written, arrived in pairs)
    delays = sorted(written - let_go for let_go, written, _ in pairs)
    written_most, _ = densest([w for _, w, _ in pairs])
    arrived_most, arrived_at = densest([a for _, _, a in pairs])
    # The densest second by arrival: how many of its sends were written before it began.
    window = [(w, a) for _, w, a in pairs if arrived_at <= a < arrived_at + 1.0]
    lagged_in = sum(1 for w, _ in window if w < arrived_at)
    return {
        "matched": len(pairs),
        "cap": cap,
        "densest_by_write": written_most,
        "densest_by_arrival": arrived_most,
        "lagged_into_densest": lagged_in,
        "lag_p50_ms": 1000 * statistics.median(lags),
        "lag_p99_ms": 1000 * lags[int(0.99 * (len(lags) - 1))],
        "lag_max_ms": 1000 * lags[-1],
        "lag_min_ms": 1000 * lags[0],
        "late": len(lags) - bisect.bisect_right(lags, LATE_SECONDS),
        "write_delay_p99_ms": 1000 * delays[int(0.99 * (len(delays) - 1))],
        "write_delay_max_ms": 1000 * delays[-1],
    }
