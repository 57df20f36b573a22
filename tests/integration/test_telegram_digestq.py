"""Digest quality through the Telegram adapter: python-telegram-bot unchanged, over real
HTTP against FakeTelegram, on each backend; 👍/👎 keyboards per page and their toasts."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.i18n import t
from bot.store import feedback as feedback_store
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_telegram import (
    GROUP,
    PRIVATE,
    Running,
    chat_record,
    reply_to,
    running,
    seed_pages,
    tg,
)

__all__ = ["running", "tg"]  # fixtures of the Telegram adapter's tests
MEMBER_A, MEMBER_B = 3001, 3002


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_digest_quality_commands_answer_in_the_chats_language(
    tg: FakeTelegram, running: Running, engine: AsyncEngine, lang: str
) -> None:
    await seed_pages(engine)
    async with running():
        if lang == "ko":
            await reply_to(tg, PRIVATE, "/lang ko")

        async def says(text: str) -> str:
            return str((await reply_to(tg, PRIVATE, text)).params["text"])

        assert t(
            lang,
            "digestq.mode.weekly",
            day=t(lang, "digestq.weekday.fri"),
            time="09:00",
            timezone="UTC",
        ) in await says("/mode weekly fri")
        usage = t(lang, "digestq.weekday.usage", value="someday", p="/")
        assert usage in await says("/mode weekly someday")
        assert t(lang, "digestq.limit.set", count=3, p="/") in await says("/limit 3")
        assert t(lang, "digestq.limit.usage", p="/", most=50) in await says("/limit 99")
        set_quiet = t(lang, "digestq.quiet.set", quiet="22:00-07:00", timezone="UTC")
        assert set_quiet in await says("/quiet 22:00-07:00")
        assert t(lang, "digestq.quiet.usage", p="/") in await says("/quiet 22:00")
        settings = await says("/settings")
        assert t(lang, "digestq.settings.weekly", day=t(lang, "digestq.weekday.fri")) in settings
        assert t(lang, "digestq.settings.quiet", quiet="22:00-07:00") in settings
        assert t(lang, "digestq.settings.limit", count=3) in settings
        assert t(lang, "digestq.feedback.none") in await says("/feedback")
        why = await says("/why papers/2026/p0")
        assert why.startswith("“Paper 0”")
        assert t(lang, "why.unknown", page="9999.99999", p="/") in await says("/why 9999.99999")
        assert t(lang, "why.usage", p="/") in await says("/why")
        assert t(lang, "digestq.quiet.off") in await says("/quiet off")
        assert t(lang, "digestq.limit.off") in await says("/limit off")
    record = await chat_record(engine, PRIVATE)
    assert record.chat.weekday == 4 and record.chat.quiet is None and record.chat.limit is None


async def test_latest_has_a_vote_row_per_page_and_a_press_is_a_toast(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    async with running():
        await reply_to(tg, PRIVATE, "/subscribe rl")
        await reply_to(tg, PRIVATE, "/latest")
        message = tg.messages_to(PRIVATE)[-1]
        assert "1. " in message["text"] and "2. " in message["text"]
        rows = message["reply_markup"]["inline_keyboard"]
        assert [[b["text"] for b in row] for row in rows] == [["1 👍", "1 👎"], ["2 👍", "2 👎"]]
        up = rows[0][0]["callback_data"]
        assert up.startswith("vote:+:")

        update = tg.callback(PRIVATE, message["message_id"], up)
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery")
        answer = tg.callback_answers[update["callback_query"]["id"]]
        assert answer["text"] == "Noted: pages like this will rank higher in your digests."
        assert not answer.get("show_alert")
        update = tg.callback(PRIVATE, message["message_id"], up)
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=2)
        assert (
            tg.callback_answers[update["callback_query"]["id"]]["text"]
            == "Your vote is taken back."
        )
        # A forged button is answered, and stores nothing.
        update = tg.callback(PRIVATE, message["message_id"], "vote:+:not-a-page")
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=3)
        answer = tg.callback_answers[update["callback_query"]["id"]]
        assert answer["text"] == "That button no longer works."
    assert tg.calls("editMessageText") == []  # the message with the buttons stays
    record = await chat_record(engine, PRIVATE)
    async with engine.connect() as conn:
        assert await feedback_store.weights_of(conn, chat_pk=record.pk) == {}


async def test_in_a_group_every_member_votes_once_and_only_admins_reset(
    tg: FakeTelegram, running: Running, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    tg.chat_admins[GROUP] = {MEMBER_A}
    async with running():
        await reply_to(tg, GROUP, "/subscribe rl", user_id=MEMBER_A)
        await reply_to(tg, GROUP, "/latest 1", user_id=MEMBER_B)
        message = tg.messages_to(GROUP)[-1]
        up = message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        for n, user in enumerate((MEMBER_A, MEMBER_B, MEMBER_B, MEMBER_B), start=1):
            tg.callback(GROUP, message["message_id"], up, user_id=user)
            await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=n)
        record = await chat_record(engine, GROUP)
        async with engine.connect() as conn:
            weights = await feedback_store.weights_of(conn, chat_pk=record.pk)
        assert weights == pytest.approx({"rl": 2.0})  # the newest rl page; B: up, undo, up

        await reply_to(tg, GROUP, "/feedback reset", user_id=MEMBER_B)
        ask = tg.messages_to(GROUP)[-1]
        labels = [b["text"] for b in ask["reply_markup"]["inline_keyboard"][0]]
        assert labels == ["Forget them", "Keep them"]
        update = tg.callback(GROUP, ask["message_id"], "fbreset:yes", user_id=MEMBER_B)
        await tg.wait_for(lambda c: c.method == "answerCallbackQuery", count=5)
        assert tg.callback_answers[update["callback_query"]["id"]]["show_alert"] is True
        tg.callback(GROUP, ask["message_id"], "fbreset:yes", user_id=MEMBER_A)
        edits = await tg.wait_for(lambda c: c.method == "editMessageText")
        assert edits[0].params["text"].startswith("Forgotten (votes: 2).")
    async with engine.connect() as conn:
        assert await feedback_store.weights_of(conn, chat_pk=record.pk) == {}
