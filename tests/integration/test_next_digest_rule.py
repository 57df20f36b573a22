"""One next-digest rule on each backend: what the store keeps, what the planner moves on
to and what ``settings`` says are the same instant; instant chats have none. And the
``timezone`` command takes every zone ``DEFAULT_TIMEZONE`` may be."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.models import Mode
from bot.rules import schedule
from bot.settings import load_settings
from tests.conftest import Settings
from tests.integration.test_digest_quality import Bot
from tests.integration.test_planner import started


@pytest.fixture
async def bot(engine: AsyncEngine, tmp_path: Path) -> Bot:
    return Bot(await started(engine, tmp_path))


async def test_an_instant_chat_keeps_no_next_digest(bot: Bot) -> None:
    await bot.say("1", "/subscribe rl")
    assert (await bot.record("1")).next_digest_at is not None
    await bot.say("1", "/mode instant")
    assert (await bot.record("1")).next_digest_at is None
    settings = (await bot.say("1", "/settings")).text
    assert "Next digest: " not in settings
    await bot.say("1", "/mode daily")
    record = await bot.record("1")
    assert record.next_digest_at is not None
    assert record.next_digest_at > dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert record.next_digest_at.time() == dt.time(9)


async def test_an_instant_chat_still_gets_its_pages(bot: Bot) -> None:
    await bot.say("1", "/subscribe rl")
    await bot.say("1", "/mode instant")
    await bot.world.publish("p/a", tags="[rl]")
    assert await bot.world.plan() == 1
    assert [kind for _, kind, _ in await bot.outbox_rows("1")] == ["page"]


@pytest.mark.parametrize("offset", ["UTC+9", "UTC-5"])
async def test_store_planner_and_settings_agree_on_a_weekly_digest(bot: Bot, offset: str) -> None:
    await bot.say("1", "/subscribe rl")
    await bot.say("1", f"/timezone {offset}")
    await bot.say("1", "/mode weekly wed")
    record = await bot.record("1")
    zone = ZoneInfo(record.chat.timezone)
    assert record.chat.timezone.startswith("Etc/GMT")
    due = record.next_digest_at
    assert due is not None
    local = due.replace(tzinfo=dt.UTC).astimezone(zone)
    assert (local.weekday(), local.time()) == (2, dt.time(9))
    await bot.world.publish("p/a", tags="[rl]")
    assert await bot.world.planner.plan_due(now=due) == 1
    after = (await bot.record("1")).next_digest_at
    assert after == due + dt.timedelta(days=7)
    expected = schedule.next_digest(
        mode=Mode.WEEKLY,
        at=dt.time(9),
        weekday=2,
        timezone=record.chat.timezone,
        now=due.replace(tzinfo=dt.UTC),
    )
    assert expected is not None and after == expected.replace(tzinfo=None)
    settings = (await bot.say("1", "/settings")).text
    assert f"09:00 ({offset})" in settings


@pytest.mark.parametrize(
    "zone",
    ["UTC", "Asia/Seoul", "Etc/GMT-14", "US/Pacific", "America/Argentina/Buenos_Aires"],
)
async def test_the_timezone_command_takes_each_default_zone(bot: Bot, zone: str) -> None:
    assert load_settings(Settings, _env_file=None, default_timezone=zone).default_timezone == zone
    reply = await bot.say("1", f"/timezone {zone}")
    assert reply.text.startswith("Time zone set to ")
    assert (await bot.record("1")).chat.timezone == zone
