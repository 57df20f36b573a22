"""Claiming (:class:`Claimer`): the outbox rows a delivery engine takes into memory, and
the claims of workers that stopped.

The claimer claims rows in batches into the chats' queues (``bot.delivery.queues``)
whenever fewer than the low water mark are in memory (PostgreSQL: ``FOR UPDATE SKIP
LOCKED``; one worker per chat at a time, across replicas), keeps this worker's claims
fresh, requeues those of dead workers (at once for a process of this host that is gone,
else once the claim is older than ``CLAIM_TTL_SECONDS``), and gives its own back when the
engine stops. Whose claims are whose: :func:`new_worker_id`, :func:`owner_is_dead`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

from bot import dberrors
from bot.delivery.queues import Queues
from bot.delivery.recording import DB_RETRY_FIRST_SECONDS, DB_RETRY_MAX_SECONDS, DatabaseHealth
from bot.delivery.rendering import Claimed, pages_of
from bot.models import Platform
from bot.store import chats as chat_store
from bot.store import outbox
from bot.store import pages as page_store

log = logging.getLogger("bot.delivery")

# A worker that stops refreshing its claims for this long is presumed dead.
CLAIM_TTL_SECONDS = 120.0
# How often a running worker looks for claims of dead workers: those of a process of this
# host that is gone are requeued at once, others once their claim is older than the TTL.
SWEEP_EVERY_SECONDS = 5.0
# A requeued message waits this long (the longest per-chat interval, a Telegram group's):
# the one its dead worker had in flight may have reached the chat just before.
REQUEUE_HOLD_SECONDS = 3.0
TOUCH_EVERY_SECONDS = 30.0
# The claimer looks at the outbox at least this often (rows come due by their ``not_before``);
# new rows and a shortage in memory wake it at once.
CLAIM_EVERY_SECONDS = 1.0
# A one-shot command (``digest --now``, ``broadcast``) rides out an outage this long, then
# gives up with the database's error (the service rides out any).
ONE_SHOT_OUTAGE_SECONDS = 60.0
# What the engine was doing when the database failed it (``DatabaseHealth``).
CLAIMING = "claiming messages"
RECLAIMING = "reclaiming messages"
READING = "reading pages to send"


class Claimer:
    """Fills the chats' queues (:class:`~bot.delivery.queues.Queues`) from the outbox as
    worker ``worker_id``: claims rows while fewer than the low water mark are in memory,
    keeps its claims fresh, requeues those of workers that stopped, and gives its own back
    when the engine stops. ``platforms`` says whose messages may be claimed now (not those
    of a platform that refused the credentials); ``health`` hears how the database
    answered."""

    def __init__(
        self,
        *,
        engine: AsyncEngine,
        queues: Queues,
        health: DatabaseHealth,
        claim_batch: int,
        platforms: Callable[[], Iterable[Platform]],
        worker_id: str | None = None,
    ) -> None:
        self.worker_id = worker_id or new_worker_id()
        # When the claim or touch under way began (None: none is): a database that holds
        # it without an error (a table locked by a migration) stalls deliveries too.
        self.asking_since: float | None = None
        self._engine = engine
        self._queues = queues
        self._health = health
        self._claim_batch = claim_batch
        self._platforms = platforms

    async def requeue_stale(self) -> None:
        """The claims of dead workers go back to the queue: at once for a process of this
        host that is gone, else once older than ``CLAIM_TTL_SECONDS``; due in
        ``REQUEUE_HOLD_SECONDS``. The database away leaves them to the next sweep."""
        now = page_store.utcnow()
        cutoff = now - dt.timedelta(seconds=CLAIM_TTL_SECONDS)
        try:
            with self._asking():
                async with self._engine.begin() as conn:
                    owners = await outbox.claim_owners(conn)
                    dead = [owner for owner in owners if owner_is_dead(owner)]
                    count = await outbox.requeue_stale(
                        conn,
                        claimed_before=cutoff,
                        dead_owners=dead,
                        not_before=now + dt.timedelta(seconds=REQUEUE_HOLD_SECONDS),
                    )
        except Exception as exc:
            if not dberrors.is_outage(exc):
                raise
            self._health.failed(exc, doing=RECLAIMING)
            return  # the next sweep
        self._health.ok(RECLAIMING)
        if count:
            log.warning("requeued %d messages claimed by a worker that stopped", count)

    async def run(
        self, *, only_chats: Sequence[int] | None, only_broadcast: int | None, drain: bool
    ) -> None:
        """Claim until the queues stop; with ``drain``, return once nothing is due and
        nothing is held. The database away is waited out (a ``drain`` gives up after
        ``ONE_SHOT_OUTAGE_SECONDS`` with its error)."""
        queues = self._queues
        last_touch = time.monotonic()
        last_sweep = time.monotonic()
        delay = DB_RETRY_FIRST_SECONDS
        away_since: float | None = None
        while not queues.stopping:
            # After an outage this worker's claims are touched first: a replica sweeping
            # must not take them for those of a dead worker while their records wait.
            touch = away_since is not None or time.monotonic() - last_touch > TOUCH_EVERY_SECONDS
            try:
                with self._asking():
                    got = await self._claim_and_touch(
                        only_chats=only_chats, only_broadcast=only_broadcast, touch=touch
                    )
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    raise
                self._health.failed(exc, doing=CLAIMING)
                now = time.monotonic()
                away_since = away_since if away_since is not None else now
                if drain and now - away_since > ONE_SHOT_OUTAGE_SECONDS:
                    raise
                queues.claim_wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(queues.claim_wake.wait(), timeout=delay)
                delay = min(delay * 2, DB_RETRY_MAX_SECONDS)
                continue
            # Health is not cleared here: with enough rows in memory nothing was asked of
            # the database (a claim or a touch that commits clears it, in their turn).
            away_since, delay = None, DB_RETRY_FIRST_SECONDS
            if got is None:  # touched; the claim is the next turn
                last_touch = time.monotonic()
                continue
            if drain and got == 0 and queues.in_memory == 0:
                return
            now = time.monotonic()
            if not drain and now - last_sweep > SWEEP_EVERY_SECONDS:
                await self.requeue_stale()
                last_sweep = now
            if got and queues.in_memory < queues.low_water:
                continue
            # Woken when rows are planned, when those in memory fall below the low water
            # mark or run out, and when a platform's credentials work again.
            queues.claim_wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(queues.claim_wake.wait(), timeout=CLAIM_EVERY_SECONDS)

    @contextlib.contextmanager
    def _asking(self) -> Iterator[None]:
        """While the database is asked to claim, touch or sweep (see ``asking_since``)."""
        self.asking_since = time.monotonic()
        try:
            yield
        finally:
            self.asking_since = None

    async def _claim_and_touch(
        self, *, only_chats: Sequence[int] | None, only_broadcast: int | None, touch: bool
    ) -> int | None:
        """Claim more rows when fewer than the low water mark are in memory; first keep
        this worker's claims fresh when ``touch`` (then None is returned, and the claim
        waits for the next turn: the touch is what must not wait)."""
        if touch:
            await self.touch()
            return None
        self._queues.mark_low_water()
        if self._queues.in_memory < self._queues.low_water:
            return await self.claim(only_chats=only_chats, only_broadcast=only_broadcast)
        return 0

    async def touch(self) -> None:
        """Keep this worker's claims fresh (``requeue_stale`` leaves them alone)."""
        async with self._engine.begin() as conn:
            await outbox.touch_claims(conn, worker=self.worker_id, now=page_store.utcnow())
        self._health.ok(CLAIMING)

    async def claim(
        self, *, only_chats: Sequence[int] | None = None, only_broadcast: int | None = None
    ) -> int:
        """Claim a batch of due rows (of these chats, of this broadcast) into their chats'
        queues, with the pages they will be rendered from; return how many."""
        platforms = [p.value for p in self._platforms()]
        if not platforms:
            return 0
        queues = self._queues
        async with self._engine.begin() as conn:
            rows = await outbox.claim(
                conn,
                worker=self.worker_id,
                limit=self._claim_batch,
                now=page_store.utcnow(),
                platforms=platforms,
                only_chats=only_chats,
                only_broadcast=only_broadcast,
            )
            # Every chat of the batch, not only those without a queue now: a worker may
            # empty a queue, taking it out of memory, while this reads.
            records = await chat_store.get_many(conn, sorted({r.chat_pk for r in rows}))
            # The pages of the whole batch in one go, not three queries for every message;
            # each message is rendered with its pages as they were when it was claimed.
            entries = {r.id: pages_of(r) for r in rows}
            page_ids = {page_id for pages in entries.values() for page_id, _ in pages or ()}
            claimed = Claimed(
                await page_store.load_pages(conn, sorted(page_ids)) if page_ids else {}
            )
        self._health.ok(CLAIMING, READING)
        for row in rows:
            if entries[row.id] is not None:
                queues.renderer.keep(row.id, claimed)
            queues.add(row, records.get(row.chat_pk))
        return len(rows)

    async def release(self) -> None:
        """Give back the rows this worker claimed and did not start (the engine stopped).
        The database away leaves them to expire (``CLAIM_TTL_SECONDS``), or to a replica of
        this host that sees this process gone; they are sent then."""
        try:
            async with self._engine.begin() as conn:
                released = await outbox.release_claims(conn, worker=self.worker_id)
        except Exception as exc:
            if not dberrors.is_outage(exc):
                raise
            log.warning("claims left to expire: %s", dberrors.reason(exc))
        else:
            if released:
                log.info("left %d messages queued for later", released)


def new_worker_id() -> str:
    """``host:pid:random``: lets a restarted process on the same host tell at once which
    claims belonged to a process that no longer exists."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_alive_here(owner: str) -> bool:
    """True when ``owner`` names a process of this host that still exists."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    return not owner_is_dead(owner)


def owner_is_dead(owner: str) -> bool:
    """True when ``owner`` names a process of this host that is gone."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
