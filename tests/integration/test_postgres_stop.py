"""A real PostgreSQL server stopped during a slow shutdown checkpoint while the bot fans out,
and started again: the issue's fault itself, beside its protocol-level reproduction in
``test_outage_refusals.py``.

The shared server is never stopped: the test runs its own cluster
(``tests/fakes/pg_cluster.py``) and stops it with ``pg_ctl stop -m fast``. The sessions
are ended (FATAL 57P01), the checkpoint is held a few seconds over the dirty buffers left
for it, the postmaster answers every connect FATAL 57P03 "the database system is shutting
down" meanwhile, then nothing listens until the server is started again. Through all of
it the bot takes each error for an outage (``bot/dberrors.py``), keeps to the documented
bound of sends awaiting their records (the cap's one second), no worker dies, and once the
server is back every chat gets the message once.

What the stop produced (PostgreSQL 15, asyncpg 0.32, SQLAlchemy 2.0; eight runs, 7
December 2026), seen by a probe beside the bot and by the bot itself (every error it
classified, all of them outages):

* the sessions open when the stop begins: the server's FATAL 57P01 closes them, and asyncpg
  raises it on their next use as "connection is closed" (SQLAlchemy's ``InterfaceError``,
  no SQLSTATE; 6 runs of 8), as 08003 "connection was closed in the middle of operation:
  terminating connection due to administrator command" (a statement under way; 1 run), or
  as SQLAlchemy's ``InternalError`` with its connection invalidated (asyncpg's
  ``InternalClientError``, no SQLSTATE; 1 run). No error of the bot carried 57P01 itself;
* a connect while the checkpoint is held: 57P03 "the database system is shutting down"
  (the probe: 29 in 3 s; the bot: 5, its records tried again after 0.5, 1 and 2 s);
* a connect once the server has exited: ``ConnectionRefusedError`` (the bot: 2), or
  ``ConnectionResetError`` at the moment it exits.

The checkpoint itself wrote 12,470 buffers (97 MB) in 0.04 s once resumed: without the
hold, the window of 57P03 on this machine lasts a fraction of a second. At 20 a second,
exactly 20 sends were unrecorded after 5 s away, every run.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import dberrors
from bot.store.engine import create_engine, upgrade
from tests.conftest import NO_POSTGRES
from tests.fakes.pg_cluster import USER, PgCluster
from tests.fanout import fan_out
from tests.integration.test_admin import subscribers
from tests.integration.test_outage_refusals import CAP, RECOVERY_SECONDS, recorded
from tests.integration.test_replicas import broadcast
from tests.waiting import wait_until

CHATS = 160
HOLD_SECONDS = 3.0  # the shutdown checkpoint held: a connect meets 57P03 meanwhile
DOWN_SECONDS = 5.0  # from the stop's start to the count, as the refusals test's 4 s
BALLAST_MB = 96  # dirty buffers the shutdown checkpoint writes (of 128 MB)
PROBE_INTERVAL = 0.1


@pytest.fixture
async def cluster() -> AsyncIterator[PgCluster]:
    if not os.environ.get("TEST_DATABASE_URL"):
        pytest.skip(NO_POSTGRES)  # PostgreSQL's tests run where PostgreSQL is configured
    async with PgCluster(shared_buffers_mb=128) as pg:
        yield pg


def answer(exc: BaseException) -> str:
    """An error as the tallies name it: its SQLSTATE, else its class."""
    return dberrors.sqlstate(exc) or type(exc).__name__


async def probe(pg: PgCluster, stop: Callable[[], Awaitable[None]]) -> collections.Counter[str]:
    """Run ``stop``, and tally what the server answers meanwhile: a session opened before
    it (its first error) and a connect tried every ``PROBE_INTERVAL``."""
    seen: collections.Counter[str] = collections.Counter()
    session: asyncpg.Connection | None = await asyncpg.connect(
        host="127.0.0.1", port=pg.port, user=USER, database=USER
    )
    stopping = asyncio.create_task(stop())
    try:
        while not stopping.done():
            if session is not None:
                try:
                    await session.fetchval("SELECT 1")
                except Exception as exc:
                    seen[f"session {answer(exc)}"] += 1
                    session = None
            try:
                other = await asyncpg.connect(
                    host="127.0.0.1", port=pg.port, user=USER, database=USER, timeout=10
                )
            except Exception as exc:
                seen[f"connect {answer(exc)}"] += 1
            else:
                seen["connect ok"] += 1
                await other.close()
            await asyncio.wait({stopping}, timeout=PROBE_INTERVAL)
        await stopping
    finally:
        if session is not None:
            session.terminate()
        if not stopping.done():
            stopping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stopping
    return seen


async def count_recorded(url: str) -> int:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            return await recorded(conn)
    finally:
        await engine.dispose()


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_fan_out_rides_out_a_real_stop_and_start(
    cluster: PgCluster, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CAP a second, 64 workers, a real fast stop with its checkpoint held HOLD_SECONDS:
    at most CAP sends wait for their records, and all are sent once after the start."""
    caplog.set_level(logging.WARNING, logger="bot")
    met: collections.Counter[tuple[str, bool]] = collections.Counter()
    is_outage = dberrors.is_outage

    def classified(exc: BaseException) -> bool:
        verdict = is_outage(exc)
        met[answer(exc), verdict] += 1
        return verdict

    monkeypatch.setattr(dberrors, "is_outage", classified)

    setup = create_engine(cluster.url())
    try:
        await upgrade(setup)
        chats = await subscribers(setup, CHATS)
        assert await broadcast(setup, "Stopped", tag="rl") == len(chats)
    finally:
        await setup.dispose()
    await cluster.dirty(BALLAST_MB)

    bot_engine: AsyncEngine = create_engine(cluster.url())
    try:
        async with fan_out(bot_engine, cap=CAP) as sending:
            await wait_until(lambda: sending.delivered() >= 10, seconds=60)
            began = time.monotonic()
            answers = await probe(
                cluster, lambda: cluster.stop("fast", hold_checkpoint=HOLD_SECONDS)
            )
            # Down: the bot's connects are refused. Let the outage last, as a slow restart.
            await asyncio.sleep(max(0.0, began + DOWN_SECONDS - time.monotonic()))
            assert sending.delivery.problem is not None  # what /healthz says meanwhile
            assert not sending.task.done()
            # The records made before the stop, read where the bot cannot reach them yet.
            await cluster.start(tcp=False)
            before_stop = await count_recorded(cluster.socket_url())
            unrecorded = sending.delivered() - before_stop
            await cluster.stop("fast")
            assert 0 < unrecorded <= CAP, (unrecorded, answers, met)
            assert not sending.task.done()

            await cluster.start()
            await wait_until(lambda: sending.delivered() >= len(chats), seconds=RECOVERY_SECONDS)

            async def all_recorded() -> bool:
                return await count_recorded(cluster.url()) == len(chats)

            await wait_until(all_recorded, seconds=RECOVERY_SECONDS, interval=0.25)
    finally:
        await bot_engine.dispose()
    per_chat = sending.per_chat()
    assert sorted(int(c) for c in per_chat) == chats
    assert set(per_chat.values()) == {1}
    # The real server did shut down under the probe: its sessions ended, a connect refused
    # in its words while the checkpoint was held.
    assert answers["connect 57P03"] > 0, answers
    assert not [error for error, outage in met if not outage], met
    logged = [r.getMessage() for r in caplog.records]
    assert not any("unexpected error while delivering" in line for line in logged), logged
    assert not any("delivery worker failed" in line for line in logged), logged
    assert any("database unavailable while" in line for line in logged), logged
