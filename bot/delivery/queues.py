"""The delivery engine's rows in memory (:class:`Queues`): each chat's queue of claimed
rows, the heap of chats by when they are ready, how many rows are held (in all and of each
broadcast), and the steps every part of the engine takes on them.

``bot.delivery.engine.Delivery`` makes one and hands it to the parts that need it: the
claimer (``claims``) fills the queues from the outbox, the workers (``engine``) take the
chat ready first and send from it, the failure policy (``retries``) takes out the rows a
failed send leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from bot.delivery.rendering import Renderer
from bot.models import Outgoing
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


class Queues:
    """The claimed rows in memory, queued per chat, and the chats by when they are ready.

    ``window`` says how many sends may be under way at once (the engine's workers): enough
    rows are kept for each to have one ready and another behind it (:meth:`mark_low_water`).
    ``claim_wake`` is the claimer's: set when more rows are wanted (fewer than the low
    water mark, none at all) or may be due. ``on_broadcast_row`` is told of a broadcast of
    which a row was completed and none is held any more (:meth:`broadcasts_progressed`).
    """

    def __init__(
        self,
        *,
        renderer: Renderer,
        claim_batch: int,
        window: Callable[[], int],
        on_broadcast_row: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        # The messages of claimed rows, rendered once for every chat that gets the same;
        # a row's pages are forgotten when it leaves memory.
        self.renderer = renderer
        self.chats: dict[int, ChatQueue] = {}  # by chat pk
        self.claim_wake = asyncio.Event()
        self.stopping = False
        self.in_memory = 0  # rows held
        self.low_water = 0  # fewer rows in memory than this: claim more
        self._claim_batch = claim_batch
        self._window = window
        self._on_broadcast_row = on_broadcast_row
        self._heap: list[tuple[float, int, int]] = []
        self._seq = itertools.count()
        self._wake = asyncio.Event()  # the workers': a chat may be ready, or the engine stops
        # Rows of each broadcast in memory: the broadcast's progress is looked at when this
        # instance holds none of it any more, not after every row (one aggregate per row
        # would cost as much as the sends of a large broadcast).
        self._of_broadcast: Counter[int] = Counter()

    def start(self) -> None:
        """Work begins (again): :meth:`take` waits for chats to be ready."""
        self.stopping = False

    def stop(self) -> None:
        """Work ends: :meth:`take` returns None, and the claimer is woken to see it."""
        self.stopping = True
        self._wake.set()
        self.claim_wake.set()

    def reset(self) -> None:
        """Every row leaves memory (the engine stopped, and its claims were released)."""
        self.chats.clear()
        self._heap.clear()
        self.renderer.clear()
        self.in_memory = 0
        self._of_broadcast.clear()

    def mark_low_water(self) -> None:
        """Keep enough rows in memory for every worker of the window to have one ready and
        another behind it; a window that grew past the rows held wakes the claimer now, not
        once the rows held have run down to the old mark."""
        self.low_water = max(self._claim_batch // 2, self._window() * 2)
        if self.in_memory < self.low_water:
            self.claim_wake.set()

    def add(self, row: OutboxRow, record: ChatRecord | None) -> None:
        """A claimed row joins its chat's queue; a chat with none yet gets one (for
        ``record``), ready now. Without either the row is left out."""
        queue = self.chats.get(row.chat_pk)
        if queue is None:
            if record is None:
                return
            queue = self.chats[row.chat_pk] = ChatQueue(record=record)
            self.schedule(queue, time.monotonic())
        queue.rows.append(row)
        self.in_memory += 1
        if row.broadcast_id is not None:
            self._of_broadcast[row.broadcast_id] += 1

    def schedule(self, queue: ChatQueue, at: float) -> None:
        """The chat is ready at ``at`` (``time.monotonic()``)."""
        queue.ready_at = at
        heapq.heappush(self._heap, (at, next(self._seq), queue.record.pk))
        self._wake.set()

    def ready_by(self, at: float) -> bool:
        """Whether a chat is ready by ``at``."""
        return bool(self._heap) and self._heap[0][0] <= at

    async def take(self) -> ChatQueue | None:
        """The chat ready first, now busy (one worker at a time); None once stopping."""
        while not self.stopping:
            now = time.monotonic()
            while self._heap and self._heap[0][0] <= now:
                _, _, pk = heapq.heappop(self._heap)
                queue = self.chats.get(pk)
                if queue is not None and not queue.busy and queue.rows:
                    queue.busy = True
                    return queue
            timeout = self._heap[0][0] - now if self._heap else None
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=timeout)
        return None

    def put_back(self, queue: ChatQueue) -> None:
        """A worker is done with the chat for now: ready again at its ``ready_at`` (or
        now) while it has rows, else out of memory."""
        queue.busy = False
        if queue.rows:
            self.schedule(queue, max(queue.ready_at, time.monotonic()))
        else:
            self.chats.pop(queue.record.pk, None)

    def pop(self, queue: ChatQueue) -> None:
        """The chat's first row leaves memory (sent, failed, or back in the outbox)."""
        row = queue.rows.popleft()
        self.renderer.forget(row.id)
        queue.parts = None
        queue.next_part = 0
        queue.thread = None
        self._release(row)

    def clear(self, queue: ChatQueue, rows: Iterable[OutboxRow] | None = None) -> None:
        """The chat's rows leave memory: all of them, or only ``rows`` (those a caller gave
        back to the outbox; rows claimed for the chat while it wrote stay, to be sent)."""
        leaving = list(queue.rows) if rows is None else list(rows)
        # By identity, not id: a row given back and claimed again at once is in the queue
        # twice, the copy given back and the copy claimed anew, and only the first leaves.
        gone = {id(row) for row in leaving}
        for row in leaving:
            self.renderer.forget(row.id)
            self._release(row)
        kept = [row for row in queue.rows if id(row) not in gone]
        queue.rows.clear()
        queue.rows.extend(kept)
        queue.parts = None
        queue.next_part = 0
        queue.thread = None

    def _release(self, row: OutboxRow) -> None:
        self.in_memory -= 1
        if self.in_memory in (0, self.low_water - 1):
            self.claim_wake.set()
        if row.broadcast_id is not None:
            self._of_broadcast[row.broadcast_id] -= 1
            if self._of_broadcast[row.broadcast_id] <= 0:
                del self._of_broadcast[row.broadcast_id]

    async def broadcasts_progressed(self, broadcast_ids: Iterable[int | None]) -> None:
        """Rows of these broadcasts were completed (sent or failed for good): a broadcast
        of which this instance holds no more rows may be finished. Whichever instance
        completes the last row looks after it has recorded that row, so one of them sees
        the broadcast finished."""
        if self._on_broadcast_row is None:
            return
        for broadcast_id in broadcast_ids:
            if broadcast_id is not None and broadcast_id not in self._of_broadcast:
                try:
                    await self._on_broadcast_row(broadcast_id)
                except Exception:  # a report must not stop deliveries
                    log.exception("broadcast progress failed")


def ctx(record: ChatRecord) -> dict[str, object]:
    """The chat's fields of a log record."""
    return {"chat": record.chat.address, "platform": record.chat.platform.value}
