"""Tags followed over time: a day's followers recorded once, whoever asks again; old days
pruned; the ``stats`` chart's panel and ``trendbot stats --json`` drawn from them."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import signal
from pathlib import Path

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands.operator import Admin
from bot.commands.stats import Stats
from bot.i18n import t
from bot.settings import SAMPLE_WIKI
from bot.store import trends
from bot.store.schema import chat_tags, chats, tag_followers
from tests.cli import run_cli_async, start_cli
from tests.conftest import Settings
from tests.integration.test_admin import subscribers
from tests.waiting import still_running, wait_until

TODAY = dt.date(2026, 12, 6)


async def rows(engine: AsyncEngine) -> list[tuple[dt.date, str, int]]:
    async with engine.connect() as conn:
        found = await conn.execute(
            select(tag_followers).order_by(tag_followers.c.day, tag_followers.c.tag)
        )
        return [(day, tag, n) for day, tag, n in found]


async def record(engine: AsyncEngine, day: dt.date, *, keep: int = trends.KEEP_DAYS) -> bool:
    async with engine.begin() as conn:
        return await trends.record_day(conn, today=day, keep=keep)


async def test_a_day_is_recorded_once_from_the_active_chats(engine: AsyncEngine) -> None:
    await subscribers(engine, 3, tag="rl")
    await subscribers(engine, 2, start=20_000, tag="rl")
    await subscribers(engine, 1, start=30_000, tag="agents")
    await subscribers(engine, 4, start=40_000, tag="rl", state="paused")
    [excluding] = await subscribers(engine, 1, start=50_000, tag="agents")
    async with engine.begin() as conn:  # "agents -rl": no follower of rl
        pk = select(chats.c.id).where(chats.c.chat_id == str(excluding)).scalar_subquery()
        await conn.execute(insert(chat_tags).values(chat_pk=pk, tag="rl", kind="excluded"))

    assert await record(engine, TODAY) is True
    recorded = [(TODAY, "agents", 2), (TODAY, "rl", 5)]
    assert await rows(engine) == recorded

    # Later the same day (another replica, a restart): the day's record stands as it was.
    await subscribers(engine, 7, start=60_000, tag="rl")
    await subscribers(engine, 1, start=70_000, tag="vision")
    assert await record(engine, TODAY) is False
    assert await rows(engine) == recorded

    assert await record(engine, TODAY + dt.timedelta(days=1)) is True
    assert (await rows(engine))[2:] == [
        (TODAY + dt.timedelta(days=1), "agents", 2),
        (TODAY + dt.timedelta(days=1), "rl", 12),
        (TODAY + dt.timedelta(days=1), "vision", 1),
    ]


async def test_a_day_without_followers_records_nothing(engine: AsyncEngine) -> None:
    await subscribers(engine, 2, tag="rl", state="inactive")
    assert await record(engine, TODAY) is True
    assert await rows(engine) == []


async def test_days_older_than_the_kept_ones_go(engine: AsyncEngine) -> None:
    await subscribers(engine, 1, tag="rl")
    async with engine.begin() as conn:
        await conn.execute(
            insert(tag_followers),
            [
                {"day": TODAY - dt.timedelta(days=ago), "tag": "rl", "chats": ago}
                for ago in (trends.KEEP_DAYS + 30, trends.KEEP_DAYS, trends.KEEP_DAYS - 1, 1)
            ],
        )
    assert await record(engine, TODAY) is True
    assert [day for day, _, _ in await rows(engine)] == [
        TODAY - dt.timedelta(days=trends.KEEP_DAYS - 1),
        TODAY - dt.timedelta(days=1),
        TODAY,
    ]
    # Pruned also on a day already recorded, and by the number of days asked for.
    assert await record(engine, TODAY, keep=2) is False
    assert [day for day, _, _ in await rows(engine)] == [TODAY - dt.timedelta(days=1), TODAY]


async def history(engine: AsyncEngine, days: int, *, tags: int = 1) -> None:
    """``days`` recorded days up to today, ``tags`` tags each (t0 the most followed)."""
    today = dt.datetime.now(dt.UTC).date()
    async with engine.begin() as conn:
        await conn.execute(
            insert(tag_followers),
            [
                {"day": today - dt.timedelta(days=ago), "tag": f"t{i}", "chats": 10 + ago - i}
                for ago in range(days)
                for i in range(tags)
            ],
        )


async def figures(engine: AsyncEngine) -> Stats:
    admin = Admin(engine=engine, settings=Settings(telegram_bot_token=None))
    async with engine.connect() as conn:
        return await admin.figures(conn)


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_the_stats_chart_draws_the_top_tags_by_day_with_two_days_of_history(
    engine: AsyncEngine, lang: str
) -> None:
    await subscribers(engine, 2, tag="rl")
    await history(engine, 40, tags=7)
    stats = await figures(engine)
    chart = stats.chart(lang)
    [trend] = [p for p in chart.panels if p.title == t(lang, "charts.stats.followers")]
    assert trend.kind == "lines" and trend.fallback_title == t("en", "charts.stats.followers")
    assert len(trend.labels) == 30 and trend.labels[-1] == dt.datetime.now(dt.UTC).strftime("%m-%d")
    assert [s.name for s in trend.series] == ["t0", "t1", "t2", "t3", "t4"]
    assert trend.series[0].values[-1] == 10.0 and trend.series[0].values[0] == 39.0
    assert chart.alt == t(lang, "charts.stats.alt_followers", days=14, trend_days=30)
    # The text says what the panel draws: each line's first and last day.
    first, last = (
        d.strftime("%m-%d") for d in (min(stats.followers_by_day), dt.datetime.now(dt.UTC).date())
    )
    changes = "t0 39 → 10, t1 38 → 9, t2 37 → 8, t3 36 → 7, t4 35 → 6"
    assert t(lang, "admin.stats.followers", first=first, last=last, changes=changes) in (
        stats.text(lang).splitlines()
    )
    pytest.importorskip("matplotlib", reason="charts need the charts extra (matplotlib)")
    from bot.render.charts import render_png

    assert render_png(chart).startswith(b"\x89PNG\r\n\x1a\n")


async def test_one_day_of_history_draws_no_followers_panel(engine: AsyncEngine) -> None:
    await subscribers(engine, 2, tag="rl")
    await history(engine, 1)
    chart = (await figures(engine)).chart("en")
    assert [p.kind for p in chart.panels] == ["line", "bars"]
    assert chart.alt == t("en", "charts.stats.alt", days=14)
    assert "Chats following the top tags" not in (await figures(engine)).text("en")


async def test_a_workspaces_installer_sees_no_followers_by_day(engine: AsyncEngine) -> None:
    await history(engine, 5)
    admin = Admin(engine=engine, settings=Settings(telegram_bot_token=None))
    async with engine.connect() as conn:
        stats = await admin.figures(conn, workspace="T0001")
    assert stats.followers_by_day == {}  # the deployment's, like its pages
    assert "lines" not in [p.kind for p in stats.chart("en").panels]


async def test_stats_json_has_the_followers_by_day(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    await subscribers(engine, 3, tag="rl")
    await subscribers(engine, 1, start=20_000, tag="agents")
    today = dt.datetime.now(dt.UTC).date()
    await record(engine, today - dt.timedelta(days=1))
    async with engine.begin() as conn:  # one chat left rl since yesterday
        await conn.execute(update(chats).where(chats.c.chat_id == "10000").values(state="paused"))
    await record(engine, today)
    env = dict(clean_env, DATABASE_URL=database_url)
    done = await run_cli_async("stats", "--json", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    days = [str(today - dt.timedelta(days=1)), str(today)]
    assert json.loads(done.stdout)["followers_by_day"] == {
        "days": days,
        "tags": {"rl": [3, 2], "agents": [1, 1]},
    }


async def test_the_running_service_records_today(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    await subscribers(engine, 2, tag="rl")
    env = dict(clean_env, DATABASE_URL=database_url, WIKI_SOURCES=str(SAMPLE_WIKI), HTTP_PORT="0")
    log = tmp_path / "run.log"
    run = start_cli(env=env, cwd=tmp_path, err=log)
    try:

        async def recorded() -> bool:
            return still_running(run, log) and bool(await rows(engine))

        # The leader records the day after its first poll.
        await wait_until(recorded, seconds=90, what="the day's trends recorded")
    finally:
        run.send_signal(signal.SIGTERM)
        await asyncio.to_thread(run.wait, 60)
    assert run.returncode == 0, log.read_text()[-3000:]
    today = dt.datetime.now(dt.UTC).date()
    assert await rows(engine) == [(today, "rl", 2)]
