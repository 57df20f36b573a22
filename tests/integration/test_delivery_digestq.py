"""Ranked, limited digests and instant pages through the delivery engine to the local Bot
API server, on each backend: page order, the "more" line and a 👍/👎 row per page."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.telegram.sender import TelegramSender
from bot.models import Mode
from bot.render import votes
from bot.store import feedback as feedback_store
from bot.store.schema import pages
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_delivery import delivery, sender, tg
from tests.integration.test_planner import started
from tests.integration.test_poll import write

__all__ = ["sender", "tg"]  # fixtures of the delivery tests


def page_text(title: str, tags: str, date: str) -> str:
    return (
        f'---\ntitle: "{title}"\ncreated: {date}\nupdated: {date}\ntags: {tags}\n---\n\n'
        f"## TL;DR\n\nAbout {title}.\n"
    )


def keyboard(markup: object) -> list[list[dict[str, str]]]:
    """The rows of a ``reply_markup`` as the server got it (JSON text in a form post)."""
    found = json.loads(markup) if isinstance(markup, str) else markup
    assert isinstance(found, dict)
    rows: list[list[dict[str, str]]] = found["inline_keyboard"]
    return rows


async def page_ids(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as conn:
        rows = await conn.execute(select(pages.c.key, pages.c.id))
        return {key: page_id for key, page_id in rows}


async def test_a_ranked_digest_is_sent_best_first_with_a_vote_row_per_page(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    world = await started(engine, tmp_path)
    record = await world.chat("1001", "*")
    await world.update(record, limit=2)
    write(world.root, "q/robot.md", page_text("Robot arms", "[robotics]", "2026-11-03"))
    write(world.root, "q/plain.md", page_text("Plain text", "[nlp]", "2026-11-02"))
    write(world.root, "q/eyes.md", page_text("Seeing eyes", "[vision]", "2026-11-01"))
    await world.poller.poll()
    ids = await page_ids(engine)
    async with engine.begin() as conn:
        # Shown by a `latest` reply: a chat votes only on pages it received.
        await feedback_store.shown(
            conn, chat_pk=record.pk, page_ids=[ids["q/eyes"], ids["q/robot"]]
        )
        for key, value in (("q/eyes", 1), ("q/robot", -1)):
            await feedback_store.press(
                conn, chat_pk=record.pk, page_id=ids[key], user_id="1001", value=value
            )
    assert await world.plan() == 1
    await delivery(engine, sender).drain()

    (message,) = tg.calls("sendMessage")
    text = str(message.params["text"])
    assert text.index("1. <b>Seeing eyes</b>") < text.index("2. <b>Plain text</b>")
    assert "Robot arms" not in text
    assert text.endswith("…and 1 more: /latest")
    assert keyboard(message.params["reply_markup"]) == [
        [
            {"text": "1 👍", "callback_data": votes.action(ids["q/eyes"], up=True)},
            {"text": "1 👎", "callback_data": votes.action(ids["q/eyes"], up=False)},
        ],
        [
            {"text": "2 👍", "callback_data": votes.action(ids["q/plain"], up=True)},
            {"text": "2 👎", "callback_data": votes.action(ids["q/plain"], up=False)},
        ],
    ]


async def test_an_instant_page_is_sent_with_its_vote_row(
    engine: AsyncEngine, tmp_path: Path, tg: FakeTelegram, sender: TelegramSender
) -> None:
    world = await started(engine, tmp_path)
    await world.chat("1001", "rl", mode=Mode.INSTANT)
    await world.publish("p/new", tags="[rl]")
    assert await world.plan() == 1
    await delivery(engine, sender).drain()
    (message,) = tg.calls("sendMessage")
    rows = keyboard(message.params["reply_markup"])
    ids = await page_ids(engine)
    assert [[b["callback_data"] for b in row] for row in rows] == [
        [votes.action(ids["p/new"], up=True), votes.action(ids["p/new"], up=False)]
    ]
