"""A one-shot command's sending (``trendbot digest``, ``broadcast``...): what it queued,
handed to a service running on the same database, or sent here within the caps."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from bot import dberrors
from bot.app import App
from bot.delivery.claims import ONE_SHOT_OUTAGE_SECONDS
from bot.delivery.recording import DB_RETRY_FIRST_SECONDS, DB_RETRY_MAX_SECONDS
from bot.ops.leader import RENEW_SECONDS, Leases, live_services
from bot.store import outbox
from bot.store.engine import reader
from bot.util import utcnow

log = logging.getLogger("bot.service")


# A one-shot command looks this often whether a service runs on its database, and at the
# outbox while it waits on one...
HANDOFF_POLL_SECONDS = 0.5
# ...and stops waiting when none of its messages has been sent for this long (longer than a
# rate-limited message waits in a service's memory, MAX_INLINE_WAIT_SECONDS): the rest stays
# queued, and the service sends it when it can.
HANDOFF_STALL_SECONDS = 90.0


async def send_once(
    app: App,
    *,
    say: Callable[[str], None],
    row_ids: Sequence[int] = (),
    chat_pks: Sequence[int] | None = None,
    broadcast: int | None = None,
) -> None:
    """Send what a one-shot command queued (``row_ids`` of these chats, or the rows of
    ``broadcast``) within the platforms' caps, and return when it is sent or left queued
    for a later retry.

    With a service running on this database, its delivery sends them: one process paces
    the caps, instead of two each at the full cap (a 429 for every message over, and
    Telegram lengthens its waits for bots that keep going over). This process waits on the
    outbox. With no service running, it sends them itself, as the service would, until
    one starts; a service that stops leaves the rest to this process again.
    """
    up_to_id = max(row_ids) if row_ids else None
    if broadcast is None and up_to_id is None:
        return  # nothing is due

    async def count_due() -> int:
        async with reader(app.engine).connect() as conn:
            return await outbox.due_count(
                conn, now=utcnow(), up_to_id=up_to_id, chat_pks=chat_pks, broadcast=broadcast
            )

    async def due() -> int:
        return await _riding_out(count_due)

    async def services() -> int:
        return await _riding_out(lambda: live_services(app.engine))

    while True:
        if not await services():
            if await _send_here(app, chat_pks=chat_pks, broadcast=broadcast):
                return
            say("A trendbot run started on this database; it sends the rest.")
        left = await due()
        if not left:
            return
        say(
            "A trendbot run is sending on this database: it sends these messages within "
            f"its rate limits ({left} to send); waiting for them."
        )
        moved_at = time.monotonic()
        while left:
            await asyncio.sleep(HANDOFF_POLL_SECONDS)
            now_left = await due()
            if now_left != left:
                left, moved_at = now_left, time.monotonic()
            if not left:
                return
            if not await services():
                say("The trendbot run stopped; sending the rest from here.")
                break
            if time.monotonic() - moved_at > HANDOFF_STALL_SECONDS:
                say(
                    f"Nothing was sent for {HANDOFF_STALL_SECONDS:.0f} s; the rest stays "
                    "queued for the running trendbot run."
                )
                return
        else:
            return


async def _riding_out(read: Callable[[], Awaitable[int]]) -> int:
    """``read()``, tried again while the database is away, for ``ONE_SHOT_OUTAGE_SECONDS``
    at the most: a one-shot command waiting on a service rides out a brief outage (a
    restart of the server) and still reports; a longer one raises the database's error."""
    deadline = time.monotonic() + ONE_SHOT_OUTAGE_SECONDS
    delay = DB_RETRY_FIRST_SECONDS
    while True:
        try:
            return await read()
        except Exception as exc:
            if not dberrors.is_outage(exc) or time.monotonic() > deadline:
                raise
            log.warning("database unavailable, waiting: %s", dberrors.reason(exc))
            await asyncio.sleep(delay)
            delay = min(delay * 2, DB_RETRY_MAX_SECONDS)


async def _send_here(app: App, *, chat_pks: Sequence[int] | None, broadcast: int | None) -> bool:
    """Send from this process what is due (of these chats, or of this broadcast): True
    when that is done, False when a service started on the database meanwhile (this
    process then stops sending, and gives back what it had not begun; the service sends
    nothing until this process has let go of its ``oneshot:`` lease)."""
    delivery = app.delivery()
    lease = Leases(engine=app.engine, holder=delivery.worker_id)
    # The lease first, then the look: a service starting meanwhile registers its presence
    # first, then looks for this lease, so at least one of the two sees the other.
    await lease.hold_one_shot()
    renewed = time.monotonic()
    if await live_services(app.engine):
        await lease.release_one_shot()
        return False
    stop = asyncio.Event()
    drain = asyncio.create_task(delivery.drain(chat_pks=chat_pks, broadcast=broadcast, stop=stop))
    try:
        while not drain.done():
            await asyncio.wait({drain}, timeout=HANDOFF_POLL_SECONDS)
            if drain.done():
                break
            if time.monotonic() - renewed > RENEW_SECONDS:
                with contextlib.suppress(Exception):  # the next turn renews it, in time
                    await lease.hold_one_shot()
                    renewed = time.monotonic()
            if await _riding_out(lambda: live_services(app.engine)):
                stop.set()
                await drain
                return False
        await drain
        return True
    finally:
        if not drain.done():
            drain.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await drain
        with contextlib.suppress(Exception):  # else it expires
            await lease.release_one_shot()
