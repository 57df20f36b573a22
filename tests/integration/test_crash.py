"""A real ``trendbot run`` killed with SIGKILL in the middle of a 500-chat fan-out, then
restarted: every chat gets its digest, and duplicates stay within the delivery rule (only
messages in flight at the moment of the crash, at most one per chat)."""

from __future__ import annotations

import asyncio
import collections
import signal
import subprocess
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.engine import Delivery
from tests.cli import start_cli
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_admin import subscribers
from tests.integration.test_planner import started
from tests.run_env import telegram_env
from tests.waiting import wait_until

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CHATS = 500
# What a crash can send twice is what was sent and not yet recorded: at most one message per
# worker, and at most the cap's second (the pace counts a send until its record). At these
# tests' rate (100 a second, 50 ms) the window stays at its floor, the service's concurrency.
IN_FLIGHT_BOUND = Delivery.__init__.__kwdefaults__["concurrency"]  # type: ignore[index]


def run_env(
    clean_env: dict[str, str], database_url: str, wiki: Path, tg: FakeTelegram
) -> dict[str, str]:
    """The environment of a ``trendbot run`` sending to ``tg`` at 100 messages a second,
    with no poll of its own during a test."""
    return dict(
        clean_env,
        DATABASE_URL=database_url,
        WIKI_SOURCES=str(wiki),
        **telegram_env(tg),
        TELEGRAM_RATE_PER_SECOND="100",
        TELEGRAM_PAID_BROADCAST="true",  # over 30 a second
        HTTP_PORT="0",
        POLL_INTERVAL_SECONDS="3600",
        PTB_TIMEDELTA="true",
    )


def start_run(env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    """``trendbot run``, its stderr added to ``run.log``."""
    return start_cli(env=env, cwd=cwd, err=cwd / "run.log", append=True)


async def planned_fan_out(engine: AsyncEngine, wiki: Path, *, key: str) -> None:
    """CHATS private chats following rl, each with the message of the new page ``key``
    planned: a fan-out for a run to send."""
    world = await started(engine, wiki)
    await subscribers(engine, CHATS)
    await world.publish(key, tags="[rl]")
    assert await world.planner.plan_now() == CHATS


@pytest.mark.slow
async def test_sigkill_mid_fanout_loses_nothing(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    wiki = tmp_path / "wiki"
    await planned_fan_out(engine, wiki, key="papers/2026/crash-test")

    async with FakeTelegram(token=TOKEN, long_poll_cap=0.5) as tg:
        tg.latency = 0.05
        tg.enforce_limits = True
        tg.global_rate = tg.paid_rate = 100
        env = run_env(clean_env, database_url, wiki, tg)

        def delivered() -> int:
            return len(tg.calls("sendMessage", ok=True))

        first = start_run(env, tmp_path)
        try:
            await wait_until(lambda: delivered() >= CHATS // 3, seconds=60)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        at_crash = delivered()
        assert at_crash < CHATS, "the fan-out finished before the crash; nothing was tested"

        second = start_run(env, tmp_path)
        try:
            await wait_until(
                lambda: len({c.chat_id for c in tg.calls("sendMessage", ok=True)}) >= CHATS,
                seconds=90,
            )
            await asyncio.sleep(1.0)  # anything extra would arrive now
        finally:
            second.send_signal(signal.SIGTERM)
            code = second.wait(timeout=30)
        assert code == 0, (tmp_path / "run.log").read_text()[-3000:]

    per_chat = collections.Counter(c.chat_id for c in tg.calls("sendMessage", ok=True))
    assert len(per_chat) == CHATS  # every chat got its digest
    duplicates = sum(n - 1 for n in per_chat.values())
    assert max(per_chat.values()) <= 2
    assert duplicates <= IN_FLIGHT_BOUND
    assert tg.limit_violations == []
    assert TOKEN not in (tmp_path / "run.log").read_text()
