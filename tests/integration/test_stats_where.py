"""Who reads an answer decides what it may show: ``stats`` in a group shows that group's
own deliveries (the whole bot's figures, other chats' ids, the sources and the chart only
in a private chat or an answer the asker alone sees: Slack's ephemeral ones), and ``why``
names a source by its public name, never a path of the server. Through Telegram's
updates against FakeTelegram, Slack's signed slash commands and the console's prompt."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.i18n import t
from bot.models import Page, PageText
from bot.store import pages as page_store
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_admin import ADMIN, audit_actions, subscribers
from tests.integration.test_admin import running as admin_running
from tests.integration.test_planner import started
from tests.integration.test_votes_delivered import Surface, bot, running, sl, surface, tg

__all__ = ["bot", "running", "sl", "surface", "tg"]  # the platforms' fixtures
GROUP = -1001234567890


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_an_admins_stats_in_a_telegram_group_shows_the_groups_own_figures(
    tg: FakeTelegram, engine: AsyncEngine, tmp_path: Path, lang: str
) -> None:
    await started(engine, tmp_path)
    others = await subscribers(engine, 3)
    tg.chat_admins[GROUP] = {ADMIN}
    async with admin_running(tg, engine, sources=(str(tmp_path),)) as admin:
        if lang == "ko":
            await admin.say(GROUP, "/lang ko", user_id=ADMIN)
        in_group = (await admin.say(GROUP, "/stats", user_id=ADMIN))["text"]
        await admin.say(GROUP, "/settings", user_id=ADMIN)  # after anything /stats sent
        assert tg.calls("sendPhoto") == []  # no chart where the group would see it
        assert in_group.startswith(t(lang, "admin.stats.header"))
        assert t(lang, "admin.stats.chat_only", p="/") in in_group
        assert t(lang, "admin.stats.deliveries", sent=0, failed=0, queued=0) in in_group
        for private in (str(tmp_path), "Telegram", *(f"telegram:{i}" for i in others)):
            assert private not in in_group
        # In the admin's private chat: the whole deployment, and its chart.
        in_private = (await admin.say(ADMIN, "/stats"))["text"]
        assert "Chats: Telegram 5 active" in in_private and str(tmp_path) in in_private
        await tg.wait_for(lambda c: c.method == "sendPhoto" and c.ok)
    assert (f"telegram:{ADMIN}", "stats.viewed", True) in await audit_actions(engine)


async def test_why_names_a_directory_source_by_its_name_on_every_platform(
    surface: Callable[[], AbstractAsyncContextManager[Surface]],
    engine: AsyncEngine,
    tmp_path: Path,
) -> None:
    directory = str(tmp_path / "srv" / "trend-wiki")
    page = Page(
        source=directory,
        key="papers/2026/w0",
        texts=(PageText("en", "Paper W", "tl;dr"),),
        tags=("rl",),
    )
    async with engine.begin() as conn:
        source = await page_store.source(conn, name=directory, kind="directory")
        await page_store.record_pages(
            conn, source=source, found=[page], present_keys=None, now=page_store.utcnow()
        )
    async with surface() as chat:
        answer = await chat.say("/why papers/2026/w0")
    assert t("en", "why.source", source="trend-wiki") in answer
    assert str(tmp_path) not in answer
