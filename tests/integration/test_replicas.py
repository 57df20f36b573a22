"""Several ``trendbot run`` replicas on PostgreSQL share the work: every delivery exactly
once, the overall cap held, and a killed leader replaced within 30 s."""

from __future__ import annotations

import asyncio
import collections
import gc
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.engine import SHUTDOWN_GRACE_SECONDS
from bot.ops.leader import LEADER
from bot.store import admin as admin_store
from bot.store.schema import leases, outbox
from tests.fakes.telegram_api import FakeTelegram, TelegramCall
from tests.integration.test_admin import subscribers
from tests.integration.test_crash import IN_FLIGHT_BOUND, start_run
from tests.run_env import telegram_env
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CAP = 200
# Chats of the first and third fan-outs: 12.5 s each at the cap, long enough for every
# replica to take its share, a leader to be killed and a replica to be stopped midway.
FANOUT = 2500
# SIGTERM: in-flight sends get 10 s (SHUTDOWN_GRACE_SECONDS); the channels and the HTTP
# server stop after them.
SHUTDOWN_BOUND = SHUTDOWN_GRACE_SECONDS + 5


@pytest.fixture
def no_gc_pauses() -> Iterator[None]:
    """The fake Bot API server runs in this process and counts arrivals against the cap
    as they reach it: a collection pause here would hold requests back and count them
    together after it, a burst the replicas never sent."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


async def broadcast(engine: AsyncEngine, text: str, *, tag: str) -> int:
    async with engine.begin() as conn:
        _, queued = await admin_store.broadcast_now(
            conn, text=text, audience=admin_store.Audience(tags=(tag,)), created_by="shell"
        )
    return queued


async def leader(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        return (
            await conn.execute(select(leases.c.holder).where(leases.c.name == LEADER))
        ).scalar_one_or_none()


async def sending(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int(
            (
                await conn.execute(
                    select(func.count()).where(outbox.c.status.in_(("queued", "sending")))
                )
            ).scalar_one()
        )


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_three_replicas_share_the_queue(
    engine: AsyncEngine,
    database_url: str,
    tmp_path: Path,
    clean_env: dict[str, str],
    no_gc_pauses: None,
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("several replicas need PostgreSQL; SQLite serves one run process")
    (tmp_path / "wiki").mkdir()
    chats = await subscribers(engine, FANOUT)
    others = await subscribers(engine, 1500, start=90_000, tag="vision")
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.5) as tg:
        tg.enforce_limits = True
        tg.global_rate = tg.paid_rate = CAP
        tg.latency = 0.02
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=str(tmp_path / "wiki"),
            **telegram_env(tg),
            TELEGRAM_RATE_PER_SECOND=str(CAP),
            TELEGRAM_PAID_BROADCAST="true",  # over 30 a second
            HTTP_PORT="0",
            PTB_TIMEDELTA="true",
        )
        replicas = [start_run(env, tmp_path) for _ in range(3)]
        try:
            # Phase 1: 2,500 deliveries shared by three replicas.
            started = time.monotonic()
            assert await broadcast(engine, "First", tag="rl") == FANOUT
            first = lambda: sent(tg, "First")  # noqa: E731
            await wait_until(lambda: len({c.chat_id for c in first()}) >= FANOUT, seconds=180)
            await asyncio.sleep(1.0)  # anything extra would arrive now
            per_chat = collections.Counter(c.chat_id for c in first())
            assert sorted(per_chat) == chats and set(per_chat.values()) == {1}  # exactly once
            assert tg.limit_violations == []  # the overall cap held across replicas
            elapsed = time.monotonic() - started
            assert elapsed >= FANOUT / CAP * 0.9

            # Phase 2: the leader is killed in the middle of the next fan-out.
            holder = await leader(engine)
            assert holder is not None
            pids = {str(p.pid): p for p in replicas}
            killed = pids[holder.split(":")[1]]
            await broadcast(engine, "Second", tag="vision")
            second = lambda: sent(tg, "Second")  # noqa: E731
            await wait_until(lambda: len(second()) >= 300, seconds=60)
            killed.send_signal(signal.SIGKILL)
            killed.wait(timeout=10)
            died = time.monotonic()
            await wait_until(lambda: _changed(engine, holder), seconds=30)
            assert time.monotonic() - died < 30
            await wait_until(lambda: len({c.chat_id for c in second()}) >= len(others), seconds=180)
            # The claims the leader held when it died go back to the queue and are sent.
            await wait_until(lambda: _drained(engine), seconds=60)
            per_chat = collections.Counter(c.chat_id for c in second())
            assert max(per_chat.values()) <= 2
            assert sum(n - 1 for n in per_chat.values()) <= IN_FLIGHT_BOUND

            # Phase 3: SIGTERM on a replica in the middle of a fan-out: it exits 0 within
            # the bounded grace, and leaves nothing half-sent: every chat gets it once.
            survivor = next(p for p in replicas if p is not killed)
            await broadcast(engine, "Third", tag="rl")
            third = lambda: sent(tg, "Third")  # noqa: E731
            await wait_until(lambda: len(third()) >= 500, seconds=60)
            survivor.send_signal(signal.SIGTERM)
            terminated = time.monotonic()
            assert await asyncio.to_thread(survivor.wait, 30) == 0
            assert time.monotonic() - terminated < SHUTDOWN_BOUND
            await wait_until(lambda: len({c.chat_id for c in third()}) >= FANOUT, seconds=180)
            await wait_until(lambda: _drained(engine), seconds=60)
            per_chat = collections.Counter(c.chat_id for c in third())
            assert sorted(per_chat) == chats and set(per_chat.values()) == {1}
        finally:
            for process in replicas:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in replicas:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
    assert TOKEN not in (tmp_path / "run.log").read_text()


def sent(tg: FakeTelegram, text: str) -> list[TelegramCall]:
    return [c for c in tg.calls("sendMessage", ok=True) if c.params.get("text") == text]


async def _drained(engine: AsyncEngine) -> bool:
    return await sending(engine) == 0


async def _changed(engine: AsyncEngine, old: str) -> bool:
    now = await leader(engine)
    return now is not None and now != old
