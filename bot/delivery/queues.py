"""The delivery engine's state in memory, shared by its parts: each chat's queue of
claimed rows, the heap of chats by when they are ready, the rows held, and the few steps
every part takes on them (:class:`EngineState`).

``bot.delivery.engine.Delivery`` builds the state; ``claims`` fills the queues from the
outbox, ``engine`` sends from them, ``retries`` carries out what a failed send calls for.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.pacing import Pace, Pacing
from bot.delivery.recording import DatabaseHealth, Records, durably
from bot.delivery.rendering import Renderer
from bot.delivery.sender import Sender
from bot.models import Outgoing, Platform
from bot.store.chats import ChatRecord
from bot.store.outbox import OutboxRow

log = logging.getLogger("bot.delivery")


@dataclass(eq=False, slots=True)
class ChatQueue:
    record: ChatRecord
    rows: deque[OutboxRow] = field(default_factory=deque)
    parts: list[Outgoing] | None = None
    next_part: int = 0
    thread: str | None = None
    ready_at: float = 0.0
    busy: bool = False
    started: float = 0.0  # when the send under way began (0: none), for the window


class EngineState:
    """What the parts of the delivery engine share (set by ``Delivery.__init__``, where
    each is explained), and the steps each of them takes on it."""

    _engine: AsyncEngine
    _senders: dict[Platform, Sender]
    _pacing: dict[Platform, Pacing]
    _pace: dict[Platform, Pace]
    _on_auth_failure: Callable[[Platform, str], Awaitable[None]] | None
    _on_broadcast_row: Callable[[int], Awaitable[None]] | None
    _claim_batch: int
    _backoff_base: float
    worker_id: str
    _workers: set[asyncio.Task[None]]
    _queues: dict[int, ChatQueue]
    _renderer: Renderer
    _health: DatabaseHealth
    _records: Records
    _heap: list[tuple[float, int, int]]
    _seq: itertools.count[int]
    _wake: asyncio.Event
    _claim_wake: asyncio.Event
    _stopping: bool
    _held: int
    _low_water: int
    _held_of: Counter[int]
    _only_broadcast: int | None
    _paused: dict[Platform, asyncio.Task[None]]
    _unknown_pause: float
    _unknown_at: dict[Platform, deque[float]]
    sent: int
    failed: int
    held: int

    @property
    def window(self) -> int:
        """Sends that may be under way at once now (the number of workers)."""
        return len(self._workers)

    def _mark_low_water(self) -> None:
        """Keep enough rows in memory for every worker of the window to have one ready and
        another behind it; a window that grew past the rows held wakes the claimer now, not
        once the rows held have run down to the old mark."""
        self._low_water = max(self._claim_batch // 2, self.window * 2)
        if self._held < self._low_water:
            self._claim_wake.set()

    def _schedule(self, queue: ChatQueue, at: float) -> None:
        queue.ready_at = at
        heapq.heappush(self._heap, (at, next(self._seq), queue.record.pk))
        self._wake.set()

    def _pop(self, queue: ChatQueue) -> None:
        row = queue.rows.popleft()
        self._renderer.forget(row.id)
        queue.parts = None
        queue.next_part = 0
        queue.thread = None
        self._release(row)

    def _release(self, row: OutboxRow) -> None:
        self._held -= 1
        if self._held in (0, self._low_water - 1):
            self._claim_wake.set()
        if row.broadcast_id is not None:
            self._held_of[row.broadcast_id] -= 1
            if self._held_of[row.broadcast_id] <= 0:
                del self._held_of[row.broadcast_id]

    async def _durably(self, write: Callable[[], Awaitable[None]], *, doing: str) -> None:
        """:func:`bot.delivery.recording.durably`, with the engine's database health."""
        await durably(write, health=self._health, doing=doing)

    async def _broadcasts_progressed(self, broadcast_ids: Iterable[int | None]) -> None:
        """Rows of these broadcasts were completed (sent or failed for good): a broadcast
        of which this instance holds no more rows may be finished. Whichever instance
        completes the last row looks after it has recorded that row, so one of them sees
        the broadcast finished."""
        if self._on_broadcast_row is None:
            return
        for broadcast_id in broadcast_ids:
            if broadcast_id is not None and broadcast_id not in self._held_of:
                try:
                    await self._on_broadcast_row(broadcast_id)
                except Exception:  # a report must not stop deliveries
                    log.exception("broadcast progress failed")


def ctx(record: ChatRecord) -> dict[str, object]:
    """The chat's fields of a log record."""
    return {"chat": record.chat.address, "platform": record.chat.platform.value}
