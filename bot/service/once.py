"""A one-shot command's sending (``trendbot digest``, ``broadcast``...): what it queued,
handed to a service running on the same database, or sent here within the caps."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot import dberrors
from bot.app import App
from bot.delivery.claims import (
    ONE_SHOT_OUTAGE_SECONDS,
    REQUEUE_HOLD_SECONDS,
    SWEEP_EVERY_SECONDS,
)
from bot.delivery.recording import DB_RETRY_FIRST_SECONDS, DB_RETRY_MAX_SECONDS
from bot.ops.leader import RENEW_SECONDS, Leases, services_present
from bot.store import standing as progress
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
# Messages due within this long are still to be sent, not left for a retry: the claims of
# a worker that stopped come back due REQUEUE_HOLD_SECONDS after a sweep (one every
# SWEEP_EVERY_SECONDS); a retry's backoff is far longer (24 s at the least).
SOON_SECONDS = REQUEUE_HOLD_SECONDS + SWEEP_EVERY_SECONDS


@dataclass(frozen=True, slots=True)
class Handover:
    """What a one-shot command's sending came to, for its summary to say truly."""

    sent_here: int = 0  # messages this process sent itself
    # A trendbot run was sending the rest when the command returned: what is still to be
    # sent is the run's, handed over to it (not left for a retry).
    run_sending: bool = False


async def send_once(
    app: App,
    *,
    say: Callable[[str], None],
    row_ids: Sequence[int] = (),
    chat_pks: Sequence[int] | None = None,
    broadcast: int | None = None,
) -> Handover:
    """Send what a one-shot command queued (``row_ids`` of these chats, or the rows of
    ``broadcast``) within the platforms' caps, and return when it is sent or left queued
    for a later retry.

    With a service running on this database, its delivery sends them: one process paces
    the caps, instead of two each at the full cap (a 429 for every message over, and
    Telegram lengthens its waits for bots that keep going over). This process waits on the
    outbox. With no service running, it sends them itself, as the service would, until
    one starts; a service that stops leaves the rest to this process again. A service of
    this host whose lease lapsed while it still runs (it cannot write: a full disk) has
    not stopped: the command waits on it.
    """
    up_to_id = max(row_ids) if row_ids else None
    if broadcast is None and up_to_id is None:
        return Handover()  # nothing is due

    async def count_due(*, ahead: float = SOON_SECONDS) -> int:
        # Soon due counts as due: a dead worker's claims come back held a few seconds.
        soon = utcnow() + dt.timedelta(seconds=ahead)
        async with reader(app.engine).connect() as conn:
            return await progress.due_count(
                conn, now=soon, up_to_id=up_to_id, chat_pks=chat_pks, broadcast=broadcast
            )

    async def due() -> int:
        return await _riding_out(count_due)

    async def coming() -> int:
        """Messages not due yet that soon will be (a stopped process's, held)."""
        return await due() - await _riding_out(lambda: count_due(ahead=0.0))

    async def services() -> int:
        return await _riding_out(lambda: services_present(app.engine))

    sent_here = 0
    taking_over = False
    moved_at = time.monotonic()
    while True:
        if not await services():
            finished, sent = await _send_here(
                app, chat_pks=chat_pks, broadcast=broadcast, say=say if taking_over else None
            )
            sent_here += sent
            if finished:
                # What a stopped process held comes back due a few seconds later: sent
                # here too, as long as it keeps moving. (What is due now and was not sent
                # here is another's, or for a platform this process cannot reach.)
                moved_at = time.monotonic() if sent else moved_at
                if not await coming() or time.monotonic() - moved_at > HANDOFF_STALL_SECONDS:
                    return Handover(sent_here=sent_here)
                await asyncio.sleep(HANDOFF_POLL_SECONDS)
                taking_over = False
                continue
            say("A trendbot run started on this database; it sends the rest.")
        left = await due()
        if not left:
            return Handover(sent_here=sent_here)
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
                return Handover(sent_here=sent_here)
            if not await services():
                taking_over = True  # said once this process holds its lease
                break
            if time.monotonic() - moved_at > HANDOFF_STALL_SECONDS:
                say(
                    f"Nothing was sent for {HANDOFF_STALL_SECONDS:.0f} s; the rest stays "
                    "queued for the running trendbot run."
                )
                return Handover(sent_here=sent_here, run_sending=True)
        else:
            return Handover(sent_here=sent_here)


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


async def _send_here(
    app: App,
    *,
    chat_pks: Sequence[int] | None,
    broadcast: int | None,
    say: Callable[[str], None] | None,
) -> tuple[bool, int]:
    """Send from this process what is due (of these chats, or of this broadcast): True
    when that is done, False when a service started on the database meanwhile (this
    process then stops sending, and gives back what it had not begun; the service sends
    nothing until this process has let go of its ``oneshot:`` lease); and how many
    messages it sent. ``say`` is given when a service stopped while the command waited
    on it: that is said once this process holds its lease (the database takes writes)."""
    delivery = app.delivery()
    lease = Leases(engine=app.engine, holder=delivery.worker_id)
    # The lease first, then the look: a service starting meanwhile registers its presence
    # first, then looks for this lease, so at least one of the two sees the other.
    await _riding_out(_returning_zero(lease.hold_one_shot))
    renewed = time.monotonic()
    if await services_present(app.engine):
        await lease.release_one_shot()
        return False, 0
    if say is not None:
        say("The trendbot run stopped; sending the rest from here.")
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
            if await _riding_out(lambda: services_present(app.engine)):
                stop.set()
                await drain
                return False, delivery.sent
        await drain
        return True, delivery.sent
    finally:
        if not drain.done():
            drain.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await drain
        with contextlib.suppress(Exception):  # else it expires
            await lease.release_one_shot()


def _returning_zero(write: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        await write()
        return 0

    return run
