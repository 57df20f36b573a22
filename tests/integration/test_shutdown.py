"""SIGTERM on a real ``trendbot run`` in the middle of a fan-out: it stops taking work,
lets the sends in flight finish (at most ``SHUTDOWN_GRACE_SECONDS``), records them, leaves
the rest queued and exits 0; the next start sends the rest, each message once."""

from __future__ import annotations

import asyncio
import collections
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.engine import SHUTDOWN_GRACE_SECONDS
from bot.store.schema import outbox
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_crash import (
    CHATS,
    TOKEN,
    planned_fan_out,
    run_env,
    start_run,
)
from tests.waiting import wait_until

# After the grace: the channels and the HTTP server stop, the leases are released.
STOP_BOUND_SECONDS = SHUTDOWN_GRACE_SECONDS + 5


async def statuses(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as conn:
        rows = await conn.execute(select(outbox.c.status, func.count()).group_by(outbox.c.status))
        return {status: int(n) for status, n in rows}


@pytest.fixture
async def fan_out(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> AsyncIterator[tuple[FakeTelegram, dict[str, str]]]:
    """CHATS chats with a message of a new page planned for each, a Telegram that takes 50 ms
    a send (a run's fan-out lasts long enough to stop it midway), and the run's environment."""
    wiki = tmp_path / "wiki"
    await planned_fan_out(engine, wiki, key="papers/2026/shutdown-test")
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.5) as tg:
        tg.latency = 0.05
        yield tg, run_env(clean_env, database_url, wiki, tg)


async def terminate(process: subprocess.Popen[bytes]) -> tuple[int, float]:
    """SIGTERM; the exit code and the seconds until the process exited."""
    process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    code = await asyncio.to_thread(process.wait, 60)
    return code, time.monotonic() - signalled


@pytest.mark.slow
async def test_sigterm_mid_fanout_leaves_nothing_half_sent(
    fan_out: tuple[FakeTelegram, dict[str, str]], engine: AsyncEngine, tmp_path: Path
) -> None:
    tg, env = fan_out

    def delivered() -> int:
        return len(tg.calls("sendMessage", ok=True))

    first = start_run(env, tmp_path)
    try:
        await wait_until(lambda: delivered() >= CHATS // 5, seconds=60)
    finally:
        code, took = await terminate(first)
    assert code == 0, (tmp_path / "run.log").read_text()[-3000:]
    assert took < STOP_BOUND_SECONDS
    at_stop = delivered()
    assert at_stop < CHATS, "the fan-out finished before the stop; nothing was tested"
    # Every message the platform got is recorded as sent, and nothing else is; the
    # rest is queued again, none left claimed by the stopped process.
    after = await statuses(engine)
    assert after.get("sent", 0) == at_stop
    assert after.get("sending", 0) == 0
    assert after.get("queued", 0) == CHATS - at_stop
    assert "messages queued for later" in (tmp_path / "run.log").read_text()

    second = start_run(env, tmp_path)
    try:
        await wait_until(lambda: delivered() >= CHATS, seconds=90)
        await asyncio.sleep(1.0)  # anything extra would arrive now
    finally:
        code, _ = await terminate(second)
    assert code == 0, (tmp_path / "run.log").read_text()[-3000:]
    per_chat = collections.Counter(c.chat_id for c in tg.calls("sendMessage", ok=True))
    assert len(per_chat) == CHATS and set(per_chat.values()) == {1}  # each exactly once
    assert (await statuses(engine)) == {"sent": CHATS}


@pytest.mark.slow
async def test_sigterm_with_sends_hanging_exits_within_the_grace(
    fan_out: tuple[FakeTelegram, dict[str, str]], engine: AsyncEngine, tmp_path: Path
) -> None:
    tg, env = fan_out
    process = start_run(env, tmp_path)
    try:
        await wait_until(lambda: len(tg.calls("sendMessage", ok=True)) >= 50, seconds=60)
        arrived = tg.request_count["sendMessage"]
        tg.latency = 120.0  # the platform stops answering: sends in flight hang
        await wait_until(
            lambda: tg.request_count["sendMessage"] > arrived, what="a send left to hang"
        )
    finally:
        code, took = await terminate(process)
    assert code == 0, (tmp_path / "run.log").read_text()[-3000:]
    assert took < STOP_BOUND_SECONDS
    answered = len(tg.calls("sendMessage", ok=True))
    after = await statuses(engine)
    # The hanging sends may or may not have reached the platform: they stay queued (the
    # ambiguous case of the delivery rule), as does everything not begun.
    assert after.get("sending", 0) == 0
    assert after.get("sent", 0) == answered
    assert after.get("queued", 0) == CHATS - answered
